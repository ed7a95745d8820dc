//! One bad partition never blocks the others: a log directory with a partition that fails to
//! load, stray entries named like segments, and directories that are not partitions opens, reports
//! each with its path and cause, leaves the failed partition and the non-partitions alone, sets the
//! strays aside in their partition's quarantine, and the other partitions take writes.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;
use std::sync::Arc;

use crate::common::{self, producer_batch};
use seglog_fs::sim::SimFs;
use seglog_fs::{FileSystem, RealFs};
use seglog_log::{
    Error, LogConfig, LogDir, LogDirOptions, MockClock, PARTITION_CONFIG_FILE, QUARANTINE_DIR,
    TopicPartition,
};

fn options(clock: &MockClock) -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(common::small_config(600))
        .with_time(Arc::new(clock.clone()))
        .with_recover_all(true)
}

#[test]
fn failures_and_strays_are_reported_and_the_other_partitions_open_and_take_writes() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (a, b, c) = (
        TopicPartition::new("a", 0),
        TopicPartition::new("b", 0),
        TopicPartition::new("c", 0),
    );
    {
        let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
        for tp in [&a, &b, &c] {
            let log = dir.create_log(tp, None).unwrap();
            log.append_as_leader(&mut producer_batch("v", 3, 0))
                .unwrap();
        }
        dir.close().unwrap();
    }
    let a_dir = root.path().join("a-0");
    std::fs::write(
        root.path().join("c-0").join(PARTITION_CONFIG_FILE),
        "garbage\n",
    )
    .unwrap();
    std::fs::create_dir(root.path().join("lost+found")).unwrap();
    std::fs::create_dir(a_dir.join("00000000000000000099.log")).unwrap();
    std::fs::create_dir(a_dir.join("00000000000000000000.log.deleted")).unwrap();
    std::fs::write(a_dir.join("123.log"), b"not a segment").unwrap();
    std::fs::write(a_dir.join("123.index"), b"").unwrap();
    std::fs::write(a_dir.join("abc.log.swap"), b"").unwrap();
    let before =
        std::fs::read_to_string(root.path().join("recovery-point-offset-checkpoint")).unwrap();
    // An unclean shutdown: c-0 would need recovery, which this open cannot give it.
    std::fs::remove_file(root.path().join(".kafka_cleanshutdown")).unwrap();

    let (dir, report) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    assert_eq!(report.not_partitions, [root.path().join("lost+found")]);
    assert_eq!(report.failed.len(), 1, "{:?}", report.failed);
    let failure = &report.failed[0];
    assert_eq!(failure.topic_partition, c);
    assert_eq!(failure.path, root.path().join("c-0"));
    assert!(
        failure.error.to_string().contains("garbage"),
        "{}",
        failure.error
    );
    assert_eq!(report.logs.keys().collect::<Vec<_>>(), [&a, &b]);
    // The strays are not segments: not deleted as orphans, not loaded, but set aside whole in
    // the partition's quarantine.
    let quarantine = a_dir.join(QUARANTINE_DIR).join("1");
    for stray in [
        "00000000000000000099.log",
        "00000000000000000000.log.deleted",
        "123.log",
        "123.index",
        "abc.log.swap",
    ] {
        assert!(!a_dir.join(stray).exists(), "{stray}");
        assert!(quarantine.join(stray).exists(), "{stray}");
    }
    assert_eq!(
        std::fs::read(quarantine.join("123.log")).unwrap(),
        b"not a segment"
    );
    assert_eq!(dir.log(&a).unwrap().segments().len(), 1);
    for tp in [&a, &b] {
        let info = dir
            .log(tp)
            .unwrap()
            .append_as_leader(&mut producer_batch("w", 2, 5))
            .unwrap();
        assert_eq!(info.last_offset, 4);
    }
    // A writer asking for the failed partition gets its cause, and nothing is created over it.
    let err = dir.create_log(&c, None).unwrap_err();
    assert!(matches!(err, Error::PartitionUnavailable { .. }), "{err}");
    assert!(err.to_string().contains("c-0") && err.to_string().contains("garbage"));
    assert!(
        !dir.writes_clean_shutdown_marker(),
        "c-0 was never recovered"
    );
    dir.close().unwrap();
    drop(dir);
    let after =
        std::fs::read_to_string(root.path().join("recovery-point-offset-checkpoint")).unwrap();
    let c_line = |text: &str| {
        text.lines()
            .find(|l| l.starts_with("c 0 "))
            .map(str::to_owned)
    };
    assert_eq!(c_line(&after), c_line(&before), "c-0's entry kept");
    assert_eq!(
        std::fs::read_to_string(root.path().join("c-0").join(PARTITION_CONFIG_FILE)).unwrap(),
        "garbage\n"
    );
    assert!(root.path().join("lost+found").exists());
}

