//! The producer-state cases of Kafka's `UnifiedLogTest` that drive a whole log (truncation,
//! retention, log-start moves, compaction, rolls and reopening) and were not pinned elsewhere:
//! each test is Kafka's case `testFooBar` as `test_foo_bar`. The listing of every transactional
//! and producer-state case of `UnifiedLogTest`, `LogLoaderTest`, `LogSegmentTest` and
//! `LogCleanerTest`, and where seglog pins each, is docs/kafka-tests-transactions.md.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use std::collections::BTreeSet;
use std::path::Path;

use seglog_log::producer::list_snapshot_files;
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{CleanOptions, LoadOptions, LogConfig, MockClock, PartitionLog, RealFs};
use seglog_record_format::{RecordBatch, write_empty_batch};

use crate::common;
use crate::common::txn::{Data, Producer};

const NOW: i64 = 1_700_000_000_000;

/// Kafka's `TestUtils.records`: one batch at `base` of `values` (keyed where a key is given),
/// of producer `pid` from sequence `seq` (`pid` -1: no producer), stamped `ts`.
fn records(base: i64, values: &[(Option<&[u8]>, &[u8])], pid: i64, seq: i32, ts: i64) -> Vec<u8> {
    let records = values
        .iter()
        .map(|(k, v)| (k.map(<[u8]>::to_vec), Some(v.to_vec())))
        .collect();
    let mut data = Data::with_records(base, records)
        .leader_epoch(0)
        .timestamp(ts);
    if pid >= 0 {
        data = data.producer(Producer { id: pid, epoch: 0 }, seq, false);
    }
    let mut out = Vec::new();
    data.write(&mut out);
    out
}

/// One unkeyed record of producer `pid` at sequence `seq` (`pid` -1: none).
fn one(value: &[u8], pid: i64, seq: i32) -> Vec<u8> {
    records(0, &[(None, value)], pid, seq, NOW)
}

fn config(pairs: &[(&str, &str)]) -> LogConfig {
    LogConfig::from_pairs(pairs.iter().copied()).unwrap()
}

fn open(dir: &Path, config: LogConfig, clock: &MockClock) -> PartitionLog {
    common::open(dir, config, LoadOptions::default(), clock).0
}

fn snapshot_offsets(dir: &Path) -> Vec<i64> {
    list_snapshot_files(&RealFs, dir)
        .unwrap()
        .into_iter()
        .map(|s| s.offset)
        .collect()
}

fn producer_ids(log: &PartitionLog) -> BTreeSet<i64> {
    log.active_producers().into_keys().collect()
}

fn last_seq(log: &PartitionLog, pid: i64) -> i32 {
    log.active_producers()[&pid].last_seq()
}

/// Runs the deletions a file delete delay of 0 leaves to the background (Kafka's scheduler
/// runs them on `mockTime.sleep`).
fn delete_expired(log: &PartitionLog, clock: &MockClock) {
    clock.advance(1);
    log.wait_for_background_flushes();
    log.delete_expired_files().unwrap();
}

/// Kafka's batch of producer 1 at 23 holding `a`, `key:b`, `c`, `key:d`, compacted to its
/// unkeyed records: `a` at 23 and `c` at 25, the batch's last offset still 26 (sequence 3).
fn compacted_batch() -> Vec<u8> {
    let mut options = BatchOptions::new(23, Compression::None);
    options.partition_leader_epoch = 0;
    options.producer_id = 1;
    options.producer_epoch = 0;
    options.base_sequence = 0;
    options.last_offset_delta = Some(3);
    let kept = [
        NewRecord::new(0, NOW, None, Some(b"a")),
        NewRecord::new(2, NOW, None, Some(b"c")),
    ];
    let mut out = Vec::new();
    BatchBuilder::new().build(&options, kept, &mut out).unwrap();
    out
}

