//! The crash-image harness behind `cargo xtask crash` (docs/reliability.md, section 1).
//!
//! Each workload is a seeded, reproducible sequence of operations on one partition log of a
//! `LogDir` over `SimFs`: leader and follower appends with every codec, explicit rolls, rolls by
//! size inside appends (one workload in three has segments of 1,000 to 2,000 bytes), flushes,
//! durable appends, truncations, retention, compaction (with its `.cleaned`/`.swap`/`.deleted`
//! protocol), checkpoints, and clean and unclean closes followed by a reopen; one workload in
//! four ends by deleting the partition (`LogDir::delete_log`: the rename to `-delete`, the
//! directory sync, the removals) and a clean close. The flush after a
//! roll runs inline, so the file-system events, and with them the crash points, come in the
//! same order on every run. While it runs,
//! `SimFs` captures the image a power loss would leave at every sync point (file and directory
//! syncs, before they take effect), at random writes (after them, torn at a random byte) and at
//! random other events (creations, renames, removals, length changes). The indexes are
//! memory-mapped on the real path, so every image keeps or loses each of their unsynced pages
//! (and an unsynced length change) on a seeded coin of its own.
//!
//! Every image is a crash point. It is reopened, and then:
//! - every record acknowledged as durable (and not since truncated, deleted by retention or
//!   superseded by a compaction) is present, byte-identical, at its offset;
//! - every record read was appended at that offset at some point (nothing is invented);
//! - offsets strictly increase;
//! - the log accepts an append, and reads it back;
//! - a crash inside the deletion leaves the partition whole (every check above) or gone, never
//!   a half; one after it leaves it gone; the open removes any `-delete` directory left over;
//! - after a clean close, every segment's `.log` frames and validates to its end and both
//!   indexes agree with it (the checks `seglog check` makes: entries point at batch starts with
//!   the right offsets, time entries hold the running maximum timestamp, no zero tails, no
//!   leftover `.cleaned`/`.swap` files).
//!
//! A failure prints the seed and the crash point; `--seed S --workload W --point P` re-runs
//! exactly that crash point.
//!
//! Usage: `crash [--cases N] [--seed S] [--workload W] [--point P] [--verbose]`.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::too_many_lines,
    reason = "a test harness on small, bounded values"
)]

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use seglog_fs::sim::{CrashPoint, Pages, SimEvent, SimFs, Tear};
use seglog_fs::{FileSystem, OpenMode};
use seglog_log::{LogConfig, LogDir, LogDirOptions, MockClock, PartitionLog, TopicPartition};
use seglog_mmap_index::{OffsetIndex, Problem, TimeIndex};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_segment::naming;
use seglog_segment::scan::{Scan, ScanEnd, scan_batches};

const ROOT: &str = "/crash/logs";
const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

/// splitmix64: small, seedable, reproducible everywhere.
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn chance(&mut self, one_in: u64) -> bool {
        self.below(one_in) == 0
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Rec {
    key: Vec<u8>,
    value: Vec<u8>,
    timestamp: i64,
}

/// What the workload knows about the log.
#[derive(Default, Clone)]
struct Model {
    /// Every version ever appended at each offset.
    appended: BTreeMap<i64, Vec<Rec>>,
    /// The log's content now, as the workload made it.
    current: BTreeMap<i64, Rec>,
    /// Offsets acknowledged durable (and still current).
    durable: BTreeSet<i64>,
    /// Offsets a compaction may have removed (not the latest of their key when it ran).
    cleanable: BTreeSet<i64>,
    /// Offsets below this may have been deleted by retention.
    log_start: i64,
    /// The batches appended and still current: base offset to last offset.
    batches: BTreeMap<i64, i64>,
}

impl Model {
    fn required(&self) -> BTreeMap<i64, Rec> {
        self.durable
            .iter()
            .filter(|o| **o >= self.log_start && !self.cleanable.contains(o))
            .filter_map(|o| self.current.get(o).map(|r| (*o, r.clone())))
            .collect()
    }
}

/// The expectations for images captured during one operation.
struct Expect {
    required: BTreeMap<i64, Rec>,
    op: String,
    partition: Presence,
}

/// Whether the partition log may, or must, be gone from an image.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Presence {
    /// Present, unless it holds no durable record yet.
    Kept,
    /// Being deleted: whole, or gone.
    Deleting,
    /// Deleted.
    Deleted,
}

