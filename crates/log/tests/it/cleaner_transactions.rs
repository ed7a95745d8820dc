//! Compaction of transactional data, as Kafka's `LogCleanerTest` pins it (reference 5.13, 7.5),
//! each test named after Kafka's: aborted data goes, markers stay while data of their transaction
//! remains and go after their delete horizon, producers' last batches stay (emptied), and each
//! cleaned segment's `.txnindex` keeps the aborted transactions whose data remains. The logs are
//! written as a follower would (prebuilt batches, markers included), with the `.txnindex`
//! entries the leader would have written for each ABORT.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use std::collections::HashMap;

use crate::common;
use crate::common::txn::{Data, KeyValue, Marker, Producer};

use seglog_log::{
    AbortedTransaction, CleanOptions, IsolationLevel, LoadOptions, LogConfig, MockClock,
    PartitionLog, StopAfter, consumer_records,
};
use seglog_record_format::{
    Batch, BatchBuilder, BatchOptions, Compression, ControlRecordType, NewRecord,
};
use seglog_segment::txn_index::AbortedTxn;

const RETENTION_MS: i64 = 86_400_000;
/// Kafka's `largeTimestamp`: far enough in the future that every record is old.
const LARGE: i64 = i64::MAX - RETENTION_MS - 1;

/// A partition log written as a follower, with the bookkeeping of a leader for the `.txnindex`.
struct TxnLog {
    root: tempfile::TempDir,
    config: LogConfig,
    clock: MockClock,
    log: PartitionLog,
    sequences: HashMap<i64, i32>,
    /// The first offset of each producer's ongoing transaction.
    ongoing: HashMap<i64, i64>,
}

impl TxnLog {
    fn new(segment_bytes: u32) -> Self {
        let root = tempfile::tempdir().unwrap();
        let clock = MockClock::new(0);
        let config = LogConfig::from_pairs([
            ("internal.segment.bytes", segment_bytes.to_string().as_str()),
            ("cleanup.policy", "compact"),
            ("segment.index.bytes", "4096"),
            ("delete.retention.ms", RETENTION_MS.to_string().as_str()),
        ])
        .unwrap();
        let (log, _) = common::open(
            &common::partition_dir(root.path()),
            config.clone(),
            LoadOptions::default(),
            &clock,
        );
        Self {
            root,
            config,
            clock,
            log,
            sequences: HashMap::new(),
            ongoing: HashMap::new(),
        }
    }

    /// Appends `batch` as a follower, its records stamped 0; returns its first offset.
    fn append(&self, batch: Data) -> i64 {
        let mut bytes = Vec::new();
        batch.timestamp(0).write(&mut bytes);
        self.log.append_as_follower(&bytes).unwrap().first_offset
    }

    /// A batch of `records` from producer `pid` at the log end, at epoch 0 and partition leader
    /// epoch 0, its sequence continuing the producer's.
    fn producer_batch(&mut self, pid: i64, records: Vec<KeyValue>, transactional: bool) -> Data {
        let sequence = self.sequences.entry(pid).or_insert(0);
        let seq = *sequence;
        *sequence += records.len() as i32;
        Data::with_records(self.log.log_end_offset(), records)
            .producer(Producer { id: pid, epoch: 0 }, seq, transactional)
            .leader_epoch(0)
    }

    /// Kafka's `appendTransactionalAsLeader(log, pid, 0)(keys)`: key and value are the key's text.
    fn txn(&mut self, pid: i64, keys: &[i64]) {
        let batch = self.producer_batch(pid, key_records(keys), true);
        let first = self.append(batch);
        self.ongoing.entry(pid).or_insert(first);
    }

    /// A transactional batch that starts the producer's sequence over (the group coordinator's).
    fn txn_from_sequence_zero(&mut self, pid: i64, keys: &[i64]) {
        self.sequences.insert(pid, 0);
        self.txn(pid, keys);
    }

    /// Kafka's `record(key, value)`: a plain batch.
    fn plain(&self, key: i64, value: i64) {
        let records = vec![(
            Some(key.to_string().into_bytes()),
            Some(value.to_string().into_bytes()),
        )];
        self.append(Data::with_records(self.log.log_end_offset(), records));
    }

    fn marker(&mut self, pid: i64, kind: ControlRecordType) -> i64 {
        let mut batch = Vec::new();
        Marker::new(
            self.log.log_end_offset(),
            Producer { id: pid, epoch: 0 },
            kind,
        )
        .timestamp(0)
        .leader_epoch(0)
        .write(&mut batch);
        self.log.append_as_follower(&batch).unwrap().first_offset
    }

    fn commit(&mut self, pid: i64) {
        self.marker(pid, ControlRecordType::Commit);
        self.ongoing.remove(&pid);
    }

    /// The ABORT marker; the append writes its `.txnindex` entry in the segment holding it, as
    /// Kafka's leader does, which this checks: the last stable offset is the first offset of the
    /// oldest other ongoing transaction, or the offset after the marker.
    fn abort(&mut self, pid: i64) {
        let offset = self.marker(pid, ControlRecordType::Abort);
        let Some(first) = self.ongoing.remove(&pid) else {
            return;
        };
        let lso = self.ongoing.values().min().copied().unwrap_or(offset + 1);
        let written = self.log.active_segment().all_aborted_txns().unwrap();
        assert_eq!(
            written.last(),
            Some(&AbortedTxn::new(pid, first, offset, lso)),
            "the append's .txnindex entry"
        );
    }