#[test]
fn test_update_producer_id_map_with_compacted_data() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_follower(&compacted_batch()).unwrap();
    assert_eq!(last_seq(&log, 1), 3);
}

#[test]
fn test_rebuild_producer_id_map_with_compacted_data() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_follower(&compacted_batch()).unwrap();
    // More data, then a truncation that rebuilds the producer state from the log.
    log.append_as_follower(&records(27, &[(None, b"e"), (None, b"f")], -1, -1, NOW))
        .unwrap();
    assert!(log.truncate_to(27).unwrap());
    assert_eq!(last_seq(&log, 1), 3);
}

#[test]
fn test_rebuild_producer_state_with_empty_compacted_batch() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    // Kafka's batch of two keyed records at 23 with every record compacted away: the empty
    // batch kept for the producer's sequence, last offset 24.
    let mut options = BatchOptions::new(23, Compression::None);
    options.partition_leader_epoch = 0;
    options.producer_id = 1;
    options.producer_epoch = 0;
    options.base_sequence = 0;
    let mut empty = Vec::new();
    write_empty_batch(&options, 1, NOW, &mut empty).unwrap();
    log.append_as_follower(&empty).unwrap();
    log.append_as_follower(&records(25, &[(None, b"e"), (None, b"f")], -1, -1, NOW))
        .unwrap();
    assert!(log.truncate_to(25).unwrap());
    assert_eq!(last_seq(&log, 1), 1);
}

#[test]
fn test_producer_id_map_truncate_to() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_leader(&mut one(b"a", -1, -1)).unwrap();
    log.append_as_leader(&mut one(b"b", -1, -1)).unwrap();
    log.take_producer_snapshot().unwrap();
    log.append_as_leader(&mut one(b"c", -1, -1)).unwrap();
    log.take_producer_snapshot().unwrap();

    for (to, snapshot) in [(2, Some(2)), (1, Some(1)), (0, None)] {
        log.truncate_to(to).unwrap();
        assert_eq!(log.latest_producer_snapshot_offset(), snapshot, "to {to}");
        assert_eq!(log.latest_producer_state_end_offset(), to);
    }
}

#[test]
fn test_producer_id_map_truncate_to_with_no_snapshots() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(&dir, LogConfig::default(), &clock);
    log.append_as_leader(&mut one(b"a", 1, 0)).unwrap();
    log.append_as_leader(&mut one(b"b", 1, 1)).unwrap();
    // Kafka's `LogTestUtils.deleteProducerSnapshotFiles`.
    for snapshot in list_snapshot_files(&RealFs, &dir).unwrap() {
        std::fs::remove_file(snapshot.path).unwrap();
    }
    log.truncate_to(1).unwrap();
    assert_eq!(producer_ids(&log), BTreeSet::from([1]));
    assert_eq!(last_seq(&log, 1), 0);
}

#[test]
fn test_retention_deletes_producer_state_snapshots() {
    for create_empty_active_segment in [true, false] {
        let root = tempfile::tempdir().unwrap();
        let clock = MockClock::new(NOW);
        let dir = common::partition_dir(root.path());
        let log = open(
            &dir,
            config(&[
                ("retention.bytes", "0"),
                ("retention.ms", "60000"),
                ("file.delete.delay.ms", "0"),
            ]),
            &clock,
        );
        log.append_as_leader(&mut one(b"a", 1, 0)).unwrap();
        log.roll().unwrap();
        log.append_as_leader(&mut one(b"b", 1, 1)).unwrap();
        log.roll().unwrap();
        log.append_as_leader(&mut one(b"c", 1, 2)).unwrap();
        if create_empty_active_segment {
            log.roll().unwrap();
        }
        log.set_high_watermark(log.log_end_offset());
        log.wait_for_background_flushes();
        let want = if create_empty_active_segment { 3 } else { 2 };
        assert_eq!(snapshot_offsets(&dir).len(), want);

        clock.advance(60_001);
        log.delete_old_segments().unwrap();
        delete_expired(&log, &clock);
        assert_eq!(
            snapshot_offsets(&dir).len(),
            1,
            "empty active segment: {create_empty_active_segment}"
        );
        assert_eq!(log.log_start_offset(), 3);
    }
}