/// The log's configuration; `segment_bytes` small enough makes appends roll by size.
fn config(segment_bytes: u64) -> LogConfig {
    let segment_bytes = segment_bytes.to_string();
    LogConfig::from_pairs([
        ("internal.segment.bytes", segment_bytes.as_str()),
        ("segment.index.bytes", "1024"),
        ("index.interval.bytes", "150"),
        ("file.delete.delay.ms", "0"),
        ("cleanup.policy", "compact,delete"),
        ("retention.ms", "-1"),
        ("min.compaction.lag.ms", "0"),
    ])
    .unwrap()
}

fn options(clock: &MockClock, segment_bytes: u64) -> LogDirOptions {
    LogDirOptions {
        default_config: config(segment_bytes),
        recovery_threads: 1,
        time: Arc::new(clock.clone()),
        progress: None,
        recover_all: false,
    }
}

fn tp() -> TopicPartition {
    TopicPartition::new("crash", 0)
}

fn batch(base: i64, recs: &[Rec], codec: Compression) -> Vec<u8> {
    let records = recs
        .iter()
        .enumerate()
        .map(|(i, r)| NewRecord::new(i as i32, r.timestamp, Some(&r.key[..]), Some(&r.value[..])));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&BatchOptions::new(base, codec), records, &mut out)
        .unwrap();
    out
}

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

/// Reads every record from `from` to the log end, as (offset, record). A read that returns
/// nothing ends the walk (a batch-granular truncation can leave the log end past the last batch).
fn read_all(log: &PartitionLog<SimFs>, from: i64) -> Result<Vec<(i64, Rec)>, String> {
    let mut out = Vec::new();
    let mut next = from;
    let mut buf = Vec::new();
    while next < log.log_end_offset() {
        let fetch = log
            .read(next, 1 << 20, seglog_log::Isolation::LogEnd, true)
            .map_err(|e| format!("read at {next}: {e}"))?;
        buf.clear();
        fetch
            .read_into(&mut buf)
            .map_err(|e| format!("read at {next}: {e}"))?;
        if buf.is_empty() {
            break;
        }
        let mut advanced = next;
        for framed in seglog_record_format::batches(&buf) {
            let framed = framed.map_err(|e| format!("batch near {next}: {e}"))?;
            let decoded = framed
                .decode()
                .map_err(|e| format!("batch near {next}: {e}"))?;
            advanced = advanced.max(decoded.last_offset() + 1);
            for r in decoded
                .to_records()
                .map_err(|e| format!("records near {next}: {e}"))?
            {
                if r.offset >= next {
                    out.push((
                        r.offset,
                        Rec {
                            key: r.key.unwrap_or_default(),
                            value: r.value.unwrap_or_default(),
                            timestamp: r.timestamp,
                        },
                    ));
                }
            }
        }
        if advanced <= next {
            return Err(format!(
                "a read at {next} returns only batches that end before it"
            ));
        }
        next = advanced;
    }
    Ok(out)
}

