//! `seglog recover` repairs what `seglog check` finds (issue 35, item 2): on a cleanly closed
//! partition (clean-shutdown marker, recovery point at the log end, so Kafka's rules alone rescan
//! nothing) with damage in its data or in a derived file (`.index`, `.timeindex`, `.txnindex`,
//! producer snapshot, checkpoint), `check` exits 1, a plain `recover` exits 0 without saying
//! "nothing needed recovery", and `check` then exits 0. Before the fix, a flipped bit in a base
//! offset got "nothing needed recovery" and left all of check's problems; a garbage `.index` below
//! the recovery point was left as it was. A problem recovery cannot repair makes it exit 1.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "tests"
)]

use std::path::{Path, PathBuf};

use seglog_log::{LogDir, LogDirOptions, RealFs};

use crate::run::{seglog, text};

/// `logs/dmg-0`: 3000 records in batches of 10 over 4 segments (bases 0, 1020, 1970, 2920),
/// closed cleanly by `produce`. Returns its `.log` files.
fn cleanly_closed(root: &Path) -> Vec<PathBuf> {
    let lines: String = (1..=3000).map(|i: u32| i.to_string() + "\n").collect();
    let out = seglog(
        &[
            "produce",
            "logs/dmg-0",
            "--create",
            "--batch-records",
            "10",
            "--config",
            "internal.segment.bytes=16384",
        ],
        root,
        lines.as_bytes(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(root.join("logs/.kafka_cleanshutdown").exists());
    files(&root.join("logs/dmg-0"), "log")
}

fn files(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

/// check (exit 1), recover (exit 0, not "nothing"), check (exit 0) on `target`; returns what
/// recover printed.
fn contract(root: &Path, target: &str) -> String {
    let out = seglog(&["check", target], root, b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let out = seglog(&["recover", target], root, b"");
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert!(!said.contains("nothing needed recovery"), "{said}");
    assert!(said.contains("check found"), "{said}");
    let out = seglog(&["check", target], root, b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "check after recover: {}\nrecover said: {said}",
        text(&out.stdout)
    );
    said
}

/// How many records `consume` reads from the partition.
fn records(root: &Path) -> usize {
    let out = seglog(&["consume", "--json", "logs/dmg-0"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).lines().count()
}

fn garbage(path: &Path) {
    let len = std::fs::metadata(path).unwrap().len();
    let bytes: Vec<u8> = (0..len).map(|i| ((i * 37 + 11) % 256) as u8).collect();
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn a_flipped_base_offset_bit_in_a_cleanly_closed_segment_is_cut_as_full_would() {
    let root = tempfile::tempdir().unwrap();
    let logs = cleanly_closed(root.path());
    let mut bytes = std::fs::read(&logs[1]).unwrap();
    bytes[5] ^= 1 << 2;
    std::fs::write(&logs[1], bytes).unwrap();
    let said = contract(root.path(), "logs/dmg-0");
    // Kafka's recovery from the damaged segment: cut at its first batch, the later ones dropped
    // into the quarantine (what `--full` does).
    assert!(said.contains("cut "), "{said}");
    assert!(said.contains("drop segment 1970"), "{said}");
    assert!(said.contains("seglog-quarantine"), "{said}");
    assert_eq!(records(root.path()), 1020);
}

#[test]
fn a_garbage_index_below_the_recovery_point_is_rebuilt() {
    let root = tempfile::tempdir().unwrap();
    cleanly_closed(root.path());
    garbage(&root.path().join("logs/dmg-0/00000000000000000000.index"));
    let said = contract(root.path(), "logs/dmg-0");
    assert!(said.contains("rebuild the indexes of segment 0"), "{said}");
    assert!(!said.contains("drop segment"), "{said}");
    assert_eq!(records(root.path()), 3000);
}

#[test]
fn a_garbage_time_index_below_the_recovery_point_is_rebuilt() {
    let root = tempfile::tempdir().unwrap();
    cleanly_closed(root.path());
    garbage(
        &root
            .path()
            .join("logs/dmg-0/00000000000000001020.timeindex"),
    );
    let said = contract(root.path(), "logs/dmg-0");
    assert!(
        said.contains("rebuild the indexes of segment 1020"),
        "{said}"
    );
    assert_eq!(records(root.path()), 3000);
}

#[test]
fn a_snapshot_past_the_log_end_is_set_aside() {
    let root = tempfile::tempdir().unwrap();
    cleanly_closed(root.path());
    let dir = root.path().join("logs/dmg-0");
    let last = files(&dir, "snapshot").pop().unwrap();
    std::fs::copy(&last, dir.join("00000000000000003050.snapshot")).unwrap();
    let said = contract(root.path(), "logs/dmg-0");
    assert!(said.contains("snapshot_past_log_end"), "{said}");
    assert!(!dir.join("00000000000000003050.snapshot").exists());
    assert_eq!(records(root.path()), 3000);
}

#[test]
fn a_garbage_recovery_point_checkpoint_is_rewritten() {
    let root = tempfile::tempdir().unwrap();
    cleanly_closed(root.path());
    let checkpoint = root.path().join("logs/recovery-point-offset-checkpoint");
    std::fs::write(&checkpoint, b"garbage\n").unwrap();
    let said = contract(root.path(), "logs");
    assert!(said.contains("bad_checkpoint"), "{said}");
    assert_eq!(
        std::fs::read_to_string(&checkpoint).unwrap(),
        "0\n1\ndmg 0 3000\n"
    );
}

#[test]
fn a_damaged_txnindex_below_the_recovery_point_is_rewritten() {
    let root = tempfile::tempdir().unwrap();
    let dir = crate::check_recover_txn::partition(root.path());
    // Closed cleanly by a log directory: the marker, and recovery points at the log end.
    let (log_dir, _) =
        LogDir::open(RealFs, &root.path().join("logs"), LogDirOptions::default()).unwrap();
    log_dir.close().unwrap();
    drop(log_dir);
    assert!(root.path().join("logs/.kafka_cleanshutdown").exists());
    let txn = files(&dir, "txnindex")
        .into_iter()
        .find(|p| std::fs::metadata(p).unwrap().len() > 0)
        .unwrap();
    let good = std::fs::read(&txn).unwrap();
    let mut bad = good.clone();
    bad[33] ^= 0x40;
    std::fs::write(&txn, &bad).unwrap();
    let said = contract(root.path(), "logs/t-0");
    assert!(said.contains("txn_index_mismatch"), "{said}");
    assert_eq!(std::fs::read(&txn).unwrap(), good);
}

#[test]
fn a_problem_recovery_cannot_repair_makes_recover_exit_1_naming_it() {
    let root = tempfile::tempdir().unwrap();
    cleanly_closed(root.path());
    std::fs::create_dir(root.path().join("logs/lost+found")).unwrap();
    let out = seglog(&["recover", "logs"], root.path(), b"");
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{said}{}", text(&out.stderr));
    assert!(
        said.lines()
            .any(|l| l.contains("lost+found") && l.contains("left as it is")),
        "{said}"
    );
}