    /// Closes the log as a crash would (nothing more written) and opens it again, with no
    /// recovery point checkpointed: every segment is recovered.
    fn reopen(&mut self) -> seglog_log::LoadReport {
        self.reopen_at(0)
    }

    /// Closes the log as a crash would and opens it again with `recovery_point` checkpointed:
    /// the segments below it are loaded as they are on disk, the others recovered.
    fn reopen_at(&mut self, recovery_point: i64) -> seglog_log::LoadReport {
        let dir = common::partition_dir(self.root.path());
        let options = LoadOptions::default().with_recovery_point(recovery_point);
        let (log, report) = common::open(&dir, self.config.clone(), options, &self.clock);
        self.log = log;
        report
    }

    /// Every segment below the log end flushed (the rolls' background flushes waited for), as
    /// the checkpoint of the recovery point would then say: the recovery point.
    fn flushed(&self) -> i64 {
        self.log.wait_for_background_flushes();
        self.log.flush().unwrap();
        self.log.recovery_point()
    }

    /// The live `.txnindex` files, by name.
    fn txn_index_files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(common::partition_dir(self.root.path()))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| {
                std::path::Path::new(n)
                    .extension()
                    .is_some_and(|e| e == "txnindex")
            })
            .collect();
        names.sort();
        names
    }

    fn roll(&self) {
        self.log.roll().unwrap();
        self.log.set_high_watermark(self.log.log_end_offset());
    }

    /// Kafka's `doClean(LogToClean(tp, log, first_dirty, activeSegment.baseOffset), now)`.
    fn clean(&self, first_dirty: i64, now: i64) -> i64 {
        self.clock.set(now);
        self.log.set_high_watermark(self.log.log_end_offset());
        let report = self
            .log
            .clean(
                &CleanOptions::default()
                    .with_first_dirty_offset(first_dirty)
                    // Kafka's tests clean up to the active segment (`LogToClean(.., activeSegment
                    // .baseOffset)`), an ongoing transaction's data included.
                    .with_uncleanable_offset(Some(self.log.active_segment().base_offset())),
            )
            .unwrap();
        assert!(!report.aborted, "{report:?}");
        report.end_offset
    }

    /// Kafka's `runTwoPassClean`: once at `now`, once past the horizon that pass set.
    fn two_pass_clean(&self, first_dirty: i64, now: i64) -> i64 {
        self.clean(first_dirty, now);
        self.clean(first_dirty, now + RETENTION_MS + 1)
    }

    fn batches(&self) -> Vec<BatchInfo> {
        let mut out = Vec::new();
        for segment in self.log.segments().values() {
            let bytes = std::fs::read(segment.log_path()).unwrap();
            for framed in seglog_record_format::batches(&bytes) {
                let framed = framed.unwrap();
                framed.validate().unwrap();
                let Batch::V2(b) = framed.decode().unwrap() else {
                    panic!("v2 expected");
                };
                let mut scratch = Vec::new();
                let records = b
                    .records_with(&mut scratch)
                    .unwrap()
                    .map(|r| {
                        let r = r.unwrap();
                        (
                            r.offset(),
                            r.key().map(<[u8]>::to_vec),
                            r.value().map(<[u8]>::to_vec),
                        )
                    })
                    .collect();
                out.push(BatchInfo {
                    base: b.base_offset(),
                    last: b.last_offset(),
                    control: b.is_control(),
                    producer_id: b.producer_id(),
                    last_sequence: b.base_sequence() + b.last_offset_delta(),
                    delete_horizon: b.delete_horizon_ms(),
                    records,
                });
            }
        }
        out
    }

    /// Kafka's `offsetsInLog`: offsets of records with a key and a value, markers included.
    fn offsets(&self) -> Vec<i64> {
        self.batches()
            .iter()
            .flat_map(|b| b.records.iter())
            .filter(|r| r.1.is_some() && r.2.is_some())
            .map(|r| r.0)
            .collect()
    }

    /// Kafka's `keysInLog`: keys of the data records with a value.
    fn keys(&self) -> Vec<i64> {
        self.batches()
            .iter()
            .filter(|b| !b.control)
            .flat_map(|b| b.records.iter())
            .filter(|r| r.2.is_some())
            .filter_map(|r| r.1.as_ref())
            .map(|k| String::from_utf8(k.clone()).unwrap().parse().unwrap())
            .collect()
    }

    /// Kafka's `lastOffsetsPerBatchInLog`.
    fn last_offsets(&self) -> Vec<i64> {
        self.batches().iter().map(|b| b.last).collect()
    }

    /// Kafka's `batchBaseOffsetsInLog`.
    fn base_offsets(&self) -> Vec<i64> {
        self.batches().iter().map(|b| b.base).collect()
    }

    /// Kafka's `lastSequencesInLog`.
    fn last_sequences(&self) -> HashMap<i64, i32> {
        self.batches()
            .iter()
            .filter(|b| !b.control && b.producer_id >= 0)
            .map(|b| (b.producer_id, b.last_sequence))
            .collect()
    }

    /// Kafka's `collectAbortedTransactions(0, logEnd)`: every segment's `.txnindex`, in order.
    fn aborted(&self) -> Vec<(i64, i64, i64, i64)> {
        self.log
            .segments()
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
}

