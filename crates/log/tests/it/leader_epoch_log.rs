//! The leader epoch cache as a partition log keeps it: the epoch cases of Kafka's
//! `UnifiedLogTest`, `LogLoaderTest` and `LogSegmentTest`, pinned as ours (each test names the
//! Kafka test it ports), and the loader's repairs of a checkpoint a crash left behind.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common::{self, txn::Data};

use std::path::Path;

use seglog_log::{
    EpochEntry, LEADER_EPOCH_CHECKPOINT, ListOffset, LoadOptions, LogConfig, MockClock,
    OffsetAndEpoch, PartitionLog,
};
use seglog_record_format::batches;

fn e(epoch: i32, start_offset: i64) -> EpochEntry {
    EpochEntry {
        epoch,
        start_offset,
    }
}

/// A follower batch of `count` records at `base`, stamped `epoch`.
fn follower(base: i64, count: i32, epoch: i32) -> Vec<u8> {
    let mut out = Vec::new();
    Data::new(base, count)
        .value(b"value")
        .leader_epoch(epoch)
        .write(&mut out);
    out
}

fn unclean() -> LoadOptions {
    LoadOptions::default()
}

fn checkpoint_text(dir: &Path) -> Option<String> {
    std::fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).ok()
}

/// The `partitionLeaderEpoch` of every batch in the log, in order.
fn stamped_epochs(log: &PartitionLog) -> Vec<i32> {
    let mut epochs = Vec::new();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let fetch = log
            .read(next, 1 << 20, seglog_log::Isolation::LogEnd, true)
            .unwrap();
        let mut bytes = Vec::new();
        fetch.read_into(&mut bytes).unwrap();
        for b in batches(&bytes) {
            let b = b.unwrap().v2().unwrap();
            // Every batch still valid: the stamp lies outside the CRC.
            b.validate().unwrap();
            epochs.push(b.partition_leader_epoch());
            next = b.last_offset() + 1;
        }
    }
    epochs
}

#[test]
fn truncating_to_the_log_end_drops_an_epoch_with_no_records() {
    // UnifiedLogTest.testTruncateToEndOffsetClearsEpochCache
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    log.truncate_fully_and_start_at(27).unwrap();
    log.append_as_follower(&follower(27, 2, 19)).unwrap();
    assert_eq!(log.epoch_entries().last(), Some(&e(19, 27)));
    assert_eq!(log.log_end_offset(), 29);
    // Becoming the leader of epoch 20...
    log.set_leader_epoch(20).unwrap();
    assert_eq!(log.epoch_entries().last(), Some(&e(20, 29)));
    // ...then a follower truncating at the log end: the trivial entry goes.
    assert!(!log.truncate_to(29).unwrap());
    assert_eq!(log.epoch_entries(), [e(19, 27)]);
    assert_eq!(log.log_end_offset(), 29);
    assert_eq!(checkpoint_text(&dir).unwrap(), "0\n1\n19 27\n");
}

#[test]
fn list_offsets_answers_carry_their_epoch() {
    // UnifiedLogTest.testFetchOffsetByTimestampIncludesLeaderEpoch
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, common::small_config(200), unclean(), &clock);
    assert_eq!(
        log.offset_for_timestamp(ListOffset::Timestamp(0)).unwrap(),
        None
    );
    let first = 1_000;
    log.set_leader_epoch(0).unwrap();
    log.append_as_leader(&mut common::producer_batch("a", 1, first))
        .unwrap();
    log.set_leader_epoch(1).unwrap();
    log.append_as_leader(&mut common::producer_batch("b", 1, first + 1))
        .unwrap();
    let found = |target| {
        let t = log.offset_for_timestamp(target).unwrap().unwrap();
        (t.timestamp, t.offset, t.leader_epoch)
    };
    assert_eq!(found(ListOffset::Timestamp(first)), (first, 0, Some(0)));
    assert_eq!(
        found(ListOffset::Timestamp(first + 1)),
        (first + 1, 1, Some(1))
    );
    assert_eq!(found(ListOffset::Earliest), (-1, 0, Some(0)));
    assert_eq!(found(ListOffset::Latest), (-1, 2, Some(1)));
    // The cache can be updated directly after a leader change.
    log.assign_epoch_start_offset(2, 2).unwrap();
    assert_eq!(found(ListOffset::Latest), (-1, 2, Some(2)));
    assert_eq!(stamped_epochs(&log), [0, 1]);
}

