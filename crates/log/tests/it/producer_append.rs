//! The producer state driven by the partition's appends, as Kafka 4.4's `UnifiedLog` drives it:
//! the append-side cases of Kafka's `UnifiedLogTest` (each test names its Kafka case), and the
//! producer snapshots taken on roll and on close, in Kafka's format.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use seglog_log::producer::{ProducerError, ProducerStateEntry, list_snapshot_files, read_snapshot};
use seglog_log::record::{
    BatchBuilder, BatchOptions, Compression, ControlRecordType, EndTransactionMarker, NewRecord,
};
use seglog_log::{
    Error, LoadOptions, LogConfig, LogDir, LogDirOptions, MockClock, PartitionLog, RealFs,
    SchedulerConfig, TopicPartition,
};

use crate::common;

const NOW: i64 = 1_700_000_000_000;

fn open(dir: &Path, config: LogConfig, clock: &MockClock) -> PartitionLog {
    common::open(dir, config, LoadOptions::default(), clock).0
}

/// A batch at `base` of `count` records of producer `pid` (-1: none) from sequence `seq`.
fn batch(base: i64, count: usize, pid: i64, epoch: i16, seq: i32, transactional: bool) -> Vec<u8> {
    let mut options = BatchOptions::new(base, Compression::None);
    if pid >= 0 {
        options.producer_id = pid;
        options.producer_epoch = epoch;
        options.base_sequence = seq;
        options.transactional = transactional;
    }
    let values: Vec<Vec<u8>> = (0..count).map(|i| format!("v{i}").into_bytes()).collect();
    let records = values
        .iter()
        .enumerate()
        .map(|(i, v)| NewRecord::new(i as i32, NOW, Some(b"key"), Some(&v[..])));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&options, records, &mut out)
        .unwrap();
    out
}

/// An end-transaction marker at `offset`, as a follower receives it.
fn marker(offset: i64, pid: i64, epoch: i16, kind: ControlRecordType, coordinator: i32) -> Vec<u8> {
    let mut options = BatchOptions::new(offset, Compression::None);
    options.producer_id = pid;
    options.producer_epoch = epoch;
    options.transactional = true;
    options.control = true;
    let key = kind.key_bytes();
    let value = EndTransactionMarker {
        version: 0,
        coordinator_epoch: coordinator,
    }
    .value_bytes();
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(
            &options,
            std::iter::once(NewRecord::new(0, NOW, Some(&key), Some(&value))),
            &mut out,
        )
        .unwrap();
    out
}

/// Kafka's `LogTestUtils.appendTransactionalAsLeader`: each call appends `n` transactional
/// records of `pid`, the sequence continuing.
struct TxnProducer {
    pid: i64,
    epoch: i16,
    seq: i32,
}

impl TxnProducer {
    fn new(pid: i64, epoch: i16) -> Self {
        Self { pid, epoch, seq: 0 }
    }
    fn append(&mut self, log: &PartitionLog, n: usize) -> seglog_log::AppendInfo {
        let info = log
            .append_as_leader(&mut batch(0, n, self.pid, self.epoch, self.seq, true))
            .unwrap();
        self.seq += n as i32;
        info
    }
}

fn non_transactional(log: &PartitionLog, n: usize) {
    log.append_as_leader(&mut batch(0, n, -1, -1, -1, false))
        .unwrap();
}

fn end_txn(log: &PartitionLog, pid: i64, epoch: i16, commit: bool) -> seglog_log::AppendInfo {
    log.append_end_txn_marker(pid, epoch, 0, commit, 0).unwrap()
}

fn producer_error(result: Result<seglog_log::AppendInfo, Error>) -> ProducerError {
    match result {
        Err(Error::Producer(e)) => e,
        other => panic!("expected a producer error, got {other:?}"),
    }
}

/// Every `.txnindex` entry of the log, oldest segment first, as (pid, first, last, lso).
fn aborted(log: &PartitionLog) -> Vec<(i64, i64, i64, i64)> {
    log.segments()
        .values()
        .flat_map(|s| s.all_aborted_txns().unwrap())
        .map(|t| {
            (
                t.producer_id(),
                t.first_offset(),
                t.last_offset(),
                t.last_stable_offset(),
            )
        })
        .collect()
}