#[derive(Debug)]
struct BatchInfo {
    base: i64,
    last: i64,
    control: bool,
    producer_id: i64,
    last_sequence: i32,
    delete_horizon: Option<i64>,
    records: Vec<Rec>,
}

/// A record: offset, key, value.
type Rec = (i64, Option<Vec<u8>>, Option<Vec<u8>>);

fn key_records(keys: &[i64]) -> Vec<KeyValue> {
    keys.iter()
        .map(|k| {
            (
                Some(k.to_string().into_bytes()),
                Some(k.to_string().into_bytes()),
            )
        })
        .collect()
}

#[test]
fn test_basic_transaction_aware_cleaning() {
    let mut t = TxnLog::new(2048);
    t.txn(1, &[1, 2]);
    t.txn(2, &[2, 3]);
    t.txn(1, &[3, 4]);
    t.abort(1);
    t.commit(2);
    t.txn(1, &[2]);
    t.commit(1);
    let aborted = t.aborted();
    assert_eq!(aborted, vec![(1, 0, 6, 2)]);
    t.roll();
    t.clean(0, 0);
    assert_eq!(t.keys(), vec![3, 2]);
    assert_eq!(t.offsets(), vec![3, 6, 7, 8, 9]);
    // The transaction index is still right.
    assert_eq!(t.aborted(), aborted);
}

#[test]
fn test_clean_with_transactions_spanning_segments() {
    let mut t = TxnLog::new(1024);
    t.txn(1, &[1, 2]);
    t.txn(3, &[2, 3]);
    t.txn(2, &[3, 4]);
    t.roll();
    t.txn(2, &[5, 6]);
    t.txn(3, &[6, 7]);
    t.txn(1, &[7, 8]);
    t.abort(2);
    t.txn(3, &[8, 9]);
    t.commit(3);
    t.txn(1, &[9, 10]);
    t.abort(1);
    // Only the first segment is cleanable: pid 2's aborted data there goes already.
    let dirty = t.clean(0, 0);
    assert_eq!(t.keys(), vec![2, 3, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10]);
    t.roll();
    t.txn(2, &[11]);
    t.txn(1, &[12]);
    // Finally only pid 3's keys remain, and the open transactions' data.
    t.clean(dirty, 0);
    assert_eq!(t.keys(), vec![2, 3, 6, 7, 8, 9, 11, 12]);
}

#[test]
fn test_commit_marker_removal() {
    let mut t = TxnLog::new(256);
    t.txn(1, &[1]);
    t.txn(1, &[2, 3]);
    t.commit(1);
    t.txn(1, &[2]);
    t.commit(1);
    t.roll();
    // The marker stays: its transaction still has records.
    let dirty = t.clean(0, LARGE);
    assert_eq!(t.keys(), vec![1, 3, 2]);
    assert_eq!(t.offsets(), vec![0, 2, 3, 4, 5]);

    t.txn(1, &[1, 3]);
    t.commit(1);
    t.roll();
    // The first cleaning keeps the commit marker at 3: the cleaning still read its records.
    t.clean(dirty, LARGE);
    assert_eq!(t.keys(), vec![2, 1, 3]);
    assert_eq!(t.offsets(), vec![3, 4, 5, 6, 7, 8]);
    // The next one finds its transaction empty and sets its horizon, not removing it yet (Kafka's
    // test re-cleans the whole log here through its fake map's stale latest offset).
    t.clean(0, LARGE);
    assert_eq!(t.keys(), vec![2, 1, 3]);
    assert_eq!(t.offsets(), vec![3, 4, 5, 6, 7, 8]);
    // Past the horizon it goes.
    t.clean(0, i64::MAX);
    assert_eq!(t.keys(), vec![2, 1, 3]);
    assert_eq!(t.offsets(), vec![4, 5, 6, 7, 8]);
}

#[test]
fn test_deleted_batches_with_no_messages_read() {
    let mut t = TxnLog::new(1000);
    t.txn(1, &[1]);
    t.abort(1);
    t.txn(1, &[2]);
    t.txn(1, &[2]);
    t.commit(1);
    t.roll();
    t.clean(0, LARGE);
    assert_eq!(t.keys(), vec![2]);
    assert_eq!(t.offsets(), vec![1, 3, 4]);
    // The first pass sets the abort marker's horizon (its data is gone), the second removes it.
    t.two_pass_clean(0, LARGE);
    assert_eq!(t.keys(), vec![2]);
    assert_eq!(t.offsets(), vec![3, 4]);
}

