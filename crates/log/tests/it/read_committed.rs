//! Reads with isolation, pinned against Kafka's `UnifiedLogTest` (`testFetchUpToLastStableOffset`,
//! `testTransactionIndexUpdatedThroughReplication`'s layout read back,
//! `testAbortedTransactionSpanningMultipleSegments`), `LocalLog.addAbortedTransactions`' upper
//! bound, `Partition.fetchOffsetForTimestamp`'s last fetchable offset, and the read-only view
//! reading the same partition as a consumer at each isolation level.
//!
//! The partitions are built with follower appends of prebuilt transactional batches and
//! markers. An ABORT's `.txnindex` entry is written with `LogSegment::append_aborted_txn` when
//! the append path has not written it.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::ops::ControlFlow;

use seglog_log::inspect::{AbortedTxn, PartitionView};
use seglog_log::record::{ControlRecordType, batches};
use seglog_log::{
    AbortedTransaction, Isolation, IsolationLevel, ListOffset, LoadOptions, MockClock,
    PartitionLog, RealFs, consumer_records,
};

use crate::common::txn::{self, Producer, TS};
use crate::common::{open, partition_dir, small_config};

/// A data batch of `count` records at `base` valued `v` and stamped `TS + base`; `producer` is
/// `(id, transactional)`, at epoch 0 with its sequence starting at `base`.
fn data(out: &mut Vec<u8>, base: i64, count: i32, producer: Option<(i64, bool)>) {
    let mut batch = txn::Data::new(base, count).value(b"v").timestamp(TS + base);
    if let Some((id, transactional)) = producer {
        let seq = i32::try_from(base).expect("small offsets");
        batch = batch.producer(Producer { id, epoch: 0 }, seq, transactional);
    }
    batch.write(out);
}

/// An end-transaction marker of `producer` at `offset`, stamped `TS + offset`.
fn marker(out: &mut Vec<u8>, offset: i64, producer: i64, kind: ControlRecordType) {
    let producer = Producer {
        id: producer,
        epoch: 0,
    };
    txn::Marker::new(offset, producer, kind)
        .timestamp(TS + offset)
        .write(out);
}

/// Follower-appends each batch of `bytes` on its own (so small segments roll between them).
fn append_each(log: &PartitionLog, bytes: &[u8]) {
    for framed in batches(bytes) {
        let framed = framed.expect("a whole batch");
        log.append_as_follower(framed.bytes()).expect("appended");
    }
}

/// Writes `txn` into the `.txnindex` of the segment holding its marker, unless the append path
/// already did.
fn index_abort(log: &PartitionLog, txn: AbortedTxn) {
    let segments = log.segments();
    let (_, segment) = segments
        .range(..=txn.last_offset())
        .next_back()
        .expect("a segment holds the marker");
    let present = segment.all_aborted_txns().expect("readable");
    if !present.contains(&txn) {
        segment.append_aborted_txn(txn).expect("indexed");
    }
}

pub(crate) const PID1: i64 = 1;
pub(crate) const PID2: i64 = 2;
const PID3: i64 = 3;
const PID4: i64 = 4;

/// `testTransactionIndexUpdatedThroughReplication`'s log: four producers' transactions mixed
/// with plain data, two aborted (pid 1: 0..=28, marker 29; pid 2: 8..=73, marker 74).
fn kafka_layout() -> Vec<u8> {
    let mut b = Vec::new();
    data(&mut b, 0, 5, Some((PID1, true)));
    data(&mut b, 5, 3, None);
    data(&mut b, 8, 2, Some((PID2, true)));
    data(&mut b, 10, 4, Some((PID1, true)));
    data(&mut b, 14, 3, Some((PID3, true)));
    data(&mut b, 17, 2, None);
    data(&mut b, 19, 10, Some((PID1, true)));
    marker(&mut b, 29, PID1, ControlRecordType::Abort);
    data(&mut b, 30, 6, Some((PID2, true)));
    data(&mut b, 36, 3, Some((PID4, true)));
    data(&mut b, 39, 10, None);
    data(&mut b, 49, 9, Some((PID3, true)));
    marker(&mut b, 58, PID3, ControlRecordType::Commit);
    data(&mut b, 59, 8, Some((PID4, true)));
    data(&mut b, 67, 7, Some((PID2, true)));
    marker(&mut b, 74, PID2, ControlRecordType::Abort);
    data(&mut b, 75, 10, None);
    data(&mut b, 85, 4, Some((PID4, true)));
    marker(&mut b, 89, PID4, ControlRecordType::Commit);
    b
}