#[test]
fn duplicate_appends_return_the_original_offsets() {
    // Kafka: testDuplicateAppends.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    let mut seq = 0;
    for _ in 0..=5 {
        log.append_as_leader(&mut batch(0, 1, 1, 0, seq, false))
            .unwrap();
        seq += 1;
    }
    let multi = log
        .append_as_leader(&mut batch(0, 3, 1, 0, seq, false))
        .unwrap();
    assert_eq!(multi.last_offset - multi.first_offset + 1, 3);
    let end = log.log_end_offset();
    let dup = log
        .append_as_leader(&mut batch(0, 3, 1, 0, seq, false))
        .unwrap();
    assert_eq!(
        (dup.first_offset, dup.last_offset),
        (multi.first_offset, multi.last_offset)
    );
    assert_eq!(dup.log_append_time, Some(NOW), "the duplicate's timestamp");
    assert_eq!(log.log_end_offset(), end, "nothing appended");
    seq += 3;

    // A partial duplicate of the tail.
    let partial = producer_error(log.append_as_leader(&mut batch(0, 2, 1, 0, seq - 2, false)));
    assert!(matches!(partial, ProducerError::OutOfOrderSequence { .. }));
    // A duplicate of the fourth batch from the tail: the last five are kept.
    let fourth = log
        .append_as_leader(&mut batch(0, 1, 1, 0, 2, false))
        .unwrap();
    assert_eq!((fourth.first_offset, fourth.last_offset), (2, 2));
    // Older ones are out of order.
    let older = producer_error(log.append_as_leader(&mut batch(0, 1, 1, 0, 1, false)));
    assert_eq!(
        older.to_string(),
        format!(
            "Out of order sequence number for producer 1 at offset {end} in partition orders-0: 1 (incoming seq. number), 8 (current end sequence number)"
        )
    );
    let original = log
        .append_as_leader(&mut batch(0, 1, 1, 0, seq, false))
        .unwrap();
    let again = log
        .append_as_leader(&mut batch(0, 1, 1, 0, seq, false))
        .unwrap();
    assert_eq!(
        (original.first_offset, original.last_offset),
        (again.first_offset, again.last_offset)
    );
    assert_eq!(log.log_end_offset(), original.last_offset + 1);
}

#[test]
fn a_sequence_gap_is_out_of_order_and_appends_nothing() {
    // Kafka: testNonSequentialAppend.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_leader(&mut batch(0, 1, 1, 0, 0, false))
        .unwrap();
    let before = log.active_producers();
    let e = producer_error(log.append_as_leader(&mut batch(0, 1, 1, 0, 2, false)));
    assert_eq!(e.kafka_name(), "OutOfOrderSequenceException");
    assert_eq!(
        e.to_string(),
        "Out of order sequence number for producer 1 at offset 1 in partition orders-0: 2 (incoming seq. number), 0 (current end sequence number)"
    );
    assert_eq!(log.log_end_offset(), 1);
    assert_eq!(log.active_producers(), before);
    assert_eq!(
        log.active_segment().size(),
        batch(0, 1, 1, 0, 0, false).len() as u64
    );
}

#[test]
fn a_refused_batch_refuses_the_whole_append() {
    // Kafka's analyzeAndValidateProducerState runs over every batch before the write.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_leader(&mut batch(0, 1, 7, 0, 0, false))
        .unwrap();
    let (size, producers) = (log.active_segment().size(), log.active_producers());
    let mut input = batch(0, 2, 7, 0, 1, false);
    input.extend(batch(0, 1, 7, 0, 5, false));
    let e = producer_error(log.append_as_leader(&mut input));
    assert!(matches!(e, ProducerError::OutOfOrderSequence { .. }));
    assert_eq!(
        (log.log_end_offset(), log.active_segment().size()),
        (1, size)
    );
    assert_eq!(log.active_producers(), producers);
    assert_eq!(log.latest_producer_state_end_offset(), 1);
    // As in Kafka, a producer with no epoch yet may start anywhere, even within one append.
    let mut input = batch(0, 2, 8, 0, 0, false);
    input.extend(batch(0, 1, 8, 0, 5, false));
    log.append_as_leader(&mut input).unwrap();
}