#[test]
fn test_retention_idempotency() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        config(&[
            ("retention.bytes", "-1"),
            ("retention.ms", "900"),
            ("file.delete.delay.ms", "0"),
        ]),
        &clock,
    );
    log.append_as_leader(&mut records(0, &[(None, b"a")], -1, -1, NOW + 100))
        .unwrap();
    log.roll().unwrap();
    log.append_as_leader(&mut records(0, &[(None, b"b")], -1, -1, NOW))
        .unwrap();
    log.roll().unwrap();
    log.append_as_leader(&mut records(0, &[(None, b"c")], -1, -1, NOW + 100))
        .unwrap();
    clock.advance(901);
    log.set_high_watermark(log.log_end_offset());
    assert!(log.delete_records_before(1).unwrap());
    // The log-start move unblocks the time retention of segment 1 behind segment 0.
    assert_eq!(log.delete_old_segments().unwrap().total(), 2);
    assert_eq!(log.delete_old_segments().unwrap().total(), 0);
}

#[test]
fn test_log_start_offset_movement_deletes_snapshots() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(
        &dir,
        config(&[("retention.bytes", "-1"), ("file.delete.delay.ms", "0")]),
        &clock,
    );
    log.append_as_leader(&mut one(b"a", 1, 0)).unwrap();
    log.roll().unwrap();
    log.append_as_leader(&mut one(b"b", 1, 1)).unwrap();
    log.roll().unwrap();
    log.append_as_leader(&mut one(b"c", 1, 2)).unwrap();
    log.set_high_watermark(log.log_end_offset());
    log.wait_for_background_flushes();
    assert_eq!(snapshot_offsets(&dir), vec![1, 2]);

    assert!(log.delete_records_before(log.log_end_offset() - 1).unwrap());
    log.delete_old_segments().unwrap();
    delete_expired(&log, &clock);
    assert_eq!(snapshot_offsets(&dir), vec![2]);
}

#[test]
fn test_compaction_deletes_producer_state_snapshots() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(
        &dir,
        config(&[("cleanup.policy", "compact"), ("file.delete.delay.ms", "0")]),
        &clock,
    );
    for (seq, value) in [b"a", b"b", b"c"].iter().enumerate() {
        if seq > 0 {
            log.roll().unwrap();
        }
        let mut batch = records(0, &[(Some(b"a"), &value[..])], 1, seq as i32, NOW);
        log.append_as_leader(&mut batch).unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    log.wait_for_background_flushes();
    let bases_but_first =
        |log: &PartitionLog| -> Vec<i64> { log.segments().keys().copied().skip(1).collect() };
    assert_eq!(snapshot_offsets(&dir), bases_but_first(&log));
    assert_eq!(snapshot_offsets(&dir).len(), 2);

    // Only key `a` exists: cleaning leaves nothing before the active segment.
    log.clean(&CleanOptions::default().with_first_dirty_offset(0))
        .unwrap();
    log.delete_old_segments().unwrap();
    delete_expired(&log, &clock);
    assert_eq!(snapshot_offsets(&dir), bases_but_first(&log));
}

#[test]
fn test_loading_log_deletes_producer_state_snapshots_past_log_end_offset() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::File::create(dir.join("00000000000000000042.snapshot")).unwrap();
    let _log = open(
        &dir,
        config(&[("retention.bytes", "-1"), ("file.delete.delay.ms", "0")]),
        &clock,
    );
    assert_eq!(snapshot_offsets(&dir), Vec::<i64>::new());
}

