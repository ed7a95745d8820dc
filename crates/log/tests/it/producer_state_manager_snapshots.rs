//! Kafka 4.4's `ProducerStateManagerTest`, its snapshot, reload, expiry and truncation cases, on
//! real files (the validation cases, the helpers and the list of cases that do not apply are in
//! `producer_state_manager.rs`).

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeSet;

use seglog_log::producer::{
    AppendOrigin, DEFAULT_PRODUCER_ID_EXPIRATION_MS, EndTxnMarker, LogOffsetMetadata,
    ProducerError, ProducerStateManager, snapshot_path,
};
use seglog_log::{Error, RealFs};

use super::producer_state_manager::{EPOCH, Fixture, PID, START_MS};

const LATE_TXN_TIMEOUT_MS: i64 = super::producer_state_manager::MAX_TXN_TIMEOUT_MS as i64
    + seglog_log::producer::LATE_TRANSACTION_BUFFER_MS;

/// Kafka's `currentSnapshotOffsets`: the offsets of the files in the directory.
fn snapshot_offsets(f: &Fixture) -> BTreeSet<i64> {
    std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".snapshot").unwrap().parse().unwrap()
        })
        .collect()
}

fn files(f: &Fixture) -> usize {
    std::fs::read_dir(f.dir.path()).unwrap().count()
}

fn take_snapshot(m: &mut ProducerStateManager<RealFs>) {
    m.take_snapshot(true).unwrap();
}

#[test]
fn test_has_late_transaction_initialized_after_reload() {
    let mut f = Fixture::new();
    f.client(39, 2, 0, 100, true).unwrap();
    f.now += 500;
    f.client(57, 9, 0, 150, true).unwrap();
    assert!(!f.m.has_late_transaction(f.now));
    take_snapshot(&mut f.m);
    f.now += LATE_TXN_TIMEOUT_MS - 500 + 1;
    assert!(f.m.has_late_transaction(f.now));
    // Reloaded from the snapshot, the transaction is still late.
    let mut reloaded = f.reopen();
    reloaded
        .truncate_and_reload(0, f.m.map_end_offset(), f.now)
        .unwrap();
    assert!(reloaded.has_late_transaction(f.now));
}

#[test]
fn test_has_late_transaction_updated_after_partial_truncation() {
    let mut f = Fixture::new();
    f.client(39, 2, 0, 100, true).unwrap();
    f.now += LATE_TXN_TIMEOUT_MS + 1;
    assert!(f.m.has_late_transaction(f.now));
    f.m.truncate_and_reload(0, 80, f.now).unwrap();
    assert!(!f.m.has_late_transaction(f.now));
}

#[test]
fn test_has_late_transaction_updated_after_full_truncation() {
    let mut f = Fixture::new();
    f.client(39, 2, 0, 100, true).unwrap();
    f.now += LATE_TXN_TIMEOUT_MS + 1;
    assert!(f.m.has_late_transaction(f.now));
    f.m.truncate_fully_and_start_at(150).unwrap();
    assert!(!f.m.has_late_transaction(f.now));
}

#[test]
fn test_truncate_and_reload_removes_out_of_range_snapshots() {
    let mut f = Fixture::new();
    for seq in 0..5 {
        f.client(PID, EPOCH, seq, i64::from(seq), false).unwrap();
        take_snapshot(&mut f.m);
    }
    f.m.truncate_and_reload(1, 3, f.now).unwrap();
    assert_eq!(f.m.oldest_snapshot_offset(), Some(2));
    assert_eq!(f.m.latest_snapshot_offset(), Some(3));
}

/// The out-of-range snapshots are found by range (below or at the log start, above the log end):
/// the files on disk too, and a log start past the log end leaves none.
#[test]
fn truncate_and_reload_deletes_exactly_the_out_of_range_snapshot_files() {
    let mut f = Fixture::new();
    for seq in 0..8 {
        f.client(PID, EPOCH, seq, i64::from(seq), false).unwrap();
        take_snapshot(&mut f.m);
    }
    assert_eq!(snapshot_offsets(&f), (1..=8).collect());
    f.m.truncate_and_reload(2, 6, f.now).unwrap();
    assert_eq!(snapshot_offsets(&f), (3..=6).collect());
    f.m.truncate_and_reload(5, 4, f.now).unwrap();
    assert_eq!(snapshot_offsets(&f), BTreeSet::new());
    assert_eq!(f.m.oldest_snapshot_offset(), None);
}

