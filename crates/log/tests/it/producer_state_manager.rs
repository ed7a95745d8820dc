//! Kafka 4.4's `ProducerStateManagerTest`, case by case, against seglog's `ProducerStateManager`:
//! each Kafka case `testFooBar` is the test `test_foo_bar` (`updateProducerTransactionState` is
//! `update_producer_transaction_state`), here for the validation and transaction cases, in
//! `producer_state_manager_snapshots.rs` for the snapshot, reload, expiry and truncation ones;
//! the exceptions are listed below. The helpers are Kafka's (`appendClientEntry`,
//! `appendReplicationEntry`, `appendEndTxnMarker`: one batch of one sequence at one offset, then
//! `update` and `updateMapEndOffset`).
//!
//! Kafka's markers here carry no transaction version (the legacy epoch rule): seglog's are
//! appended with transaction version 0, which is that rule.
//!
//! Cases that do not apply to seglog, and why: `testEntryForVerification`,
//! `testSequenceAndEpochInVerificationEntry`,
//! `testThrowOutOfOrderSequenceWithVerificationSequenceCheck`,
//! `testVerificationStateEntryExpiration` and
//! `testRejectNonZeroSequenceForTransactionsV2WithEmptyState` test Kafka's
//! `VerificationStateEntry`, the state of the transaction coordinator's partition verification
//! (KIP-890), which seglog has no coordinator for and does not model (`producer/mod.rs`); without
//! it, a producer with no state may start at any sequence, which
//! `non_zero_sequence_with_empty_state_is_accepted` pins.
//! `testAllowNonZeroSequenceForTransactionsV1WithEmptyState` is
//! `non_zero_sequence_with_empty_state_is_accepted`, without the verification entry.
//! `testReadWriteSnapshot` is the unit test `round_trips_and_keeps_only_the_last_batch` in
//! `producer/snapshot_format.rs` (it needs a batch in an entry, which only the crate can add).
//! `testCoordinatorFencedAfterReload` appends to the first manager, as Kafka's does (its reload
//! to offset 2 deletes the snapshot at 101); ours also checks a manager reloaded at 101.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_log::RealFs;
use seglog_log::producer::{
    AppendOrigin, CompletedTxn, EndTxnMarker, LATE_TRANSACTION_BUFFER_MS, LogOffsetMetadata,
    NO_SEQUENCE, ProducerAppendInfo, ProducerError, ProducerStateEntry, ProducerStateManager,
    ProducerStateManagerConfig, TxnMetadata, append_batch,
};
use seglog_record_format::{BatchOptions, Compression, RecordBatch, write_empty_batch};

/// Kafka's `producerId`, `epoch` and `defaultSequence`.
pub(crate) const PID: i64 = 1;
pub(crate) const EPOCH: i16 = 0;
/// Kafka's `maxTransactionTimeoutMs` in this test: five minutes.
pub(crate) const MAX_TXN_TIMEOUT_MS: i32 = 5 * 60 * 1000;
/// Kafka's `lateTransactionTimeoutMs`.
const LATE_TXN_TIMEOUT_MS: i64 = MAX_TXN_TIMEOUT_MS as i64 + LATE_TRANSACTION_BUFFER_MS;
/// Where the mock clock starts.
pub(crate) const START_MS: i64 = 1_700_000_000_000;