/// The checks of `seglog check`, on a partition directory of `fs` after a clean close.
fn check_partition(fs: &SimFs, dir: &Path) -> Vec<String> {
    let mut problems = Vec::new();
    let Ok(files) = fs.read_dir(dir) else {
        return problems;
    };
    let backing = fs.index_backing();
    let logs: Vec<(i64, PathBuf)> = files
        .iter()
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?;
            if name.ends_with(naming::CLEANED_FILE_SUFFIX)
                || name.ends_with(naming::SWAP_FILE_SUFFIX)
            {
                problems.push(format!("{}: leftover file", p.display()));
            }
            let base = naming::offset_from_file_name(name.strip_suffix(naming::LOG_FILE_SUFFIX)?)?;
            Some((base, p.clone()))
        })
        .collect();
    let mut previous = i64::MIN;
    for (i, (base, path)) in logs.iter().enumerate() {
        let active = i + 1 == logs.len();
        let file = fs.open(path, OpenMode::ReadOnly).unwrap();
        let len = seglog_fs::File::len(&file).unwrap();
        let mut batches: Vec<(u64, i64, i64)> = Vec::new();
        let mut last = base - 1;
        let scan = scan_batches(&file, path, 0, len, 1 << 20, |position, framed| {
            let decoded = match framed.decode() {
                Ok(d) => d,
                Err(e) => return Ok(ControlFlow::Break(format!("at {position}: {e}"))),
            };
            if let Err(e) = decoded.validate() {
                return Ok(ControlFlow::Break(format!("at {position}: {e}")));
            }
            let first = match &decoded {
                seglog_record_format::Batch::V2(b) => b.base_offset(),
                seglog_record_format::Batch::Legacy(b) => b.last_offset(),
            };
            if first <= last {
                return Ok(ControlFlow::Break(format!(
                    "at {position}: offsets go back to {first}"
                )));
            }
            last = decoded.last_offset();
            batches.push((position, decoded.last_offset(), decoded.max_timestamp()));
            Ok(ControlFlow::Continue(()))
        });
        match scan {
            Ok(Scan::Ended(ScanEnd::Clean { position })) if position == len => {}
            other => problems.push(format!(
                "{}: the .log does not scan clean: {other:?}",
                path.display()
            )),
        }
        if *base <= previous {
            problems.push(format!("{}: overlaps the previous segment", path.display()));
        }
        if let Some((_, l, _)) = batches.last() {
            previous = *l;
        }
        let by_position: BTreeMap<u64, i64> = batches.iter().map(|(p, o, _)| (*p, *o)).collect();
        let index_path = naming::offset_index_file(dir, *base, "");
        match OffsetIndex::open_read_only_with(&backing, &index_path, *base) {
            Ok(index) => {
                let report = index.verify().unwrap();
                let mut end = report.entries;
                for problem in &report.problems {
                    match problem {
                        Problem::ZeroTail { first_slot, .. } => {
                            end = *first_slot;
                            if !active {
                                problems.push(format!("{}: {problem:?}", index_path.display()));
                            }
                        }
                        other => problems.push(format!("{}: {other:?}", index_path.display())),
                    }
                }
                for slot in 0..end {
                    let e = index.entry(slot).unwrap();
                    if by_position.get(&u64::from(e.position)) != Some(&e.offset) {
                        problems.push(format!(
                            "{}: entry {slot} ({}, {}) is not a batch of the log",
                            index_path.display(),
                            e.offset,
                            e.position
                        ));
                    }
                }
            }
            Err(_) if batches.is_empty() => {}
            Err(e) => problems.push(format!("{}: {e}", index_path.display())),
        }
        let time_path = naming::time_index_file(dir, *base, "");
        if let Ok(index) = TimeIndex::open_read_only_with(&backing, &time_path, *base) {
            let report = index.verify().unwrap();
            let mut end = report.entries;
            for problem in &report.problems {
                match problem {
                    Problem::ZeroTail { first_slot, .. } => {
                        end = *first_slot;
                        if !active {
                            problems.push(format!("{}: {problem:?}", time_path.display()));
                        }
                    }
                    Problem::LastTimestampZero if active => {}
                    other => problems.push(format!("{}: {other:?}", time_path.display())),
                }
            }
            let mut running = -1_i64;
            let maxima: BTreeMap<i64, i64> = batches
                .iter()
                .map(|(_, last, ts)| {
                    running = running.max(*ts);
                    (*last, running)
                })
                .collect();
            for slot in 0..end {
                let e = index.entry(slot).unwrap();
                if maxima.get(&e.offset) != Some(&e.timestamp) {
                    problems.push(format!(
                        "{}: entry {slot} ({}, {}) disagrees with the log",
                        time_path.display(),
                        e.timestamp,
                        e.offset
                    ));
                }
            }
        }
    }
    problems
}

