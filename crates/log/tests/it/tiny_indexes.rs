//! A partition with `segment.index.bytes=1024` (128 offset slots, 85 time slots) and
//! `index.interval.bytes=0` (an entry due at every batch but a segment's first), the settings of
//! issue 17's report (docs/reliability.md, section 10). Written by several processes that each
//! crashed, every unclean load rebuilds indexes that need more entries than append gave them;
//! it keeps every record, plans nothing afterwards, and compaction cleans it, including a group
//! of segments whose cleaned segment has more batches than its indexes hold.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use std::collections::BTreeMap;
use std::path::Path;

use crate::common;

use seglog_fs::RealFs;
use seglog_log::{
    CleanOptions, ListOffset, LoadOptions, LogConfig, MockClock, PartitionLog, plan_partition,
};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

fn config() -> LogConfig {
    LogConfig::from_pairs([
        ("segment.bytes", "1048576"),
        ("segment.index.bytes", "1024"),
        ("index.interval.bytes", "0"),
        ("cleanup.policy", "compact"),
    ])
    .unwrap()
}

fn unclean(recovery_point: i64) -> LoadOptions {
    LoadOptions::default()
        .with_recovery_point(recovery_point)
        .with_log_start_offset(0)
        .with_had_clean_shutdown(false)
        .with_discard(false)
}

/// Appends `count` one-record batches, values `v<n>` for `n` from `first`, keys `k<n % keys>`,
/// timestamps `ts(n)`.
fn append(log: &PartitionLog, first: usize, count: usize, keys: usize, ts: &dyn Fn(usize) -> i64) {
    let mut builder = BatchBuilder::new();
    for n in first..first + count {
        let (key, value) = (format!("k{}", n % keys), format!("v{n}"));
        let record = NewRecord::new(0, ts(n), Some(key.as_bytes()), Some(value.as_bytes()));
        let mut batch = Vec::new();
        builder
            .build(
                &BatchOptions::new(0, Compression::None),
                [record],
                &mut batch,
            )
            .unwrap();
        log.append_as_leader(&mut batch).unwrap();
    }
}

/// The latest value of each key, as compaction must leave it.
fn latest(values: &[(i64, String)], keys: usize) -> BTreeMap<String, String> {
    values
        .iter()
        .map(|(_, v)| {
            let n: usize = v[1..].parse().unwrap();
            (format!("k{}", n % keys), v.clone())
        })
        .collect()
}

fn plans_nothing(dir: &Path, recovery_point: i64) {
    let plan = plan_partition(&RealFs, dir, 0, 1024, unclean(recovery_point)).unwrap();
    assert!(plan.is_empty(), "{plan:?}");
}

#[test]
fn a_partition_written_by_crashed_processes_recovers_every_record_and_compacts() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let keys = 300;
    let mut written = 0;
    let mut recovery_point = 0;
    // Six processes, each appending 150 batches (a new timestamp every other batch) and crashing:
    // their segments span process boundaries, where each open restarted the index byte count.
    for round in 0..6 {
        let (log, _) = PartitionLog::open(
            RealFs,
            &dir,
            config(),
            unclean(recovery_point),
            std::sync::Arc::new(clock.clone()),
        )
        .unwrap();
        assert_eq!(log.log_end_offset(), written as i64, "round {round}");
        append(&log, written, 150, keys, &|n| 1_000 + (n / 2) as i64);
        written += 150;
        recovery_point = log.recovery_point();
        drop(log);
    }
    // Recovery from offset 0 rebuilds every segment's indexes.
    let (log, _) = common::open(&dir, config(), unclean(0), &clock);
    let values = common::read_values(&log, 0);
    assert_eq!(values.len(), written);
    assert!(
        values
            .iter()
            .enumerate()
            .all(|(i, (o, v))| *o == i as i64 && *v == format!("v{i}"))
    );
    // Every timestamp is found at its first record.
    for n in (0..written).step_by(7) {
        let ts = 1_000 + (n / 2) as i64;
        let found = log
            .offset_for_timestamp(ListOffset::Timestamp(ts))
            .unwrap()
            .unwrap();
        assert_eq!((found.timestamp, found.offset), (ts, (n - n % 2) as i64));
    }
    let segments = log.segment_count();
    assert!(segments > 6, "{segments} segments");
    log.close().unwrap();
    drop(log);
    plans_nothing(&dir, 0);

    let (log, _) = common::open(&dir, config(), unclean(0), &clock);
    log.set_high_watermark(log.log_end_offset());
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert!(report.segments_replaced >= segments - 1, "{report:?}");
    let active = *log.segments().keys().next_back().unwrap();
    let cleaned = common::read_values(&log, 0);
    // Below the active segment, each key's latest record; from it on, every record.
    let survivors = latest(&values[..usize::try_from(active).unwrap()], keys);
    let expected: Vec<(i64, String)> = values
        .iter()
        .filter(|(o, v)| *o >= active || survivors.values().any(|s| s == v))
        .cloned()
        .collect();
    assert_eq!(cleaned, expected);
    assert_eq!(latest(&cleaned, keys), latest(&values, keys));
    log.close().unwrap();
    drop(log);
    plans_nothing(&dir, 0);
    let (log, _) = common::open(&dir, config(), unclean(0), &clock);
    assert_eq!(common::read_values(&log, 0), cleaned);
}

#[test]
fn a_cleaned_group_with_more_batches_than_its_indexes_hold_keeps_them_all() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, config(), LoadOptions::default(), &clock);
    // Segments of 43 batches with distinct keys and timestamps: 42 entries in each index. Two of
    // them fit one group (504 + 504 time index bytes of 1024), and their cleaned segment, keeping
    // all 86 batches, has 85 entries due where the time index takes 84 and its final entry.
    let mut written = 0;
    for _ in 0..5 {
        append(&log, written, 43, usize::MAX, &|n| 1_000 + n as i64);
        written += 43;
        log.roll().unwrap();
    }
    let entries: Vec<(usize, usize)> = log
        .segments()
        .values()
        .take(5)
        .map(|s| s.index_entries().unwrap())
        .collect();
    assert_eq!(entries, vec![(42, 42); 5]);
    log.set_high_watermark(log.log_end_offset());
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert_eq!(
        (report.segments_replaced, report.groups),
        (5, 3),
        "{report:?}"
    );
    assert_eq!(report.records_kept, written as u64);
    let first = log
        .segments()
        .values()
        .next()
        .unwrap()
        .index_entries()
        .unwrap();
    assert_eq!(first, (85, 85));
    let values = common::read_values(&log, 0);
    assert_eq!(values.len(), written);
    for n in 0..written {
        let found = log
            .offset_for_timestamp(ListOffset::Timestamp(1_000 + n as i64))
            .unwrap()
            .unwrap();
        assert_eq!(found.offset, n as i64);
    }
    log.close().unwrap();
    drop(log);
    plans_nothing(&dir, 0);
}