/// Kafka's test fixture: a manager of partition `test-0` in a fresh directory, and a mock clock.
pub(crate) struct Fixture {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) m: ProducerStateManager<RealFs>,
    pub(crate) now: i64,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let m = manager(dir.path(), "test-0");
        Self {
            dir,
            m,
            now: START_MS,
        }
    }

    /// Another manager of the same directory (Kafka's `recoveredMapping`).
    pub(crate) fn reopen(&self) -> ProducerStateManager<RealFs> {
        manager(self.dir.path(), "test-0")
    }

    pub(crate) fn client(
        &mut self,
        pid: i64,
        epoch: i16,
        seq: i32,
        offset: i64,
        txn: bool,
    ) -> Result<(), ProducerError> {
        let now = self.now;
        append_entry(
            &mut self.m,
            pid,
            epoch,
            seq,
            offset,
            now,
            AppendOrigin::Client,
            txn,
        )
    }

    pub(crate) fn replication(&mut self, epoch: i16, seq: i32, offset: i64) {
        let now = self.now;
        append_entry(
            &mut self.m,
            PID,
            epoch,
            seq,
            offset,
            now,
            AppendOrigin::Replication,
            false,
        )
        .unwrap();
    }

    pub(crate) fn marker(
        &mut self,
        pid: i64,
        epoch: i16,
        abort: bool,
        offset: i64,
        coordinator_epoch: i32,
    ) -> Result<(), ProducerError> {
        let now = self.now;
        append_marker(
            &mut self.m,
            pid,
            epoch,
            abort,
            offset,
            coordinator_epoch,
            now,
        )
    }

    pub(crate) fn last(&self, pid: i64) -> &ProducerStateEntry {
        self.m.last_entry(pid).expect("the producer has an entry")
    }

    pub(crate) fn first_unstable(&self) -> Option<i64> {
        self.m.first_unstable_offset().map(|o| o.message_offset)
    }
}

pub(crate) fn manager(dir: &std::path::Path, partition: &str) -> ProducerStateManager<RealFs> {
    ProducerStateManager::new(
        RealFs,
        dir,
        partition,
        MAX_TXN_TIMEOUT_MS,
        ProducerStateManagerConfig::default(),
    )
    .unwrap()
}

/// Kafka's `appendEntry`.
#[expect(
    clippy::too_many_arguments,
    reason = "Kafka's helper, argument for argument"
)]
pub(crate) fn append_entry(
    m: &mut ProducerStateManager<RealFs>,
    pid: i64,
    epoch: i16,
    seq: i32,
    offset: i64,
    now: i64,
    origin: AppendOrigin,
    txn: bool,
) -> Result<(), ProducerError> {
    let mut info = m.prepare_update(pid, origin);
    info.append_data_batch(
        epoch,
        seq,
        seq,
        now,
        LogOffsetMetadata::offset(offset),
        offset,
        txn,
    )?;
    m.update(&info);
    m.update_map_end_offset(offset + 1);
    Ok(())
}

/// Kafka's `appendEndTxnMarker`.
pub(crate) fn append_marker(
    m: &mut ProducerStateManager<RealFs>,
    pid: i64,
    epoch: i16,
    abort: bool,
    offset: i64,
    coordinator_epoch: i32,
    now: i64,
) -> Result<(), ProducerError> {
    let mut info = m.prepare_update(pid, AppendOrigin::Coordinator);
    let marker = EndTxnMarker {
        is_abort: abort,
        coordinator_epoch,
    };
    let completed = info.append_end_txn_marker(marker, epoch, offset, now, 0)?;
    m.update(&info);
    if let Some(txn) = completed {
        m.complete_txn(&txn).unwrap();
    }
    m.update_map_end_offset(offset + 1);
    Ok(())
}

fn is_out_of_order(r: &Result<(), ProducerError>) -> bool {
    matches!(r, Err(ProducerError::OutOfOrderSequence { .. }))
}

fn is_fenced_epoch(r: &Result<(), ProducerError>) -> bool {
    matches!(r, Err(ProducerError::InvalidProducerEpoch { .. }))
}

#[test]
fn test_basic_id_mapping() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    f.client(PID, EPOCH, 1, 1, false).unwrap();
    // A duplicate is checked by the partition, before: here it is out of order.
    assert!(is_out_of_order(&f.client(PID, EPOCH, 1, 1, false)));
    assert!(is_out_of_order(&f.client(PID, EPOCH, 5, 2, false)));
    f.client(PID, EPOCH + 1, 0, 3, false).unwrap();
    assert!(is_fenced_epoch(&f.client(PID, EPOCH, 0, 4, false)));
}