/// Reopens a crash image and checks every invariant.
fn check_image(
    image: &SimFs,
    segment_bytes: u64,
    clock: &MockClock,
    model: &Model,
    expect: &Expect,
) -> Result<(), String> {
    let root = Path::new(ROOT);
    let (dir, _report) = LogDir::open(image.clone(), root, options(clock, segment_bytes))
        .map_err(|e| format!("open: {e}"))?;
    if let Some(left) = image
        .read_dir(root)
        .map_err(|e| format!("list: {e}"))?
        .iter()
        .find(|p| p.to_string_lossy().ends_with("-delete"))
    {
        return Err(format!("the open left {} behind", left.display()));
    }
    let Some(log) = dir.log(&tp()) else {
        if expect.required.is_empty() || expect.partition != Presence::Kept {
            return Ok(());
        }
        return Err("the partition log is gone".into());
    };
    if expect.partition == Presence::Deleted {
        return Err("the deleted partition log is back".into());
    }
    log.set_roll_flush_inline(true);
    let read = read_all(&log, log.log_start_offset())?;
    let mut previous = i64::MIN;
    let mut present = BTreeMap::new();
    for (offset, rec) in read {
        if offset <= previous {
            return Err(format!("offset {offset} follows {previous}"));
        }
        previous = offset;
        match model.appended.get(&offset) {
            Some(versions) if versions.contains(&rec) => {}
            _ => {
                return Err(format!(
                    "offset {offset} holds data never appended there: {rec:?}"
                ));
            }
        }
        present.insert(offset, rec);
    }
    for (offset, rec) in &expect.required {
        if present.get(offset) != Some(rec) {
            return Err(format!(
                "durable offset {offset} is {} (log start {}, end {})",
                if present.contains_key(offset) {
                    "different"
                } else {
                    "missing"
                },
                log.log_start_offset(),
                log.log_end_offset()
            ));
        }
    }
    let end = log.log_end_offset();
    let probe = Rec {
        key: b"probe".to_vec(),
        value: b"after the crash".to_vec(),
        timestamp: clock_now(clock),
    };
    let mut bytes = batch(0, std::slice::from_ref(&probe), Compression::None);
    log.append_as_leader(&mut bytes)
        .map_err(|e| format!("append after reopen: {e}"))?;
    let after = read_all(&log, end)?;
    if after.last().map(|(o, r)| (*o, r)) != Some((end, &probe)) {
        return Err(format!(
            "the append after reopen does not read back at {end}"
        ));
    }
    dir.close()
        .map_err(|e| format!("clean close after reopen: {e}"))?;
    drop(log);
    drop(dir);
    let problems = check_partition(image, &root.join(tp().dir_name()));
    if !problems.is_empty() {
        return Err(format!("check: {}", problems.join("; ")));
    }
    Ok(())
}

/// An offset or time index, under any suffix (`.deleted`, `.cleaned`, `.swap`).
fn is_index_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.contains(".index") || n.contains(".timeindex"))
}

fn clock_now(clock: &MockClock) -> i64 {
    seglog_log::Time::now_ms(clock)
}

/// Runs workload `w` of `seed`, capturing crash images; returns (op descriptions, images with
/// the index of the operation each was captured in, the model before each operation).
struct Run {
    segment_bytes: u64,
    /// The workload ends by deleting the partition.
    deletes: bool,
    /// Rolls that appends made by size (the segment count grew during an append).
    rolled_by_size: u64,
    images: Vec<(u64, SimEvent, usize, SimFs)>,
    expects: Vec<Expect>,
    models: Vec<Model>,
}

fn run_workload(seed: u64, workload: u64) -> Run {
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
    let ops = 20 + rng.below(40);
    for _ in 0..ops {
        clock.advance(1 + rng.below(50) as i64);
        let choice = rng.below(100);
        let codec = CODECS[rng.below(5) as usize];
        let ts = clock_now(&clock);
        match choice {
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
                let segments_before = log.segment_count();
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
                log.set_high_watermark(log.log_end_offset());
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
                dir.truncate_to(&tp(), to).unwrap();
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
                begin(&model, "checkpoint".into(), &mut expects, &mut models);
                dir.checkpoint().unwrap();
            }
            _ => {
                let clean = rng.chance(2);
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
                if clean {
                    dir.close().unwrap();
                    model.durable.extend(model.current.keys().copied());
                }
                log.wait_for_background_flushes();
                drop(log);
                drop(dir);
                let (d, _) =
                    LogDir::open(fs.clone(), root, options(&clock, segment_bytes)).unwrap();
                dir = d;
                log = dir.log(&tp()).unwrap();
                log.set_roll_flush_inline(true);
                model.log_start = model.log_start.max(0);
                log.set_high_watermark(log.log_end_offset());
            }
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
        rolled_by_size,
        images,
        expects,
        models,
    }
}