#[test]
fn an_older_epoch_is_fenced() {
    // Kafka: testOldProducerEpoch.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_leader(&mut batch(0, 1, 1, 1, 0, false))
        .unwrap();
    let e = producer_error(log.append_as_leader(&mut batch(0, 1, 1, 0, 0, false)));
    assert_eq!(e.kafka_name(), "InvalidProducerEpochException");
    assert_eq!(
        e.to_string(),
        "Epoch of producer 1 at offset 1 in orders-0 is 0, which is < the last seen epoch 1 (TV-1)"
    );
    // A transactional batch of an older epoch is refused before the state's check, with
    // UnifiedLog's own message.
    let e = producer_error(log.append_as_leader(&mut batch(0, 1, 1, 0, 0, true)));
    assert_eq!(
        e.to_string(),
        "Epoch of producer 1 is 0, which is smaller than the last seen epoch 1"
    );
    assert_eq!(log.log_end_offset(), 1);
}

#[test]
fn a_follower_takes_duplicates_and_several_producers_in_one_append() {
    // Kafka: testDuplicateAppendToFollower, testMultipleProducersWithDuplicatesInSingleAppend.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_follower(&batch(0, 2, 1, 0, 0, false))
        .unwrap();
    log.append_as_follower(&batch(2, 2, 1, 0, 0, false))
        .unwrap();
    assert_eq!(log.log_end_offset(), 4);

    let other = tempfile::tempdir().unwrap();
    let log = open(
        &common::partition_dir(other.path()),
        LogConfig::default(),
        &clock,
    );
    let mut input = Vec::new();
    for (base, pid, seq) in [(0, 1, 0), (1, 2, 0), (2, 1, 1), (3, 2, 1), (4, 1, 1)] {
        input.extend(batch(base, 1, pid, 0, seq, false));
    }
    log.append_as_follower(&input).unwrap();
    assert_eq!(log.log_end_offset(), 5);
    let producers = log.active_producers();
    assert_eq!((producers[&1].last_seq(), producers[&2].last_seq()), (1, 1));
}

#[test]
fn plain_appends_move_the_state_end_offset() {
    // Kafka: testProducerIdMapOffsetUpdatedForNonIdempotentData, testFirstUnstableOffsetNoTransactionalData.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(&dir, LogConfig::default(), &clock);
    non_transactional(&log, 1);
    assert!(log.take_producer_snapshot().unwrap().is_some());
    assert_eq!(log.latest_producer_snapshot_offset(), Some(1));
    non_transactional(&log, 3);
    assert_eq!(log.first_unstable_offset(), None);
    log.set_high_watermark(4);
    assert_eq!(log.last_stable_offset(), 4);
}

#[test]
fn the_first_unstable_offset_follows_transactions_and_the_high_watermark() {
    // Kafka: testFirstUnstableOffsetWithTransactionalData.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    let mut p = TxnProducer::new(137, 5);
    let first = p.append(&log, 3);
    assert_eq!(log.first_unstable_offset(), Some(first.first_offset));
    p.append(&log, 1);
    assert_eq!(log.first_unstable_offset(), Some(first.first_offset));
    let commit = end_txn(&log, 137, 5, true);
    // Decided, but the marker is not yet below the high watermark.
    assert_eq!(log.first_unstable_offset(), Some(first.first_offset));
    log.set_high_watermark(commit.last_offset);
    assert_eq!(log.first_unstable_offset(), Some(first.first_offset));
    assert_eq!(log.last_stable_offset(), 0);
    log.set_high_watermark(commit.last_offset + 1);
    assert_eq!(log.first_unstable_offset(), None);
    assert_eq!(log.last_stable_offset(), commit.last_offset + 1);
}

#[test]
fn the_last_stable_offset_with_mixed_producer_data() {
    // Kafka: testLastStableOffsetWithMixedProducerData.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    let first = TxnProducer::new(137, 5).append(&log, 3);
    assert_eq!(log.first_unstable_offset(), Some(first.first_offset));
    non_transactional(&log, 3);
    let second = TxnProducer::new(983, 5).append(&log, 3);
    assert_eq!(log.first_unstable_offset(), Some(first.first_offset));
    let abort = end_txn(&log, 137, 5, false);
    log.set_high_watermark(abort.last_offset + 1);
    assert_eq!(log.first_unstable_offset(), Some(second.first_offset));
    assert_eq!(log.last_stable_offset(), second.first_offset);
    let commit = end_txn(&log, 983, 5, true);
    log.set_high_watermark(commit.last_offset + 1);
    assert_eq!(log.first_unstable_offset(), None);
    assert_eq!(aborted(&log), vec![(137, 0, 9, 6)]);
}

