//! Regression: a recovery killed while it deleted the segments after a cut, run again, left a
//! hole (the cut segment already truncated, a later segment still there) that `check` accepted.
//! Now a recovery crashed at any event (every write, length change, sync, creation, rename and
//! removal; power loss, unsynced state dropped) and run again leaves exactly the files, bytes and
//! quarantine that one uninterrupted recovery leaves; so does one that sets stray entries aside.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::{common, txn_log};

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::sim::{CrashPoint, SimFs, Tear};
use seglog_fs::{File as _, FileSystem as _, OpenMode};
use seglog_log::{LoadOptions, LoadReport, MockClock, PartitionLog, QUARANTINE_DIR};

const DIR: &str = "/sim/logs/orders-0";

fn load(fs: &SimFs, discard: bool) -> LoadReport {
    let options = LoadOptions::default().with_discard(discard);
    let (log, report) = PartitionLog::open(
        fs.clone(),
        Path::new(DIR),
        common::small_config(600),
        options,
        Arc::new(MockClock::new(5_000)),
    )
    .unwrap();
    log.close().unwrap();
    report
}

/// Every file under `dir`, with its live bytes, and every directory.
fn tree(fs: &SimFs, dir: &Path, out: &mut BTreeMap<PathBuf, Option<Vec<u8>>>) {
    for entry in fs.read_dir(dir).unwrap() {
        if fs.is_dir(&entry) {
            out.insert(entry.clone(), None);
            tree(fs, &entry, out);
        } else {
            out.insert(entry.clone(), Some(fs.live_bytes(&entry).unwrap()));
        }
    }
}

fn snapshot(fs: &SimFs) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    tree(fs, Path::new(DIR), &mut out);
    out
}

/// What the partition holds besides its segments.
#[derive(Clone, Copy)]
struct Damage {
    /// A damaged batch in the middle of the second segment.
    batch: bool,
    /// Stray entries named like segment files: a file `123.log` and a directory
    /// `00000000000000099999.log` holding a file.
    strays: bool,
}

fn open_at(fs: &SimFs, now_ms: i64) -> PartitionLog<SimFs> {
    PartitionLog::open(
        fs.clone(),
        Path::new(DIR),
        common::small_config(600),
        LoadOptions::default(),
        Arc::new(MockClock::new(now_ms)),
    )
    .unwrap()
    .0
}

/// A partition of several segments with `damage`, everything durable.
fn damaged(damage: Damage) -> SimFs {
    let fs = SimFs::new();
    let log = open_at(&fs, 1_000);
    for i in 0..24 {
        log.append_as_leader(&mut common::producer_batch(&format!("b{i}"), 3, 1_000 + i))
            .unwrap();
    }
    log.close().unwrap();
    drop(log);
    apply(&fs, damage)
}

/// The same with transactional and idempotent batches and markers (appended as a follower),
/// reopened once so that the `.txnindex` files and producer snapshots an unclean open writes are
/// there: recovery then also rebuilds the cut segment's `.txnindex`, sets aside the snapshots
/// past the new end and writes new ones.
fn damaged_transactional() -> SimFs {
    let fs = SimFs::new();
    let log = open_at(&fs, txn_log::TS);
    txn_log::Workload::standard(6).append_to(&log);
    log.close().unwrap();
    drop(log);
    let log = open_at(&fs, txn_log::TS);
    log.close().unwrap();
    drop(log);
    apply(&fs, BATCH)
}

