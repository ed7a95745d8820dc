//! Model test for compaction: random keyed appends with overwrites, tombstones and unkeyed
//! records, transactions of three producers committed and aborted (markers and `.txnindex`
//! entries written as a leader writes them), cleanings at random points (some with a key map too
//! small for one pass). After every cleaning: below the cleaned end, no aborted record is left, and
//! each key's latest committed record survives exactly once at its original offset and nothing
//! older does; unkeyed records there are gone; every committed record above survives untouched;
//! offsets only increase; a read_committed consumer (aborted transactions from the `.txnindex`
//! files) sees exactly the committed records left. Tombstones disappear only after their delete
//! horizon, and a final pass far past every horizon leaves exactly the live keys.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::type_complexity,
    reason = "tests"
)]

use crate::common;
use crate::common::txn::{Data, KeyValue, Marker, Producer};

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use seglog_log::{
    AbortedTransaction, CleanOptions, Isolation, IsolationLevel, LoadOptions, LogConfig, MockClock,
    PartitionLog, consumer_records,
};
use seglog_record_format::{Batch, Compression, ControlRecordType};
use seglog_segment::txn_index::AbortedTxn;

const RETENTION_MS: i64 = 1_000;

#[derive(Debug, Clone)]
enum Op {
    /// Records: (key, value), key 255 = unkeyed, value None = tombstone.
    Append(Vec<(u8, Option<u16>)>, u8),
    /// A transactional batch of producer 1, 2 or 3 (keyed records), opening its transaction if
    /// none is open.
    Txn(u8, Vec<(u8, Option<u16>)>, u8),
    /// The producer's COMMIT (true) or ABORT marker, if it has a transaction open.
    End(u8, bool),
    Clean {
        budget_keys: u8,
    },
    Advance(u16),
    Roll,
}