#[test]
fn test_commit_marker_retention_with_empty_batch() {
    let mut t = TxnLog::new(256);
    t.txn(1, &[2, 3]); // 0, 1
    t.roll();
    t.txn(2, &[2, 3]); // 2, 3
    t.commit(2); // 4
    t.roll();
    t.plain(2, 2); // 5
    t.plain(3, 3); // 6
    t.commit(1); // 7
    t.roll();
    // The records go; both producers' batches stay empty.
    let dirty = t.clean(0, LARGE);
    assert_eq!(t.keys(), vec![2, 3]);
    assert_eq!(t.offsets(), vec![4, 5, 6, 7]);
    assert_eq!(t.last_offsets(), vec![1, 3, 4, 5, 6, 7]);
    // The empty batches stay: they hold the last sequences.
    let dirty = t.clean(dirty, LARGE);
    assert_eq!(t.keys(), vec![2, 3]);
    assert_eq!(t.offsets(), vec![4, 5, 6, 7]);
    assert_eq!(t.last_offsets(), vec![1, 3, 4, 5, 6, 7]);
    // A new batch of producer 2 frees its empty one.
    t.txn(2, &[1]); // 8
    t.commit(2); // 9
    t.roll();
    t.clean(dirty, LARGE);
    assert_eq!(t.keys(), vec![2, 3, 1]);
    assert_eq!(t.offsets(), vec![4, 5, 6, 7, 8, 9]);
    assert_eq!(t.last_offsets(), vec![1, 4, 5, 6, 7, 8, 9]);
    // Producer 2's first commit has no data left: a horizon, then gone.
    t.two_pass_clean(0, LARGE);
    assert_eq!(t.keys(), vec![2, 3, 1]);
    assert_eq!(t.offsets(), vec![5, 6, 7, 8, 9]);
    assert_eq!(t.last_offsets(), vec![1, 5, 6, 7, 8, 9]);
}

#[test]
fn test_clean_empty_control_batch() {
    let mut t = TxnLog::new(256);
    t.commit(1); // 0
    t.plain(2, 2); // 1
    t.plain(3, 3); // 2
    t.roll();
    // The marker gets a horizon, then loses its record, but stays as an empty control batch:
    // it holds producer 1's epoch.
    t.two_pass_clean(0, LARGE);
    assert_eq!(t.keys(), vec![2, 3]);
    assert_eq!(t.offsets(), vec![1, 2]);
    assert_eq!(t.last_offsets(), vec![0, 1, 2]);
    let empty = &t.batches()[0];
    assert!(empty.control && empty.records.is_empty(), "{empty:?}");
    // Cleaning the empty control batch again is no trouble.
    t.clean(0, i64::MAX);
    assert_eq!(t.keys(), vec![2, 3]);
    assert_eq!(t.offsets(), vec![1, 2]);
    assert_eq!(t.last_offsets(), vec![0, 1, 2]);
}

#[test]
fn test_committed_transaction_spanning_segments() {
    let mut t = TxnLog::new(128);
    t.txn(1, &[1]);
    t.roll();
    t.commit(1);
    t.roll();
    t.two_pass_clean(0, LARGE);
    assert_eq!(t.offsets(), vec![0, 1]);
    assert_eq!(t.last_offsets(), vec![0, 1]);
}

#[test]
fn test_aborted_transaction_spanning_segments() {
    let mut t = TxnLog::new(128);
    t.txn(1, &[1]);
    t.roll();
    t.abort(1);
    t.roll();
    // The batch stays (emptied): it is producer 1's last. The marker stays: data of its
    // transaction (that empty batch) remains, so it is still indexed.
    t.clean(0, LARGE);
    assert_eq!(t.offsets(), vec![1]);
    assert_eq!(t.last_offsets(), vec![0, 1]);
    assert_eq!(t.aborted(), vec![(1, 0, 1, 2)]);
    t.clean(0, i64::MAX);
    assert_eq!(t.offsets(), vec![1]);
    assert_eq!(t.last_offsets(), vec![0, 1]);
    assert_eq!(t.aborted(), vec![(1, 0, 1, 2)]);
}

#[test]
fn test_abort_marker_removal() {
    let mut t = TxnLog::new(256);
    t.txn(1, &[1]);
    t.txn(1, &[2, 3]);
    t.abort(1);
    t.txn(1, &[3]);
    t.commit(1);
    t.roll();
    // The aborted records go; the abort marker stays.
    t.clean(0, LARGE);
    assert_eq!(t.keys(), vec![3]);
    assert_eq!(t.offsets(), vec![3, 4, 5]);
    // First pass: its horizon; second: gone.
    t.two_pass_clean(0, LARGE);
    assert_eq!(t.keys(), vec![3]);
    assert_eq!(t.offsets(), vec![4, 5]);
}

#[test]
fn test_empty_batch_removal_with_sequence_reuse() {
    let mut t = TxnLog::new(2048);
    t.txn_from_sequence_zero(1, &[1]);
    t.commit(1);
    t.txn_from_sequence_zero(1, &[2]);
    t.commit(1);
    t.plain(1, 1);
    t.plain(2, 1);
    t.roll();
    // Both transactional batches are cleaned; the last stays empty for the sequence and epoch.
    t.clean(0, LARGE);
    assert_eq!(t.offsets(), vec![1, 3, 4, 5]);
    assert_eq!(t.last_offsets(), vec![1, 2, 3, 4, 5]);
    // The first marker: a horizon, then gone.
    t.two_pass_clean(0, LARGE);
    assert_eq!(t.offsets(), vec![3, 4, 5]);
    assert_eq!(t.last_offsets(), vec![2, 3, 4, 5]);
}