#[test]
fn test_append_txn_marker_with_no_producer_state() {
    let mut f = Fixture::new();
    f.marker(PID, 2, false, 27, 0).unwrap();
    let e = f.last(PID);
    assert_eq!(
        (e.producer_epoch(), e.producer_id(), e.last_seq()),
        (2, PID, NO_SEQUENCE)
    );
    // Fencing holds with only the marker left; a non-zero sequence makes the producer reset.
    assert!(is_fenced_epoch(&f.client(PID, 0, 0, 4, false)));
    assert!(is_out_of_order(&f.client(PID, 2, 17, 4, false)));
    f.client(PID, 2, 0, 4, false).unwrap();
    let e = f.last(PID);
    assert_eq!(
        (e.producer_epoch(), e.producer_id(), e.last_seq()),
        (2, PID, 0)
    );
}

#[test]
fn test_producer_sequence_wrap_around() {
    let mut f = Fixture::new();
    f.replication(15, i32::MAX, 735);
    f.client(PID, 15, 0, 735 + 500, false).unwrap();
    let e = f.last(PID);
    assert_eq!(
        (e.producer_epoch(), e.first_seq(), e.last_seq()),
        (15, i32::MAX, 0)
    );
}

#[test]
fn test_producer_sequence_with_wrap_around_batch_record() {
    let mut f = Fixture::new();
    let mut info = f.m.prepare_update(PID, AppendOrigin::Replication);
    info.append_data_batch(
        15,
        i32::MAX - 10,
        9,
        f.now,
        LogOffsetMetadata::offset(2000),
        2020,
        false,
    )
    .unwrap();
    assert!(f.m.last_entry(PID).is_none());
    f.m.update(&info);
    let e = f.last(PID);
    assert_eq!((e.first_seq(), e.last_seq()), (i32::MAX - 10, 9));
    assert_eq!((e.first_data_offset(), e.last_data_offset()), (2000, 2020));
}

#[test]
fn test_producer_sequence_invalid_wrap_around() {
    let mut f = Fixture::new();
    f.replication(15, i32::MAX, 735);
    assert!(is_out_of_order(&f.client(PID, 15, 1, 735 + 500, false)));
}

#[test]
fn test_no_validation_on_first_entry_when_loading_log() {
    let mut f = Fixture::new();
    f.replication(5, 16, 735);
    let e = f.last(PID);
    assert_eq!(
        (e.producer_epoch(), e.first_seq(), e.last_seq()),
        (5, 16, 16)
    );
    assert_eq!((e.first_data_offset(), e.last_data_offset()), (735, 735));
}

#[test]
fn test_control_record_bumps_producer_epoch() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    f.marker(PID, 1, true, 1, 0).unwrap();
    let e = f.last(PID);
    assert_eq!(e.producer_epoch(), 1);
    assert_eq!(e.current_txn_first_offset(), None);
    assert_eq!((e.first_seq(), e.last_seq()), (NO_SEQUENCE, NO_SEQUENCE));
    f.client(PID, 1, 0, 2, false).unwrap();
    assert_eq!(f.last(PID).first_seq(), 0);
}

#[test]
fn test_txn_first_offset_metadata_cached() {
    let mut f = Fixture::new();
    let offset = 992_342;
    let mut info = ProducerAppendInfo::new(
        "test-0",
        PID,
        ProducerStateEntry::empty(PID),
        AppendOrigin::Client,
    );
    let first = LogOffsetMetadata {
        message_offset: offset,
        segment_base_offset: 990_000,
        relative_position: 234_224,
    };
    info.append_data_batch(EPOCH, 0, 0, f.now, first, offset, true)
        .unwrap();
    f.m.update(&info);
    assert_eq!(f.m.first_unstable_offset(), Some(first));
}

