//! The log directory: the `.lock`, Kafka's checkpoints, the clean-shutdown round trip, parallel
//! loading with progress, creating and deleting logs, and the background scheduler.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::common::producer_batch;
use seglog_fs::RealFs;
use seglog_log::{
    Error, LogConfig, LogDir, LogDirOptions, MockClock, PARTITION_CONFIG_FILE, SchedulerConfig,
    TopicPartition,
};

fn options(clock: &MockClock) -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(common::small_config(600))
        .with_time(Arc::new(clock.clone()))
}

#[test]
fn a_second_open_of_a_locked_directory_fails_clearly() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    let err = LogDir::open(RealFs, root.path(), options(&clock)).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    assert!(
        err.to_string()
            .contains("Failed to acquire lock on file .lock")
    );
    drop(dir);
    LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
}

#[test]
fn clean_shutdown_round_trip_writes_kafka_checkpoints_and_skips_recovery() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    {
        let (dir, report) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
        assert!(!report.had_clean_shutdown);
        for p in 0..3 {
            let log = dir
                .create_log(&TopicPartition::new("orders", p), None)
                .unwrap();
            for i in 0..20 {
                log.append_as_leader(&mut producer_batch(&format!("p{p}-{i}"), 2, i))
                    .unwrap();
            }
        }
        let log = dir.log(&TopicPartition::new("orders", 1)).unwrap();
        log.set_high_watermark(log.log_end_offset());
        log.delete_records_before(10).unwrap();
        log.delete_old_segments().unwrap();
        dir.close().unwrap();
    }
    let marker = std::fs::read_to_string(root.path().join(".kafka_cleanshutdown")).unwrap();
    assert_eq!(marker, r#"{"version":0,"brokerEpoch":-1}"#);
    let recovery =
        std::fs::read_to_string(root.path().join("recovery-point-offset-checkpoint")).unwrap();
    assert_eq!(recovery, "0\n3\norders 0 40\norders 1 40\norders 2 40\n");
    let starts = std::fs::read_to_string(root.path().join("log-start-offset-checkpoint")).unwrap();
    assert_eq!(starts, "0\n1\norders 1 10\n");

    let loaded = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&loaded);
    let opts = options(&clock).with_progress(Some(Arc::new(move |p| {
        assert_eq!(p.total, 3);
        counter.fetch_add(1, Ordering::SeqCst);
    })));
    let (dir, report) = LogDir::open(RealFs, root.path(), opts).unwrap();
    assert!(report.had_clean_shutdown);
    assert!(
        !root.path().join(".kafka_cleanshutdown").exists(),
        "the marker is deleted on open"
    );
    assert_eq!(loaded.load(Ordering::SeqCst), 3);
    assert!(report.logs.values().all(|r| r.segments_scanned == 0));
    let log = dir.log(&TopicPartition::new("orders", 1)).unwrap();
    assert_eq!(log.log_start_offset(), 10);
    assert_eq!(log.log_end_offset(), 40);
}

#[test]
fn unclean_open_recovers_from_the_checkpointed_recovery_point() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    {
        let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
        let log = dir.create_log(&TopicPartition::new("t", 0), None).unwrap();
        for i in 0..30 {
            log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
                .unwrap();
        }
        log.wait_for_background_flushes();
        dir.checkpoint().unwrap();
        // No close: a crash.
    }
    let (dir, report) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    assert!(!report.had_clean_shutdown);
    let load = &report.logs[&TopicPartition::new("t", 0)];
    assert_eq!(
        load.segments_scanned, 1,
        "only the segment holding the recovery point: {load:?}"
    );
    assert_eq!(
        dir.log(&TopicPartition::new("t", 0))
            .unwrap()
            .log_end_offset(),
        60
    );
}

#[test]
fn bad_checkpoints_are_treated_as_empty() {
    let root = tempfile::tempdir().unwrap();
    std::fs::write(
        root.path().join("recovery-point-offset-checkpoint"),
        "7\n0\n",
    )
    .unwrap();
    let clock = MockClock::new(0);
    let (_, report) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    assert_eq!(report.checkpoint_errors.len(), 1);
    assert!(report.checkpoint_errors[0].contains("Unrecognised version:7"));
}