#[test]
fn test_abort_marker_retention_with_empty_batch() {
    let mut t = TxnLog::new(256);
    t.txn(1, &[2, 3]); // last offset 1
    t.abort(1); // 2
    t.roll();
    let indexed = vec![(1, 0, 2, 3)];
    assert_eq!(t.aborted(), indexed);
    // The records go; the marker and the emptied batch stay.
    let dirty = t.clean(0, LARGE);
    assert_eq!(t.aborted(), indexed);
    assert_eq!(t.keys(), Vec::<i64>::new());
    assert_eq!(t.offsets(), vec![2]);
    assert_eq!(t.last_offsets(), vec![1, 2]);
    // Still so after two passes: the empty batch holds the last sequence.
    let dirty = t.two_pass_clean(dirty, LARGE);
    assert_eq!(t.aborted(), indexed);
    assert_eq!(t.keys(), Vec::<i64>::new());
    assert_eq!(t.offsets(), vec![2]);
    assert_eq!(t.last_offsets(), vec![1, 2]);
    // A new batch of the producer frees the empty one; the marker stays this time, as the
    // cleaning still read that empty batch.
    t.txn(1, &[1]);
    t.roll();
    t.clean(dirty, LARGE);
    assert_eq!(t.aborted(), indexed);
    assert_eq!(t.keys(), vec![1]);
    assert_eq!(t.offsets(), vec![2, 3]);
    assert_eq!(t.last_offsets(), vec![2, 3]);
    // A horizon, then the marker goes, and the index no longer holds the transaction.
    t.two_pass_clean(0, LARGE);
    assert_eq!(t.keys(), vec![1]);
    assert_eq!(t.offsets(), vec![3]);
    assert_eq!(t.last_offsets(), vec![3]);
    assert_eq!(t.aborted(), vec![]);
}

#[test]
fn test_multi_pass_segment_cleaning_with_aborted_transactions() {
    let mut t = TxnLog::new(1024 * 1024);
    t.txn(1, &[1, 2]); // [0, 1]
    t.txn(2, &[2, 3]); // [2, 3]
    t.txn(1, &[3, 4]); // [4, 5]
    t.commit(1); // 6
    t.commit(2); // 7
    t.txn(1, &[2, 3]); // [8, 9]
    t.abort(1); // 10
    t.txn(2, &[4, 5]); // [11, 12]
    t.txn(1, &[5, 6]); // [13, 14]
    t.commit(1); // 15
    t.abort(2); // 16
    t.txn(2, &[6, 7]); // [17, 18]
    t.commit(2); // 19
    t.roll();
    assert_eq!(t.log.log_end_offset(), 20);
    let expected = vec![(1, 8, 10, 11), (2, 11, 16, 17)];
    assert_eq!(t.aborted(), expected);
    // A small key map, so that each pass covers part of the log. Kafka's test map takes three
    // keys and stops at the record that does not fit; ours stops before a batch with more records
    // than the room left, so it takes five slots (four keys) to end the first pass where Kafka's
    // does. The passes then end at 4, 17 and 20 (Kafka's at 4, 14 and 20), and each pass leaves
    // what Kafka's leaves.
    let options = |first_dirty_offset| {
        CleanOptions::default()
            .with_first_dirty_offset(first_dirty_offset)
            .with_dedupe_buffer_bytes(5 * 24)
    };
    let clean = |dirty: i64| {
        let report = t.log.clean(&options(dirty)).unwrap();
        assert!(!report.aborted);
        report.end_offset
    };
    // First pass: the aborted data goes, the markers stay (retention not passed).
    let dirty = clean(0);
    assert_eq!(dirty, 4);
    assert_eq!(
        t.base_offsets(),
        vec![0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19]
    );
    assert_eq!(
        t.offsets(),
        vec![0, 2, 3, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]
    );
    assert_eq!(t.aborted(), expected);
    // Second pass: no aborted data remains, so the index drops both; the markers stay.
    let dirty = clean(dirty);
    assert_eq!(dirty, 17);
    assert_eq!(
        t.base_offsets(),
        vec![0, 2, 4, 6, 7, 10, 13, 15, 16, 17, 19]
    );
    assert_eq!(
        t.offsets(),
        vec![0, 2, 4, 5, 6, 7, 10, 13, 14, 15, 16, 17, 18, 19]
    );
    assert_eq!(t.aborted(), vec![]);
    // Past the retention the abort markers (10 and 16) go.
    t.clock.advance(RETENTION_MS);
    let dirty = clean(dirty);
    assert_eq!(dirty, 20);
    assert_eq!(t.base_offsets(), vec![0, 2, 4, 6, 7, 13, 15, 17, 19]);
    assert_eq!(t.offsets(), vec![0, 2, 4, 5, 6, 7, 13, 15, 17, 18, 19]);
    assert_eq!(t.aborted(), vec![]);
}

#[test]
fn test_log_cleaner_retains_last_sequence_even_if_transaction_aborted() {
    let mut t = TxnLog::new(1024);
    t.txn(1, &[1]);
    t.txn(1, &[2, 3]);
    t.abort(1);
    t.roll();
    t.clean(0, 0);
    assert_eq!(t.last_offsets(), vec![2, 3]);
    assert_eq!(t.last_sequences(), HashMap::from([(1, 2)]));
    assert_eq!(t.keys(), Vec::<i64>::new());
    assert_eq!(t.offsets(), vec![3]);
    // A new batch of the producer frees the empty one.
    t.txn(1, &[1, 5]);
    t.roll();
    t.clean(0, 0);
    assert_eq!(t.last_offsets(), vec![3, 5]);
    assert_eq!(t.last_sequences(), HashMap::from([(1, 4)]));
    assert_eq!(t.keys(), vec![1, 5]);
    assert_eq!(t.offsets(), vec![3, 4, 5]);
}