fn arg(args: &[String], name: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a number"))
        })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cases = arg(&args, "--cases").unwrap_or(1000);
    let seed = arg(&args, "--seed").unwrap_or(0x5E6_106);
    let only_workload = arg(&args, "--workload");
    let only_point = arg(&args, "--point");
    let verbose = args.iter().any(|a| a == "--verbose");
    let started = std::time::Instant::now();
    let mut explored = 0_u64;
    let mut failures = 0_u64;
    let mut by_event: BTreeMap<String, u64> = BTreeMap::new();
    let mut workload = only_workload.unwrap_or(0);
    let (mut small_segments, mut segments_rolled_by_size) = (0_u64, 0_u64);
    let mut deleting = 0_u64;
    while explored < cases {
        let run = run_workload(seed, workload);
        deleting += u64::from(run.deletes);
        if run.segment_bytes < 1 << 20 {
            small_segments += 1;
            segments_rolled_by_size += run.rolled_by_size;
        }
        for (number, event, op, image) in run.images {
            if only_point.is_some_and(|p| p != number) {
                continue;
            }
            explored += 1;
            let kind = match event {
                SimEvent::Write(_) => "write".to_owned(),
                other => format!("{other:?}"),
            };
            *by_event.entry(kind).or_default() += 1;
            let expect = &run.expects[op];
            if verbose {
                let pdir = Path::new(ROOT).join(tp().dir_name());
                let top = image.read_dir(Path::new(ROOT)).unwrap_or_default();
                for f in top.iter().filter(|f| **f != pdir) {
                    let bytes = image.live_bytes(f).unwrap_or_default();
                    eprintln!(
                        "  image {} {:?}",
                        f.display(),
                        String::from_utf8_lossy(&bytes)
                    );
                }
                for f in image.read_dir(&pdir).unwrap_or_default() {
                    let bytes = image.live_bytes(&f).unwrap_or_default();
                    let shown = if is_index_file(&f) {
                        format!("{:?}", &bytes[..bytes.len().min(48)])
                    } else {
                        String::new()
                    };
                    eprintln!("  image {} {} {shown}", f.display(), bytes.len());
                }
            }
            let clock = MockClock::new(10_000_000);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                check_image(&image, run.segment_bytes, &clock, &run.models[op], expect)
            }))
            .unwrap_or_else(|p| {
                Err(format!(
                    "panic: {}",
                    p.downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| p.downcast_ref::<&str>().copied())
                        .unwrap_or("?")
                ))
            });
            if let Err(problem) = result {
                failures += 1;
                if verbose {
                    let pdir = Path::new(ROOT).join(tp().dir_name());
                    for f in image.read_dir(&pdir).unwrap_or_default() {
                        eprintln!(
                            "  file {} {:?}",
                            f.display(),
                            image.live_bytes(&f).map(|b| b.len())
                        );
                    }
                    for (i, e) in run.expects.iter().enumerate().take(op + 1) {
                        eprintln!(
                            "  op {i}: {} (required {:?})",
                            e.op,
                            e.required.keys().collect::<Vec<_>>()
                        );
                    }
                }
                eprintln!(
                    "FAIL seed {seed} workload {workload} point {number} ({event:?} during op {op}: {}): {problem}\n  reproduce: cargo xtask crash --seed {seed} --workload {workload} --point {number}",
                    expect.op
                );
            } else if verbose {
                eprintln!(
                    "ok workload {workload} point {number} ({event:?} during {})",
                    expect.op
                );
            }
            if explored >= cases {
                break;
            }
        }
        if only_workload.is_some() {
            break;
        }
        workload += 1;
    }
    println!(
        "crash: {explored} crash points in {} workloads (seed {seed}; {small_segments} with small segments, {segments_rolled_by_size} rolls by size inside appends, {deleting} deleting the partition), {failures} failures, {:.1} s; points by event: {by_event:?}",
        workload + 1 - only_workload.unwrap_or(0),
        started.elapsed().as_secs_f64()
    );
    if failures > 0 {
        std::process::exit(1);
    }
}