#[test]
fn partition_configs_persist_and_deleted_logs_go_away() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let tp = TopicPartition::new("compacted", 0);
    {
        let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
        let config = LogConfig::from_pairs([
            ("cleanup.policy", "compact"),
            ("internal.segment.bytes", "2048"),
        ])
        .unwrap();
        dir.create_log(&tp, Some(config)).unwrap();
        assert!(
            root.path()
                .join("compacted-0")
                .join(PARTITION_CONFIG_FILE)
                .exists()
        );
        dir.close().unwrap();
    }
    let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    let log = dir.log(&tp).unwrap();
    assert!(log.config().cleanup_policy.compact);
    assert_eq!(log.config().segment_bytes, 2048);
    drop(log);
    assert!(dir.delete_log(&tp).unwrap());
    assert!(dir.log(&tp).is_none());
    assert!(!root.path().join("compacted-0").exists());
    // Renamed `-delete`, removed once file.delete.delay.ms (1 s here) passed.
    assert_eq!(dir.pending_deletions().len(), 1);
    clock.advance(1_000);
    assert_eq!(dir.delete_due_dirs().unwrap().len(), 1);
    assert!(std::fs::read_dir(root.path()).unwrap().all(|e| {
        !e.unwrap()
            .file_name()
            .to_string_lossy()
            .ends_with("-delete")
    }));
}

/// A partition whose load set files aside holds a `seglog-quarantine` directory: deleting the
/// partition removes it too, and removes a symlink inside without following it.
#[test]
fn deleting_a_partition_removes_its_quarantine_and_follows_no_symlink() {
    let root = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("keep"), b"not the partition's").unwrap();
    let clock = MockClock::new(0);
    let tp = TopicPartition::new("quarantined", 0);
    let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    let log = dir.create_log(&tp, None).unwrap();
    log.append_as_leader(&mut producer_batch("k", 2, 0))
        .unwrap();
    let set_aside = log.dir().join(seglog_log::QUARANTINE_DIR).join("1");
    std::fs::create_dir_all(&set_aside).unwrap();
    std::fs::write(set_aside.join("00000000000000000051.snapshot"), b"x").unwrap();
    std::os::unix::fs::symlink(outside.path(), log.dir().join("link")).unwrap();
    drop(log);
    assert!(dir.delete_log(&tp).unwrap());
    clock.advance(1_000);
    dir.delete_due_dirs().unwrap();
    assert_eq!(
        std::fs::read_dir(root.path()).unwrap().count(),
        1,
        "only the .lock"
    );
    assert!(outside.path().join("keep").exists());
}

/// Kafka's `LogManager` queues a `-delete` directory found at start-up and removes it once
/// `file.delete.delay.ms` passed (`deleteLogs`); an open with `delete_dirs_at_open` (`seglog
/// recover`) removes it at once.
#[test]
fn a_pending_delete_directory_found_on_open_is_removed_after_the_delay() {
    let root = tempfile::tempdir().unwrap();
    let doomed = root
        .path()
        .join("old-3.0123456789abcdef0123456789abcdef-delete");
    let make = || {
        std::fs::create_dir_all(&doomed).unwrap();
        std::fs::write(doomed.join("00000000000000000000.log"), b"").unwrap();
        std::fs::create_dir_all(doomed.join("seglog-quarantine").join("1")).unwrap();
        std::fs::write(
            doomed.join("seglog-quarantine/1/00000000000000000000.log"),
            b"",
        )
        .unwrap();
    };
    make();
    let clock = MockClock::new(0);
    {
        let (dir, report) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
        assert!(report.deleted_dirs.is_empty());
        assert_eq!(report.pending_deletion, std::slice::from_ref(&doomed));
        assert!(doomed.exists());
        assert!(dir.logs().is_empty());
        clock.advance(999);
        assert!(dir.delete_due_dirs().unwrap().is_empty());
        assert!(doomed.exists());
        clock.advance(1);
        assert_eq!(
            dir.delete_due_dirs().unwrap(),
            std::slice::from_ref(&doomed)
        );
        assert!(!doomed.exists());
    }
    make();
    let (_dir, report) = LogDir::open(
        RealFs,
        root.path(),
        options(&clock).with_delete_dirs_at_open(true),
    )
    .unwrap();
    assert_eq!(report.deleted_dirs, std::slice::from_ref(&doomed));
    assert!(report.pending_deletion.is_empty() && !doomed.exists());
}