/// Kafka's `appendIdempotentAsLeader(log, pid, 0)(keys)` from sequence 0 again: a client's
/// retry of the producer's first batch. Returns the offsets the leader answers with.
fn retry_as_leader(t: &TxnLog, pid: i64, keys: &[i64]) -> (i64, i64) {
    let mut batch = Vec::new();
    Data::with_records(0, key_records(keys))
        .producer(Producer { id: pid, epoch: 0 }, 0, false)
        .timestamp(0)
        .write(&mut batch);
    let end = t.log.log_end_offset();
    let info = t.log.append_as_leader(&mut batch).unwrap();
    assert_eq!(t.log.log_end_offset(), end, "a duplicate appends nothing");
    (info.first_offset, info.last_offset)
}

#[test]
fn test_duplicate_check_after_cleaning() {
    // Producers' last batches and sequences survive cleaning, so after a reload (every segment
    // recovered, the producer state rebuilt from the cleaned batches) a retried batch is still
    // answered with its original offsets.
    let mut t = TxnLog::new(2048);
    for (pid, keys) in [(1, vec![1, 2, 3]), (2, vec![3, 1, 4]), (3, vec![1, 4])] {
        let batch = t.producer_batch(pid, key_records(&keys), false);
        t.append(batch);
    }
    t.roll();
    t.clean(0, 0);
    assert_eq!(t.last_offsets(), vec![2, 5, 7]);
    assert_eq!(t.last_sequences(), HashMap::from([(1, 2), (2, 2), (3, 1)]));
    assert_eq!(t.keys(), vec![2, 3, 1, 4]);
    assert_eq!(t.offsets(), vec![1, 3, 6, 7]);
    t.reopen();
    assert_eq!(retry_as_leader(&t, 1, &[1, 2, 3]), (0, 2));
    assert_eq!(retry_as_leader(&t, 3, &[1, 4]), (6, 7));
    assert_eq!(retry_as_leader(&t, 2, &[3, 1, 4]), (3, 5));
    // One more append and a round of cleaning removes another record of producer 1's batch.
    let batch = t.producer_batch(4, key_records(&[2]), false);
    t.append(batch);
    t.roll();
    t.clean(0, 0);
    assert_eq!(
        t.last_sequences(),
        HashMap::from([(1, 2), (2, 2), (3, 1), (4, 0)])
    );
    assert_eq!(t.last_offsets(), vec![2, 5, 7, 8]);
    assert_eq!(t.keys(), vec![3, 1, 4, 2]);
    assert_eq!(t.offsets(), vec![3, 6, 7, 8]);
    t.reopen();
    assert_eq!(retry_as_leader(&t, 1, &[1, 2, 3]), (0, 2));
}

#[test]
fn test_cleaning_with_keys_conflicting_with_txn_marker_keys() {
    let mut t = TxnLog::new(1024);
    t.txn(1, &[1]);
    t.commit(1);
    // A record whose key is a COMMIT marker's key: it is data, and the marker is no key.
    let records = vec![(
        Some(ControlRecordType::Commit.key_bytes().to_vec()),
        Some(b"foo".to_vec()),
    )];
    let batch = t.producer_batch(2, records, true);
    t.append(batch);
    t.commit(2);
    t.roll();
    assert_eq!(t.offsets(), vec![0, 1, 2, 3]);
    t.clean(0, 0);
    assert_eq!(t.last_offsets(), vec![0, 1, 2, 3]);
    assert_eq!(t.offsets(), vec![0, 1, 2, 3]);
}

#[test]
fn a_marker_that_first_finds_its_transaction_empty_gets_a_delete_horizon() {
    let mut t = TxnLog::new(2048);
    t.txn(1, &[1]);
    t.commit(1);
    t.plain(1, 2);
    t.txn(2, &[9]);
    t.commit(2);
    t.roll();
    t.clean(0, 1_000);
    // Producer 1's data batch is its last: kept empty, so the commit still sees data.
    let commit = |t: &TxnLog| t.batches().into_iter().find(|b| b.base == 1).unwrap();
    assert_eq!(commit(&t).delete_horizon, None);
    t.txn(1, &[3]);
    t.commit(1);
    t.roll();
    // This cleaning removes that batch, but still read it: the commit keeps no horizon yet.
    t.clean(0, 2_000);
    assert_eq!(commit(&t).delete_horizon, None);
    // The next finds the transaction empty: the horizon is set from the cleaning's time.
    t.clean(0, 3_000);
    let marker = commit(&t);
    assert!(marker.control && marker.records.len() == 1);
    assert_eq!(marker.delete_horizon, Some(3_000 + RETENTION_MS));
    // Not before the horizon, then gone.
    t.clean(0, 3_000 + RETENTION_MS - 1);
    assert!(t.batches().iter().any(|b| b.base == 1));
    let report = t.log.clean(&CleanOptions::default()).unwrap();
    assert_eq!(report.markers_removed, 0);
    t.clock.set(3_000 + RETENTION_MS);
    let report = t.log.clean(&CleanOptions::default()).unwrap();
    assert_eq!(report.markers_removed, 1, "{report:?}");
    assert!(!t.batches().iter().any(|b| b.base == 1));
}

