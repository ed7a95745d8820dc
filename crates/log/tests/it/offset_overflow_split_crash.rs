//! A split of an overflowed segment (KAFKA-6264) crashed at any event (every write, length
//! change, sync, creation, rename and removal; power loss, unsynced state dropped) and run again
//! leaves exactly the files and bytes one uninterrupted recovery leaves: the `.cleaned` / `.swap`
//! protocol aborts or completes it (Kafka's `testRecoveryAfterCrashDuringSplitPhase1..5` at every
//! point, not only at the five Kafka picks).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::sim::{CrashPoint, SimFs, Tear};
use seglog_fs::{File as _, FileSystem as _, OpenMode};
use seglog_log::{LoadOptions, LoadReport, LogConfig, MockClock, PartitionLog};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

const DIR: &str = "/sim/logs/legacy-0";
const M: i64 = i32::MAX as i64;

fn batch(base: i64, count: i32) -> Vec<u8> {
    let records = (0..count).map(|i| NewRecord::new(i, 1_000, Some(b"k"), Some(b"v")));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(
            &BatchOptions::new(base, Compression::None),
            records,
            &mut out,
        )
        .unwrap();
    out
}

fn write(fs: &SimFs, path: &Path, bytes: &[u8]) {
    let file = fs.open(path, OpenMode::CreateOrOpen).unwrap();
    file.write_all_at(bytes, 0).unwrap();
    file.sync_data().unwrap();
}

/// Three segments, the second overflowing at two places (three pieces), with empty indexes;
/// with `torn`, the overflowed segment's last batch is torn. Everything durable.
fn overflowed(torn: bool) -> SimFs {
    let fs = SimFs::new();
    let dir = Path::new(DIR);
    fs.create_dir_all(dir).unwrap();
    let mut second = Vec::new();
    for base in [M, M + 2, 2 * M + 5, 2 * M + 7, 3 * M + 10, 3 * M + 12] {
        second.extend(batch(base, 2));
    }
    if torn {
        second.truncate(second.len() - 7);
    }
    for (base, log) in [(0, batch(0, 3)), (M, second), (4 * M, batch(4 * M, 3))] {
        write(&fs, &dir.join(format!("{base:020}.log")), &log);
        write(&fs, &dir.join(format!("{base:020}.index")), b"");
        write(&fs, &dir.join(format!("{base:020}.timeindex")), b"");
    }
    fs.sync_dir(dir).unwrap();
    fs.crash(Tear::DropAll)
}

fn load(fs: &SimFs) -> LoadReport {
    try_load(fs).unwrap()
}

fn try_load(fs: &SimFs) -> seglog_log::Result<LoadReport> {
    let (log, report) = PartitionLog::open(
        fs.clone(),
        Path::new(DIR),
        // Small index files: every crash image copies them.
        LogConfig::from_pairs([("segment.index.bytes", "4096")]).unwrap(),
        LoadOptions::default(),
        Arc::new(MockClock::new(5_000)),
    )?;
    log.close()?;
    Ok(report)
}

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

fn crash_everywhere(start: &SimFs) {
    let reference = start.crash(Tear::DropAll);
    let report = load(&reference);
    assert_eq!(report.splits.len(), 1, "{}", report.plan);
    assert_eq!(
        report.splits[0].1,
        [M, 2 * M + 5, 3 * M + 10],
        "{}",
        report.plan
    );
    let mut expected = BTreeMap::new();
    tree(&reference, Path::new(DIR), &mut expected);

    let run = start.crash(Tear::DropAll);
    run.set_capture(Some(Box::new(|_, _| {
        Some(CrashPoint {
            tear: Tear::DropAll,
            written_back: None,
            pages: None,
        })
    })));
    load(&run);
    run.set_capture(None);
    let images = run.take_captured();
    assert!(images.len() > 10, "{} events", images.len());
    for (event, kind, image) in images {
        load(&image);
        let mut got = BTreeMap::new();
        tree(&image, Path::new(DIR), &mut got);
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

/// The process dies (its live files kept, unlike a power loss) at the first change of each
/// file a split writes, renames or removes: the next load ends as one uninterrupted run. The
/// `.cleaned` to `.swap` renames must go highest piece first for this to hold.
fn killed_at_each_file(start: &SimFs) {
    let reference = start.crash(Tear::DropAll);
    load(&reference);
    let mut expected = BTreeMap::new();
    tree(&reference, Path::new(DIR), &mut expected);
    let mut failed = 0;
    for base in [M, 2 * M + 5, 3 * M + 10] {
        for ext in ["log", "index", "timeindex"] {
            for suffix in ["", ".cleaned", ".swap"] {
                let path = Path::new(DIR).join(format!("{base:020}.{ext}{suffix}"));
                let run = start.crash(Tear::DropAll);
                run.set_path_fault(&path, Some(seglog_fs::sim::EIO));
                failed += usize::from(try_load(&run).is_err());
                run.set_path_fault(&path, None);
                load(&run);
                let mut got = BTreeMap::new();
                tree(&run, Path::new(DIR), &mut got);
                let at = path.display();
                assert!(got == expected, "killed at the first change of {at}");
            }
        }
    }
    assert!(failed >= 15, "{failed} of the faults stopped the load");
}

#[test]
fn a_split_killed_at_each_file_it_changes_ends_as_one_uninterrupted_run() {
    killed_at_each_file(&overflowed(false));
    killed_at_each_file(&overflowed(true));
}

#[test]
fn a_split_crashed_at_any_event_and_run_again_ends_as_one_uninterrupted_run() {
    crash_everywhere(&overflowed(false));
}

#[test]
fn the_same_holds_for_a_split_with_a_torn_tail_cut_into_the_quarantine() {
    let start = overflowed(true);
    let report = load(&start.crash(Tear::DropAll));
    assert!(report.plan.splits[0].cut.is_some(), "{}", report.plan);
    assert!(report.quarantine.is_some());
    crash_everywhere(&start);
}
