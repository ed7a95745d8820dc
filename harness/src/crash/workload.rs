//! One seeded workload on a partition log over `SimFs`, capturing the crash images a power loss
//! would leave, each tagged with the operation it fell in.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use seglog_fs::sim::{CrashPoint, Pages, SimEvent, SimFs, Tear};
use seglog_log::{LogDir, MockClock, PartitionLog};
use seglog_record_format::Compression;

use super::model::{Expect, Model, Presence, Rec, batch};
use super::rng::Rng;
use super::txn_workload::{producers, txn_append};
use super::{ROOT, clock_now, is_index_file, options, tp};

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn records(rng: &mut Rng, n: usize, ts: i64) -> Vec<Rec> {
    (0..n)
        .map(|i| {
            let len = 1 + rng.below(120) as usize;
            let fill = rng.next() as u8;
            Rec {
                key: vec![b'k', b'0' + rng.below(8) as u8],
                value: (0..len).map(|j| fill.wrapping_add(j as u8)).collect(),
                timestamp: ts + i as i64,
            }
        })
        .collect()
}

/// Runs workload `w` of `seed`, capturing crash images; returns (op descriptions, images with
/// the index of the operation each was captured in, the model before each operation).
pub(super) struct Run {
    pub(super) segment_bytes: u64,
    /// The workload ends by deleting the partition.
    pub(super) deletes: bool,
    /// The workload's appends are those of producers with transactions (`txn_workload`).
    pub(super) transactional: bool,
    /// Rolls that appends made by size (the segment count grew during an append).
    pub(super) rolled_by_size: u64,
    pub(super) images: Vec<(u64, SimEvent, usize, SimFs)>,
    pub(super) expects: Vec<Expect>,
    pub(super) models: Vec<Model>,
}

/// The high watermark a checkpoint of the log directory writes for `log` (none if unset).
fn set_hw(log: &PartitionLog<SimFs>) -> Option<i64> {
    log.high_watermark_is_set().then(|| log.high_watermark())
}

/// The operation "checkpoint the high watermark": the model told what the checkpoint may write
/// before it begins (`begin` tags the images), and that it completed after.
fn checkpoint_hw(
    dir: &LogDir<SimFs>,
    log: &PartitionLog<SimFs>,
    model: &mut Model,
    begin: &mut dyn FnMut(&Model, String),
) {
    let hw = set_hw(log);
    model.checkpoints(hw);
    begin(
        model,
        format!("checkpoint the high watermark {}", log.high_watermark()),
    );
    dir.checkpoint().unwrap();
    model.checkpointed(hw);
}

