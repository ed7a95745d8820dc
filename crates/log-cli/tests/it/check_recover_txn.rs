//! `seglog check` verifies each `.txnindex` against the log's markers and each producer snapshot
//! against the log; `seglog recover` rebuilds the `.txnindex` and sets the snapshot past the log
//! end aside in the quarantine (`--dry-run` shows both first). The partition is written in-process
//! (transactional batches and markers appended as a follower, then reopened, which writes the
//! `.txnindex` files and snapshots), the commands run as the built binary.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_log::record::{
    BatchBuilder, BatchOptions, Compression, ControlRecordType, EndTransactionMarker, NewRecord,
};
use seglog_log::{LoadOptions, LogConfig, MockClock, PartitionLog, RealFs};

use crate::run::{seglog, text};

const TS: i64 = 1_700_000_000_000;

fn batch(base: i64, pid: i64, seq: i32, count: i32, control: Option<ControlRecordType>) -> Vec<u8> {
    let mut options = BatchOptions::new(base, Compression::None);
    options.producer_id = pid;
    options.producer_epoch = 0;
    options.base_sequence = if control.is_some() { -1 } else { seq };
    options.transactional = true;
    options.control = control.is_some();
    let mut out = Vec::new();
    if let Some(kind) = control {
        let key = kind.key_bytes();
        let value = EndTransactionMarker {
            version: 0,
            coordinator_epoch: 1,
        }
        .value_bytes();
        let record = NewRecord::new(0, TS, Some(&key), Some(&value));
        BatchBuilder::new()
            .build(&options, std::iter::once(record), &mut out)
            .unwrap();
    } else {
        let records = (0..count).map(|i| NewRecord::new(i, TS, None, Some(b"value")));
        BatchBuilder::new()
            .build(&options, records, &mut out)
            .unwrap();
    }
    out
}

fn open(dir: &Path) -> PartitionLog {
    let config = LogConfig::from_pairs([("internal.segment.bytes", "500")]).unwrap();
    PartitionLog::open(
        RealFs,
        dir,
        config,
        LoadOptions::default(),
        Arc::new(MockClock::new(TS)),
    )
    .unwrap()
    .0
}

/// A partition `logs/t-0` of several segments with aborted and committed transactions, its
/// `.txnindex` files and snapshots written by an (unclean) reopen. Returns the partition dir.
pub(crate) fn partition(root: &Path) -> PathBuf {
    let dir = root.join("logs").join("t-0");
    let log = open(&dir);
    let mut offset = 0;
    // Producer 1 commits every round; producer 2 aborts in the even rounds, commits in the odd.
    let mut seq = [0_i32; 3];
    for round in 0..6 {
        for (pid, count) in [(1_i64, 3), (2, 2), (1, 1)] {
            let at = usize::try_from(pid).unwrap();
            log.append_as_follower(&batch(offset, pid, seq[at], count, None))
                .unwrap();
            seq[at] += count;
            offset += i64::from(count);
        }
        let kind = if round % 2 == 0 {
            ControlRecordType::Abort
        } else {
            ControlRecordType::Commit
        };
        log.append_as_follower(&batch(offset, 2, 0, 0, Some(kind)))
            .unwrap();
        offset += 1;
        log.append_as_follower(&batch(offset, 1, 0, 0, Some(ControlRecordType::Commit)))
            .unwrap();
        offset += 1;
    }
    log.flush().unwrap();
    drop(log);
    let log = open(&dir);
    log.close().unwrap();
    drop(log);
    dir
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

#[test]
fn check_finds_a_damaged_txnindex_and_a_snapshot_past_the_end_and_recover_fixes_both() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition(root.path());
    let cwd = root.path();
    let out = seglog(&["check", "logs/t-0"], cwd, b"");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // A `.txnindex` entry whose last offset lies below its segment's base (Kafka's sanity check
    // fails on it), and a snapshot past the log end.
    let txn = files(&dir, "txnindex")
        .into_iter()
        .find(|p| {
            let len = std::fs::metadata(p).unwrap().len();
            len > 0 && !p.ends_with("00000000000000000000.txnindex")
        })
        .unwrap();
    let good_txn = std::fs::read(&txn).unwrap();
    let mut bad = good_txn.clone();
    bad[18..26].copy_from_slice(&0_i64.to_be_bytes());
    std::fs::write(&txn, &bad).unwrap();
    let snapshots = files(&dir, "snapshot");
    let last = snapshots.last().unwrap().clone();
    let end: i64 = last.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let ahead = dir.join(format!("{:020}.snapshot", end + 50));
    std::fs::copy(&last, &ahead).unwrap();

    let out = seglog(&["check", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}{}", text(&out.stderr));
    let txn_name = txn.file_name().unwrap().to_str().unwrap();
    let ahead_name = ahead.file_name().unwrap().to_str().unwrap();
    assert!(
        stdout
            .lines()
            .any(|l| l.contains(txn_name) && l.contains("byte 0") && l.contains("should be")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.contains(ahead_name) && l.contains("past the log end")),
        "{stdout}"
    );

    let out = seglog(&["recover", "logs/t-0", "--dry-run"], cwd, b"");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("set aside the producer snapshot") && stdout.contains(ahead_name),
        "{stdout}"
    );
    assert!(
        stdout.contains("rebuild the indexes of segment"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(&txn).unwrap(),
        bad,
        "a dry run changes nothing"
    );

    let out = seglog(&["recover", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(stdout.contains("1 producer snapshots"), "{stdout}");
    assert_eq!(
        std::fs::read(&txn).unwrap(),
        good_txn,
        "the .txnindex rebuilt"
    );
    assert!(!ahead.exists());
    let quarantined: Vec<PathBuf> = walk(&dir.join("seglog-quarantine"));
    assert!(
        quarantined.iter().any(|p| p.ends_with(ahead_name)),
        "{quarantined:?}"
    );
    let out = seglog(&["check", "logs/t-0"], cwd, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A `.txnindex` entry whose last stable offset is wrong passes Kafka's sanity check, but not
/// `check`, which names the file, the entry's byte and what it should be; `recover --dry-run`
/// shows the rewrite and `recover` does it (here every segment is in the recovery range: no
/// recovery-point checkpoint).
#[test]
fn a_wrong_last_stable_offset_is_found_and_rewritten() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition(root.path());
    let cwd = root.path();
    let txn = files(&dir, "txnindex")
        .into_iter()
        .find(|p| std::fs::metadata(p).unwrap().len() > 0)
        .unwrap();
    let good = std::fs::read(&txn).unwrap();
    let mut bad = good.clone();
    bad[33] ^= 0x40;
    std::fs::write(&txn, &bad).unwrap();
    let out = seglog(&["check", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let name = txn.file_name().unwrap().to_str().unwrap();
    assert!(
        stdout.lines().any(|l| l.contains(name)
            && l.contains("at byte 0: txn_index_mismatch")
            && l.contains("lastStableOffset")),
        "{stdout}"
    );
    let out = seglog(&["recover", "logs/t-0", "--dry-run"], cwd, b"");
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("is not what the transaction markers give") && stdout.contains(name),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read(&txn).unwrap(),
        bad,
        "a dry run changes nothing"
    );
    let out = seglog(&["recover", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("is not what the transaction markers give"),
        "{stdout}"
    );
    assert_eq!(std::fs::read(&txn).unwrap(), good);
    let out = seglog(&["check", "logs/t-0"], cwd, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}
