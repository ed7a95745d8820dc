//! Producer state and the `.txnindex` through opening, recovery and truncation, as Kafka's
//! `LogLoader` and `UnifiedLog` keep them (the cases of `LogLoaderTest` and `UnifiedLogTest` named
//! on each test): a transactional partition appended as a follower, then reopened after a clean
//! or an unclean shutdown, damaged, or truncated, judged against a fresh replay of its batches.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::sim::{SimFs, Tear};
use seglog_fs::{File as _, FileSystem as _, OpenMode};
use seglog_log::producer::snapshot_path;
use seglog_log::record::ControlRecordType;
use seglog_log::{
    LoadOptions, LoadReport, MockClock, PartitionLog, QUARANTINE_DIR, SnapshotDrop, naming,
};

use crate::common;
use crate::txn_log::{self, TS, Workload, expected, expected_txn_entries, facts, txn_entries};

const DIR: &str = "/sim/logs/orders-0";

fn open(fs: &SimFs, options: LoadOptions) -> (PartitionLog<SimFs>, LoadReport) {
    PartitionLog::open(
        fs.clone(),
        Path::new(DIR),
        common::small_config(600),
        options,
        Arc::new(MockClock::new(TS)),
    )
    .unwrap()
}

fn unclean() -> LoadOptions {
    LoadOptions::default()
}

fn clean() -> LoadOptions {
    LoadOptions::default().with_had_clean_shutdown(true)
}

/// A partition holding `w`, every byte durable, then the process gone (nothing closed). A roll
/// leaves its producer snapshot to the background flush that follows it (Kafka's "flush-log"
/// task), which `flush` does not wait for: without the wait, a crash could find a roll's
/// snapshot unsynced (empty), and the reopen would set it aside as corrupt.
fn written(w: &Workload) -> SimFs {
    let fs = SimFs::new();
    let (log, _) = open(&fs, unclean());
    w.append_to(&log);
    log.wait_for_background_flushes();
    log.flush().unwrap();
    drop(log);
    fs.crash(Tear::DropAll)
}

/// The log agrees with a fresh replay of `batches`: producers, `.txnindex` entries per segment,
/// last stable offset.
fn assert_matches_replay(log: &PartitionLog<SimFs>, batches: &[Vec<u8>]) {
    let want = expected(batches);
    assert_eq!(facts(log), want.producers, "producers");
    assert_eq!(
        txn_entries(log),
        expected_txn_entries(log, &want),
        "txnindex entries"
    );
    let lso = want
        .first_unstable_offset
        .unwrap_or(i64::MAX)
        .min(log.log_end_offset());
    assert_eq!(log.last_stable_offset(), lso, "last stable offset");
}

fn dir() -> PathBuf {
    PathBuf::from(DIR)
}

