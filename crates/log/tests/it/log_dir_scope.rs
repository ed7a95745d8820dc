//! Opening one partition of a log directory: nothing else is loaded, recovered, removed or
//! rewritten; the clean-shutdown marker and the checkpoints stay true for the partitions the open
//! never loaded, so the next full open still recovers them.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::{self, producer_batch};
use seglog_fs::RealFs;
use seglog_log::{LogDir, LogDirOptions, MockClock, Scope, TopicPartition};

fn options(clock: &MockClock) -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(common::small_config(600))
        .with_time(Arc::new(clock.clone()))
}

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    out
}

fn tp(topic: &str) -> TopicPartition {
    TopicPartition::new(topic, 0)
}

/// A log directory holding `a-0` and `b-0` with 20 records each, left by a crash (no marker);
/// `b-0`'s active segment has a torn tail and there is a `-delete` directory.
fn crashed_log_dir(root: &Path, clock: &MockClock) -> PathBuf {
    let (dir, _) = LogDir::open(RealFs, root, options(clock)).unwrap();
    for topic in ["a", "b"] {
        let log = dir.create_log(&tp(topic), None).unwrap();
        for i in 0..10 {
            log.append_as_leader(&mut producer_batch(&format!("{topic}{i}"), 2, i))
                .unwrap();
        }
        log.flush().unwrap();
    }
    dir.checkpoint().unwrap();
    let b_active = dir
        .log(&tp("b"))
        .unwrap()
        .segments()
        .keys()
        .next_back()
        .copied();
    drop(dir);
    let torn = root
        .join("b-0")
        .join(format!("{:020}.log", b_active.unwrap()));
    let mut bytes = std::fs::read(&torn).unwrap();
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 200]);
    std::fs::write(&torn, bytes).unwrap();
    let doomed = root.join("old-1.0123456789abcdef-delete");
    std::fs::create_dir_all(&doomed).unwrap();
    std::fs::write(doomed.join("00000000000000000000.log"), b"").unwrap();
    root.join("recovery-point-offset-checkpoint")
}

#[test]
fn opening_one_partition_touches_no_other_and_leaves_the_siblings_to_the_next_full_open() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let checkpoint = crashed_log_dir(root.path(), &clock);
    let before = std::fs::read_to_string(&checkpoint).unwrap();
    assert!(before.contains("b 0 "), "{before}");
    let siblings = snapshot(&root.path().join("b-0"));
    let doomed = root.path().join("old-1.0123456789abcdef-delete");

    let (dir, a, report) =
        LogDir::open_partition(RealFs, &root.path().join("a-0"), options(&clock)).unwrap();
    assert_eq!(a, tp("a"));
    assert!(!report.had_clean_shutdown);
    assert_eq!(report.logs.keys().collect::<Vec<_>>(), [&a]);
    assert!(report.deleted_dirs.is_empty() && report.failed.is_empty());
    assert!(dir.log(&tp("b")).is_none());
    let log = dir.log(&a).unwrap();
    log.append_as_leader(&mut producer_batch("more", 5, 100))
        .unwrap();
    assert!(!dir.writes_clean_shutdown_marker());
    dir.close().unwrap();
    drop((dir, log));

    assert!(
        doomed.exists(),
        "a -delete directory is a full open's business"
    );
    assert_eq!(
        snapshot(&root.path().join("b-0")),
        siblings,
        "b-0 untouched"
    );
    assert!(!root.path().join(".kafka_cleanshutdown").exists());
    let after = std::fs::read_to_string(&checkpoint).unwrap();
    let line = |text: &str, topic: &str| {
        text.lines()
            .find(|l| l.starts_with(&format!("{topic} 0 ")))
            .map(str::to_owned)
    };
    assert_eq!(
        line(&after, "b"),
        line(&before, "b"),
        "b-0's entry unchanged"
    );
    assert_eq!(line(&after, "a").as_deref(), Some("a 0 25"));

    // The next full open still sees an unclean shutdown, and recovers b-0's torn tail.
    let (dir, report) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    assert!(!report.had_clean_shutdown);
    let b = &report.logs[&tp("b")];
    assert_eq!(
        b.recovered
            .iter()
            .map(|(_, r)| r.bytes_truncated)
            .sum::<u64>(),
        12
    );
    // Queued for deletion after file.delete.delay.ms, as Kafka does.
    assert_eq!(report.pending_deletion, std::slice::from_ref(&doomed));
    clock.advance(1_000);
    assert_eq!(
        dir.delete_due_dirs().unwrap(),
        std::slice::from_ref(&doomed)
    );
    assert!(!doomed.exists());
    assert_eq!(dir.log(&tp("b")).unwrap().log_end_offset(), 20);
    assert_eq!(dir.log(&a).unwrap().log_end_offset(), 25);
}

#[test]
fn after_a_clean_shutdown_a_partition_open_restores_the_marker_and_keeps_other_entries() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    {
        let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
        for topic in ["a", "b"] {
            let log = dir.create_log(&tp(topic), None).unwrap();
            log.append_as_leader(&mut producer_batch(topic, 4, 0))
                .unwrap();
        }
        let b = dir.log(&tp("b")).unwrap();
        b.set_high_watermark(b.log_end_offset());
        b.delete_records_before(2).unwrap();
        dir.close().unwrap();
    }
    let starts = root.path().join("log-start-offset-checkpoint");
    assert_eq!(std::fs::read_to_string(&starts).unwrap(), "0\n1\nb 0 2\n");

    let (dir, a, report) =
        LogDir::open_partition(RealFs, &root.path().join("a-0"), options(&clock)).unwrap();
    assert!(report.had_clean_shutdown);
    assert!(!root.path().join(".kafka_cleanshutdown").exists(), "taken");
    dir.log(&a)
        .unwrap()
        .append_as_leader(&mut producer_batch("a", 3, 10))
        .unwrap();
    dir.close().unwrap();
    drop(dir);
    assert!(
        root.path().join(".kafka_cleanshutdown").exists(),
        "restored"
    );
    assert_eq!(std::fs::read_to_string(&starts).unwrap(), "0\n1\nb 0 2\n");
    assert_eq!(
        std::fs::read_to_string(root.path().join("recovery-point-offset-checkpoint")).unwrap(),
        "0\n2\na 0 7\nb 0 4\n"
    );
}

#[test]
fn a_partition_open_that_covers_the_whole_directory_writes_the_marker() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (dir, a, _) =
        LogDir::open_partition(RealFs, &root.path().join("a-0"), options(&clock)).unwrap();
    assert!(dir.log(&a).is_none(), "not created yet");
    dir.create_log(&a, None).unwrap();
    assert!(dir.writes_clean_shutdown_marker());
    dir.close().unwrap();
    drop(dir);
    assert!(root.path().join(".kafka_cleanshutdown").exists());
}

#[test]
fn a_scope_of_several_partitions_loads_only_those() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    crashed_log_dir(root.path(), &clock);
    let scope = Scope::Only([tp("a"), tp("zz")].into_iter().collect());
    let (dir, report) = LogDir::open_scoped(RealFs, root.path(), options(&clock), scope).unwrap();
    assert_eq!(report.logs.keys().collect::<Vec<_>>(), [&tp("a")]);
    assert!(dir.log(&tp("zz")).is_none(), "a missing one is not created");
    assert!(!root.path().join("zz-0").exists());
    // A partition on disk outside the scope, asked for, loads as an open would: recovered.
    let b = dir.create_log(&tp("b"), None).unwrap();
    assert_eq!(b.log_end_offset(), 20);
}