#[test]
fn an_aborted_transaction_spanning_segments_is_indexed_where_its_marker_is() {
    // Kafka: testAbortedTransactionSpanningMultipleSegments (the .txnindex part).
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let size = batch(0, 3, 137, 5, 0, true).len();
    let log = open(
        &common::partition_dir(root.path()),
        common::small_config(size as i32),
        &clock,
    );
    let mut p = TxnProducer::new(137, 5);
    let first = p.append(&log, 3);
    p.append(&log, 3);
    assert_eq!(log.first_unstable_offset(), Some(first.first_offset));
    assert_eq!(log.active_segment().base_offset(), 3);
    let abort = end_txn(&log, 137, 5, false);
    assert_eq!(abort.first_offset, 6);
    log.set_high_watermark(abort.last_offset + 1);
    assert_eq!(log.first_unstable_offset(), None);
    let segments = log.segments();
    let holder = segments.range(..=6).next_back().unwrap().1;
    assert_eq!(holder.base_offset(), 6);
    let entries: Vec<_> = holder
        .all_aborted_txns()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t.producer_id(),
                t.first_offset(),
                t.last_offset(),
                t.last_stable_offset(),
            )
        })
        .collect();
    assert_eq!(entries, vec![(137, 0, 6, 7)]);
    assert_eq!(aborted(&log), entries, "no other segment has an entry");
}

/// Kafka's interleaving of four transactional producers and plain data, with markers at 29, 58,
/// 74 and 89 (testTransactionIndexUpdated and its replication twin).
const EXPECTED_ABORTED: [(i64, i64, i64, i64); 2] = [(1, 0, 29, 8), (2, 8, 74, 36)];

fn check_interleaving(log: &PartitionLog) {
    assert_eq!(aborted(log), EXPECTED_ABORTED.to_vec());
    log.set_high_watermark(30);
    assert_eq!(log.first_unstable_offset(), Some(8));
    assert_eq!(log.last_stable_offset(), 8);
    log.set_high_watermark(75);
    assert_eq!(log.first_unstable_offset(), Some(36));
    log.set_high_watermark(log.log_end_offset());
    assert_eq!(log.first_unstable_offset(), None);
    assert_eq!(log.last_stable_offset(), log.log_end_offset());
}

#[test]
fn the_transaction_index_is_updated_by_leader_appends() {
    // Kafka: testTransactionIndexUpdated.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    let mut p: HashMap<i64, TxnProducer> = (1..=4).map(|i| (i, TxnProducer::new(i, 0))).collect();
    let mut append = |pid: i64, n: usize| p.get_mut(&pid).unwrap().append(&log, n);
    append(1, 5);
    non_transactional(&log, 3);
    append(2, 2);
    append(1, 4);
    append(3, 3);
    non_transactional(&log, 2);
    append(1, 10);
    end_txn(&log, 1, 0, false);
    append(2, 6);
    append(4, 3);
    non_transactional(&log, 10);
    append(3, 9);
    end_txn(&log, 3, 0, true);
    append(4, 8);
    append(2, 7);
    end_txn(&log, 2, 0, false);
    non_transactional(&log, 10);
    append(4, 4);
    end_txn(&log, 4, 0, true);
    assert_eq!(log.log_end_offset(), 90);
    check_interleaving(&log);
}

#[test]
fn the_transaction_index_is_updated_through_replication() {
    // Kafka: testTransactionIndexUpdatedThroughReplication.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    let mut seqs: HashMap<i64, i32> = HashMap::new();
    let mut input = Vec::new();
    let mut data = |input: &mut Vec<u8>, pid: i64, base: i64, n: usize| {
        let seq = seqs.entry(pid).or_default();
        input.extend(batch(base, n, pid, 0, *seq, pid >= 0));
        if pid >= 0 {
            *seq += n as i32;
        }
    };
    data(&mut input, 1, 0, 5);
    data(&mut input, -1, 5, 3);
    data(&mut input, 2, 8, 2);
    data(&mut input, 1, 10, 4);
    data(&mut input, 3, 14, 3);
    data(&mut input, -1, 17, 2);
    data(&mut input, 1, 19, 10);
    input.extend(marker(29, 1, 0, ControlRecordType::Abort, 0));
    data(&mut input, 2, 30, 6);
    data(&mut input, 4, 36, 3);
    data(&mut input, -1, 39, 10);
    data(&mut input, 3, 49, 9);
    input.extend(marker(58, 3, 0, ControlRecordType::Commit, 0));
    data(&mut input, 4, 59, 8);
    data(&mut input, 2, 67, 7);
    input.extend(marker(74, 2, 0, ControlRecordType::Abort, 0));
    data(&mut input, -1, 75, 10);
    data(&mut input, 4, 85, 4);
    input.extend(marker(89, 4, 0, ControlRecordType::Commit, 0));
    log.append_as_follower(&input).unwrap();
    check_interleaving(&log);
}