fn txn_index_bytes(fs: &SimFs) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = fs
        .read_dir(&dir())
        .unwrap()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "txnindex"))
        .map(|p| {
            let bytes = fs.live_bytes(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

/// Kafka's `testProducerSnapshotsRecoveryAfterUncleanShutdown` and `testFullTransactionIndexRecovery`:
/// after an unclean shutdown with the recovery point at 0, every segment is recovered, its
/// `.txnindex` rebuilt from the markers, and the producer state rebuilt; a snapshot is left at
/// the log end. Reopening again (unclean, from that snapshot) gives the same state and bytes.
#[test]
fn an_unclean_reopen_rebuilds_producer_state_and_every_txnindex() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, report) = open(&fs, unclean());
    assert!(log.segment_count() >= 4, "{} segments", log.segment_count());
    assert_eq!(report.segments_scanned, log.segment_count());
    assert_matches_replay(&log, &w.batches);
    let end = log.log_end_offset();
    assert!(log.producer_snapshot_offsets().contains(&end));
    assert!(fs.exists(&snapshot_path(&dir(), end)));
    let bytes = txn_index_bytes(&fs);
    assert!(bytes.iter().any(|(_, b)| !b.is_empty()), "{bytes:?}");
    drop(log);

    let fs = fs.crash(Tear::DropAll);
    let (log, _) = open(&fs, unclean());
    assert_matches_replay(&log, &w.batches);
    assert_eq!(txn_index_bytes(&fs), bytes);
}

/// Kafka's `testRebuildTransactionIndexOnRecovery` / `testFullTransactionIndexRecovery`: every
/// `.txnindex`, `.index` and snapshot deleted, an unclean reopen rebuilds the `.txnindex` files
/// byte for byte.
#[test]
fn deleted_txn_indexes_and_snapshots_are_rebuilt_byte_for_byte() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    log.flush().unwrap();
    drop(log);
    let want = txn_index_bytes(&fs);
    for path in fs.read_dir(&dir()).unwrap() {
        let ext = path.extension().unwrap().to_str().unwrap().to_owned();
        if ["txnindex", "index", "snapshot"].contains(&ext.as_str()) {
            fs.remove_file(&path).unwrap();
        }
    }
    let fs = fs.crash(Tear::DropAll);
    let (log, _) = open(&fs, unclean());
    assert_matches_replay(&log, &w.batches);
    let got: Vec<_> = txn_index_bytes(&fs)
        .into_iter()
        .filter(|(_, b)| !b.is_empty())
        .collect();
    let want: Vec<_> = want.into_iter().filter(|(_, b)| !b.is_empty()).collect();
    assert_eq!(got, want);
}

/// Kafka's `testRecoverOnlyLastSegment`: with the recovery point at the last segment, only that
/// segment is recovered, from the snapshot at its base offset; its `.txnindex` (deleted) comes
/// back, and the earlier ones are not touched.
#[test]
fn recovery_from_the_last_segment_starts_at_its_snapshot() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let last_base = *log.segments().keys().next_back().unwrap();
    // A snapshot at the last segment's base (the one a roll takes): truncate there, which
    // snapshots the state at the target, then append the rest again.
    assert!(log.truncate_to(last_base).unwrap());
    for batch in &w.batches {
        if i64::from_be_bytes(batch[..8].try_into().unwrap()) >= last_base {
            log.append_as_follower(batch).unwrap();
        }
    }
    assert_eq!(*log.segments().keys().next_back().unwrap(), last_base);
    log.flush().unwrap();
    drop(log);
    let fs = fs.crash(Tear::DropAll);
    assert!(fs.exists(&snapshot_path(&dir(), last_base)));
    let before = txn_index_bytes(&fs);
    let last_txn = naming::txn_index_file(&dir(), last_base, "");
    if fs.exists(&last_txn) {
        fs.remove_file(&last_txn).unwrap();
    }
    let fs = fs.crash(Tear::DropAll);
    let options = LoadOptions::default().with_recovery_point(last_base);
    let (log, report) = open(&fs, options);
    assert_eq!(report.segments_scanned, 1, "{:?}", report.plan);
    assert_matches_replay(&log, &w.batches);
    // The earlier segments' `.txnindex` files are as they were; the last one's is back.
    let earlier = |v: Vec<(PathBuf, Vec<u8>)>| -> Vec<(PathBuf, Vec<u8>)> {
        v.into_iter()
            .filter(|(p, b)| !b.is_empty() && p != &last_txn)
            .collect()
    };
    let after = txn_index_bytes(&fs);
    assert!(after.iter().any(|(p, b)| p == &last_txn && !b.is_empty()));
    assert_eq!(earlier(after), earlier(before));
}