fn apply(fs: &SimFs, damage: Damage) -> SimFs {
    let mut logs: Vec<PathBuf> = fs
        .read_dir(Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    assert!(logs.len() >= 4, "{logs:?}");
    if damage.batch {
        let victim = fs.open(&logs[1], OpenMode::Existing).unwrap();
        let len = victim.len().unwrap();
        victim.write_all_at(b"\xde\xad\xbe\xef", len / 2).unwrap();
        victim.sync_data().unwrap();
    }
    if damage.strays {
        let dir = Path::new(DIR);
        let stray_dir = dir.join("00000000000000099999.log");
        fs.create_dir_all(&stray_dir).unwrap();
        for (path, bytes) in [
            (dir.join("123.log"), &b"not a segment"[..]),
            (stray_dir.join("inside"), b"kept"),
        ] {
            let file = fs.open(&path, OpenMode::CreateOrOpen).unwrap();
            file.write_all_at(bytes, 0).unwrap();
            file.sync_data().unwrap();
        }
        fs.sync_dir(&stray_dir).unwrap();
        fs.sync_dir(dir).unwrap();
    }
    fs.crash(Tear::DropAll)
}

fn crash_everywhere(discard: bool, damage: Damage) {
    crash_everywhere_from(&damaged(damage), discard, damage);
}

fn crash_everywhere_from(start: &SimFs, discard: bool, damage: Damage) {
    let reference = start.crash(Tear::DropAll);
    let report = load(&reference, discard);
    if damage.batch {
        assert_eq!(report.plan.cuts.len(), 1, "{report:?}");
        assert!(report.plan.dropped.len() >= 2, "{report:?}");
    }
    assert_eq!(
        report.plan.strays.len(),
        if damage.strays { 2 } else { 0 },
        "{report:?}"
    );
    let expected = snapshot(&reference);
    let strays_left = expected
        .keys()
        .filter(|p| p.parent() == Some(Path::new(DIR)))
        .filter(|p| p.ends_with("123.log") || p.ends_with("00000000000000099999.log"))
        .count();
    assert_eq!(strays_left, 0, "{expected:?}");
    let quarantined = expected
        .keys()
        .filter(|p| p.to_string_lossy().contains(QUARANTINE_DIR))
        .count();
    assert_eq!(quarantined > 0, !discard, "{expected:?}");

    let run = start.crash(Tear::DropAll);
    run.set_capture(Some(Box::new(|_, _| {
        Some(CrashPoint {
            tear: Tear::DropAll,
            written_back: None,
            pages: None,
        })
    })));
    load(&run, discard);
    run.set_capture(None);
    let images = run.take_captured();
    assert!(images.len() > 10, "{} events", images.len());
    for (event, kind, image) in images {
        load(&image, discard);
        let got = snapshot(&image);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            expected.keys().collect::<Vec<_>>(),
            "crash at event {event} ({kind:?})"
        );
        assert!(
            got == expected,
            "crash at event {event} ({kind:?}): bytes differ"
        );
    }
}

const BATCH: Damage = Damage {
    batch: true,
    strays: false,
};
const STRAYS: Damage = Damage {
    batch: false,
    strays: true,
};
const BOTH: Damage = Damage {
    batch: true,
    strays: true,
};

#[test]
fn a_recovery_crashed_at_any_event_and_run_again_ends_as_one_uninterrupted_run() {
    crash_everywhere(false, BATCH);
}

#[test]
fn the_same_holds_with_discard() {
    crash_everywhere(true, BATCH);
}

#[test]
fn setting_strays_aside_crashed_at_any_event_ends_as_one_uninterrupted_run() {
    crash_everywhere(false, STRAYS);
    crash_everywhere(true, STRAYS);
}

#[test]
fn strays_and_a_damaged_batch_crashed_at_any_event_end_as_one_uninterrupted_run() {
    crash_everywhere(false, BOTH);
    crash_everywhere(true, BOTH);
}

#[test]
fn the_same_holds_for_a_transactional_partition() {
    let start = damaged_transactional();
    let reference = start.crash(Tear::DropAll);
    let report = load(&reference, false);
    assert!(!report.plan.dropped_snapshots.is_empty(), "{}", report.plan);
    crash_everywhere_from(&start, false, BATCH);
}

#[test]
fn the_same_holds_for_a_transactional_partition_with_discard() {
    crash_everywhere_from(&damaged_transactional(), true, BATCH);
}