pub(super) fn run_workload(seed: u64, workload: u64) -> Run {
    let mut rng = Rng(seed ^ workload.wrapping_mul(0xA24B_AED4_963E_E407));
    // One workload in three has segments of 1,000 to 2,000 bytes (a batch is at most about 900
    // bytes, and must fit), so that appends roll by size
    // (the roll's flush then runs inside the append: inline, for a deterministic event order).
    // Drawn from a generator of its own, so the operations of a workload do not depend on it.
    let mut srng = Rng(rng.0 ^ 0x5E6_B17E5);
    let segment_bytes = if srng.chance(3) {
        1_000 + srng.below(1_001)
    } else {
        1 << 20
    };
    let deletes = srng.chance(4);
    // One workload in three appends with transactional and idempotent producers, and neither
    // truncates, applies retention nor compacts (their model covers appends, rolls, flushes and
    // reopens).
    let transactional = srng.chance(3);
    // Leader epochs, from a generator of their own: the epoch rises now and then before an
    // append (a new leader), and at every reopen (a broker restart elects a new leader).
    let mut erng = Rng(rng.0 ^ 0x00E9_0C4C_AC4E);
    // The high watermark's own draws, so that the other draws of a seed stay as they were.
    let mut hrng = Rng(rng.0 ^ 0x0048_5741_5445);
    let mut epoch = 0_i32;
    let mut producers = producers(&mut srng);
    let fs = SimFs::new();
    let clock = MockClock::new(1_000_000);
    let current_op = Arc::new(AtomicUsize::new(0));
    let images: Arc<Mutex<Vec<(u64, SimEvent, usize)>>> = Arc::default();
    {
        let mut crng = Rng(rng.next());
        let op = Arc::clone(&current_op);
        let seen = Arc::clone(&images);
        fs.set_capture(Some(Box::new(move |number, event| {
            // The indexes are memory-mapped on the real path: a power loss keeps each of their
            // unsynced pages (and an unsynced length change) or loses it, page by page.
            let written_back: Option<fn(&Path) -> bool> = None;
            let pages = Some(Pages {
                files: is_index_file,
                seed: crng.next(),
            });
            let point = match event {
                SimEvent::FileSync | SimEvent::DirSync => Some(CrashPoint {
                    tear: if crng.chance(2) {
                        Tear::DropAll
                    } else {
                        Tear::KeepPrefix(crng.below(4096) as usize)
                    },
                    written_back,
                    pages,
                }),
                SimEvent::Write(len) if crng.chance(6) => Some(CrashPoint {
                    tear: Tear::KeepPrefix(crng.below(len as u64 + 1) as usize),
                    written_back,
                    pages,
                }),
                SimEvent::Write(_) => None,
                _ if crng.chance(8) => Some(CrashPoint {
                    tear: Tear::DropAll,
                    written_back,
                    pages,
                }),
                _ => None,
            };
            if point.is_some() {
                seen.lock()
                    .unwrap()
                    .push((number, event, op.load(Ordering::Relaxed)));
            }
            point
        })));
    }
    let root = Path::new(ROOT);
    let mut model = Model::default();
    let mut rolled_by_size = 0;
    let mut expects = Vec::new();
    let mut models = Vec::new();
    let begin = |model: &Model, op: String, expects: &mut Vec<Expect>, models: &mut Vec<Model>| {
        current_op.store(expects.len(), Ordering::Relaxed);
        expects.push(Expect {
            required: model.required(),
            op,
            partition: Presence::Kept,
        });
        models.push(model.clone());
    };
    begin(&model, "open".into(), &mut expects, &mut models);
    let (mut dir, _) = LogDir::open(fs.clone(), root, options(&clock, segment_bytes)).unwrap();
    let mut log = dir.create_log(&tp(), None).unwrap();
    log.set_roll_flush_inline(true);
    log.set_leader_epoch(epoch).unwrap();
    let ops = 20 + rng.below(40);
    for _ in 0..ops {
        clock.advance(1 + rng.below(50) as i64);
        let mut choice = rng.below(100);
        if transactional && (65..=82).contains(&choice) {
            choice = 0;
        }
        let codec = CODECS[rng.below(5) as usize];
        let ts = clock_now(&clock);
        let segments_before = log.segment_count();
        // A replica manager's move of the high watermark, up to the log end; the log directory
        // checkpoints it (replication-offset-checkpoint) now, or after this operation's append
        // (a high watermark below the log end: a checkpoint of the log end would be caught).
        let mut checkpoint_after = false;
        if hrng.chance(10) {
            let end = log.log_end_offset();
            log.set_high_watermark(end - (hrng.below(3) as i64).min(end));
            if hrng.chance(2) {
                checkpoint_hw(&dir, &log, &mut model, &mut |m, op| {
                    begin(m, op, &mut expects, &mut models);
                });
            } else {
                checkpoint_after = hrng.chance(2);
            }
        }
        if choice <= 44 && erng.chance(5) {
            epoch += 1 + erng.below(2) as i32;
            begin(
                &model,
                format!("become the leader of epoch {epoch}"),
                &mut expects,
                &mut models,
            );
            log.set_leader_epoch(epoch).unwrap();
        }
        match choice {
            0..=44 if transactional => {
                txn_append(
                    &mut rng,
                    &log,
                    &clock,
                    &mut model,
                    &mut producers,
                    &mut records,
                    &mut |m: &Model, op: String| begin(m, op, &mut expects, &mut models),
                );
                if log.segment_count() > segments_before {
                    rolled_by_size += 1;
                }
            }
            0..=44 => {
                let n = 1 + rng.below(6) as usize;
                let recs = records(&mut rng, n, ts);
                let base = log.log_end_offset();
                let follower = rng.chance(3);
                let durable = !follower && rng.chance(4);
                for (i, r) in recs.iter().enumerate() {
                    model
                        .appended
                        .entry(base + i as i64)
                        .or_default()
                        .push(r.clone());
                }
                let what = match (follower, durable) {
                    (true, _) => "follower append",
                    (false, true) => "durable append",
                    _ => "leader append",
                };
                begin(
                    &model,
                    format!("{what} {n} records at {base} ({codec:?})"),
                    &mut expects,
                    &mut models,
                );
                let mut bytes = batch(if follower { base } else { 0 }, &recs, codec);
                if follower {
                    // Copied from the leader of the current epoch.
                    seglog_record_format::set_partition_leader_epoch(&mut bytes, epoch).unwrap();
                }
                let info = if follower {
                    log.append_as_follower(&bytes)
                } else if durable {
                    log.append_durable(&mut bytes)
                } else {
                    log.append_as_leader(&mut bytes)
                }
                .unwrap();
                if log.segment_count() > segments_before {
                    rolled_by_size += 1;
                }
                assert_eq!(info.first_offset, base);
                model.batches.insert(base, base + n as i64 - 1);
                for (i, r) in recs.into_iter().enumerate() {
                    model.current.insert(base + i as i64, r);
                }
                if durable {
                    let upto = base + n as i64;
                    model
                        .durable
                        .extend(model.current.range(..upto).map(|(o, _)| *o));
                }
                // A follower behind: now and then the high watermark stays where it was.
                if !hrng.chance(3) {
                    log.set_high_watermark(log.log_end_offset());
                }
            }
            45..=54 => {
                begin(&model, "roll".into(), &mut expects, &mut models);
                log.roll().unwrap();
                log.wait_for_background_flushes();
            }
            55..=64 => {
                begin(&model, "flush".into(), &mut expects, &mut models);
                log.flush().unwrap();
                model.durable.extend(model.current.keys().copied());
            }
            65..=69 => {
                let start = log.log_start_offset();
                let end = log.log_end_offset();
                let to = start + rng.below((end - start + 1) as u64) as i64;
                // Truncation is batch-granular (Kafka's LogSegment.truncateTo): the batch holding
                // `to` goes whole.
                let cut = model
                    .batches
                    .iter()
                    .find(|(_, last)| **last >= to)
                    .map_or(to, |(base, _)| (*base).min(to));
                model.batches.retain(|base, _| *base < cut);
                model.current.retain(|o, _| *o < cut);
                model.durable.retain(|o| *o < cut);
                // A crash inside the truncation may or may not keep the cut records.
                begin(
                    &model,
                    format!("truncate to {to}"),
                    &mut expects,
                    &mut models,
                );
                // When it truncated, it checkpointed the high watermark the truncation lowered.
                if dir.truncate_to(&tp(), to).unwrap() {
                    let hw = set_hw(&log);
                    model.checkpoints(hw);
                    if let Some(during) = models.last_mut() {
                        during.checkpoints(hw);
                    }
                    model.checkpointed(hw);
                }
                log.set_high_watermark(log.log_end_offset());
            }
            70..=74 => {
                let start = log.log_start_offset();
                let hw = log.high_watermark();
                let to = start + rng.below((hw - start).max(0) as u64 / 2 + 1) as i64;
                model.log_start = model.log_start.max(to);
                begin(
                    &model,
                    format!("retention to {to}"),
                    &mut expects,
                    &mut models,
                );
                log.delete_records_before(to).unwrap();
                model.log_start = model.log_start.max(log.log_start_offset());
                log.delete_old_segments().unwrap();
                log.delete_expired_files().unwrap();
                model.log_start = model.log_start.max(log.log_start_offset());
            }
            75..=82 => {
                let mut latest: BTreeMap<&[u8], i64> = BTreeMap::new();
                for (o, r) in &model.current {
                    latest.insert(&r.key, *o);
                }
                let superseded: Vec<i64> = model
                    .current
                    .iter()
                    .filter(|(o, r)| latest.get(&r.key[..]) != Some(o))
                    .map(|(o, _)| *o)
                    .collect();
                model.cleanable.extend(superseded);
                begin(&model, "compact".into(), &mut expects, &mut models);
                log.set_high_watermark(log.log_end_offset());
                dir.compact(&tp()).unwrap();
                log.delete_expired_files().unwrap();
            }
            83..=88 => {
                let hw = set_hw(&log);
                model.checkpoints(hw);
                begin(&model, "checkpoint".into(), &mut expects, &mut models);
                dir.checkpoint().unwrap();
                model.checkpointed(hw);
            }
            _ => {
                let clean = rng.chance(2);
                if clean {
                    model.checkpoints(set_hw(&log));
                }
                begin(
                    &model,
                    if clean {
                        "clean close and reopen"
                    } else {
                        "unclean close and reopen"
                    }
                    .into(),
                    &mut expects,
                    &mut models,
                );
                // The close checkpoints the high watermark (tagged before `begin`, below).
                if clean {
                    dir.close().unwrap();
                    model.durable.extend(model.current.keys().copied());
                    model.checkpointed(set_hw(&log));
                }
                log.wait_for_background_flushes();
                drop(log);
                drop(dir);
                let (d, _) =
                    LogDir::open(fs.clone(), root, options(&clock, segment_bytes)).unwrap();
                dir = d;
                log = dir.log(&tp()).unwrap();
                // The open rewrites the checkpoints when the recovery point it found is stale,
                // with the high watermark it loaded (clamped to the log).
                let loaded = set_hw(&log);
                model.checkpoints(loaded);
                if let Some(during) = models.last_mut() {
                    during.checkpoints(loaded);
                }
                log.set_roll_flush_inline(true);
                epoch += 1;
                log.set_leader_epoch(epoch).unwrap();
                model.log_start = model.log_start.max(0);
                log.set_high_watermark(log.log_end_offset());
            }
        }
        if checkpoint_after {
            checkpoint_hw(&dir, &log, &mut model, &mut |m, op| {
                begin(m, op, &mut expects, &mut models);
            });
        }
    }
    if deletes {
        begin(
            &model,
            "delete the partition".into(),
            &mut expects,
            &mut models,
        );
        expects.last_mut().unwrap().partition = Presence::Deleting;
        log.wait_for_background_flushes();
        drop(log);
        assert!(dir.delete_log(&tp()).unwrap());
        begin(&model, "clean close".into(), &mut expects, &mut models);
        expects.last_mut().unwrap().partition = Presence::Deleted;
        dir.close().unwrap();
    }
    begin(&model, "the end".into(), &mut expects, &mut models);
    fs.set_capture(None);
    let captured = fs.take_captured();
    let tags = images.lock().unwrap().clone();
    assert_eq!(captured.len(), tags.len());
    let images = captured
        .into_iter()
        .zip(tags)
        .map(|((n, e, image), (_, _, op))| (n, e, op, image))
        .collect();
    Run {
        segment_bytes,
        deletes,
        transactional,
        rolled_by_size,
        images,
        expects,
        models,
    }
}