#[test]
fn test_take_snapshot() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    f.client(PID, EPOCH, 1, 1, false).unwrap();
    take_snapshot(&mut f.m);
    let entries: Vec<_> = std::fs::read_dir(f.dir.path()).unwrap().collect();
    assert_eq!(entries.len(), 1);
    let file = entries[0].as_ref().unwrap();
    assert!(file.metadata().unwrap().len() > 0, "the snapshot is empty");
}

#[test]
fn test_fetch_snapshot_empty_snap_shot() {
    let f = Fixture::new();
    assert!(f.m.snapshot_file_for_offset(1).is_none());
}

#[test]
fn test_recover_from_snapshot_unfinished_transaction() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, true).unwrap();
    f.client(PID, EPOCH, 1, 1, true).unwrap();
    take_snapshot(&mut f.m);
    let mut recovered = f.reopen();
    recovered.truncate_and_reload(0, 3, f.now).unwrap();
    // The snapshot keeps only the last batch.
    let e = recovered.last_entry(PID).unwrap();
    assert_eq!((e.first_data_offset(), e.first_seq()), (1, 1));
    assert_eq!((e.last_data_offset(), e.last_seq()), (1, 1));
    assert_eq!(e.current_txn_first_offset(), Some(0));
    f.m = recovered;
    f.client(PID, EPOCH, 2, 2, true).unwrap();
}

#[test]
fn test_recover_from_snapshot_finished_transaction() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, true).unwrap();
    f.client(PID, EPOCH, 1, 1, true).unwrap();
    f.marker(PID, EPOCH, true, 2, 0).unwrap();
    take_snapshot(&mut f.m);
    let mut recovered = f.reopen();
    recovered.truncate_and_reload(0, 3, f.now).unwrap();
    let e = recovered.last_entry(PID).unwrap();
    assert_eq!((e.first_data_offset(), e.first_seq()), (1, 1));
    assert_eq!((e.last_data_offset(), e.last_seq()), (1, 1));
    assert_eq!(e.current_txn_first_offset(), None);
}

#[test]
fn test_recover_from_snapshot_empty_transaction() {
    let mut f = Fixture::new();
    let at = f.now;
    f.marker(PID, EPOCH, true, 0, 0).unwrap();
    take_snapshot(&mut f.m);
    let mut recovered = f.reopen();
    recovered.truncate_and_reload(0, 1, f.now).unwrap();
    let e = recovered.last_entry(PID).unwrap();
    assert_eq!(e.last_timestamp(), at);
    assert_eq!(e.current_txn_first_offset(), None);
}

/// The first two steps of Kafka's `testRemoveExpiredPidsOnReload` and
/// `testAcceptAppendWithoutProducerStateOnReplica`: two batches at times 0 and 1, a snapshot,
/// and a reload to offset 1 at time 70,000, which drops the snapshot (past the end) and so the
/// producer.
fn reloaded_without_the_producer() -> Fixture {
    let mut f = Fixture::new();
    f.now = 0;
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    f.now = 1;
    f.client(PID, EPOCH, 1, 1, false).unwrap();
    take_snapshot(&mut f.m);
    let mut recovered = f.reopen();
    recovered.truncate_and_reload(0, 1, 70_000).unwrap();
    f.m = recovered;
    f.now = 70_001;
    f
}

#[test]
fn test_remove_expired_pids_on_reload() {
    let mut f = reloaded_without_the_producer();
    // The producer is gone, so the append is accepted and adds it back.
    f.client(PID, EPOCH, 2, 2, false).unwrap();
    assert_eq!(f.m.active_producers().len(), 1);
    assert_eq!(f.last(PID).last_seq(), 2);
    assert_eq!(f.m.map_end_offset(), 3);
}