#[test]
fn test_has_late_transaction() {
    let mut f = Fixture::new();
    let (p1, e1, p2, e2) = (39, 2, 57, 9);
    f.client(p1, e1, 0, 100, true).unwrap();
    assert!(!f.m.has_late_transaction(f.now));
    f.now += 500;
    f.client(p2, e2, 0, 150, true).unwrap();
    assert!(!f.m.has_late_transaction(f.now));
    // Only the first is late.
    f.now += LATE_TXN_TIMEOUT_MS - 500 + 1;
    assert!(f.m.has_late_transaction(f.now));
    f.now += 500;
    assert!(f.m.has_late_transaction(f.now));
    f.marker(p1, e1, false, 200, 0).unwrap();
    assert!(f.m.has_late_transaction(f.now));
    f.marker(p2, e2, false, 250, 0).unwrap();
    assert!(!f.m.has_late_transaction(f.now));
}

#[test]
fn test_prepare_update_does_not_mutate() {
    let mut f = Fixture::new();
    let mut info = f.m.prepare_update(PID, AppendOrigin::Client);
    info.append_data_batch(EPOCH, 0, 5, f.now, LogOffsetMetadata::offset(15), 20, false)
        .unwrap();
    assert!(f.m.last_entry(PID).is_none());
    f.m.update(&info);
    f.last(PID);
    let mut next = f.m.prepare_update(PID, AppendOrigin::Client);
    next.append_data_batch(
        EPOCH,
        6,
        10,
        f.now,
        LogOffsetMetadata::offset(26),
        30,
        false,
    )
    .unwrap();
    let e = f.last(PID);
    assert_eq!(
        (e.first_seq(), e.last_seq(), e.last_data_offset()),
        (0, 5, 20)
    );
    f.m.update(&next);
    let e = f.last(PID);
    assert_eq!(
        (e.first_seq(), e.last_seq(), e.last_data_offset()),
        (0, 10, 30)
    );
}

/// Kafka's `verifyLastEntryWithTxnData`.
fn verify_txn_entry(
    info: &ProducerAppendInfo,
    seqs: (i32, i32),
    offsets: (i64, i64),
    txn: Option<i64>,
) {
    let e = info.to_entry();
    assert_eq!(e.producer_epoch(), EPOCH);
    assert_eq!((e.first_seq(), e.last_seq()), seqs);
    assert_eq!((e.first_data_offset(), e.last_data_offset()), offsets);
    assert_eq!(e.current_txn_first_offset(), txn);
    let started: Vec<(i64, i64)> = info
        .started_transactions()
        .iter()
        .map(|t| (t.producer_id, t.first_offset.message_offset))
        .collect();
    assert_eq!(started, vec![(PID, 16)]);
}

#[test]
fn update_producer_transaction_state() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 9, false).unwrap();
    let mut info = f.m.prepare_update(PID, AppendOrigin::Client);
    info.append_data_batch(EPOCH, 1, 5, f.now, LogOffsetMetadata::offset(16), 20, true)
        .unwrap();
    verify_txn_entry(&info, (1, 5), (16, 20), Some(16));
    info.append_data_batch(EPOCH, 6, 10, f.now, LogOffsetMetadata::offset(26), 30, true)
        .unwrap();
    verify_txn_entry(&info, (1, 10), (16, 30), Some(16));
    let marker = EndTxnMarker {
        is_abort: false,
        coordinator_epoch: 15,
    };
    let completed = info
        .append_end_txn_marker(marker, EPOCH, 40, f.now, 0)
        .unwrap()
        .expect("the transaction is completed");
    let expected = CompletedTxn {
        producer_id: PID,
        first_offset: 16,
        last_offset: 40,
        is_aborted: false,
    };
    assert_eq!(completed, expected);
    // The marker leaves the batches' metadata as it was.
    verify_txn_entry(&info, (1, 10), (16, 30), None);
}

