//! read_committed offline on a partition whose `.txnindex` files cannot be trusted: the read-only
//! view serves what Kafka serves after its own loader ran. Where Kafka recovers a segment (no
//! clean-shutdown marker, the segment at or past the recovery point), where the file is missing,
//! or where it fails Kafka's sanity check, the aborted transactions come from the markers; a
//! `.txnindex` Kafka keeps as it is (clean shutdown, or below the recovery point) is served as it
//! is, stale or not.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use seglog_log::inspect::{AbortedTxn, LogDirView, PartitionView};
use seglog_log::{
    CleanShutdownMarker, IsolationLevel, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT, RealFs,
    TopicPartition,
};

use super::read_committed::{
    PID1, PID2, aborted, committed_offsets, data_offsets, layout_log, viewed,
};
use crate::common::partition_dir;

/// A closed log of `kafka_layout` in segments of 600 bytes; its partition directory.
fn closed_log(root: &Path) -> PathBuf {
    let log = layout_log(root, 600);
    assert!(log.segment_count() > 3);
    log.close().unwrap();
    drop(log);
    partition_dir(root)
}

/// Marks the log directory above `dir` cleanly shut down, or not, with the recovery point at
/// `recovery_point`.
fn shutdown(dir: &Path, clean: bool, recovery_point: i64) {
    let log_dir = dir.parent().unwrap();
    let marker = CleanShutdownMarker::new(RealFs, log_dir);
    if clean {
        marker.write(-1).unwrap();
    } else {
        let _ = std::fs::remove_file(log_dir.join(seglog_log::CLEAN_SHUTDOWN_FILE));
    }
    let entries = BTreeMap::from([(TopicPartition::new("orders", 0), recovery_point)]);
    OffsetCheckpoint::new(RealFs, log_dir.join(RECOVERY_POINT_CHECKPOINT))
        .write(&entries)
        .unwrap();
}

/// The `.txnindex` files of `dir` with their segment's base offset, oldest first.
fn txn_indexes(dir: &Path) -> Vec<(i64, PathBuf)> {
    let mut out: Vec<(i64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "txnindex"))
        .map(|p| {
            let stem = p.file_stem().unwrap().to_str().unwrap();
            (stem.parse().unwrap(), p)
        })
        .collect();
    out.sort();
    out
}

/// The `.txnindex` holding pid 1's abort (the only non-empty one before pid 2's).
fn pid1_index(dir: &Path) -> PathBuf {
    txn_indexes(dir)
        .into_iter()
        .map(|(_, p)| p)
        .find(|p| {
            std::fs::read(p)
                .unwrap()
                .chunks(34)
                .any(|e| AbortedTxn::read_from(e).is_some_and(|t| t.producer_id() == PID1))
        })
        .expect("pid 1's abort is indexed")
}

/// What a read_committed consumer of `dir` gets: records, next offset, last stable offset and
/// the aborted transactions of a fetch from 0.
fn answer(dir: &Path) -> (Vec<i64>, i64, i64, Vec<seglog_log::AbortedTransaction>) {
    let (records, next) = viewed(dir, 0, IsolationLevel::ReadCommitted);
    let view = PartitionView::open(RealFs, dir).unwrap();
    let lso = view.last_stable_offset().unwrap();
    (
        records,
        next,
        lso,
        view.aborted_transactions(0, lso).unwrap(),
    )
}

fn good() -> (Vec<i64>, i64, i64, Vec<seglog_log::AbortedTransaction>) {
    (
        committed_offsets(),
        90,
        90,
        aborted(&[(PID1, 0), (PID2, 8)]),
    )
}

#[test]
fn missing_txn_indexes_are_rebuilt_from_the_markers() {
    let root = tempfile::tempdir().unwrap();
    let dir = closed_log(root.path());
    // A clean shutdown with everything flushed: Kafka recovers nothing.
    shutdown(&dir, true, 90);
    assert_eq!(answer(&dir), good());
    for (_, path) in txn_indexes(&dir) {
        std::fs::remove_file(path).unwrap();
    }
    assert_eq!(answer(&dir), good());
    assert!(txn_indexes(&dir).is_empty(), "nothing is written");
}

#[test]
fn a_stale_txn_index_is_served_only_where_kafka_keeps_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = closed_log(root.path());
    let stale = pid1_index(&dir);
    // The entry never reached the disk (an unclean stop).
    std::fs::write(&stale, b"").unwrap();
    // No clean shutdown, recovery point 0: Kafka recovers every segment.
    shutdown(&dir, false, 0);
    assert_eq!(answer(&dir), good());
    // A clean shutdown: Kafka serves the file as it is, and pid 1's records with it.
    shutdown(&dir, true, 90);
    let (records, _, lso, txns) = answer(&dir);
    assert_eq!(lso, 90);
    assert_eq!(txns, aborted(&[(PID2, 8)]));
    let mut with_pid1: Vec<i64> = committed_offsets();
    with_pid1.extend([0..5, 10..14, 19..29].into_iter().flatten());
    with_pid1.sort_unstable();
    assert_eq!(records, with_pid1);
    // Unclean, but the segment lies below the recovery point: kept as well.
    shutdown(&dir, false, 90);
    assert_eq!(answer(&dir).0, with_pid1);
    // check says so, in the finding about that file.
    let report = LogDirView::open(RealFs, &dir)
        .unwrap()
        .check(|| {})
        .unwrap();
    let finding = report
        .findings
        .iter()
        .find(|f| f.file == stale && f.kind == "txn_index_mismatch")
        .expect("check finds the stale .txnindex");
    assert!(
        finding.detail.contains("Kafka serves this file as it is"),
        "{}",
        finding.detail
    );
    shutdown(&dir, false, 0);
    let report = LogDirView::open(RealFs, &dir)
        .unwrap()
        .check(|| {})
        .unwrap();
    let finding = report
        .findings
        .iter()
        .find(|f| f.file == stale && f.kind == "txn_index_mismatch")
        .expect("check finds the stale .txnindex");
    assert!(
        finding.detail.contains("reads serve the markers' entries"),
        "{}",
        finding.detail
    );
}

#[test]
fn a_txn_index_failing_the_sanity_check_is_not_served() {
    let root = tempfile::tempdir().unwrap();
    let dir = closed_log(root.path());
    shutdown(&dir, true, 90);
    // An entry ending below its segment's base offset, in the last segment's index: Kafka's
    // sanity check fails and recovery rebuilds the file.
    let (base, last) = txn_indexes(&dir).pop().unwrap();
    assert!(base > 20);
    let mut bytes = std::fs::read(&last).unwrap();
    bytes.extend(AbortedTxn::new(3, 14, 16, 14).to_bytes());
    std::fs::write(&last, bytes).unwrap();
    assert_eq!(answer(&dir), good());
    assert_eq!(
        viewed(&dir, 0, IsolationLevel::ReadUncommitted).0,
        data_offsets()
    );
}