/// Kafka's clean-shutdown rule (`testSkipTruncateAndReloadIfNewMessageFormatAndCleanShutdown`):
/// after a clean shutdown with a snapshot at the log end, nothing is scanned and the state is the
/// snapshot's; with no snapshot at all, the log is not read: empty snapshots are taken at the last
/// two segments' base offsets and at the log end.
#[test]
fn a_clean_shutdown_loads_the_snapshot_or_takes_empty_ones() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let end = log.log_end_offset();
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    log.close().unwrap();
    drop(log);
    let (log, report) = open(&fs, clean());
    assert_eq!(report.segments_scanned, 0);
    assert_matches_replay(&log, &w.batches);
    drop(log);

    for name in txn_log::snapshot_files(&fs, &dir()) {
        fs.remove_file(&dir().join(name)).unwrap();
    }
    let (log, report) = open(&fs, clean());
    assert_eq!(report.segments_scanned, 0);
    assert!(log.producer_entries().is_empty());
    let want: Vec<i64> = vec![bases[bases.len() - 2], bases[bases.len() - 1], end];
    assert_eq!(log.producer_snapshot_offsets(), want);
}

/// Kafka's `testCorruptedProducerSnapshot...` rule, with seglog's quarantine: a corrupt latest
/// snapshot is set aside (not deleted), the plan and the report say so, and the state comes from
/// the replay instead.
#[test]
fn a_corrupt_snapshot_is_quarantined_and_the_state_replayed() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let end = log.log_end_offset();
    log.flush().unwrap();
    drop(log);
    let snapshot = snapshot_path(&dir(), end);
    let file = fs.open(&snapshot, OpenMode::Existing).unwrap();
    file.write_all_at(b"\xff\xff", 12).unwrap();
    file.sync_data().unwrap();
    drop(file);
    let fs = fs.crash(Tear::DropAll);
    let plan = seglog_log::plan_partition(&fs, &dir(), 64, 4096, unclean()).unwrap();
    assert_eq!(plan.dropped_snapshots.len(), 1, "{plan}");
    assert!(matches!(
        plan.dropped_snapshots[0].reason,
        SnapshotDrop::Corrupt { .. }
    ));
    assert!(plan.to_string().contains("corrupt"), "{plan}");
    let (log, report) = open(&fs, unclean());
    let quarantine = report.quarantine.clone().unwrap();
    assert!(quarantine.starts_with(dir().join(QUARANTINE_DIR)));
    assert!(
        report
            .moved
            .iter()
            .any(|(from, to)| from == &snapshot && to.is_some()),
        "{:?}",
        report.moved
    );
    assert!(fs.exists(&quarantine.join(snapshot.file_name().unwrap())));
    assert_matches_replay(&log, &w.batches);
    // A new, good snapshot at the log end.
    assert!(fs.exists(&snapshot));
}