#[test]
fn test_accept_append_without_producer_state_on_replica() {
    let mut f = reloaded_without_the_producer();
    assert!(!f.m.active_producers().contains_key(&PID));
    f.replication(EPOCH, 2, 2);
    let e = f.last(PID);
    assert_eq!(
        (e.producer_epoch(), e.first_seq(), e.last_seq()),
        (EPOCH, 2, 2)
    );
}

#[test]
fn test_delete_snapshots_before() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    f.client(PID, EPOCH, 1, 1, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!((files(&f), snapshot_offsets(&f)), (1, BTreeSet::from([2])));
    f.client(PID, EPOCH, 2, 2, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!(
        (files(&f), snapshot_offsets(&f)),
        (2, BTreeSet::from([2, 3]))
    );
    f.m.delete_snapshots_before(3).unwrap();
    assert_eq!((files(&f), snapshot_offsets(&f)), (1, BTreeSet::from([3])));
    f.m.delete_snapshots_before(4).unwrap();
    assert_eq!((files(&f), snapshot_offsets(&f)), (0, BTreeSet::new()));
}

#[test]
fn test_truncate_fully_and_start_at() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    f.client(PID, EPOCH, 1, 1, false).unwrap();
    take_snapshot(&mut f.m);
    f.client(PID, EPOCH, 2, 2, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!(
        (files(&f), snapshot_offsets(&f)),
        (2, BTreeSet::from([2, 3]))
    );
    f.m.truncate_fully_and_start_at(0).unwrap();
    assert_eq!((files(&f), snapshot_offsets(&f)), (0, BTreeSet::new()));
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!((files(&f), snapshot_offsets(&f)), (1, BTreeSet::from([1])));
}

#[test]
fn test_reload_snapshots() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 1, 1, false).unwrap();
    f.client(PID, EPOCH, 2, 2, false).unwrap();
    take_snapshot(&mut f.m);
    let saved: Vec<(std::path::PathBuf, Vec<u8>)> = std::fs::read_dir(f.dir.path())
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let bytes = std::fs::read(&path).unwrap();
            (path, bytes)
        })
        .collect();
    f.client(PID, EPOCH, 3, 3, false).unwrap();
    f.client(PID, EPOCH, 4, 4, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!(
        (files(&f), snapshot_offsets(&f)),
        (2, BTreeSet::from([3, 5]))
    );
    // Truncating to (3, 5] deletes the snapshot at 3.
    f.m.truncate_and_reload(3, 5, f.now).unwrap();
    assert_eq!((files(&f), snapshot_offsets(&f)), (1, BTreeSet::from([5])));
    // The snapshot at 3 back on disk: a reload forgets the known ones and finds it.
    for (path, bytes) in saved {
        std::fs::write(path, bytes).unwrap();
    }
    f.m.truncate_fully_and_reload_snapshots().unwrap();
    assert_eq!(f.m.latest_snapshot_offset(), Some(3));
    assert_eq!(snapshot_offsets(&f), BTreeSet::from([3]));
}

#[test]
fn test_first_unstable_offset_after_truncation() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 99, true).unwrap();
    assert_eq!(f.first_unstable(), Some(99));
    take_snapshot(&mut f.m);
    f.marker(PID, EPOCH, false, 105, 0).unwrap();
    f.m.on_high_watermark_updated(106);
    assert_eq!(f.first_unstable(), None);
    take_snapshot(&mut f.m);
    f.client(PID, EPOCH, 1, 106, false).unwrap();
    f.m.truncate_and_reload(0, 106, f.now).unwrap();
    assert_eq!(f.first_unstable(), None);
    f.m.truncate_and_reload(0, 100, f.now).unwrap();
    assert_eq!(f.first_unstable(), Some(99));
}