fn op() -> impl Strategy<Value = Op> {
    let record = (
        prop_oneof![9 => 0_u8..12, 1 => Just(255_u8)],
        prop_oneof![5 => any::<u16>().prop_map(Some), 1 => Just(None)],
    );
    let keyed = (
        0_u8..12,
        prop_oneof![5 => any::<u16>().prop_map(Some), 1 => Just(None)],
    );
    prop_oneof![
        6 => (prop::collection::vec(record, 1..6), 0_u8..5).prop_map(|(r, c)| Op::Append(r, c)),
        3 => (1_u8..4, prop::collection::vec(keyed, 1..4), 0_u8..5)
            .prop_map(|(p, r, c)| Op::Txn(p, r, c)),
        2 => (1_u8..4, any::<bool>()).prop_map(|(p, c)| Op::End(p, c)),
        2 => (1_u8..40).prop_map(|budget_keys| Op::Clean { budget_keys }),
        2 => (0_u16..800).prop_map(Op::Advance),
        1 => Just(Op::Roll),
    ]
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Rec {
    offset: i64,
    key: Option<u8>,
    value: Option<u16>,
}

fn read_all(log: &PartitionLog) -> Vec<Rec> {
    let mut out = Vec::new();
    let mut next = log.log_start_offset();
    let mut buf = Vec::new();
    while next < log.log_end_offset() {
        let fetch = log.read(next, 1 << 20, Isolation::LogEnd, true).unwrap();
        fetch.read_into(&mut buf).unwrap();
        if buf.is_empty() {
            break;
        }
        let before = out.len();
        let mut last = next;
        for b in seglog_record_format::batches(&buf) {
            let b = b.unwrap();
            b.validate().unwrap();
            let decoded = b.decode().unwrap();
            last = last.max(decoded.last_offset() + 1);
            if matches!(&decoded, Batch::V2(v2) if v2.is_control()) {
                continue;
            }
            for r in decoded.to_records().unwrap() {
                if r.offset >= next {
                    out.push(Rec {
                        offset: r.offset,
                        key: r.key.map(|k| k[0]),
                        value: r.value.map(|v| u16::from_be_bytes([v[0], v[1]])),
                    });
                }
            }
        }
        next = if out.len() > before {
            out.last().unwrap().offset + 1
        } else {
            last
        };
    }
    out
}

fn codec(n: u8) -> Compression {
    [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ][n as usize % 5]
}

/// The transactions of the model: what a leader's producer state would know.
#[derive(Default)]
struct Txns {
    sequences: BTreeMap<u8, i32>,
    /// Each open transaction's first offset and record offsets.
    open: BTreeMap<u8, (i64, Vec<i64>)>,
    /// Offsets of records of aborted transactions.
    aborted: BTreeSet<i64>,
}

impl Txns {
    /// The last stable offset: the first offset of the oldest open transaction, or the log end.
    fn last_stable_offset(&self, log_end: i64) -> i64 {
        self.open
            .values()
            .map(|(first, _)| *first)
            .min()
            .unwrap_or(log_end)
    }

    fn append(
        &mut self,
        log: &PartitionLog,
        producer: u8,
        records: &[(u8, Option<u16>)],
        codec: Compression,
        now: i64,
    ) -> Vec<Rec> {
        let sequence = self.sequences.entry(producer).or_insert(0);
        let seq = *sequence;
        *sequence += records.len() as i32;
        let kv: Vec<KeyValue> = records
            .iter()
            .map(|(k, v)| (Some(vec![*k]), v.map(|v| v.to_be_bytes().to_vec())))
            .collect();
        let mut batch = Vec::new();
        Data::with_records(log.log_end_offset(), kv)
            .producer(
                Producer {
                    id: i64::from(producer),
                    epoch: 0,
                },
                seq,
                true,
            )
            .codec(codec)
            .leader_epoch(0)
            .timestamp(now)
            .write(&mut batch);
        let first = log.append_as_follower(&batch).unwrap().first_offset;
        let offsets: Vec<i64> = (0..records.len() as i64).map(|i| first + i).collect();
        let open = self.open.entry(producer).or_insert((first, Vec::new()));
        open.1.extend(&offsets);
        records
            .iter()
            .zip(offsets)
            .map(|((k, v), offset)| Rec {
                offset,
                key: Some(*k),
                value: *v,
            })
            .collect()
    }

    /// The marker, and for an ABORT the `.txnindex` entry of the segment holding it, with the
    /// last stable offset a leader would record.
    fn end(&mut self, log: &PartitionLog, producer: u8, commit: bool) {
        let Some((first, offsets)) = self.open.remove(&producer) else {
            return;
        };
        let kind = if commit {
            ControlRecordType::Commit
        } else {
            ControlRecordType::Abort
        };
        let mut batch = Vec::new();
        Marker::new(
            log.log_end_offset(),
            Producer {
                id: i64::from(producer),
                epoch: 0,
            },
            kind,
        )
        .timestamp(0)
        .leader_epoch(0)
        .write(&mut batch);
        let marker = log.append_as_follower(&batch).unwrap().first_offset;
        if !commit {
            // The append wrote the `.txnindex` entry, as Kafka's leader does.
            let lso = self.last_stable_offset(marker + 1);
            let written = log.active_segment().all_aborted_txns().unwrap();
            assert_eq!(
                written.last(),
                Some(&AbortedTxn::new(i64::from(producer), first, marker, lso))
            );
            self.aborted.extend(offsets);
        }
    }
}

/// What a read_committed consumer returns from the whole log, the aborted transactions taken
/// from the `.txnindex` files.
fn read_committed(log: &PartitionLog) -> Vec<Rec> {
    let aborted: Vec<AbortedTransaction> = log
        .segments()
        .values()
        .flat_map(|s| s.all_aborted_txns().unwrap())
        .map(|a| AbortedTransaction {
            producer_id: a.producer_id(),
            first_offset: a.first_offset(),
        })
        .collect();
    let mut bytes = Vec::new();
    for segment in log.segments().values() {
        bytes.extend(std::fs::read(segment.log_path()).unwrap());
    }
    consumer_records(
        &bytes,
        log.log_start_offset(),
        IsolationLevel::ReadCommitted,
        &aborted,
    )
    .map(|r| {
        let r = r.unwrap();
        Rec {
            offset: r.offset,
            key: r.key.map(|k| k[0]),
            value: r.value.map(|v| u16::from_be_bytes([v[0], v[1]])),
        }
    })
    .collect()
}

#[expect(
    clippy::too_many_lines,
    reason = "one model run: the ops, then the final pass"
)]
fn run(ops: &[Op]) {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000_000);
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "700"),
        ("cleanup.policy", "compact"),
        ("delete.retention.ms", "1000"),
        ("segment.index.bytes", "4096"),
        ("index.interval.bytes", "64"),
    ])
    .unwrap();
    let (log, _) = common::open(
        &common::partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    let mut appended: Vec<(Rec, i64)> = Vec::new(); // with the time it was appended
    let mut txns = Txns::default();
    let mut first_dirty = 0;
    for op in ops {
        match op {
            Op::Append(records, c) => {
                let kv: Vec<KeyValue> = records
                    .iter()
                    .map(|(k, v)| {
                        (
                            (*k != 255).then_some(vec![*k]),
                            v.map(|v| v.to_be_bytes().to_vec()),
                        )
                    })
                    .collect();
                let mut batch = Vec::new();
                Data::with_records(0, kv)
                    .codec(codec(*c))
                    .timestamp(clock.now())
                    .write(&mut batch);
                // As a follower, offsets set at the log end: the records without a key that
                // a leader of a compacted topic refuses (Kafka's `validateKey`).
                seglog_record_format::set_base_offset(&mut batch, log.log_end_offset()).unwrap();
                let info = log.append_as_follower(&batch).unwrap();
                for (i, (k, v)) in records.iter().enumerate() {
                    let rec = Rec {
                        offset: info.first_offset + i as i64,
                        key: (*k != 255).then_some(*k),
                        value: *v,
                    };
                    appended.push((rec, clock.now()));
                }
            }
            Op::Txn(producer, records, c) => {
                let recs = txns.append(&log, *producer, records, codec(*c), clock.now());
                appended.extend(recs.into_iter().map(|r| (r, clock.now())));
            }
            Op::End(producer, commit) => txns.end(&log, *producer, *commit),
            Op::Advance(ms) => clock.advance(i64::from(*ms)),
            Op::Roll => {
                log.roll().unwrap();
            }
            Op::Clean { budget_keys } => {
                // Open transactions hold the last stable offset, and so the cleaning, back.
                log.set_high_watermark(txns.last_stable_offset(log.log_end_offset()));
                let before = read_all(&log);
                let options = CleanOptions::default()
                    .with_first_dirty_offset(first_dirty)
                    .with_dedupe_buffer_bytes(usize::from(*budget_keys) * 24 * 2)
                    .with_io_max_bytes_per_second(None)
                    .with_uncleanable_offset(None);
                let report = log.clean(&options).unwrap();
                let after = read_all(&log);
                let end = report.end_offset;
                first_dirty = end;
                check_after_cleaning(&before, &after, end, &txns.aborted);
                // Tombstones only go after their horizon, which starts no earlier than the first
                // cleaning after they were appended.
                let after_offsets: BTreeSet<i64> = after.iter().map(|r| r.offset).collect();
                for r in before.iter().filter(|r| {
                    r.value.is_none()
                        && r.key.is_some()
                        && !after_offsets.contains(&r.offset)
                        && !txns.aborted.contains(&r.offset)
                }) {
                    let latest = before
                        .iter()
                        .filter(|x| {
                            x.key == r.key && x.offset < end && !txns.aborted.contains(&x.offset)
                        })
                        .map(|x| x.offset)
                        .max();
                    if latest == Some(r.offset) {
                        let appended_at = appended
                            .iter()
                            .find(|(a, _)| a.offset == r.offset)
                            .unwrap()
                            .1;
                        assert!(
                            clock.now() >= appended_at + RETENTION_MS,
                            "tombstone {} removed before its horizon",
                            r.offset
                        );
                    }
                }
                // A read_committed consumer sees every record left but those aborted, before
                // the cleaning's end and after it (the open transactions' records are not
                // decided: they are not aborted yet).
                let committed: Vec<Rec> = after
                    .iter()
                    .filter(|r| !txns.aborted.contains(&r.offset))
                    .cloned()
                    .collect();
                assert_eq!(
                    read_committed(&log),
                    committed,
                    "read_committed after cleaning"
                );
            }
        }
    }
    // A final pass: every transaction decided (committed), roll so everything is cleanable,
    // clean, let every horizon pass, clean again.
    let open: Vec<u8> = txns.open.keys().copied().collect();
    for producer in open {
        txns.end(&log, producer, true);
    }
    clock.advance(100 * RETENTION_MS);
    if log.active_segment().size() > 0 {
        log.roll().unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    let options = CleanOptions::default().with_first_dirty_offset(first_dirty);
    let report = log.clean(&options).unwrap();
    // That cleaning set the delete horizon of the tombstones and markers it saw first; they go
    // once it passed.
    clock.advance(2 * RETENTION_MS);
    let options = CleanOptions::default().with_first_dirty_offset(0);
    log.clean(&options).unwrap();
    let survivors = read_all(&log);
    let mut latest: BTreeMap<u8, &Rec> = BTreeMap::new();
    for (r, _) in &appended {
        if let Some(k) = r.key
            && !txns.aborted.contains(&r.offset)
        {
            latest.insert(k, r);
        }
    }
    let expected: Vec<Rec> = {
        let mut v: Vec<Rec> = latest
            .values()
            .filter(|r| r.value.is_some())
            .map(|r| (*r).clone())
            .collect();
        v.sort_by_key(|r| r.offset);
        v
    };
    assert_eq!(
        survivors, expected,
        "final state (end {})",
        report.end_offset
    );
    assert_eq!(read_committed(&log), expected, "final read_committed");
}

fn check_after_cleaning(before: &[Rec], after: &[Rec], end: i64, aborted: &BTreeSet<i64>) {
    // Offsets only increase, and nothing new appears.
    assert!(after.windows(2).all(|w| w[0].offset < w[1].offset));
    let before_by_offset: BTreeMap<i64, &Rec> = before.iter().map(|r| (r.offset, r)).collect();
    for r in after {
        assert_eq!(
            before_by_offset.get(&r.offset),
            Some(&r),
            "record {} changed or appeared",
            r.offset
        );
    }
    // Above the cleaned end, every record not aborted survives (aborted batches go wherever
    // the cleaning meets them).
    let above: Vec<&Rec> = before
        .iter()
        .filter(|r| r.offset >= end && !aborted.contains(&r.offset))
        .collect();
    let above_after: Vec<&Rec> = after
        .iter()
        .filter(|r| r.offset >= end && !aborted.contains(&r.offset))
        .collect();
    assert_eq!(above, above_after);
    // Below it: no aborted record, only each key's latest committed one, and no unkeyed record.
    let mut latest_below: BTreeMap<u8, i64> = BTreeMap::new();
    for r in before
        .iter()
        .filter(|r| r.offset < end && !aborted.contains(&r.offset))
    {
        if let Some(k) = r.key {
            latest_below.insert(k, r.offset);
        }
    }
    for r in after.iter().filter(|r| r.offset < end) {
        assert!(
            !aborted.contains(&r.offset),
            "aborted record {} survived below the cleaned end",
            r.offset
        );
        let k = r
            .key
            .expect("an unkeyed record survived below the cleaned end");
        assert_eq!(
            latest_below[&k], r.offset,
            "an older record of key {k} survived"
        );
    }
    for (k, offset) in &latest_below {
        let r = before_by_offset[offset];
        if r.value.is_some() {
            assert!(
                after.iter().any(|a| a.offset == *offset),
                "the latest value of key {k} was lost"
            );
        }
    }
}

trait Now {
    fn now(&self) -> i64;
}

impl Now for MockClock {
    fn now(&self) -> i64 {
        seglog_log::Time::now_ms(self)
    }
}

proptest! {
    // Past failures replay from `compaction_model.proptest-regressions` beside this file (the
    // default looks for them under `tests/proptest-regressions/`, as `tests/it` holds a `main.rs`).
    #![proptest_config(ProptestConfig {
        cases: 40,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn compaction_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        run(&ops);
    }
}