#[test]
fn the_scheduler_applies_retention_and_stops_cleanly() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000_000);
    let opts = options(&clock).with_default_config(
        common::small_config(600)
            .with_retention_ms(10)
            .with_file_delete_delay_ms(0),
    );
    let (dir, _) = LogDir::open(RealFs, root.path(), opts).unwrap();
    let log = dir
        .create_log(&TopicPartition::new("ttl", 0), None)
        .unwrap();
    for i in 0..30 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, 1_000_000 + i))
            .unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    clock.advance(60_000);
    dir.start_scheduler(
        SchedulerConfig::default()
            .with_flush_check_interval_ms(5)
            .with_retention_check_interval_ms(5)
            .with_checkpoint_interval_ms(5)
            .with_cleaner_backoff_ms(5)
            .with_producer_id_expiration_check_interval_ms(5),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    let checkpoint = root.path().join("recovery-point-offset-checkpoint");
    while (log.segment_count() > 1 || !checkpoint.exists()) && std::time::Instant::now() < deadline
    {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert_eq!(log.segment_count(), 1);
    assert!(
        root.path()
            .join("recovery-point-offset-checkpoint")
            .exists()
    );
    dir.close().unwrap();
}

#[test]
fn the_cleaner_picks_the_dirtiest_compacted_log_and_checkpoints_it() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000_000);
    let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    let compacted = LogConfig::from_pairs([
        ("cleanup.policy", "compact"),
        ("internal.segment.bytes", "600"),
    ])
    .unwrap();
    let kept = dir
        .create_log(&TopicPartition::new("plain", 0), None)
        .unwrap();
    let log = dir
        .create_log(&TopicPartition::new("table", 0), Some(compacted))
        .unwrap();
    for i in 0..60 {
        // Twelve records per key: very dirty.
        let mut batch = producer_batch(&format!("k{}", i % 5), 1, 1_000_000 + i);
        log.append_as_leader(&mut batch).unwrap();
        kept.append_as_leader(&mut producer_batch("x", 1, 1_000_000))
            .unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    kept.set_high_watermark(kept.log_end_offset());
    let (tp, report) = dir
        .run_cleaner()
        .unwrap()
        .expect("the compacted log is dirty");
    assert_eq!(tp, TopicPartition::new("table", 0));
    assert!(report.records_kept < report.records_read, "{report:?}");
    let checkpoint =
        std::fs::read_to_string(root.path().join("cleaner-offset-checkpoint")).unwrap();
    assert_eq!(checkpoint, format!("0\n1\ntable 0 {}\n", report.end_offset));
    // Nothing new is dirty now: the ratio is zero.
    assert!(dir.run_cleaner().unwrap().is_none());
    assert_eq!(
        kept.size(),
        kept.segments().values().map(|s| s.size()).sum::<u64>()
    );
}

/// Kafka's `kafka-delete-logs` task: the scheduler removes a deleted partition's `-delete`
/// directory once `file.delete.delay.ms` (1 s here, on the log directory's clock) passed.
#[test]
fn the_scheduler_removes_a_deleted_partition_after_the_delay() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (dir, _) = LogDir::open(RealFs, root.path(), options(&clock)).unwrap();
    let tp = TopicPartition::new("gone", 0);
    dir.create_log(&tp, None).unwrap();
    assert!(dir.delete_log(&tp).unwrap());
    let pending = dir.pending_deletions();
    assert_eq!(pending.len(), 1);
    dir.start_scheduler(SchedulerConfig::default().with_flush_check_interval_ms(5));
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert!(pending[0].exists(), "removed before its delay");
    clock.advance(1_000);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while pending[0].exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    assert!(!pending[0].exists());
    assert!(dir.pending_deletions().is_empty());
    dir.close().unwrap();
}
