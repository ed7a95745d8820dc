//! The partition directory kinds of a Kafka log directory (issue 35, item 3): a `-future`
//! directory (the target of a replica's move between log directories) is loaded as a future log
//! and promoted by `LogDir::promote_future` (Kafka's `replaceCurrentWithFutureLog`), the current
//! log it replaces queued for deletion; two future directories of one partition are refused;
//! a `-stray` directory is reported and left alone. (`-delete` directories: `log_dir.rs`.)
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;
use std::sync::Arc;

use crate::common::{self, producer_batch};
use seglog_fs::RealFs;
use seglog_log::{Error, LogDir, LogDirOptions, MockClock, TopicPartition};

fn options(clock: &MockClock) -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(common::small_config(600))
        .with_time(Arc::new(clock.clone()))
}

fn tp(topic: &str) -> TopicPartition {
    TopicPartition::new(topic, 0)
}

/// Writes `records` records to a new partition `topic-0` of the log directory `root`, closes
/// it, and renames its directory to `name` when given.
fn partition(root: &Path, clock: &MockClock, topic: &str, records: usize, name: Option<&str>) {
    let (dir, _, _) =
        LogDir::open_partition(RealFs, &root.join(tp(topic).dir_name()), options(clock)).unwrap();
    let log = dir.create_log(&tp(topic), None).unwrap();
    log.append_as_leader(&mut producer_batch(topic, records, 0))
        .unwrap();
    dir.close().unwrap();
    drop(log);
    drop(dir);
    if let Some(name) = name {
        std::fs::rename(root.join(tp(topic).dir_name()), root.join(name)).unwrap();
    }
}

#[test]
fn future_directories_load_as_future_logs_and_are_promoted() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let clock = MockClock::new(1_000);
    // A move's target with no current log here, and one beside its current log.
    partition(
        root,
        &clock,
        "moving",
        3,
        Some("moving-0.4b2f8a4e0c1d4e2f-future"),
    );
    partition(root, &clock, "t", 7, Some("t-0.0123456789abcdef-future"));
    partition(root, &clock, "t", 2, None);

    let (dir, report) = LogDir::open(RealFs, root, options(&clock)).unwrap();
    assert_eq!(
        report.futures.keys().collect::<Vec<_>>(),
        [&tp("moving"), &tp("t")]
    );
    assert!(report.failed.is_empty());
    assert!(dir.log(&tp("moving")).is_none());
    assert_eq!(dir.future_log(&tp("moving")).unwrap().log_end_offset(), 3);
    assert_eq!(dir.future_log(&tp("t")).unwrap().log_end_offset(), 7);
    assert_eq!(dir.log(&tp("t")).unwrap().log_end_offset(), 2);

    let promoted = dir.promote_future(&tp("moving")).unwrap();
    assert_eq!(promoted.dir(), root.join("moving-0"));
    assert_eq!(promoted.log_end_offset(), 3);
    assert!(dir.future_log(&tp("moving")).is_none());
    assert_eq!(dir.log(&tp("moving")).unwrap().log_end_offset(), 3);
    assert!(dir.pending_deletions().is_empty());

    // The current log is renamed `-delete` and queued; the future one takes its name.
    let promoted = dir.promote_future(&tp("t")).unwrap();
    assert_eq!(promoted.log_end_offset(), 7);
    assert_eq!(dir.log(&tp("t")).unwrap().log_end_offset(), 7);
    let pending = dir.pending_deletions();
    assert_eq!(pending.len(), 1);
    assert!(
        pending[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("t-0.")
    );
    assert!(dir.future_logs().is_empty());
    assert!(matches!(
        dir.promote_future(&tp("t")),
        Err(Error::PartitionUnavailable { .. })
    ));
    promoted
        .append_as_leader(&mut producer_batch("after", 1, 0))
        .unwrap();
    dir.close().unwrap();
    drop((dir, promoted));

    let (dir, report) = LogDir::open(RealFs, root, options(&clock)).unwrap();
    assert!(report.futures.is_empty());
    assert_eq!(report.pending_deletion.len(), 1);
    assert_eq!(dir.log(&tp("moving")).unwrap().log_end_offset(), 3);
    assert_eq!(dir.log(&tp("t")).unwrap().log_end_offset(), 8);
}

#[test]
fn two_future_directories_of_one_partition_are_refused_and_a_stray_one_is_left_alone() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let clock = MockClock::new(1_000);
    partition(root, &clock, "t", 3, Some("t-0.aaaa-future"));
    partition(root, &clock, "t", 4, Some("t-0.bbbb-future"));
    partition(root, &clock, "gone", 2, Some("gone-0.cccc-stray"));
    partition(root, &clock, "kept", 1, None);

    let (dir, report) = LogDir::open(RealFs, root, options(&clock)).unwrap();
    let mut failed: Vec<_> = report.failed.iter().map(|f| f.path.clone()).collect();
    failed.sort();
    assert_eq!(
        failed,
        [root.join("t-0.aaaa-future"), root.join("t-0.bbbb-future")]
    );
    assert!(dir.future_logs().is_empty() && report.futures.is_empty());
    assert_eq!(report.stray_dirs, [root.join("gone-0.cccc-stray")]);
    assert!(
        root.join("gone-0.cccc-stray")
            .join("00000000000000000000.log")
            .exists()
    );
    assert!(dir.log(&tp("gone")).is_none());
    assert_eq!(dir.log(&tp("kept")).unwrap().log_end_offset(), 1);
    dir.close().unwrap();
    assert!(root.join("gone-0.cccc-stray").exists());
    assert!(root.join("t-0.aaaa-future").exists() && root.join("t-0.bbbb-future").exists());
}
