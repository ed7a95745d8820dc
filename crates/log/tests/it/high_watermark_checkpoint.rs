//! High watermarks in `replication-offset-checkpoint`, as Kafka's `ReplicaManager` keeps them
//! (`checkpointHighWatermarks`: every partition of the directory, on close and at the
//! checkpoint interval) and as a partition takes its own back when it opens (`updateHighWatermark`:
//! bounded to the log start and end offsets).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use seglog_fs::sim::{SimFs, Tear};
use seglog_log::{
    LogDir, LogDirOptions, MockClock, OffsetCheckpoint, REPLICATION_OFFSET_CHECKPOINT, Scope,
    TopicPartition,
};

fn options(clock: &MockClock) -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(common::small_config(1 << 20))
        .with_recovery_threads(1)
        .with_time(Arc::new(clock.clone()))
}

fn high_watermarks(fs: &SimFs, root: &Path) -> BTreeMap<TopicPartition, i64> {
    OffsetCheckpoint::new(fs.clone(), root.join(REPLICATION_OFFSET_CHECKPOINT))
        .read()
        .unwrap()
}

fn write_high_watermarks(fs: &SimFs, root: &Path, entries: &[(&TopicPartition, i64)]) {
    let entries = entries.iter().map(|(tp, o)| ((*tp).clone(), *o)).collect();
    OffsetCheckpoint::new(fs.clone(), root.join(REPLICATION_OFFSET_CHECKPOINT))
        .write(&entries)
        .unwrap();
}

#[test]
fn close_writes_every_high_watermark_durably_and_open_takes_it_back() {
    let fs = SimFs::new();
    let root = Path::new("/sim/logs");
    let clock = MockClock::new(1_000);
    let (a, b) = (
        TopicPartition::new("orders", 0),
        TopicPartition::new("orders", 1),
    );
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    for tp in [&a, &b] {
        let log = dir.create_log(tp, None).unwrap();
        log.append_as_leader(&mut common::producer_batch("r", 10, 1_000))
            .unwrap();
    }
    // Appends do not move a high watermark: a replica manager does. A log whose high watermark
    // nobody set has no entry.
    dir.log(&a).unwrap().set_high_watermark(7);
    dir.checkpoint().unwrap();
    assert_eq!(high_watermarks(&fs, root), BTreeMap::from([(a.clone(), 7)]));
    dir.log(&b).unwrap().set_high_watermark(10);
    dir.close().unwrap();
    drop(dir);
    // Synced: a power loss right after the close keeps them.
    let fs = fs.crash(Tear::DropAll);
    assert_eq!(
        high_watermarks(&fs, root),
        BTreeMap::from([(a.clone(), 7), (b.clone(), 10)])
    );
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    assert_eq!(dir.log(&a).unwrap().high_watermark(), 7);
    assert_eq!(dir.log(&b).unwrap().high_watermark(), 10);
    assert_eq!(dir.log(&a).unwrap().log_end_offset(), 10);
}

#[test]
fn a_checkpointed_high_watermark_is_clamped_to_the_log_and_none_means_the_log_end() {
    let fs = SimFs::new();
    let root = Path::new("/sim/logs");
    let clock = MockClock::new(1_000);
    let tps: Vec<TopicPartition> = (0..3).map(|p| TopicPartition::new("t", p)).collect();
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    for tp in &tps {
        let log = dir.create_log(tp, None).unwrap();
        log.append_as_leader(&mut common::producer_batch("r", 10, 1_000))
            .unwrap();
        log.set_high_watermark(10);
    }
    dir.log(&tps[1]).unwrap().delete_records_before(4).unwrap();
    dir.close().unwrap();
    drop(dir);
    // Past the log end, below the log start, and no entry at all.
    write_high_watermarks(&fs, root, &[(&tps[0], 25), (&tps[1], 2)]);
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    let hw = |tp: &TopicPartition| dir.log(tp).unwrap().high_watermark();
    assert_eq!((hw(&tps[0]), hw(&tps[1]), hw(&tps[2])), (10, 4, 10));
}

#[test]
fn a_scoped_open_keeps_the_other_partitions_entries() {
    let fs = SimFs::new();
    let root = Path::new("/sim/logs");
    let clock = MockClock::new(1_000);
    let (a, b) = (
        TopicPartition::new("orders", 0),
        TopicPartition::new("orders", 1),
    );
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    for tp in [&a, &b] {
        let log = dir.create_log(tp, None).unwrap();
        log.append_as_leader(&mut common::producer_batch("r", 10, 1_000))
            .unwrap();
        log.set_high_watermark(6);
    }
    dir.close().unwrap();
    drop(dir);
    let (dir, _) = LogDir::open_scoped(
        fs.clone(),
        root,
        options(&clock),
        Scope::partition(a.clone()),
    )
    .unwrap();
    dir.log(&a).unwrap().set_high_watermark(9);
    dir.close().unwrap();
    assert_eq!(high_watermarks(&fs, root), BTreeMap::from([(a, 9), (b, 6)]));
}

#[test]
fn a_log_nobody_sets_a_high_watermark_for_has_no_entry_and_reads_to_its_end() {
    let fs = SimFs::new();
    let root = Path::new("/sim/logs");
    let clock = MockClock::new(1_000);
    let tp = TopicPartition::new("orders", 0);
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    let log = dir.create_log(&tp, None).unwrap();
    log.append_as_leader(&mut common::producer_batch("r", 10, 1_000))
        .unwrap();
    assert!(!log.high_watermark_is_set());
    drop(log);
    dir.close().unwrap();
    drop(dir);
    assert!(high_watermarks(&fs, root).is_empty());
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    let log = dir.log(&tp).unwrap();
    assert_eq!(
        (log.high_watermark(), log.high_watermark_is_set()),
        (10, false)
    );
}