#[test]
fn a_zombie_coordinator_is_fenced() {
    // Kafka: testZombieCoordinatorFenced, testZombieCoordinatorFencedEmptyTransaction.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    let mut p = TxnProducer::new(1, 0);
    p.append(&log, 10);
    log.append_end_txn_marker(1, 0, 1, false, 0).unwrap();
    p.append(&log, 5);
    log.append_end_txn_marker(1, 0, 2, true, 0).unwrap();
    let end = log.log_end_offset();
    let e = producer_error(log.append_end_txn_marker(1, 0, 1, false, 0));
    assert_eq!(e.kafka_name(), "TransactionCoordinatorFencedException");
    assert_eq!(
        e.to_string(),
        format!(
            "Invalid coordinator epoch for producerId 1 at offset {end} in partition orders-0: 1 (zombie), 2 (current)"
        )
    );
    assert_eq!(log.log_end_offset(), end);

    let other = tempfile::tempdir().unwrap();
    let log = open(
        &common::partition_dir(other.path()),
        LogConfig::default(),
        &clock,
    );
    let mut input = batch(0, 10, 1, 0, 0, true);
    input.extend(marker(10, 1, 0, ControlRecordType::Commit, 1));
    log.append_as_follower(&input).unwrap();
    log.append_end_txn_marker(1, 0, 2, false, 0).unwrap();
    log.append_end_txn_marker(1, 0, 2, false, 0).unwrap();
    let e = producer_error(log.append_end_txn_marker(1, 0, 1, false, 0));
    assert!(matches!(
        e,
        ProducerError::TransactionCoordinatorFenced { .. }
    ));
    assert_eq!(
        aborted(&log),
        vec![],
        "markers of empty transactions index nothing"
    );
}

#[test]
fn marker_epochs_follow_the_transaction_version() {
    // Kafka: testEndTxnWithFencedProducerEpoch (TV 1 and 2), testTV2MarkerWithBumpedEpochSucceeds,
    // testLeaderRejectsTVUnknownForTransactionMarker, testReplicationWithTVUnknownAllowed.
    for tv in [1_i16, 2] {
        let root = tempfile::tempdir().unwrap();
        let clock = MockClock::new(NOW);
        let log = open(
            &common::partition_dir(root.path()),
            LogConfig::default(),
            &clock,
        );
        log.append_as_leader(&mut batch(0, 1, 1, 5, 0, true))
            .unwrap();
        let old = producer_error(log.append_end_txn_marker(1, 4, 1, false, tv));
        assert!(
            matches!(old, ProducerError::InvalidProducerEpoch { .. }),
            "{old}"
        );
        let same = log.append_end_txn_marker(1, 5, 1, false, tv);
        if tv >= 2 {
            let e = producer_error(same);
            assert_eq!(
                e.to_string(),
                "Epoch of producer 1 at offset 1 in orders-0 is 5, which is <= the last seen epoch 5 (TV2)"
            );
        } else {
            same.unwrap();
        }
    }
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_leader(&mut batch(0, 1, 1, 5, 0, true))
        .unwrap();
    let unknown = producer_error(log.append_end_txn_marker(1, 6, 1, true, -1));
    assert_eq!(
        unknown.to_string(),
        "transactionVersion must be explicitly specified, cannot use default value TV_UNKNOWN for origin COORDINATOR"
    );
    log.append_end_txn_marker(1, 6, 1, true, 2).unwrap();
    assert_eq!(log.active_producers()[&1].producer_epoch(), 6);

    let follower_root = tempfile::tempdir().unwrap();
    let follower = open(
        &common::partition_dir(follower_root.path()),
        LogConfig::default(),
        &clock,
    );
    follower
        .append_as_follower(&batch(0, 1, 1, 5, 0, true))
        .unwrap();
    follower
        .append_as_follower(&marker(1, 1, 6, ControlRecordType::Commit, 1))
        .unwrap();
    let state = &follower.active_producers()[&1];
    assert_eq!((state.producer_epoch(), state.coordinator_epoch()), (6, 1));
    assert_eq!(follower.log_end_offset(), 2);
}