#[test]
fn test_load_from_snapshot_retains_non_expired_producers() {
    let mut f = Fixture::new();
    f.client(1, EPOCH, 0, 0, false).unwrap();
    f.client(2, EPOCH, 0, 1, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!(f.m.active_producers().len(), 2);
    f.m.truncate_and_reload(1, 2, f.now).unwrap();
    assert_eq!(f.m.active_producers().len(), 2);
    let (e1, e2) = (f.last(1), f.last(2));
    assert_eq!((e1.last_seq(), e1.last_data_offset()), (0, 0));
    assert_eq!((e2.last_seq(), e2.last_data_offset()), (0, 1));
}

#[test]
fn test_skip_snapshot_if_offset_unchanged() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!((files(&f), snapshot_offsets(&f)), (1, BTreeSet::from([1])));
    // Nothing changed: no new snapshot.
    assert_eq!(f.m.take_snapshot(true).unwrap(), None);
    assert_eq!((files(&f), snapshot_offsets(&f)), (1, BTreeSet::from([1])));
}

#[test]
fn test_pid_expiration_timeout() {
    let mut f = Fixture::new();
    f.client(PID, 5, 0, 1, false).unwrap();
    f.now += i64::from(DEFAULT_PRODUCER_ID_EXPIRATION_MS) + 1;
    f.m.remove_expired_producers(f.now);
    f.client(PID, 5, 1, 2, false).unwrap();
    assert_eq!(f.m.active_producers().len(), 1);
    assert_eq!(f.last(PID).last_seq(), 1);
    assert_eq!(f.m.map_end_offset(), 3);
}

#[test]
fn test_producers_with_ongoing_transactions_dont_expire() {
    let mut f = Fixture::new();
    f.client(PID, 5, 0, 99, true).unwrap();
    assert_eq!(f.m.first_undecided_offset(), Some(99));
    f.now += i64::from(DEFAULT_PRODUCER_ID_EXPIRATION_MS) + 1;
    f.m.remove_expired_producers(f.now);
    assert!(f.m.last_entry(PID).is_some());
    assert_eq!(f.m.first_undecided_offset(), Some(99));
    f.m.remove_expired_producers(f.now);
    assert!(f.m.last_entry(PID).is_some());
}

#[test]
fn test_coordinator_fenced_after_reload() {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 99, true).unwrap();
    f.marker(PID, EPOCH, false, 100, 1).unwrap();
    take_snapshot(&mut f.m);
    // A manager reloaded from that snapshot (at 101) holds coordinator epoch 1.
    let mut reloaded = f.reopen();
    reloaded.truncate_and_reload(0, 101, 70_000).unwrap();
    assert_eq!(reloaded.last_entry(PID).unwrap().coordinator_epoch(), 1);
    let mut info = reloaded.prepare_update(PID, AppendOrigin::Coordinator);
    let marker = EndTxnMarker {
        is_abort: false,
        coordinator_epoch: 0,
    };
    let r = info.append_end_txn_marker(marker, EPOCH, 101, 70_000, 0);
    assert!(
        matches!(r, Err(ProducerError::TransactionCoordinatorFenced { .. })),
        "{r:?}"
    );
    // Kafka's own steps: a reload to offset 2 (which deletes the snapshot past it), and the
    // marker of the old coordinator appended to the first manager, which still holds epoch 1.
    let mut recovered = f.reopen();
    recovered.truncate_and_reload(0, 2, 70_000).unwrap();
    let r = f.marker(PID, EPOCH, false, 100, 0);
    assert!(
        matches!(r, Err(ProducerError::TransactionCoordinatorFenced { .. })),
        "{r:?}"
    );
}

/// Kafka's `testLoadFromCorruptSnapshot`: snapshots at 1 and 2, the one at 2 damaged by `damage`;
/// a reload deletes it and loads the one at 1.
fn load_from_corrupt_snapshot(damage: impl FnOnce(&std::path::Path)) {
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 0, false).unwrap();
    take_snapshot(&mut f.m);
    f.client(PID, EPOCH, 1, 1, false).unwrap();
    take_snapshot(&mut f.m);
    assert_eq!(f.m.latest_snapshot_offset(), Some(2));
    let damaged = snapshot_path(f.dir.path(), 2);
    damage(&damaged);
    let mut reloaded = f.reopen();
    let dropped = reloaded.truncate_and_reload(0, 20, f.now).unwrap();
    assert!(
        matches!(dropped.as_slice(), [Error::CorruptSnapshot { .. }]),
        "{dropped:?}"
    );
    assert!(!damaged.exists());
    assert_eq!(reloaded.last_entry(PID).unwrap().last_data_offset(), 0);
}