#[test]
fn test_producer_id_map_truncate_fully_and_start_at() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let size = one(b"foo", -1, -1).len();
    let log = open(
        &common::partition_dir(root.path()),
        config(&[
            ("internal.segment.bytes", &size.to_string()),
            ("retention.bytes", &(size * 2).to_string()),
        ]),
        &clock,
    );
    log.append_as_leader(&mut one(b"foo", -1, -1)).unwrap();
    log.take_producer_snapshot().unwrap();
    log.append_as_leader(&mut one(b"bar", -1, -1)).unwrap();
    log.append_as_leader(&mut one(b"baz", -1, -1)).unwrap();
    log.take_producer_snapshot().unwrap();
    assert_eq!(log.segment_count(), 3);
    assert_eq!(log.latest_producer_state_end_offset(), 3);
    assert_eq!(log.latest_producer_snapshot_offset(), Some(3));

    log.truncate_fully_and_start_at(29).unwrap();
    assert_eq!(log.segment_count(), 1);
    assert_eq!(log.latest_producer_snapshot_offset(), None);
    assert_eq!(log.latest_producer_state_end_offset(), 29);
}

#[test]
fn test_producer_id_expiration_on_segment_deletion() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let size = one(b"foo", 1, 0).len();
    let log = open(
        &common::partition_dir(root.path()),
        config(&[
            ("internal.segment.bytes", &size.to_string()),
            ("retention.bytes", &(size * 2).to_string()),
        ]),
        &clock,
    );
    log.append_as_leader(&mut one(b"foo", 1, 0)).unwrap();
    log.take_producer_snapshot().unwrap();
    log.append_as_leader(&mut one(b"bar", 2, 0)).unwrap();
    log.append_as_leader(&mut one(b"baz", 2, 1)).unwrap();
    log.take_producer_snapshot().unwrap();
    assert_eq!(log.segment_count(), 3);
    assert_eq!(producer_ids(&log), BTreeSet::from([1, 2]));

    log.set_high_watermark(log.log_end_offset());
    log.delete_old_segments().unwrap();
    // Deleting a segment removes no producer.
    assert_eq!(log.segment_count(), 2);
    assert_eq!(producer_ids(&log), BTreeSet::from([1, 2]));
}

#[test]
fn test_producer_snapshot_after_segment_roll_on_append() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        config(&[("internal.segment.bytes", "1024")]),
        &clock,
    );
    let value = [0_u8; 512];
    log.append_as_leader(&mut records(0, &[(None, &value)], 1, 0, NOW))
        .unwrap();
    // The next append overflows the segment and rolls it.
    log.append_as_leader(&mut records(0, &[(None, &value)], 1, 1, NOW))
        .unwrap();
    assert_eq!(log.segment_count(), 2);
    assert_eq!(log.active_segment().base_offset(), 1);
    assert_eq!(log.latest_producer_snapshot_offset(), Some(1));

    // A reload from the snapshot, to check it.
    log.truncate_to(1).unwrap();
    assert_eq!(log.segment_count(), 2);
    assert_eq!(log.active_segment().base_offset(), 1);
    assert_eq!(log.active_segment().size(), 0);
    assert_eq!(log.latest_producer_snapshot_offset(), Some(1));
    let entry = &log.active_producers()[&1];
    assert_eq!(
        (entry.first_data_offset(), entry.last_data_offset()),
        (0, 0)
    );
}