#[test]
fn test_out_of_sequence_after_control_record_epoch_bump() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, true).unwrap();
    f.client(PID, EPOCH, 1, 1, true).unwrap();
    let bumped = 1;
    f.marker(PID, bumped, true, 1, 0).unwrap();
    // The sequence must restart.
    assert!(is_out_of_order(&f.client(PID, bumped, 2, 2, true)));
    assert!(is_out_of_order(&f.client(PID, bumped + 1, 2, 2, true)));
    f.client(PID, bumped, 0, 0, true).unwrap();
    let e = f.last(PID);
    assert_eq!((e.producer_epoch(), e.last_seq()), (bumped, 0));
}

#[test]
fn test_non_transactional_append_with_ongoing_transaction() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, true).unwrap();
    let r = f.client(PID, EPOCH, 1, 1, false);
    assert!(
        matches!(r, Err(ProducerError::InvalidTxnState { .. })),
        "{r:?}"
    );
}

#[test]
fn test_producer_state_after_fencing_abort_marker() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, true).unwrap();
    f.marker(PID, EPOCH + 1, true, 1, 0).unwrap();
    let e = f.last(PID);
    assert_eq!(e.current_txn_first_offset(), None);
    assert_eq!((e.first_data_offset(), e.last_data_offset()), (-1, -1));
    // Not expired: the fencing epoch stays.
    f.m.remove_expired_producers(f.now);
    assert!(f.m.last_entry(PID).is_some());
}

#[test]
fn test_accept_append_with_sequence_gaps_on_replica() {
    let mut f = Fixture::new();
    f.now = 0;
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    f.now = 1;
    assert!(is_out_of_order(&f.client(PID, EPOCH, 3, 1, false)));
    assert_eq!(f.last(PID).last_seq(), 0);
    f.replication(EPOCH, 3, 1);
    assert_eq!(f.last(PID).last_seq(), 3);
}

#[test]
fn test_first_unstable_offset() {
    let mut f = Fixture::new();
    let epoch = 5;
    assert_eq!(f.m.first_undecided_offset(), None);
    f.client(PID, epoch, 0, 99, true).unwrap();
    assert_eq!(
        (f.m.first_undecided_offset(), f.first_unstable()),
        (Some(99), Some(99))
    );
    let other = 2;
    f.client(other, epoch, 0, 105, true).unwrap();
    assert_eq!(
        (f.m.first_undecided_offset(), f.first_unstable()),
        (Some(99), Some(99))
    );
    f.marker(PID, epoch, false, 109, 0).unwrap();
    assert_eq!(
        (f.m.first_undecided_offset(), f.first_unstable()),
        (Some(105), Some(99))
    );
    f.m.on_high_watermark_updated(100);
    assert_eq!(f.first_unstable(), Some(99));
    f.m.on_high_watermark_updated(110);
    assert_eq!(f.first_unstable(), Some(105));
    f.marker(other, epoch, true, 112, 0).unwrap();
    assert_eq!(
        (f.m.first_undecided_offset(), f.first_unstable()),
        (None, Some(105))
    );
    f.m.on_high_watermark_updated(113);
    assert_eq!(f.first_unstable(), None);
}

#[test]
fn test_sequence_not_validated_for_group_metadata_topic() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = manager(dir.path(), "__consumer_offsets-0");
    for offset in [99, 100] {
        append_entry(
            &mut m,
            PID,
            EPOCH,
            NO_SEQUENCE,
            offset,
            START_MS,
            AppendOrigin::Coordinator,
            true,
        )
        .unwrap();
    }
}

#[test]
fn test_old_epoch_for_control_record() {
    let mut f = Fixture::new();
    assert_eq!(f.m.first_undecided_offset(), None);
    f.client(PID, 5, 0, 99, true).unwrap();
    assert!(is_fenced_epoch(&f.marker(PID, 3, false, 100, 0)));
}

#[test]
fn test_coordinator_fencing() {
    let mut f = Fixture::new();
    let epoch = 5;
    f.client(PID, epoch, 0, 99, true).unwrap();
    f.marker(PID, epoch, false, 100, 1).unwrap();
    assert_eq!(f.last(PID).coordinator_epoch(), 1);
    // The same coordinator epoch, then a newer one, are allowed; an older one is fenced.
    f.marker(PID, epoch, false, 101, 1).unwrap();
    f.marker(PID, epoch, false, 102, 2).unwrap();
    let r = f.marker(PID, epoch, false, 103, 1);
    assert!(
        matches!(r, Err(ProducerError::TransactionCoordinatorFenced { .. })),
        "{r:?}"
    );
}