/// What a read_committed consumer gets from the whole log: the aborted transactions from the
/// `.txnindex` files, applied as Kafka's consumer applies them.
fn read_committed(t: &TxnLog) -> Vec<(i64, Vec<u8>)> {
    let aborted: Vec<AbortedTransaction> = t
        .log
        .segments()
        .values()
        .flat_map(|s| s.all_aborted_txns().unwrap())
        .map(|a| AbortedTransaction {
            producer_id: a.producer_id(),
            first_offset: a.first_offset(),
        })
        .collect();
    let mut bytes = Vec::new();
    for segment in t.log.segments().values() {
        bytes.extend(std::fs::read(segment.log_path()).unwrap());
    }
    consumer_records(
        &bytes,
        t.log.log_start_offset(),
        IsolationLevel::ReadCommitted,
        &aborted,
    )
    .map(|r| {
        let r = r.unwrap();
        (r.offset, r.key.unwrap())
    })
    .collect()
}

#[test]
fn read_committed_after_cleaning_returns_the_latest_committed_value_of_each_key() {
    let mut t = TxnLog::new(300);
    // Interleaved transactions of three producers, aborts and commits, plain records between.
    t.txn(1, &[1, 2]);
    t.txn(2, &[2, 3]);
    t.plain(4, 40);
    t.abort(1);
    t.txn(3, &[1, 5]);
    t.commit(2);
    t.txn(1, &[3, 6]);
    t.abort(3);
    t.plain(5, 50);
    t.commit(1);
    t.txn(2, &[6, 7]);
    t.abort(2);
    t.txn(3, &[7]);
    t.commit(3);
    t.roll();
    let before = read_committed(&t);
    // The model: the latest committed record of each key.
    let mut latest: HashMap<Vec<u8>, i64> = HashMap::new();
    for (offset, key) in &before {
        latest.insert(key.clone(), *offset);
    }
    let mut expected: Vec<(i64, Vec<u8>)> = latest.into_iter().map(|(k, o)| (o, k)).collect();
    expected.sort();
    for now in [0, RETENTION_MS, 3 * RETENTION_MS] {
        t.clean(0, now);
        assert_eq!(read_committed(&t), expected, "after cleaning at {now}");
        // Nor does a read_uncommitted reader find anything else: no aborted record is left.
        let data: Vec<(i64, Vec<u8>)> = t
            .batches()
            .iter()
            .filter(|b| !b.control)
            .flat_map(|b| b.records.iter())
            .map(|r| (r.0, r.1.clone().unwrap()))
            .collect();
        assert_eq!(data, expected, "after cleaning at {now}");
    }
}

/// The cleaned segment's `.txnindex` is renamed with it through `.cleaned` and `.swap`: after a
/// crash at each phase of the swap, the loader finishes or undoes the swap, the index with it.
/// The reopens checkpoint the recovery point at the log end (the cleaner flushes what it swaps
/// in; the rolls flushed the rest), so the indexes read back are the ones the cleaner wrote, not
/// rebuilt by recovery. (Written when recovery left a `.txnindex` alone, this reopened with
/// the recovery point at 0; recovery now rewrites a recovered segment's index from the markers,
/// as Kafka's does, which for the cleaned segment here is empty: see
/// `a_recovered_cleaned_segment_gets_kafkas_txn_index`.)
#[test]
fn the_cleaned_txn_index_travels_with_the_swap_and_survives_a_crash_at_each_phase() {
    for stop in [
        StopAfter::Cleaned,
        StopAfter::Swapped,
        StopAfter::OldDeleted,
        StopAfter::Never,
    ] {
        let mut t = TxnLog::new(1 << 20);
        t.txn(1, &[1]); // 0
        t.roll();
        t.txn(2, &[5]); // 1
        t.abort(1); // 2: indexed in segment 1
        t.commit(2); // 3
        t.txn(1, &[3]); // 4
        t.roll();
        let entry = (1, 0, 2, 1);
        assert_eq!(t.aborted(), vec![entry]);
        assert_eq!(t.txn_index_files(), vec!["00000000000000000001.txnindex"]);
        // The first cleaning merges both segments and removes the aborted record (offset 0),
        // having seen it: the entry moves to the cleaned segment's index.
        t.clean(0, 0);
        assert_eq!(t.aborted(), vec![entry], "{stop:?}");
        assert_eq!(t.txn_index_files(), vec!["00000000000000000000.txnindex"]);
        assert_eq!(t.offsets(), vec![1, 2, 3, 4], "{stop:?}");
        let end = t.flushed();
        assert_eq!(end, 5);
        t.reopen_at(end);
        assert_eq!(t.aborted(), vec![entry], "{stop:?}: after reopening");
        // The second finds the aborted transaction empty: no entry in the new index. Stopped
        // after `stop`, the loader finishes or undoes the swap, the index with it.
        t.clock.set(1);
        let report = t.log.clean_until(&CleanOptions::default(), stop).unwrap();
        assert!(!report.aborted, "{stop:?}: {report:?}");
        let load = t.reopen_at(end);
        assert_eq!(load.plan.scanned, vec![end], "{stop:?}");
        let expected = if stop == StopAfter::Cleaned {
            vec![entry]
        } else {
            vec![]
        };
        assert_eq!(t.aborted(), expected, "{stop:?}: {load:?}");
        assert_eq!(
            t.txn_index_files().len(),
            expected.len(),
            "{stop:?}: {:?}",
            t.txn_index_files()
        );
        assert_eq!(t.offsets(), vec![1, 2, 3, 4], "{stop:?}");
    }
}