#[test]
fn test_rebuild_transactional_state() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(&dir, LogConfig::default(), &clock);
    let mut options = BatchOptions::new(0, Compression::None);
    options.producer_id = 137;
    options.producer_epoch = 5;
    options.base_sequence = 0;
    options.transactional = true;
    let values: [&[u8]; 3] = [b"foo", b"bar", b"baz"];
    let batch = values
        .iter()
        .enumerate()
        .map(|(i, v)| NewRecord::new(i as i32, NOW, None, Some(*v)));
    let mut bytes = Vec::new();
    BatchBuilder::new()
        .build(&options, batch, &mut bytes)
        .unwrap();
    log.append_as_leader(&mut bytes).unwrap();
    let abort = log.append_end_txn_marker(137, 5, 0, false, 0).unwrap();
    log.set_high_watermark(abort.last_offset + 1);
    assert_eq!(log.first_unstable_offset(), None);
    log.close().unwrap();

    // Kafka reopens with lastShutdownClean = false.
    let reopened = common::open(&dir, LogConfig::default(), LoadOptions::default(), &clock).0;
    reopened.set_high_watermark(abort.last_offset + 1);
    assert_eq!(reopened.first_unstable_offset(), None);
}

/// Kafka's `testTruncateBelowFirstUnstableOffset` helper: three plain records, then an open
/// transaction of producer 17 at 3..=4; closed and reopened (cleanly), so the first unstable
/// offset's position in the segment is unknown; then `truncate` to 0 resets the producer state.
fn truncate_below_first_unstable_offset(truncate: impl FnOnce(&PartitionLog)) {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(&dir, LogConfig::default(), &clock);
    let plain: [(Option<&[u8]>, &[u8]); 3] = [(None, b"0"), (None, b"1"), (None, b"2")];
    log.append_as_leader(&mut records(0, &plain, -1, -1, NOW))
        .unwrap();
    log.append_as_leader(&mut txn_records(17, 10, &[b"3", b"4"]))
        .unwrap();
    assert_eq!(log.first_unstable_offset(), Some(3));
    log.close().unwrap();

    let options = LoadOptions::default().with_had_clean_shutdown(true);
    let reopened = common::open(&dir, LogConfig::default(), options, &clock).0;
    assert_eq!(reopened.first_unstable_offset(), Some(3));
    truncate(&reopened);
    assert_eq!(reopened.first_unstable_offset(), None);
    assert!(reopened.active_producers().is_empty());
}

/// A transactional batch of `pid` at `epoch`, from sequence 0.
fn txn_records(pid: i64, epoch: i16, values: &[&[u8]]) -> Vec<u8> {
    let mut options = BatchOptions::new(0, Compression::None);
    options.producer_id = pid;
    options.producer_epoch = epoch;
    options.base_sequence = 0;
    options.transactional = true;
    let batch = values
        .iter()
        .enumerate()
        .map(|(i, v)| NewRecord::new(i as i32, NOW, None, Some(*v)));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&options, batch, &mut out)
        .unwrap();
    out
}

#[test]
fn test_truncate_below_first_unstable_offset() {
    truncate_below_first_unstable_offset(|log| {
        log.truncate_to(0).unwrap();
    });
}

#[test]
fn test_truncate_fully_and_start_below_first_unstable_offset() {
    truncate_below_first_unstable_offset(|log| log.truncate_fully_and_start_at(0).unwrap());
}

#[test]
fn test_truncate_fully_and_start() {
    // Kafka's `truncateFullyAndStartAt(2, Some(1))`: seglog's takes one offset, the new log
    // start and end, so the case is run with 2 for both.
    truncate_below_first_unstable_offset(|log| {
        log.truncate_fully_and_start_at(2).unwrap();
        assert_eq!((log.log_start_offset(), log.log_end_offset()), (2, 2));
    });
}

#[test]
fn test_active_producers() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    // (epoch, last sequence, current transaction's first offset, coordinator epoch).
    let state = |pid: i64| {
        let e = &log.active_producers()[&pid];
        (
            e.producer_epoch(),
            e.last_seq(),
            e.current_txn_first_offset(),
            e.coordinator_epoch(),
        )
    };
    let values: [&[u8]; 5] = [b"0", b"1", b"2", b"3", b"4"];
    log.append_as_leader(&mut txn_records(1, 5, &values))
        .unwrap();
    assert_eq!(state(1), (5, 4, Some(0), -1));
    log.append_end_txn_marker(1, 5, 15, true, 0).unwrap();
    assert_eq!(state(1), (5, 4, None, 15));

    let mut options = BatchOptions::new(0, Compression::None);
    options.producer_id = 2;
    options.producer_epoch = 5;
    options.base_sequence = 0;
    let batch = (0..3).map(|i| NewRecord::new(i, NOW, None, Some(b"v")));
    let mut bytes = Vec::new();
    BatchBuilder::new()
        .build(&options, batch, &mut bytes)
        .unwrap();
    log.append_as_leader(&mut bytes).unwrap();
    assert_eq!(state(2), (5, 2, None, -1));
}