#[test]
fn test_append_empty_control_batch() {
    let mut f = Fixture::new();
    let pid = 23_423;
    let base = 15;
    let mut options = BatchOptions::new(base, Compression::None);
    options.producer_id = pid;
    options.producer_epoch = EPOCH;
    options.transactional = true;
    options.control = true;
    let mut bytes = Vec::new();
    write_empty_batch(&options, 0, f.now, &mut bytes).unwrap();
    let batch = RecordBatch::parse(&bytes).unwrap();
    // An empty control batch neither fails nor starts a transaction.
    let mut info = f.m.prepare_update(pid, AppendOrigin::Client);
    assert_eq!(append_batch(&mut info, &batch, None, 0).unwrap(), None);
    f.m.update(&info);
    f.m.update_map_end_offset(base + 1);
    assert_eq!(f.last(pid).current_txn_first_offset(), None);
}

#[test]
fn non_zero_sequence_with_empty_state_is_accepted() {
    // Kafka's testAllowNonZeroSequenceForTransactionsV1WithEmptyState, without the verification
    // entry seglog does not model: a producer with no state may start at any sequence.
    let mut f = Fixture::new();
    let mut info = ProducerAppendInfo::new(
        "test-0",
        PID + 1,
        ProducerStateEntry::empty(PID + 1),
        AppendOrigin::Client,
    );
    info.append_data_batch(EPOCH, 5, 5, f.now, LogOffsetMetadata::offset(0), 0, false)
        .unwrap();
    f.m.update(&info);
    assert_eq!(f.last(PID + 1).last_seq(), 5);
}

#[test]
fn test_reject_non_zero_sequence_for_direct_epoch_bump() {
    let mut f = Fixture::new();
    for seq in 0..3 {
        f.client(PID, EPOCH, seq, i64::from(seq), false).unwrap();
    }
    let e = f.last(PID);
    assert_eq!(
        (e.producer_epoch(), e.last_seq(), e.is_empty()),
        (0, 2, false)
    );
    let mut info = f.m.prepare_update(PID, AppendOrigin::Client);
    let r = info.append_data_batch(1, 5, 5, f.now, LogOffsetMetadata::offset(3), 3, false);
    let Err(ProducerError::OutOfOrderSequence { message }) = r else {
        panic!("{r:?}");
    };
    for part in [
        "Invalid sequence number for new epoch",
        "1 (request epoch)",
        "5 (seq. number)",
        "0 (current producer epoch)",
    ] {
        assert!(message.contains(part), "{message}");
    }
    let mut info = f.m.prepare_update(PID, AppendOrigin::Client);
    info.append_data_batch(1, 0, 0, f.now, LogOffsetMetadata::offset(3), 3, false)
        .unwrap();
}

/// Kafka's `beginTransaction`: a transaction of `pid` from `start`, in a segment at `base`.
fn begin_transaction(f: &mut Fixture, pid: i64, start: i64, base: i64) {
    let mut info = ProducerAppendInfo::new(
        "test-0",
        pid,
        ProducerStateEntry::empty(pid),
        AppendOrigin::Client,
    );
    let first = LogOffsetMetadata {
        message_offset: start,
        segment_base_offset: base,
        relative_position: i32::try_from(50 * (start - base)).unwrap(),
    };
    info.append_data_batch(EPOCH, 0, 0, f.now, first, start, true)
        .unwrap();
    f.m.update(&info);
}

