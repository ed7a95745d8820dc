//! `seglog consume` and `seglog offsets` at each isolation level, with the real binary, on a
//! partition holding committed, aborted and open transactions: no marker is ever printed,
//! read_committed hides aborted records and stops at the last stable offset.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::Arc;

use seglog_log::inspect::AbortedTxn;
use seglog_log::record::{
    BatchBuilder, BatchOptions, Compression, ControlRecordType, EndTransactionMarker, NewRecord,
};
use seglog_log::{LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};

use crate::run::{seglog, text};

fn batch(
    base: i64,
    values: &[&str],
    pid: Option<i64>,
    control: Option<ControlRecordType>,
) -> Vec<u8> {
    let mut options = BatchOptions::new(base, Compression::None);
    if let Some(pid) = pid {
        options.producer_id = pid;
        options.producer_epoch = 0;
        options.base_sequence = 0;
        options.transactional = true;
    }
    let mut out = Vec::new();
    if let Some(kind) = control {
        options.control = true;
        let key = kind.key_bytes();
        let value = EndTransactionMarker {
            version: 0,
            coordinator_epoch: 0,
        }
        .value_bytes();
        let record = NewRecord::new(0, 1_700_000_000_000, Some(&key), Some(&value));
        BatchBuilder::new()
            .build(&options, std::iter::once(record), &mut out)
            .unwrap();
    } else {
        let records = (0..)
            .zip(values)
            .map(|(i, v)| NewRecord::new(i, 1_700_000_000_000, None, Some(v.as_bytes())));
        BatchBuilder::new()
            .build(&options, records, &mut out)
            .unwrap();
    }
    out
}

/// `t-0`: plain 0, pid 1 commits 1..=2 (marker 3), pid 2 aborts 4 (marker 5), plain 6, pid 3
/// opens 7 and never ends.
fn partition(root: &std::path::Path) {
    let dir = root.join("t-0");
    let (log, _) = PartitionLog::open(
        RealFs,
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    for b in [
        batch(0, &["plain-0"], None, None),
        batch(1, &["c1", "c2"], Some(1), None),
        batch(3, &[], Some(1), Some(ControlRecordType::Commit)),
        batch(4, &["aborted"], Some(2), None),
        batch(5, &[], Some(2), Some(ControlRecordType::Abort)),
        batch(6, &["plain-6"], None, None),
        batch(7, &["open"], Some(3), None),
    ] {
        log.append_as_follower(&b).unwrap();
    }
    let txn = AbortedTxn::new(2, 4, 5, 6);
    let active = log.active_segment();
    if !active.all_aborted_txns().unwrap().contains(&txn) {
        active.append_aborted_txn(txn).unwrap();
    }
    log.close().unwrap();
}

#[test]
fn consume_prints_no_marker_and_read_committed_hides_aborted_records() {
    let root = tempfile::tempdir().unwrap();
    partition(root.path());
    let out = seglog(&["consume", "t-0"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "plain-0\nc1\nc2\naborted\nplain-6\nopen\n"
    );
    let out = seglog(
        &["consume", "t-0", "--isolation-level", "read_uncommitted"],
        root.path(),
        b"",
    );
    assert_eq!(
        text(&out.stdout),
        "plain-0\nc1\nc2\naborted\nplain-6\nopen\n"
    );
    let out = seglog(
        &["consume", "t-0", "--isolation-level", "read_committed"],
        root.path(),
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "plain-0\nc1\nc2\nplain-6\n");
    let out = seglog(
        &["consume", "t-0", "--isolation-level", "committed"],
        root.path(),
        b"",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("read_committed"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_negative_offset_counts_back_from_the_last_fetchable_offset() {
    let root = tempfile::tempdir().unwrap();
    partition(root.path());
    let from_end = |level: &str| {
        let out = seglog(
            &[
                "consume",
                "t-0",
                "--offset",
                "-2",
                "--isolation-level",
                level,
            ],
            root.path(),
            b"",
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    // The end is 8 (the log end) read_uncommitted, 7 (the last stable offset) read_committed.
    assert_eq!(from_end("read_uncommitted"), "plain-6\nopen\n");
    assert_eq!(from_end("read_committed"), "plain-6\n");
}

#[test]
fn offsets_latest_under_read_committed_is_the_last_stable_offset() {
    let root = tempfile::tempdir().unwrap();
    partition(root.path());
    let latest = |level: &str| {
        let out = seglog(
            &["offsets", "t-0", "--latest", "--isolation-level", level],
            root.path(),
            b"",
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stdout)
    };
    assert_eq!(latest("read_uncommitted"), "t:0:8\n");
    assert_eq!(latest("read_committed"), "t:0:7\n");
    let out = seglog(&["offsets", "t-0", "--latest"], root.path(), b"");
    assert_eq!(text(&out.stdout), "t:0:8\n");
    let help = text(&seglog(&["consume", "--help"], root.path(), b"").stdout);
    assert!(help.contains("--isolation-level"), "{help}");
    let help = text(&seglog(&["offsets", "--help"], root.path(), b"").stdout);
    assert!(help.contains("--isolation-level"), "{help}");
}

#[test]
fn read_committed_without_the_txn_index_reads_the_markers_as_kafkas_recovery_does() {
    let root = tempfile::tempdir().unwrap();
    partition(root.path());
    // A clean shutdown: Kafka would keep the file as it is, but the file is gone, and its
    // recovery rebuilds it from the markers.
    seglog_log::CleanShutdownMarker::new(RealFs, root.path())
        .write(-1)
        .unwrap();
    let index = root.path().join("t-0").join(format!("{:020}.txnindex", 0));
    assert!(index.exists());
    std::fs::remove_file(&index).unwrap();
    let out = seglog(
        &["consume", "t-0", "--isolation-level", "read_committed"],
        root.path(),
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "plain-0\nc1\nc2\nplain-6\n");
    let out = seglog(&["check", "t-0"], root.path(), b"");
    let report = text(&out.stdout) + &text(&out.stderr);
    assert!(
        report.contains("txn_index_mismatch") && report.contains("reads serve the markers"),
        "{report}"
    );
    assert!(!index.exists(), "nothing is written");
}