#[test]
fn a_rejected_config_leaves_no_partition_directory() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    let tp = TopicPartition::new("e", 0);
    let config = LogConfig::default().with_segment_index_bytes(4);
    let err = dir.create_log(&tp, Some(config)).unwrap_err();
    assert!(err.to_string().contains("segment.index.bytes"), "{err}");
    assert!(!root.path().join("e-0").exists());
    dir.create_log(&tp, None).unwrap();
}

#[test]
fn a_creation_that_fails_after_making_the_directory_removes_it() {
    let fs = SimFs::new();
    let root = Path::new("/logs");
    let clock = MockClock::new(0);
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    let tp = TopicPartition::new("e", 0);
    // Room for less than the partition's seglog.properties: the write fails with ENOSPC.
    fs.set_space_limit(Some(fs.used_bytes() + 10));
    let config = LogConfig::from_pairs([("cleanup.policy", "compact")]).unwrap();
    let err = dir.create_log(&tp, Some(config.clone())).unwrap_err();
    assert!(err.to_string().contains(PARTITION_CONFIG_FILE), "{err}");
    assert!(!fs.exists(&root.join("e-0")), "nothing left behind");
    assert!(dir.log(&tp).is_none());
    fs.set_space_limit(None);
    let log = dir.create_log(&tp, Some(config)).unwrap();
    assert!(log.config().cleanup_policy.compact);
}

#[test]
fn a_refused_partition_open_leaves_the_clean_shutdown_marker_as_it_was() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let options = || options(&clock).with_recover_all(false).with_discard(false);
    {
        let (dir, _) = LogDir::open(RealFs, root.path(), options()).unwrap();
        dir.create_log(&TopicPartition::new("c", 0), None).unwrap();
        dir.close().unwrap();
    }
    let marker = root.path().join(".kafka_cleanshutdown");
    std::fs::write(&marker, r#"{"version":0,"brokerEpoch":17}"#).unwrap();
    std::fs::write(
        root.path().join("c-0").join(PARTITION_CONFIG_FILE),
        "garbage\n",
    )
    .unwrap();
    let err = LogDir::open_partition(RealFs, &root.path().join("c-0"), options()).unwrap_err();
    assert!(matches!(err, Error::PartitionUnavailable { .. }), "{err}");
    assert!(
        err.to_string()
            .contains(&format!("c-0/{PARTITION_CONFIG_FILE}")),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        r#"{"version":0,"brokerEpoch":17}"#
    );
    // A clean open that closes writes the marker back with its broker epoch too.
    std::fs::remove_file(root.path().join("c-0").join(PARTITION_CONFIG_FILE)).unwrap();
    let (dir, _, report) =
        LogDir::open_partition(RealFs, &root.path().join("c-0"), options()).unwrap();
    assert!(report.had_clean_shutdown && !marker.exists());
    dir.close().unwrap();
    assert_eq!(
        std::fs::read_to_string(&marker).unwrap(),
        r#"{"version":0,"brokerEpoch":17}"#
    );
}