#[test]
fn a_client_may_not_write_control_batches() {
    // Kafka: LogValidator.validateBatch for AppendOrigin.CLIENT.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    let mut control = marker(0, 1, 0, ControlRecordType::Commit, 0);
    let Err(Error::InvalidRecords { reason, .. }) = log.append_as_leader(&mut control) else {
        panic!("a client's control batch was accepted");
    };
    assert_eq!(
        reason,
        "Clients are not allowed to write control records in topic partition orders-0"
    );
    assert_eq!(log.log_end_offset(), 0);
}

#[test]
fn the_first_unstable_offset_never_falls_below_the_log_start() {
    // Kafka: testLastStableOffsetDoesNotExceedLogStartOffsetMidSegment and
    // testLastStableOffsetDoesNotExceedLogStartOffsetAfterSegmentDeletion.
    for (new_start, delete) in [(5, false), (8, true)] {
        let root = tempfile::tempdir().unwrap();
        let clock = MockClock::new(NOW);
        let log = open(
            &common::partition_dir(root.path()),
            LogConfig::default(),
            &clock,
        );
        let mut p = TxnProducer::new(1, 0);
        p.append(&log, 5);
        non_transactional(&log, 3);
        assert_eq!(log.log_end_offset(), 8);
        log.roll().unwrap();
        p.append(&log, 5);
        assert_eq!(log.first_unstable_offset(), Some(0));
        log.set_high_watermark(log.log_end_offset());
        assert!(log.delete_records_before(new_start).unwrap());
        if delete {
            assert!(log.delete_old_segments().unwrap().total() > 0);
            assert_eq!(log.segment_count(), 1);
        }
        assert_eq!(log.first_unstable_offset(), Some(new_start));
        assert_eq!(log.last_stable_offset(), new_start);
    }
}

#[test]
fn snapshots_are_taken_on_roll_and_deleted_with_their_segments() {
    // Kafka: testTakeSnapshotOnRollAndDeleteSnapshotOnRecoveryPointCheckpoint (the roll part),
    // testDeleteSnapshotsOnIncrementLogStartOffset.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let config = LogConfig::default().with_file_delete_delay_ms(1_000);
    let log = open(&dir, config, &clock);
    log.append_as_leader(&mut batch(0, 1, 1, 0, 0, false))
        .unwrap();
    log.roll().unwrap();
    assert_eq!(log.latest_producer_snapshot_offset(), Some(1));
    assert_eq!(log.oldest_producer_snapshot_offset(), Some(1));
    log.append_as_leader(&mut batch(0, 1, 2, 0, 0, false))
        .unwrap();
    log.roll().unwrap();
    assert_eq!(log.latest_producer_snapshot_offset(), Some(2));
    assert_eq!(log.oldest_producer_snapshot_offset(), Some(1));
    assert_eq!(list_snapshot_files(&RealFs, &dir).unwrap().len(), 2);

    log.set_high_watermark(log.log_end_offset());
    assert!(log.delete_records_before(2).unwrap());
    assert_eq!(
        log.delete_old_segments().unwrap().log_start_breached,
        vec![0, 1]
    );
    // The snapshot at 1 went with segment 1, renamed `.deleted` at once; the producers stay.
    assert_eq!(list_snapshot_files(&RealFs, &dir).unwrap().len(), 1);
    assert_eq!(log.oldest_producer_snapshot_offset(), Some(2));
    let renamed = dir.join("00000000000000000001.snapshot.deleted");
    assert!(renamed.exists());
    clock.advance(2_000);
    log.wait_for_background_flushes();
    assert_eq!(log.delete_expired_files().unwrap(), 2);
    assert!(!renamed.exists());
    let producers = log.active_producers();
    assert_eq!(producers.len(), 2);
    assert_eq!(producers[&2].last_seq(), 0);
}