/// seglog's rule for a cut (issue 18, point 5): a torn tail that held an ABORT marker is cut, and
/// with it go the `.txnindex` entry of that marker and the snapshot past the new log end, into
/// the quarantine; the plan shows the snapshot. Kafka's `truncateAndReload` deletes it.
#[test]
fn a_cut_sets_aside_the_snapshot_past_the_new_end_and_drops_its_txn_entries() {
    let mut w = Workload::standard(3);
    // The last batch: producer 4 aborts, so the torn tail holds an ABORT marker.
    w.marker(4, ControlRecordType::Abort, 1);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let end = log.log_end_offset();
    let last_base = *log.segments().keys().next_back().unwrap();
    // Closed, so that the active segment's `.txnindex` is durable too (a flush syncs only its
    // `.log`: recovery rescans it after a crash).
    log.close().unwrap();
    drop(log);
    // Tear the last segment inside its last batches.
    let log_file = naming::log_file(&dir(), last_base, "");
    let file = fs.open(&log_file, OpenMode::Existing).unwrap();
    let len = file.len().unwrap();
    file.set_len(len - 5).unwrap();
    file.sync_data().unwrap();
    drop(file);
    let fs = fs.crash(Tear::DropAll);
    let plan = seglog_log::plan_partition(&fs, &dir(), 64, 4096, unclean()).unwrap();
    assert_eq!(plan.cuts.len(), 1, "{plan}");
    let new_end = plan.log_end_offset.unwrap();
    assert!(new_end < end);
    assert!(
        plan.dropped_snapshots
            .iter()
            .any(|s| s.offset == end && matches!(s.reason, SnapshotDrop::PastLogEnd { .. })),
        "{plan}"
    );
    assert!(plan.to_string().contains("past the log end"), "{plan}");
    assert_eq!(plan.cuts[0].txn_entries_dropped, 1, "{plan}");
    assert!(
        plan.to_string().contains(&format!(
            "drop 1 entries of the .txnindex of segment {last_base}"
        )),
        "{plan}"
    );
    let txn = naming::txn_index_file(&dir(), last_base, "");
    let txn_before = fs.live_bytes(&txn).unwrap();
    let (log, report) = open(&fs, unclean());
    assert_eq!(log.log_end_offset(), new_end);
    let quarantine = report.quarantine.unwrap();
    assert!(fs.exists(&quarantine.join(snapshot_path(&dir(), end).file_name().unwrap())));
    assert_eq!(
        fs.live_bytes(&quarantine.join(txn.file_name().unwrap()))
            .unwrap(),
        txn_before
    );
    assert_eq!(fs.live_bytes(&txn).unwrap().len(), txn_before.len() - 34);
    assert!(!fs.exists(&snapshot_path(&dir(), end)));
    assert!(
        log.producer_snapshot_offsets()
            .iter()
            .all(|o| *o <= new_end)
    );
    // What is left equals a replay of the batches kept.
    let kept: Vec<Vec<u8>> = w
        .batches
        .iter()
        .filter(|b| {
            let base = i64::from_be_bytes(b[..8].try_into().unwrap());
            base < new_end
        })
        .cloned()
        .collect();
    assert_matches_replay(&log, &kept);
}

/// Kafka's loader runs the `.txnindex` sanity check on every segment: an entry below the
/// segment's base offset makes it recover the segment, which writes the index afresh.
#[test]
fn a_txn_index_failing_the_sanity_check_is_rebuilt() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    log.close().unwrap();
    drop(log);
    let want = txn_index_bytes(&fs);
    let victim_base = bases[2];
    let victim = naming::txn_index_file(&dir(), victim_base, "");
    let bogus = seglog_segment::txn_index::AbortedTxn::new(9, 0, victim_base - 1, victim_base);
    let file = fs.open(&victim, OpenMode::CreateOrOpen).unwrap();
    file.set_len(0).unwrap();
    file.write_all_at(&bogus.to_bytes(), 0).unwrap();
    file.sync_data().unwrap();
    drop(file);
    let plan = seglog_log::plan_partition(&fs, &dir(), 64, 4096, clean()).unwrap();
    assert_eq!(plan.corrupt_txn_indexes.len(), 1, "{plan}");
    assert_eq!(plan.corrupt_txn_indexes[0].0, victim_base);
    assert!(plan.rebuilt_indexes.contains(&victim_base));
    let (log, _) = open(&fs, clean());
    assert_matches_replay(&log, &w.batches);
    assert_eq!(txn_index_bytes(&fs), want);
}

/// Kafka's `testRecoverAfterNonMonotonicCoordinatorEpochWrite`: a marker whose coordinator epoch
/// is below the producer's (accepted from replication) does not stop recovery.
#[test]
fn recovery_accepts_a_coordinator_epoch_that_went_backwards() {
    let mut w = Workload::new();
    w.data(1, 2, true).marker(1, ControlRecordType::Commit, 5);
    w.data(1, 2, true).marker(1, ControlRecordType::Abort, 3);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    assert_matches_replay(&log, &w.batches);
    assert_eq!(facts(&log)[0].4, 3);
}