#[test]
fn test_last_stable_offset_completed_txn() {
    let mut f = Fixture::new();
    let base = 990_000;
    let (p1, s1) = (PID, 992_342);
    let (p2, s2) = (PID + 1, s1 + 25);
    let (p3, s3) = (PID + 2, s1 + 57);
    for (p, s) in [(p1, s1), (p2, s2), (p3, s3)] {
        begin_transaction(&mut f, p, s, base);
    }
    let done = |producer_id, first_offset, last_offset| CompletedTxn {
        producer_id,
        first_offset,
        last_offset,
        is_aborted: false,
    };
    let l1 = s3 + 15;
    let t1 = done(p1, s1, l1);
    assert_eq!(f.m.last_stable_offset(&t1), s2);
    f.m.complete_txn(&t1).unwrap();
    f.m.on_high_watermark_updated(l1 + 1);
    assert_eq!(f.first_unstable(), Some(s2));
    let l3 = l1 + 20;
    let t3 = done(p3, s3, l3);
    assert_eq!(f.m.last_stable_offset(&t3), s2);
    f.m.complete_txn(&t3).unwrap();
    f.m.on_high_watermark_updated(l3 + 1);
    assert_eq!(f.first_unstable(), Some(s2));
    let l2 = l3 + 78;
    let t2 = done(p2, s2, l2);
    assert_eq!(f.m.last_stable_offset(&t2), l2 + 1);
    f.m.complete_txn(&t2).unwrap();
    f.m.on_high_watermark_updated(l2 + 1);
    assert_eq!(f.m.first_unstable_offset(), None);
}

#[test]
fn test_skip_empty_transactions() {
    let mut f = Fixture::new();
    let mut seq = 0;
    let now = f.now;
    // Kafka's appendData: one transactional batch from `start` to `end`.
    let mut data = |info: &mut ProducerAppendInfo, start: i64, end: i64| {
        let count = i32::try_from(end - start).unwrap();
        let first = seq;
        seq += count;
        info.append_data_batch(
            EPOCH,
            first,
            seq,
            now,
            LogOffsetMetadata::offset(start),
            end,
            true,
        )
        .unwrap();
        seq += 1;
    };
    let end_txn = |info: &mut ProducerAppendInfo, abort: bool, offset: i64| {
        let marker = EndTxnMarker {
            is_abort: abort,
            coordinator_epoch: 27,
        };
        info.append_end_txn_marker(marker, EPOCH, offset, now, 0)
            .unwrap()
    };
    let txn = |first: i64| TxnMetadata {
        producer_id: PID,
        first_offset: LogOffsetMetadata::offset(first),
        last_offset: None,
    };
    let mut first = f.m.prepare_update(PID, AppendOrigin::Client);
    data(&mut first, 16, 20);
    assert_eq!(first.started_transactions(), &[txn(16)]);
    f.m.update(&first);
    f.m.on_high_watermark_updated(21);
    assert_eq!(
        f.m.first_unstable_offset(),
        Some(LogOffsetMetadata::offset(16))
    );
    // One append: the old transaction completed, empty transactions, a complete one, an open one.
    let mut second = f.m.prepare_update(PID, AppendOrigin::Client);
    let c1 = end_txn(&mut second, false, 21).expect("completes the first");
    let expected = CompletedTxn {
        producer_id: PID,
        first_offset: 16,
        last_offset: 21,
        is_aborted: false,
    };
    assert_eq!(c1, expected);
    assert_eq!(end_txn(&mut second, false, 22), None);
    assert_eq!(end_txn(&mut second, true, 23), None);
    data(&mut second, 24, 27);
    let c2 = end_txn(&mut second, true, 28).expect("completes the second");
    assert_eq!(end_txn(&mut second, true, 29), None);
    data(&mut second, 30, 31);
    assert_eq!(second.started_transactions(), &[txn(24), txn(30)]);
    f.m.update(&second);
    f.m.complete_txn(&c1).unwrap();
    f.m.complete_txn(&c2).unwrap();
    f.m.on_high_watermark_updated(32);
    assert_eq!(
        f.m.first_unstable_offset(),
        Some(LogOffsetMetadata::offset(30))
    );
}