/// A log of three segments of five one-record leader batches each (epoch 0), retention at ten
/// batches' bytes, with `epochs` assigned; then retention runs.
fn retention_with(epochs: &[(i32, i64)]) -> Vec<EpochEntry> {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let size = common::producer_batch("test", 1, 1_000).len();
    let config = common::small_config(i32::try_from(size * 5).unwrap())
        .with_retention_bytes(i64::try_from(size * 10).unwrap());
    let (log, _) = common::open(&dir, config, unclean(), &clock);
    log.set_leader_epoch(0).unwrap();
    for _ in 0..15 {
        log.append_as_leader(&mut common::producer_batch("test", 1, 1_000))
            .unwrap();
    }
    assert_eq!(log.segment_count(), 3);
    for (epoch, offset) in epochs {
        log.assign_epoch_start_offset(*epoch, *offset).unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    log.delete_old_segments().unwrap();
    assert_eq!(log.log_start_offset(), 5);
    let entries = log.epoch_entries();
    // What is cached is what is written.
    let reread = seglog_log::LeaderEpochCheckpoint::in_dir(seglog_log::RealFs, &dir);
    assert_eq!(reread.read().unwrap(), entries);
    entries
}

#[test]
fn retention_truncates_epochs_from_the_start() {
    // UnifiedLogTest.shouldTruncateLeaderEpochsWhenDeletingSegments
    assert_eq!(
        retention_with(&[(0, 0), (1, 5), (2, 10)]),
        [e(1, 5), e(2, 10)]
    );
    // UnifiedLogTest.shouldUpdateOffsetForLeaderEpochsWhenDeletingSegments
    assert_eq!(
        retention_with(&[(0, 0), (1, 7), (2, 10)]),
        [e(0, 5), e(1, 7), e(2, 10)]
    );
}

#[test]
fn delete_records_truncates_epochs_from_the_start() {
    // UnifiedLog.maybeIncrementLogStartOffset: truncateFromStartAsyncFlush(logStartOffset)
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    log.append_as_follower(&follower(0, 3, 1)).unwrap();
    log.append_as_follower(&follower(3, 3, 4)).unwrap();
    log.set_high_watermark(6);
    assert!(log.delete_records_before(2).unwrap());
    assert_eq!(log.epoch_entries(), [e(1, 2), e(4, 3)]);
    assert_eq!(checkpoint_text(&dir).unwrap(), "0\n2\n1 2\n4 3\n");
}

#[test]
fn truncation_truncates_the_checkpoint() {
    // UnifiedLogTest.shouldTruncateLeaderEpochCheckpointFileWhenTruncatingLog
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let size = follower(0, 1, 0).len();
    let config = common::small_config(i32::try_from(size * 10).unwrap());
    let (log, _) = common::open(&dir, config, unclean(), &clock);
    let append = |epoch, start: i64, count| {
        for i in 0..count {
            log.append_as_follower(&follower(start + i, 1, epoch))
                .unwrap();
        }
    };
    append(0, 0, 10);
    append(1, 10, 6);
    append(2, 16, 4);
    assert_eq!(log.segment_count(), 2);
    assert_eq!(log.log_end_offset(), 20);
    let count = || {
        seglog_log::LeaderEpochCheckpoint::in_dir(seglog_log::RealFs, &dir)
            .read()
            .unwrap()
            .len()
    };
    assert!(!log.truncate_to(20).unwrap());
    assert_eq!((log.epoch_entries().len(), count()), (3, 3));
    log.truncate_to(11).unwrap();
    assert_eq!((log.epoch_entries().len(), count()), (2, 2));
    log.truncate_to(10).unwrap();
    assert_eq!((log.epoch_entries().len(), count()), (1, 1));
    log.truncate_to(0).unwrap();
    assert_eq!((log.epoch_entries().len(), count()), (0, 0));
}

#[test]
fn recovery_rebuilds_lost_epoch_entries() {
    // LogLoaderTest.testLogRecoversForLeaderEpoch
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    for (offset, epoch) in [(0, 1), (1, 2), (2, 2), (3, 3)] {
        log.append_as_follower(&follower(offset, 1, epoch)).unwrap();
    }
    let expected = [e(1, 0), e(2, 1), e(3, 3)];
    assert_eq!(log.epoch_entries(), expected);
    log.close().unwrap();
    drop(log);
    // Entries deliberately removed (as the cache's truncateFromEnd(2) leaves them).
    std::fs::write(dir.join(LEADER_EPOCH_CHECKPOINT), "0\n2\n1 0\n2 1\n").unwrap();
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    assert_eq!(log.epoch_entries(), expected);
    assert_eq!(checkpoint_text(&dir).unwrap(), "0\n3\n1 0\n2 1\n3 3\n");
}

#[test]
fn recovery_rebuilds_the_cache_from_each_batch() {
    // LogSegmentTest.testRecoveryRebuildsEpochCache, with the checkpoint lost entirely
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    log.truncate_fully_and_start_at(104).unwrap();
    for (offset, epoch) in [(104, 0), (106, 1), (108, 1), (110, 2)] {
        log.append_as_follower(&follower(offset, 2, epoch)).unwrap();
    }
    log.close().unwrap();
    drop(log);
    std::fs::remove_file(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap();
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    assert_eq!(log.epoch_entries(), [e(0, 104), e(1, 106), e(2, 110)]);
    assert_eq!(
        checkpoint_text(&dir).unwrap(),
        "0\n3\n0 104\n1 106\n2 110\n"
    );
    // After a clean shutdown nothing is scanned, so nothing is rebuilt (as in Kafka).
    log.close().unwrap();
    drop(log);
    std::fs::remove_file(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap();
    let clean = LoadOptions::default().with_had_clean_shutdown(true);
    let (log, _) = common::open(&dir, LogConfig::default(), clean, &clock);
    assert!(log.epoch_entries().is_empty());
    assert_eq!(checkpoint_text(&dir), None);
}

#[test]
fn load_drops_entries_past_the_log_end_and_before_the_log_start() {
    // LogLoader.load: truncateFromEndAsyncFlush(nextOffset) and
    // truncateFromStartAsyncFlush(logStartOffsetCheckpoint)
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    log.append_as_follower(&follower(0, 5, 3)).unwrap();
    log.append_as_follower(&follower(5, 5, 5)).unwrap();
    log.close().unwrap();
    drop(log);
    // The checkpoint of a broker that began epoch 7 at 10 and lost the tail from there.
    std::fs::write(dir.join(LEADER_EPOCH_CHECKPOINT), "0\n3\n3 0\n5 5\n7 10\n").unwrap();
    let options = LoadOptions::default()
        .with_had_clean_shutdown(true)
        .with_log_start_offset(2);
    let (log, _) = common::open(&dir, LogConfig::default(), options, &clock);
    assert_eq!(log.epoch_entries(), [e(3, 2), e(5, 5)]);
    assert_eq!(checkpoint_text(&dir).unwrap(), "0\n2\n3 2\n5 5\n");
    assert_eq!(
        log.end_offset_for_epoch(3),
        Some(OffsetAndEpoch {
            offset: 5,
            epoch: 3
        })
    );
    assert_eq!(
        log.end_offset_for_epoch(5),
        Some(OffsetAndEpoch {
            offset: 10,
            epoch: 5
        })
    );
    assert_eq!(log.end_offset_for_epoch(7), None);
    assert_eq!(log.end_offset_for_epoch(-1), None);
    assert_eq!(log.epoch_for_offset(7), Some(5));
    assert_eq!(
        (log.latest_epoch(), log.previous_epoch()),
        (Some(5), Some(3))
    );
    assert_eq!(log.next_epoch(3), Some(5));
}

#[test]
fn a_log_without_a_leader_epoch_appends_as_before() {
    // Kafka's leaders always stamp an epoch; a seglog log whose embedder set none keeps the
    // producer's (-1) and writes no checkpoint.
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    log.append_as_leader(&mut common::producer_batch("a", 3, 1_000))
        .unwrap();
    log.append_as_follower(&follower(3, 2, -1)).unwrap();
    assert_eq!(stamped_epochs(&log), [-1, -1]);
    assert!(log.epoch_entries().is_empty());
    assert_eq!(log.leader_epoch(), None);
    assert_eq!(checkpoint_text(&dir), None);
    let latest = log
        .offset_for_timestamp(ListOffset::Latest)
        .unwrap()
        .unwrap();
    assert_eq!(latest.leader_epoch, None);
    assert!(log.set_leader_epoch(-1).is_err());
    // Stamped from now on; the stamp is outside the CRC, so the batch stays valid.
    log.set_leader_epoch(4).unwrap();
    log.append_as_leader(&mut common::producer_batch("b", 1, 1_000))
        .unwrap();
    assert_eq!(stamped_epochs(&log), [-1, -1, 4]);
    assert_eq!(log.epoch_entries(), [e(4, 5)]);
    log.close().unwrap();
    drop(log);
    let (log, report) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    assert!(report.recovered.iter().all(|(_, r)| r.bytes_truncated == 0));
    assert_eq!(log.log_end_offset(), 6);
}

#[test]
fn a_rebuilt_missing_index_rebuilds_its_epochs() {
    // LogLoader.loadSegmentFiles: a segment without its .index is recovered (recoverSegment),
    // which assigns its batches' epochs, even after a clean shutdown.
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let clock = MockClock::new(1_000);
    let (log, _) = common::open(&dir, LogConfig::default(), unclean(), &clock);
    log.append_as_follower(&follower(0, 2, 6)).unwrap();
    log.append_as_follower(&follower(2, 2, 9)).unwrap();
    log.close().unwrap();
    drop(log);
    std::fs::remove_file(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap();
    std::fs::remove_file(dir.join("00000000000000000000.index")).unwrap();
    let clean = LoadOptions::default().with_had_clean_shutdown(true);
    let (log, report) = common::open(&dir, LogConfig::default(), clean, &clock);
    assert_eq!(report.plan.rebuilt_indexes, [0]);
    assert_eq!(log.epoch_entries(), [e(6, 0), e(9, 2)]);
    assert_eq!(report.epochs_rebuilt, [e(6, 0), e(9, 2)]);
}