#[test]
fn test_load_from_empty_snapshot_file() {
    load_from_corrupt_snapshot(|p| {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_len(0)
            .unwrap();
    });
}

#[test]
fn test_load_from_truncated_snapshot_file() {
    load_from_corrupt_snapshot(|p| {
        let len = std::fs::metadata(p).unwrap().len();
        assert!(len > 2);
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
    });
}

#[test]
fn test_load_from_corrupt_snapshot_file() {
    load_from_corrupt_snapshot(|p| {
        let mut bytes = std::fs::read(p).unwrap();
        assert!(bytes.len() > 2);
        // Kafka writes 37 zero bytes at the start (the file is longer).
        bytes[..37].fill(0);
        std::fs::write(p, bytes).unwrap();
    });
}

fn create_empty_snapshots(f: &Fixture, offsets: &[i64]) {
    for &o in offsets {
        std::fs::write(snapshot_path(f.dir.path(), o), b"").unwrap();
    }
}

#[test]
fn test_remove_stray_snapshots_keep_clean_shutdown_snapshot() {
    let mut f = Fixture::new();
    // 5 matches the one segment, 2 is a stray, 42 the largest stray: a clean shutdown's.
    create_empty_snapshots(&f, &[5, 2, 42]);
    f.m.remove_stray_snapshots(&[5]).unwrap();
    assert_eq!(f.m.latest_snapshot_offset(), Some(42));
    assert_eq!(f.m.oldest_snapshot_offset(), Some(5));
    assert_eq!(snapshot_offsets(&f), BTreeSet::from([5, 42]));
}

#[test]
fn test_remove_all_stray_snapshots() {
    let mut f = Fixture::new();
    create_empty_snapshots(&f, &[5, 2, 42]);
    f.m.remove_stray_snapshots(&[42]).unwrap();
    assert_eq!(snapshot_offsets(&f), BTreeSet::from([42]));
}

#[test]
fn test_remove_and_mark_snapshot_for_deletion() {
    let mut f = Fixture::new();
    create_empty_snapshots(&f, &[5]);
    f.m = f.reopen();
    assert!(f.m.latest_snapshot_offset().is_some());
    let renamed =
        f.m.remove_and_mark_snapshot_for_deletion(5)
            .unwrap()
            .unwrap();
    assert!(
        renamed.to_str().unwrap().ends_with(".deleted"),
        "{renamed:?}"
    );
    assert!(renamed.exists());
    assert!(f.m.latest_snapshot_offset().is_none());
}

#[test]
fn test_remove_and_mark_snapshot_for_deletion_already_deleted() {
    let mut f = Fixture::new();
    create_empty_snapshots(&f, &[5]);
    f.m = f.reopen();
    assert!(f.m.latest_snapshot_offset().is_some());
    std::fs::remove_file(snapshot_path(f.dir.path(), 5)).unwrap();
    assert_eq!(f.m.remove_and_mark_snapshot_for_deletion(5).unwrap(), None);
    assert!(f.m.latest_snapshot_offset().is_none());
}

#[test]
fn snapshot_offset_metadata_is_only_the_offset() {
    // What a reload gives the first unstable offset: the offset, its segment unknown (Kafka's
    // loadProducerEntry builds a LogOffsetMetadata of the offset alone).
    let mut f = Fixture::new();
    f.client(PID, EPOCH, 0, 7, true).unwrap();
    take_snapshot(&mut f.m);
    let mut reloaded = f.reopen();
    reloaded.truncate_and_reload(0, 8, START_MS).unwrap();
    assert_eq!(
        reloaded.first_unstable_offset(),
        Some(LogOffsetMetadata::offset(7))
    );
}