/// Kafka's `testLoadProducersAfterDeleteRecordsMidSegment`: moving the log start into a
/// segment does not remove producer state, and a reload with that log start keeps both
/// producers (recovery replays the whole segment, the snapshot it takes holds both).
#[test]
fn deleting_records_mid_segment_keeps_producer_state_across_a_reload() {
    let mut w = Workload::new();
    w.data(1, 1, false).data(2, 1, false);
    let fs = written(&w);
    let options = LoadOptions::default().with_log_start_offset(1);
    let (log, report) = open(&fs, options);
    assert_eq!(report.log_start_offset, 1);
    assert_eq!(
        facts(&log).iter().map(|f| f.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
    log.close().unwrap();
    drop(log);
    let (log, _) = open(&fs, options.with_had_clean_shutdown(true));
    assert_eq!(
        facts(&log).iter().map(|f| f.0).collect::<Vec<_>>(),
        vec![1, 2]
    );
}

/// Kafka's `testLoadProducersAfterDeleteRecordsOnSegment`: moving the log start past a whole
/// segment and deleting it keeps both producers in memory; a reload after an unclean shutdown
/// (recovery point 0) rebuilds the state from the segments alone (recovery deletes the snapshots
/// past the segment it recovers, the load those at or below the log start) and so holds only the
/// producer of the segment left.
#[test]
fn deleting_a_segment_of_records_keeps_producer_state_until_a_reload_rebuilds_it() {
    let fs = SimFs::new();
    let (log, _) = open(&fs, unclean());
    let mut w = Workload::new();
    w.data(1, 1, false);
    log.append_as_follower(&w.batches[0]).unwrap();
    log.roll().unwrap();
    w.data(2, 1, false);
    log.append_as_follower(&w.batches[1]).unwrap();
    let pids = |log: &PartitionLog<SimFs>| facts(log).iter().map(|f| f.0).collect::<Vec<_>>();
    assert_eq!((log.segment_count(), pids(&log)), (2, vec![1, 2]));
    log.set_high_watermark(log.log_end_offset());
    assert!(log.delete_records_before(1).unwrap());
    log.delete_old_segments().unwrap();
    // Deleting records does not remove producer state.
    assert_eq!((log.segment_count(), pids(&log)), (1, vec![1, 2]));
    let last_seq = facts(&log)[1].2;
    assert_eq!(last_seq, 0);
    log.close().unwrap();
    drop(log);
    let options = LoadOptions::default().with_log_start_offset(1);
    let (log, _) = open(&fs, options);
    assert_eq!(pids(&log), vec![2]);
    assert_eq!(facts(&log)[0].2, last_seq);
}

/// Kafka's `testSkipLoadingIfEmptyProducerStateBeforeTruncation`, by what its mock checks: a
/// log of plain data keeps an empty producer state; the load ends it at 0 with no snapshot (none
/// is written where one exists or nothing changed), appends move its end with the log end, and a
/// truncation to 1 reloads it (no snapshot: empty at the log start), leaves the segments unread
/// since it was empty (the skip only saves the reading, which no state shows), ends it at 1 and
/// writes the empty snapshot there.
#[test]
fn truncating_a_log_without_producers_ends_the_empty_state_at_the_target() {
    let fs = SimFs::new();
    let (log, _) = open(&fs, unclean());
    assert_eq!(log.latest_producer_state_end_offset(), 0);
    assert_eq!(log.producer_snapshot_offsets(), Vec::<i64>::new());
    let mut w = Workload::new();
    w.plain(1).plain(1);
    for batch in &w.batches {
        log.append_as_follower(batch).unwrap();
    }
    assert_eq!(log.latest_producer_state_end_offset(), 2);
    assert!(log.truncate_to(1).unwrap());
    assert_eq!(log.latest_producer_state_end_offset(), 1);
    assert!(facts(&log).is_empty());
    assert_eq!(log.producer_snapshot_offsets(), vec![1]);
}

/// Kafka's `testLoadingLogKeepsLargestStrayProducerStateSnapshot`: snapshots at segment base
/// offsets and the largest one above every segment stay; a stray one inside the log goes.
#[test]
fn loading_keeps_the_largest_stray_snapshot_and_removes_the_others() {
    let fs = SimFs::new();
    let (log, _) = open(&fs, unclean());
    let mut w = Workload::new();
    w.data(1, 1, false);
    log.append_as_follower(&w.batches[0]).unwrap();
    log.roll().unwrap();
    w.data(1, 1, false);
    log.append_as_follower(&w.batches[1]).unwrap();
    log.roll().unwrap();
    w.data(1, 1, false).data(1, 1, false);
    log.append_as_follower(&w.batches[2]).unwrap();
    log.append_as_follower(&w.batches[3]).unwrap();
    log.close().unwrap();
    drop(log);
    for offset in [1, 2, 3, 4] {
        let path = snapshot_path(&dir(), offset);
        seglog_log::producer::write_snapshot(&fs, &path, std::iter::empty(), true).unwrap();
    }
    let (log, report) = open(&fs, clean());
    assert_eq!(report.snapshots_removed, vec![snapshot_path(&dir(), 3)]);
    assert_eq!(log.producer_snapshot_offsets(), vec![1, 2, 4]);
}

/// Kafka's `UnifiedLogTest` truncation cases (`testTruncateTo` with producer state, the
/// snapshots above the target deleted): truncating to an offset inside a transaction reloads the
/// state from the latest snapshot below and replays to the target, and the last stable offset
/// follows.
#[test]
fn truncation_rebuilds_producer_state_and_deletes_later_snapshots() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let end = log.log_end_offset();
    assert!(log.producer_snapshot_offsets().contains(&end));
    // Just past the second round's first batch (producer 1's three records at 14..=16), which
    // opened a transaction.
    let target = 17;
    assert!(log.truncate_to(target).unwrap());
    assert!(log.producer_snapshot_offsets().iter().all(|o| *o <= target));
    assert!(!fs.exists(&snapshot_path(&dir(), end)));
    let kept: Vec<Vec<u8>> = w
        .batches
        .iter()
        .filter(|b| i64::from_be_bytes(b[..8].try_into().unwrap()) < target)
        .cloned()
        .collect();
    assert_matches_replay(&log, &kept);
    assert_eq!(log.last_stable_offset(), 14);
    // Truncating inside the next transaction too: the last stable offset stays at the first.
    let open_txn = target + 2;
    log.append_as_follower(&w.batches[kept.len()]).unwrap();
    log.append_as_follower(&w.batches[kept.len() + 1]).unwrap();
    log.set_high_watermark(log.log_end_offset());
    assert!(log.truncate_to(open_txn).unwrap());
    assert_eq!(log.high_watermark(), open_txn);
    let kept: Vec<Vec<u8>> = w.batches[..=kept.len()].to_vec();
    assert_matches_replay(&log, &kept);
    assert_eq!(log.last_stable_offset(), 14);
}

/// Kafka's `testTruncateFullyAndStartAt` with producer state: every producer and snapshot goes
/// (the rebuild after it finds the empty state already at the new start and writes none).
#[test]
fn truncate_fully_and_start_at_empties_producer_state() {
    let w = Workload::standard(3);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    assert!(!log.producer_entries().is_empty());
    log.truncate_fully_and_start_at(1_000).unwrap();
    assert!(log.producer_entries().is_empty());
    assert!(log.producer_snapshot_offsets().is_empty());
    assert!(txn_log::snapshot_files(&fs, &dir()).is_empty());
    assert_eq!(log.last_stable_offset(), 1_000);
}

/// A leftover `<offset>.snapshot.tmp` (a snapshot write that did not finish) is planned for
/// removal and removed.
#[test]
fn an_unfinished_snapshot_write_is_removed() {
    let w = Workload::standard(1);
    let fs = written(&w);
    let tmp = dir().join("00000000000000000003.snapshot.tmp");
    let file = fs.open(&tmp, OpenMode::CreateOrOpen).unwrap();
    file.write_all_at(b"\x00\x01", 0).unwrap();
    drop(file);
    let plan = seglog_log::plan_partition(&fs, &dir(), 64, 4096, unclean()).unwrap();
    assert!(plan.removed.iter().any(|(p, _)| p == &tmp), "{plan}");
    let (log, _) = open(&fs, unclean());
    assert!(!fs.exists(&tmp));
    assert_matches_replay(&log, &w.batches);
}

/// A `.txnindex` that passes Kafka's sanity check but is not what the markers give (here a
/// last stable offset changed) is rewritten when its segment is in the recovery range, the
/// segment's `.log` and other indexes unchanged; the recovery plan names it.
#[test]
fn a_wrong_txn_index_in_the_recovery_range_is_rewritten() {
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    log.close().unwrap();
    drop(log);
    let want = txn_index_bytes(&fs);
    let (victim, good) = want
        .iter()
        .find(|(p, b)| !b.is_empty() && p != &naming::txn_index_file(&dir(), bases[0], ""))
        .cloned()
        .unwrap();
    let mut bad = good.clone();
    bad[33] ^= 1;
    let file = fs.open(&victim, OpenMode::Existing).unwrap();
    file.write_all_at(&bad, 0).unwrap();
    file.sync_data().unwrap();
    drop(file);
    let index = naming::offset_index_file(&dir(), bases[1], "");
    let index_before = fs.live_bytes(&index).unwrap();
    // The plan (and so `recover --dry-run`) shows it, having replayed the markers read-only.
    let plan = seglog_log::plan_partition(&fs, &dir(), 64, 4096, unclean()).unwrap();
    assert_eq!(plan.corrupt_txn_indexes.len(), 1, "{plan}");
    let base = plan.corrupt_txn_indexes[0].0;
    assert!(victim.ends_with(format!("{base:020}.txnindex")));
    assert!(plan.rebuilt_indexes.contains(&base));
    assert!(
        plan.to_string()
            .contains("is not what the transaction markers give"),
        "{plan}"
    );
    let (log, report) = open(&fs, unclean());
    assert!(
        report.rebuilt_txn_indexes.is_empty(),
        "planned, not found late"
    );
    assert_eq!(txn_index_bytes(&fs), want);
    assert_eq!(fs.live_bytes(&index).unwrap(), index_before);
    assert_matches_replay(&log, &w.batches);
}

/// `check` (read-only) finds what the two tests above damage, one finding per cause with the
/// file and byte: a `.txnindex` entry that differs from the markers, and a snapshot past the
/// log end; a healthy transactional partition has no finding.
#[test]
fn check_compares_txn_indexes_with_the_markers_and_snapshots_with_the_log() {
    use seglog_log::inspect::LogDirView;
    let w = Workload::standard(5);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let end = log.log_end_offset();
    log.close().unwrap();
    drop(log);
    let report = LogDirView::open(fs.clone(), &dir())
        .unwrap()
        .check(|| {})
        .unwrap();
    assert!(report.is_clean(), "{report:?}");
    assert!(report.findings.is_empty(), "{report:?}");

    let (victim, good) = txn_index_bytes(&fs)
        .into_iter()
        .find(|(_, b)| b.len() >= 68)
        .unwrap();
    let mut bad = good.clone();
    bad[34 + 33] ^= 1; // the second entry's last stable offset
    let file = fs.open(&victim, OpenMode::Existing).unwrap();
    file.write_all_at(&bad, 0).unwrap();
    drop(file);
    let ahead = snapshot_path(&dir(), end + 7);
    let bytes = fs.live_bytes(&snapshot_path(&dir(), end)).unwrap();
    let file = fs.open(&ahead, OpenMode::CreateOrOpen).unwrap();
    file.write_all_at(&bytes, 0).unwrap();
    drop(file);
    let report = LogDirView::open(fs.clone(), &dir())
        .unwrap()
        .check(|| {})
        .unwrap();
    let kinds: Vec<(&str, &Path, Option<u64>, u64)> = report
        .findings
        .iter()
        .map(|f| (f.kind, f.file.as_path(), f.position, f.count))
        .collect();
    assert_eq!(
        kinds,
        vec![
            ("snapshot_past_log_end", ahead.as_path(), None, 1),
            ("txn_index_mismatch", victim.as_path(), Some(34), 1),
        ],
        "{report:?}"
    );
    assert_eq!(report.problems(), 2);
}

/// Kafka's `testProducerSnapshotsRecoveryAfterUncleanShutdownCurrentMessageFormat`: with only the
/// last two segments' snapshots and the log end's left and the recovery point in the fourth
/// segment from the end, the last four segments are recovered, and afterwards the snapshots are
/// those at the last four segments' base offsets and at the log end.
#[test]
fn unclean_recovery_leaves_kafkas_snapshot_files() {
    let w = Workload::standard(6);
    let fs = written(&w);
    let (log, _) = open(&fs, unclean());
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    let end = log.log_end_offset();
    log.close().unwrap();
    drop(log);
    let n = bases.len();
    assert!(n >= 5, "{bases:?}");
    for name in txn_log::snapshot_files(&fs, &dir()) {
        let offset: i64 = name.split('.').next().unwrap().parse().unwrap();
        if offset < bases[n - 2] {
            fs.remove_file(&dir().join(name)).unwrap();
        }
    }
    let options = LoadOptions::default().with_recovery_point(bases[n - 4] + 1);
    let (log, report) = open(&fs, options);
    assert_eq!(report.plan.scanned, bases[n - 4..].to_vec());
    let mut want: Vec<i64> = bases[n - 4..].to_vec();
    want.push(end);
    assert_eq!(log.producer_snapshot_offsets(), want);
    let on_disk: Vec<String> = want.iter().map(|o| format!("{o:020}.snapshot")).collect();
    assert_eq!(txn_log::snapshot_files(&fs, &dir()), on_disk);
    assert_matches_replay(&log, &w.batches);
}

/// Kafka's `LogSegmentTest.testRecoverTransactionIndex`, through the partition: in a segment at
/// 100, producer 5's transaction at 100..=101, producer 10's at 102..=103, plain records at
/// 104..=105, producer 10 aborts at 106 and 5 commits at 107; recovery writes the one entry
/// (10, 102, 106, last stable offset 100) and the state ends at 108.
#[test]
fn recovery_writes_kafkas_txn_index_entry() {
    let fs = SimFs::new();
    let (log, _) = open(&fs, unclean());
    log.truncate_fully_and_start_at(100).unwrap();
    let mut w = Workload::starting_at(100);
    w.data(5, 2, true).data(10, 2, true).plain(2);
    w.marker(10, ControlRecordType::Abort, 0);
    w.marker(5, ControlRecordType::Commit, 0);
    w.append_to(&log);
    log.flush().unwrap();
    drop(log);
    let fs = fs.crash(Tear::DropAll);
    let (log, report) = open(&fs, unclean());
    assert_eq!(report.plan.scanned, vec![100]);
    let entries = txn_entries(&log);
    assert_eq!(
        entries[&100],
        vec![seglog_segment::txn_index::AbortedTxn::new(
            10, 102, 106, 100
        )]
    );
    assert_eq!(log.producer_snapshot_offsets().last(), Some(&108));
    assert_matches_replay(&log, &w.batches);
    log.close().unwrap();
    drop(log);

    // Again, the transaction of producer 10 having begun at 75 in a segment before (a snapshot at
    // 100 says so): the entry starts at 75.
    let earlier = seglog_log::producer::ProducerStateEntry::new(10, 0, 0, TS, Some(75));
    seglog_log::producer::write_snapshot(
        &fs,
        &snapshot_path(&dir(), 100),
        std::iter::once(&earlier),
        true,
    )
    .unwrap();
    let (log, _) = open(&fs, unclean());
    assert_eq!(
        txn_entries(&log)[&100],
        vec![seglog_segment::txn_index::AbortedTxn::new(10, 75, 106, 100)]
    );
}