/// Recovery of a cleaned segment writes its `.txnindex` as Kafka's `LogSegment.recover` does:
/// from the producer state at the segment's base offset (`LogLoader.recoverSegment`), an ABORT
/// marker gets an entry only if its transaction's data is still there to start it
/// (`ProducerAppendInfo.appendEndTxnMarker` completes non-empty transactions only). Here the
/// first cleaning removed the aborted record at 0 but kept the entry; recovery from offset 0
/// finds the marker's transaction empty and writes no entry, as Kafka does. No aborted record
/// is left, so read_committed gives what it gave with the entry.
#[test]
fn a_recovered_cleaned_segment_gets_kafkas_txn_index() {
    let mut t = TxnLog::new(1 << 20);
    t.txn(1, &[1]); // 0
    t.roll();
    t.txn(2, &[5]); // 1
    t.abort(1); // 2
    t.commit(2); // 3
    t.txn(1, &[3]); // 4
    t.roll();
    t.clean(0, 0);
    assert_eq!(t.aborted(), vec![(1, 0, 2, 1)]);
    assert_eq!(t.offsets(), vec![1, 2, 3, 4]);
    let before = read_committed(&t);
    assert_eq!(
        before.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![1, 4],
        "the committed record and the open transaction's"
    );
    let load = t.reopen();
    assert!(load.plan.scanned.contains(&0), "{load:?}");
    assert_eq!(t.aborted(), vec![]);
    assert_eq!(read_committed(&t), before);
    // And again: recovery writes the same.
    t.reopen();
    assert_eq!(t.aborted(), vec![]);
    assert_eq!(read_committed(&t), before);
}

/// The case where it matters: a cleaning while producer 1's transaction is still open keeps its
/// record; the ABORT comes later, in a later segment. An unclean reopen recovers the cleaned
/// segment (which starts the transaction again) and the marker's segment, whose entry comes
/// back, so read_committed still hides the aborted record. Recovered alone, from the producer
/// snapshot the roll took at its base offset (which knows the open transaction), the marker's
/// segment gets the same entry back after its `.txnindex` is deleted.
#[test]
fn recovery_keeps_the_entry_of_an_aborted_transaction_whose_records_a_cleaning_kept() {
    let mut t = TxnLog::new(1 << 20);
    t.txn(1, &[1]); // 0: open
    t.plain(2, 20); // 1
    t.roll();
    t.txn(2, &[3]); // 2
    t.commit(2); // 3
    t.roll();
    t.clean(0, 0);
    assert_eq!(
        t.offsets(),
        vec![0, 1, 2, 3],
        "the open transaction's record is kept"
    );
    t.abort(1); // 4, in the active segment
    t.roll();
    let entry = (1, 0, 4, 5);
    assert_eq!(t.aborted(), vec![entry]);
    let committed: Vec<i64> = read_committed(&t).iter().map(|r| r.0).collect();
    assert_eq!(committed, vec![1, 2], "no aborted record");
    let load = t.reopen();
    assert!(load.plan.scanned.contains(&0), "{load:?}");
    assert_eq!(t.aborted(), vec![entry]);
    assert_eq!(
        read_committed(&t).iter().map(|r| r.0).collect::<Vec<_>>(),
        committed
    );

    // The marker's segment alone: its `.txnindex` deleted, recovery from offset 4 starts at the
    // roll's snapshot there.
    t.flushed();
    assert!(t.log.producer_snapshot_offsets().contains(&4));
    let dir = common::partition_dir(t.root.path());
    std::fs::remove_file(dir.join("00000000000000000004.txnindex")).unwrap();
    let load = t.reopen_at(4);
    let mut scanned = load.plan.scanned.clone();
    scanned.sort_unstable();
    assert_eq!(scanned, vec![4, 5]);
    assert_eq!(t.aborted(), vec![entry]);
    assert_eq!(
        read_committed(&t).iter().map(|r| r.0).collect::<Vec<_>>(),
        committed
    );
}

#[test]
fn a_marker_with_a_bad_key_stops_the_cleaning_with_the_file_and_byte() {
    let t = TxnLog::new(1 << 20);
    t.plain(1, 1);
    t.plain(1, 2);
    let position = t.log.active_segment().size();
    // A control batch whose key is two bytes: no version and type to read.
    let options = BatchOptions::new(0, Compression::None)
        .with_base_offset(t.log.log_end_offset())
        .with_producer_id(7)
        .with_producer_epoch(0)
        .with_transactional(true)
        .with_control(true);
    let mut batch = Vec::new();
    BatchBuilder::new()
        .build(
            &options,
            [NewRecord::new(0, 0, Some(&[0, 0][..]), Some(&[0; 6][..]))],
            &mut batch,
        )
        .unwrap();
    // The follower append refuses it, as Kafka's (its producer state parses the marker)...
    let refused = t.log.append_as_follower(&batch).unwrap_err().to_string();
    assert!(refused.contains("control record key"), "{refused}");
    // ...so it reaches the segment as damage would, below the log's bookkeeping.
    t.log.active_segment().append(2, &batch).unwrap();
    t.roll();
    let error = t
        .log
        .clean(&CleanOptions::default())
        .unwrap_err()
        .to_string();
    assert!(error.contains("00000000000000000000.log"), "{error}");
    assert!(error.contains(&format!("at byte {position}")), "{error}");
    assert_eq!(t.offsets(), vec![0, 1, 2], "the cleaning changed the log");
}