#[test]
fn snapshot_files_after_a_roll_and_a_close_are_kafkas() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(&dir, LogConfig::default(), &clock);
    let mut p = TxnProducer::new(9, 3);
    p.append(&log, 2);
    log.append_as_leader(&mut batch(0, 4, 4, 1, 0, false))
        .unwrap();
    log.set_roll_flush_inline(true);
    log.roll().unwrap();
    let rolled = dir.join("00000000000000000006.snapshot");
    let mut entries = read_snapshot(&RealFs, &rolled).unwrap();
    entries.sort_by_key(ProducerStateEntry::producer_id);
    let mut expected: Vec<_> = log.active_producers().into_values().collect();
    expected.sort_by_key(ProducerStateEntry::producer_id);
    assert_eq!(entries, expected);
    assert_eq!(entries[1].current_txn_first_offset(), Some(0));
    assert_eq!(
        (entries[0].last_seq(), entries[0].last_data_offset()),
        (3, 5)
    );

    end_txn(&log, 9, 3, true);
    log.close().unwrap();
    let closed = dir.join("00000000000000000007.snapshot");
    let entries = read_snapshot(&RealFs, &closed).unwrap();
    let txn = entries.iter().find(|e| e.producer_id() == 9).unwrap();
    assert_eq!(
        (txn.current_txn_first_offset(), txn.coordinator_epoch()),
        (None, 0)
    );
    assert_eq!(list_snapshot_files(&RealFs, &dir).unwrap().len(), 2);
}

#[test]
fn idle_producers_expire() {
    // Kafka: testPeriodicProducerIdExpiration, with the default producer.id.expiration.ms.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(
        &common::partition_dir(root.path()),
        LogConfig::default(),
        &clock,
    );
    log.append_as_leader(&mut batch(0, 1, 23, 0, 0, false))
        .unwrap();
    TxnProducer::new(24, 0).append(&log, 1);
    log.remove_expired_producers(NOW + 86_400_000 - 1);
    assert_eq!(log.producer_id_count(), 2);
    log.remove_expired_producers(NOW + 86_400_000);
    // A producer with an open transaction never expires.
    assert_eq!(
        log.active_producers().keys().copied().collect::<Vec<_>>(),
        vec![24]
    );
}

#[test]
fn the_log_dir_scheduler_expires_idle_producers() {
    // Kafka's PeriodicProducerExpirationCheck, every producer.id.expiration.check.interval.ms.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let options = LogDirOptions::default()
        .with_recovery_threads(1)
        .with_time(Arc::new(clock.clone()));
    let (dir, _) = LogDir::open(RealFs, root.path(), options).unwrap();
    let log = dir
        .create_log(&TopicPartition::new("orders", 0), None)
        .unwrap();
    log.append_as_leader(&mut batch(0, 1, 23, 0, 0, false))
        .unwrap();
    clock.advance(86_400_000);
    dir.start_scheduler(
        SchedulerConfig::default()
            .with_flush_check_interval_ms(5)
            .with_producer_id_expiration_check_interval_ms(5),
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while log.producer_id_count() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(log.producer_id_count(), 0);
    dir.close().unwrap();
}

#[test]
fn a_failed_txnindex_write_leaves_the_transaction_unstable() {
    // Kafka: testAppendToTransactionIndexFailure (its first part: seglog has no offline log
    // directory to refuse the appends after it).
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = open(&dir, LogConfig::default(), &clock);
    TxnProducer::new(1, 0).append(&log, 10);
    // A directory where the `.txnindex` would be created makes its first write fail.
    std::fs::create_dir(dir.join("00000000000000000000.txnindex")).unwrap();
    let e = log.append_end_txn_marker(1, 0, 1, false, 0).unwrap_err();
    assert!(e.to_string().contains(".txnindex"), "{e}");
    // The marker is in the log and the log end moved past it, as in Kafka; the transaction
    // stays open in the producer state, so the last stable offset does not pass it.
    assert_eq!(log.log_end_offset(), 11);
    assert_eq!(log.last_stable_offset(), 0);
    log.set_high_watermark(11);
    assert_eq!(log.last_stable_offset(), 0);
    assert_eq!(log.first_unstable_offset(), Some(0));
}
