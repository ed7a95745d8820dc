//! Locks that hold: every path to a partition (a symlinked log directory, a symlinked partition
//! directory, the log directory's `.lock` deleted) meets the same lock, so no two writers share
//! a partition.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::sync::Arc;

use crate::common;
use seglog_fs::RealFs;
use seglog_log::{Error, LogDir, LogDirOptions, MockClock, TopicPartition};

fn options() -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(common::small_config(600))
        .with_recovery_threads(1)
        .with_time(Arc::new(MockClock::new(0)))
}

#[test]
fn no_path_symlink_or_deleted_lock_lets_a_second_writer_in() {
    let root = tempfile::tempdir().unwrap();
    let logs = root.path().join("logs");
    let a = TopicPartition::new("a", 0);
    let (held, _) = LogDir::open(RealFs, &logs, options()).unwrap();
    held.create_log(&a, None).unwrap();

    std::os::unix::fs::symlink(&logs, root.path().join("alias")).unwrap();
    std::fs::create_dir(root.path().join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(logs.join("a-0"), root.path().join("elsewhere/a-0")).unwrap();
    for path in [
        root.path().join("alias/a-0"),
        root.path().join("elsewhere/a-0"),
        logs.join("a-0"),
    ] {
        let err = LogDir::open_partition(RealFs, &path, options()).unwrap_err();
        assert!(
            matches!(err, Error::Locked { .. }),
            "{}: {err}",
            path.display()
        );
        assert!(
            err.to_string().contains(&logs.display().to_string()),
            "{err}"
        );
    }

    // With the .lock deleted, the log directory opens, but the partition stays locked.
    std::fs::remove_file(logs.join(".lock")).unwrap();
    let err =
        LogDir::open_partition(RealFs, &root.path().join("elsewhere/a-0"), options()).unwrap_err();
    assert!(matches!(err, Error::PartitionLocked { .. }), "{err}");
    assert!(
        err.to_string().contains("locked by another writer"),
        "{err}"
    );
    drop(err);
    std::fs::remove_file(logs.join(".lock")).unwrap();
    let (second, report) = LogDir::open(RealFs, &logs, options()).unwrap();
    assert!(matches!(
        report.failed[0].error,
        Error::PartitionLocked { .. }
    ));
    assert!(second.log(&a).is_none());
    assert!(matches!(
        second.create_log(&a, None),
        Err(Error::PartitionUnavailable { .. })
    ));
    // Another partition is free to the second handle.
    second
        .create_log(&TopicPartition::new("b", 0), None)
        .unwrap();
    assert!(matches!(
        held.create_log(&TopicPartition::new("b", 0), None),
        Err(Error::PartitionLocked { .. })
    ));
    drop(second);
    drop(held);
    let (_, tp, report) =
        LogDir::open_partition(RealFs, &root.path().join("alias/a-0"), options()).unwrap();
    assert_eq!(tp, a);
    assert!(report.failed.is_empty());
}