/// The offsets a read_committed consumer sees of [`kafka_layout`].
pub(crate) fn committed_offsets() -> Vec<i64> {
    [
        5..8,
        14..17,
        17..19,
        36..39,
        39..49,
        49..58,
        59..67,
        75..85,
        85..89,
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Every data offset of [`kafka_layout`] (no marker).
pub(crate) fn data_offsets() -> Vec<i64> {
    (0..90).filter(|o| ![29, 58, 74, 89].contains(o)).collect()
}

pub(crate) fn layout_log(root: &std::path::Path, segment_bytes: i32) -> PartitionLog {
    let clock = MockClock::new(TS);
    let (log, _) = open(
        &partition_dir(root),
        small_config(segment_bytes),
        LoadOptions::default(),
        &clock,
    );
    append_each(&log, &kafka_layout());
    index_abort(&log, AbortedTxn::new(PID1, 0, 29, 8));
    index_abort(&log, AbortedTxn::new(PID2, 8, 74, 36));
    log.set_high_watermark(log.log_end_offset());
    log
}

/// The offsets `consumer_records` returns for a fetch.
fn consumed(log: &PartitionLog, from: i64, isolation: Isolation) -> (Vec<i64>, i64) {
    let fetch = log.read(from, 1 << 20, isolation, true).expect("read");
    let mut bytes = Vec::new();
    fetch.read_into(&mut bytes).expect("bytes");
    let level = match isolation {
        Isolation::TxnCommitted => IsolationLevel::ReadCommitted,
        _ => IsolationLevel::ReadUncommitted,
    };
    let aborted = fetch.aborted_transactions.clone().unwrap_or_default();
    let mut records = consumer_records(&bytes, from, level, &aborted);
    let offsets = records
        .by_ref()
        .map(|r| r.expect("decodes").offset)
        .collect();
    (offsets, records.next_fetch_offset())
}

pub(crate) fn aborted(pairs: &[(i64, i64)]) -> Vec<AbortedTransaction> {
    pairs
        .iter()
        .map(|&(producer_id, first_offset)| AbortedTransaction {
            producer_id,
            first_offset,
        })
        .collect()
}

#[test]
fn read_committed_returns_the_aborted_transactions_and_hides_their_records() {
    let root = tempfile::tempdir().unwrap();
    let log = layout_log(root.path(), 1 << 20);
    assert_eq!(log.last_stable_offset(), 90);
    let fetch = log.read(0, 1 << 20, Isolation::TxnCommitted, true).unwrap();
    assert_eq!(
        fetch.aborted_transactions,
        Some(aborted(&[(PID1, 0), (PID2, 8)]))
    );
    let (offsets, next) = consumed(&log, 0, Isolation::TxnCommitted);
    assert_eq!(offsets, committed_offsets());
    assert_eq!(next, 90, "past the trailing COMMIT marker");
    // read_uncommitted: no aborted list, every data record, still no marker.
    let fetch = log
        .read(0, 1 << 20, Isolation::HighWatermark, true)
        .unwrap();
    assert_eq!(fetch.aborted_transactions, None);
    assert_eq!(
        log.read(0, 1 << 20, Isolation::LogEnd, true)
            .unwrap()
            .aborted_transactions,
        None
    );
    assert_eq!(
        consumed(&log, 0, Isolation::HighWatermark).0,
        data_offsets()
    );
}

#[test]
fn the_aborted_list_stops_at_the_fetchs_upper_bound() {
    let root = tempfile::tempdir().unwrap();
    let log = layout_log(root.path(), 1 << 20);
    // The offset index's first entry is (7, 101): batch 5..=7 at byte 101, after batch 0..=4.
    // No bytes from 0: the upper bound is that entry's offset, 7, below pid 2's first offset.
    let none = log.read(0, 0, Isolation::TxnCommitted, false).unwrap();
    assert_eq!(none.region.length, 0);
    assert_eq!(none.aborted_transactions, Some(aborted(&[(PID1, 0)])));
    // The first batch, 101 bytes: Kafka's smallest-upper-bound search, matching entry 0
    // exactly, answers the entry after it (9), so pid 2's transaction is returned too.
    let one = log.read(0, 1, Isolation::TxnCommitted, true).unwrap();
    assert_eq!(one.region.length, 101);
    assert_eq!(
        one.aborted_transactions,
        Some(aborted(&[(PID1, 0), (PID2, 8)]))
    );
    // From 30, one batch: pid 1's transaction ended at 29, before the fetch.
    let later = log.read(30, 1, Isolation::TxnCommitted, true).unwrap();
    assert_eq!(later.aborted_transactions, Some(aborted(&[(PID2, 8)])));
    // From 75: both ended before it.
    let last = log
        .read(75, 1 << 20, Isolation::TxnCommitted, true)
        .unwrap();
    assert_eq!(last.aborted_transactions, Some(Vec::new()));
}

#[test]
fn collect_aborted_transactions_is_kafkas() {
    let root = tempfile::tempdir().unwrap();
    let log = layout_log(root.path(), 1 << 20);
    let all = log.collect_aborted_transactions(0, 90).unwrap();
    assert_eq!(
        all,
        [
            AbortedTxn::new(PID1, 0, 29, 8),
            AbortedTxn::new(PID2, 8, 74, 36)
        ]
    );
    // The range starts at the log start offset, whatever the start offset; the upper bound
    // is exclusive.
    assert_eq!(log.collect_aborted_transactions(50, 90).unwrap(), all);
    assert_eq!(
        log.collect_aborted_transactions(0, 8).unwrap(),
        [AbortedTxn::new(PID1, 0, 29, 8)]
    );
    assert_eq!(log.collect_aborted_transactions(0, 0).unwrap(), []);
}

#[test]
fn an_aborted_transaction_spanning_segments_is_returned_with_the_first() {
    // testAbortedTransactionSpanningMultipleSegments: each batch fills a segment.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(TS);
    let mut one = Vec::new();
    data(&mut one, 0, 3, Some((137, true)));
    let segment_bytes = i32::try_from(one.len()).unwrap();
    let (log, _) = open(
        &partition_dir(root.path()),
        small_config(segment_bytes),
        LoadOptions::default(),
        &clock,
    );
    let mut b = one;
    data(&mut b, 3, 3, Some((137, true)));
    marker(&mut b, 6, 137, ControlRecordType::Abort);
    append_each(&log, &b);
    assert!(
        log.segment_count() >= 2,
        "the data spilled to a second segment"
    );
    index_abort(&log, AbortedTxn::new(137, 0, 6, 7));
    log.set_high_watermark(log.log_end_offset());
    let fetch = log.read(0, 2048, Isolation::TxnCommitted, true).unwrap();
    assert_eq!(fetch.offset_metadata.segment_base_offset, 0);
    assert_eq!(fetch.aborted_transactions, Some(aborted(&[(137, 0)])));
    assert_eq!(
        consumed(&log, 0, Isolation::TxnCommitted).0,
        Vec::<i64>::new()
    );
}

#[test]
fn read_committed_never_passes_the_last_stable_offset() {
    // testFetchUpToLastStableOffset's assertLsoBoundedFetches, with the high watermark moved.
    let root = tempfile::tempdir().unwrap();
    let log = layout_log(root.path(), 1 << 20);
    for hw in [0, 30, 58, 75, 90] {
        log.set_high_watermark(hw);
        let lso = log.last_stable_offset();
        assert!(lso <= hw);
        for offset in log.log_start_offset()..lso {
            let fetch = log
                .read(offset, 1 << 20, Isolation::TxnCommitted, true)
                .unwrap();
            assert!(fetch.region.length > 0, "offset {offset} below {lso}");
            let mut bytes = Vec::new();
            fetch.read_into(&mut bytes).unwrap();
            for batch in batches(&bytes) {
                assert!(batch.unwrap().last_offset().unwrap() < lso);
            }
        }
        for offset in lso..=log.log_end_offset() {
            let fetch = log
                .read(offset, 1 << 20, Isolation::TxnCommitted, true)
                .unwrap();
            assert_eq!(fetch.region.length, 0, "offset {offset} at or past {lso}");
            assert_eq!(fetch.aborted_transactions, Some(Vec::new()));
        }
    }
}

#[test]
fn list_offsets_latest_follows_the_isolation_level() {
    let root = tempfile::tempdir().unwrap();
    let log = layout_log(root.path(), 1 << 20);
    log.set_high_watermark(40);
    let latest = |level| {
        log.fetch_offset_for_timestamp(ListOffset::Latest, level)
            .unwrap()
            .map(|t| t.offset)
    };
    assert_eq!(latest(None), Some(90));
    assert_eq!(latest(Some(IsolationLevel::ReadUncommitted)), Some(40));
    assert_eq!(
        latest(Some(IsolationLevel::ReadCommitted)),
        Some(log.last_stable_offset())
    );
    assert_eq!(
        log.offset_for_timestamp(ListOffset::Latest)
            .unwrap()
            .map(|t| t.offset),
        Some(90)
    );
    // By time: a record at or past the last fetchable offset is no answer.
    let at = |ts, level| {
        log.fetch_offset_for_timestamp(ListOffset::Timestamp(ts), level)
            .unwrap()
            .map(|t| t.offset)
    };
    assert_eq!(at(TS + 39, Some(IsolationLevel::ReadUncommitted)), Some(39));
    assert_eq!(at(TS + 40, Some(IsolationLevel::ReadUncommitted)), None);
    assert_eq!(at(TS + 40, None), Some(49));
}

/// The offsets the read-only view gives a consumer at `level` from `from`.
pub(crate) fn viewed(dir: &std::path::Path, from: i64, level: IsolationLevel) -> (Vec<i64>, i64) {
    let view = PartitionView::open(RealFs, dir).unwrap();
    let mut offsets = Vec::new();
    let read = view
        .for_each_record(from, level, |r, _| {
            offsets.push(r.offset);
            ControlFlow::<()>::Continue(())
        })
        .unwrap();
    (offsets, read.next_offset)
}

#[test]
fn the_read_only_view_reads_as_a_consumer() {
    let root = tempfile::tempdir().unwrap();
    let log = layout_log(root.path(), 600);
    assert!(log.segment_count() > 3);
    log.close().unwrap();
    drop(log);
    let dir = partition_dir(root.path());
    let view = PartitionView::open(RealFs, &dir).unwrap();
    assert_eq!(view.last_stable_offset().unwrap(), 90);
    assert_eq!(
        view.aborted_transactions(0, 90).unwrap(),
        aborted(&[(PID1, 0), (PID2, 8)])
    );
    assert_eq!(
        view.aborted_transactions(30, 90).unwrap(),
        aborted(&[(PID2, 8)])
    );
    assert_eq!(
        viewed(&dir, 0, IsolationLevel::ReadCommitted),
        (committed_offsets(), 90)
    );
    assert_eq!(
        viewed(&dir, 0, IsolationLevel::ReadUncommitted),
        (data_offsets(), 90)
    );
    // From inside pid 2's aborted transaction, after its first batch.
    let (from_30, _) = viewed(&dir, 30, IsolationLevel::ReadCommitted);
    let want: Vec<i64> = committed_offsets()
        .into_iter()
        .filter(|o| *o >= 30)
        .collect();
    assert_eq!(from_30, want);
}

#[test]
fn an_open_transaction_bounds_read_committed_offline() {
    let root = tempfile::tempdir().unwrap();
    let log = layout_log(root.path(), 1 << 20);
    // pid 5 opens a transaction at 90 and never ends it; plain data follows.
    let mut b = Vec::new();
    data(&mut b, 90, 2, Some((5, true)));
    data(&mut b, 92, 3, None);
    append_each(&log, &b);
    log.close().unwrap();
    drop(log);
    let dir = partition_dir(root.path());
    // A corrupt snapshot at the log end is passed over, and left as it is.
    let snapshot = dir.join(format!("{:020}.snapshot", 95));
    std::fs::write(&snapshot, b"not a snapshot").unwrap();
    let view = PartitionView::open(RealFs, &dir).unwrap();
    assert_eq!(view.log_end_offset().unwrap(), 95);
    assert_eq!(view.last_stable_offset().unwrap(), 90);
    assert_eq!(
        viewed(&dir, 0, IsolationLevel::ReadCommitted),
        (committed_offsets(), 90)
    );
    let mut uncommitted = data_offsets();
    uncommitted.extend(90..95);
    assert_eq!(
        viewed(&dir, 0, IsolationLevel::ReadUncommitted),
        (uncommitted, 95)
    );
    assert_eq!(std::fs::read(&snapshot).unwrap(), b"not a snapshot");
}