#[test]
fn test_multiple_producer_ids_per_memory_record() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    // Four batches of producers 1..=4 (sequence 0) in one follower append.
    let mut bytes = Vec::new();
    for pid in 1..=4_i64 {
        bytes.extend(records(pid - 1, &[(Some(b"key"), b"value")], pid, 0, NOW));
    }
    log.append_as_follower(&bytes).unwrap();
    log.flush().unwrap();
    let fetch = log
        .read(0, 1 << 20, seglog_log::Isolation::LogEnd, true)
        .unwrap();
    let mut read = Vec::new();
    fetch.read_into(&mut read).unwrap();
    let got: Vec<(i64, i64)> = seglog_record_format::batches(&read)
        .map(|b| {
            let b = RecordBatch::parse(b.unwrap().bytes()).unwrap();
            (b.producer_id(), b.base_offset())
        })
        .collect();
    assert_eq!(got, vec![(1, 0), (2, 1), (3, 2), (4, 3)]);
    assert_eq!(producer_ids(&log), BTreeSet::from([1, 2, 3, 4]));
    for pid in 1..=4 {
        let e = &log.active_producers()[&pid];
        assert_eq!((e.last_seq(), e.last_data_offset()), (0, pid - 1));
    }
}

#[test]
fn test_initialization_of_producer_snapshots_upgrade_path() {
    // A log of several segments with its snapshot files deleted (as after an upgrade from a
    // broker that kept none), reloaded three ways.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let config = || config(&[("internal.segment.bytes", "640")]);
    let log = open(&dir, config(), &clock);
    assert_eq!(log.oldest_producer_snapshot_offset(), None);
    for i in 0..=100 {
        log.append_as_leader(&mut one(i.to_string().as_bytes(), -1, -1))
            .unwrap();
    }
    assert!(log.segment_count() >= 2);
    let end = log.log_end_offset();
    log.close().unwrap();
    let delete_snapshots = || {
        for snapshot in list_snapshot_files(&RealFs, &dir).unwrap() {
            std::fs::remove_file(snapshot.path).unwrap();
        }
    };
    delete_snapshots();

    let reload = |clean: bool, recovery_point: i64| -> Vec<i64> {
        let options = LoadOptions::default()
            .with_had_clean_shutdown(clean)
            .with_recovery_point(recovery_point);
        let log = common::open(&dir, config(), options, &clock).0;
        log.wait_for_background_flushes();
        let bases: Vec<i64> = log.segments().keys().copied().collect();
        log.close().unwrap();
        bases
    };
    // A clean shutdown, then an unclean one with the recovery point at the log end: snapshots
    // at the last two segments' bases and the log end.
    for clean in [true, false] {
        let bases = reload(clean, end);
        let mut want: Vec<i64> = bases[bases.len() - 2..].to_vec();
        want.push(end);
        assert_eq!(snapshot_offsets(&dir), want, "clean {clean}");
        delete_snapshots();
    }
    // An unclean shutdown with the recovery point at 0: a snapshot per segment after the first
    // (the recovery takes one at each segment it passes), and the log end.
    let bases = reload(false, 0);
    let mut want: Vec<i64> = bases[1..].to_vec();
    want.push(end);
    assert_eq!(snapshot_offsets(&dir), want);
}
