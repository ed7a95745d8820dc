//! A segment's `.txnindex` lives and dies with it: created by the first aborted transaction only,
//! carried by every suffix change (`.deleted`, `.cleaned`, `.swap` and back), deleted with the
//! segment, cut by `truncate_to`, emptied by `recover`, synced by `flush` (on the simulated file
//! system too, so a crash keeps what a flush made durable).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "tests"
)]

use crate::common;

use std::path::Path;

use seglog_fs::FileSystem;
use seglog_fs::sim::{SimFs, Tear};
use seglog_segment::naming;
use seglog_segment::txn_index::AbortedTxn;
use seglog_segment::{LogSegment, SegmentConfig};

fn open(dir: &Path, base: i64, exists: bool, suffix: &str) -> LogSegment {
    LogSegment::open(
        seglog_fs::RealFs,
        dir,
        base,
        SegmentConfig::default(),
        exists,
        suffix,
        0,
    )
    .unwrap()
}

fn txn(last: i64) -> AbortedTxn {
    AbortedTxn::new(7, last - 1, last, last - 1)
}

#[test]
fn no_file_is_created_without_an_entry() {
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), 100, false, "");
    seg.append(100, &common::single(100)).unwrap();
    seg.flush().unwrap();
    seg.on_become_inactive().unwrap();
    seg.truncate_to(101, 0).unwrap();
    seg.recover().unwrap();
    assert!(
        seg.collect_aborted_txns(0, 1000)
            .unwrap()
            .aborted_transactions
            .is_empty()
    );
    seg.txn_index_sanity_check().unwrap();
    seg.change_file_suffixes("", naming::DELETED_FILE_SUFFIX)
        .unwrap();
    seg.change_file_suffixes(naming::DELETED_FILE_SUFFIX, "")
        .unwrap();
    seg.close().unwrap();
    assert!(!naming::txn_index_file(dir.path(), 100, "").exists());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(names.iter().all(|n| !n.contains("txnindex")), "{names:?}");
}

#[test]
fn entries_survive_close_and_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), 100, false, "");
    seg.append(101, &common::range(100, 101)).unwrap();
    seg.append_aborted_txn(txn(101)).unwrap();
    let path = naming::txn_index_file(dir.path(), 100, "");
    assert!(path.exists());
    assert_eq!(seg.txn_index_path(), path);
    seg.close().unwrap();
    let seg = open(dir.path(), 100, true, "");
    assert_eq!(seg.all_aborted_txns().unwrap(), [txn(101)]);
    assert_eq!(std::fs::read(&path).unwrap(), txn(101).to_bytes());
    // Kafka does not read the last offset back: a reopened segment takes any entry first.
    seg.append_aborted_txn(txn(50)).unwrap();
    // The base offset is the sanity check's start offset.
    let seg = open(dir.path(), 100, true, "");
    assert!(seg.txn_index_sanity_check().is_err());
}

#[test]
fn suffix_changes_and_delete_carry_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), 0, false, naming::CLEANED_FILE_SUFFIX);
    seg.append(0, &common::single(0)).unwrap();
    seg.append_aborted_txn(txn(0)).unwrap();
    let at = |suffix: &str| naming::txn_index_file(dir.path(), 0, suffix);
    assert!(at(naming::CLEANED_FILE_SUFFIX).exists());
    seg.change_file_suffixes(naming::CLEANED_FILE_SUFFIX, naming::SWAP_FILE_SUFFIX)
        .unwrap();
    assert!(!at(naming::CLEANED_FILE_SUFFIX).exists());
    assert!(at(naming::SWAP_FILE_SUFFIX).exists());
    seg.change_file_suffixes(naming::SWAP_FILE_SUFFIX, "")
        .unwrap();
    assert!(at("").exists());
    assert_eq!(seg.txn_index_path(), at(""));
    // The open handle follows the renames: appends and reads go to the renamed file.
    seg.append_aborted_txn(txn(5)).unwrap();
    assert_eq!(std::fs::metadata(at("")).unwrap().len(), 68);
    seg.change_file_suffixes("", naming::DELETED_FILE_SUFFIX)
        .unwrap();
    assert!(at(naming::DELETED_FILE_SUFFIX).exists());
    assert_eq!(seg.all_aborted_txns().unwrap(), [txn(0), txn(5)]);
    seg.delete().unwrap();
    assert!(!at(naming::DELETED_FILE_SUFFIX).exists());
    assert!(std::fs::read_dir(dir.path()).unwrap().next().is_none());
}

#[test]
fn truncate_to_cuts_and_recover_resets() {
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), 0, false, "");
    for offset in 0..6 {
        seg.append(offset, &common::single(offset)).unwrap();
    }
    for last in [1, 3, 5] {
        seg.append_aborted_txn(txn(last)).unwrap();
    }
    seg.truncate_to(3, 0).unwrap();
    assert_eq!(seg.all_aborted_txns().unwrap(), [txn(1)]);
    // The kept entry's last offset is the precondition's again.
    assert!(seg.append_aborted_txn(txn(1)).is_err());
    seg.append_aborted_txn(txn(2)).unwrap();
    let path = seg.txn_index_path();
    let report = seg.recover().unwrap();
    assert_eq!(report.batches, 3);
    assert!(seg.all_aborted_txns().unwrap().is_empty());
    // Reset empties the file and keeps it, as Kafka's `truncate(0)` does.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
    // After the reset the log replays producer state and appends the entries again.
    seg.append_aborted_txn(txn(1)).unwrap();
    assert_eq!(
        seg.collect_aborted_txns(0, 10)
            .unwrap()
            .aborted_transactions,
        [txn(1)]
    );
}

#[test]
fn a_flush_makes_entries_survive_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(
        fs.clone(),
        dir.path(),
        0,
        SegmentConfig::default(),
        false,
        "",
        0,
    )
    .unwrap();
    seg.append(0, &common::single(0)).unwrap();
    seg.append_aborted_txn(txn(0)).unwrap();
    let path = naming::txn_index_file(dir.path(), 0, "");
    seg.flush().unwrap();
    fs.sync_dir(dir.path()).unwrap();
    seg.append(1, &common::single(1)).unwrap();
    seg.append_aborted_txn(txn(1)).unwrap();
    // The second entry was never synced: a crash drops it (or tears it; the partial tail is
    // then never read).
    for keep in 0..=34 {
        let crashed = fs.crash(Tear::KeepPrefix(keep));
        let seg = LogSegment::open(
            crashed.clone(),
            dir.path(),
            0,
            SegmentConfig::default(),
            true,
            "",
            0,
        )
        .unwrap();
        let expected: &[AbortedTxn] = if keep == 34 {
            &[txn(0), txn(1)]
        } else {
            &[txn(0)]
        };
        assert_eq!(seg.all_aborted_txns().unwrap(), expected, "keep {keep}");
        assert!(crashed.exists(&path));
    }
    // A flush syncs it.
    seg.flush().unwrap();
    let crashed = fs.crash(Tear::KeepPrefix(0));
    let seg = LogSegment::open(
        crashed,
        dir.path(),
        0,
        SegmentConfig::default(),
        true,
        "",
        0,
    )
    .unwrap();
    assert_eq!(seg.all_aborted_txns().unwrap(), [txn(0), txn(1)]);
}
