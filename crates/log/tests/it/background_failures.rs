//! One failing partition never stops the others (issue 35, item 1): with the simulated file
//! system failing every change under one partition's directory, the log directory's background
//! flush, retention, checkpoints and cleaner go on for the other partitions, the failing one is
//! set aside with its error (`LogDir::failed_partitions`) until reset, a failed cleaning marks
//! its partition uncleanable, and the cleaner checkpoint follows truncation and deletion.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::common::{self, producer_batch};
use seglog_fs::FileSystem;
use seglog_fs::sim::{EIO, SimFs};
use seglog_log::{
    CleanerSettings, Error, LogConfig, LogDir, LogDirOptions, MockClock, PartitionLog,
    TopicPartition, Work,
};

const ROOT: &str = "/sim/logs";

fn tp(topic: &str) -> TopicPartition {
    TopicPartition::new(topic, 0)
}

fn open(fs: &SimFs, clock: &MockClock, config: LogConfig) -> Arc<LogDir<SimFs>> {
    let options = LogDirOptions::default()
        .with_default_config(config)
        .with_time(Arc::new(clock.clone()));
    let dir = LogDir::open(fs.clone(), Path::new(ROOT), options)
        .unwrap()
        .0;
    // A small key map: the default 128 MiB costs seconds a cleaning in a debug build.
    dir.set_cleaner_settings(CleanerSettings::default().with_dedupe_buffer_bytes(1 << 20));
    dir
}

/// Several segments of records, all below the high watermark.
fn fill(log: &PartitionLog<SimFs>, count: i64) {
    for i in 0..count {
        log.append_as_leader(&mut producer_batch(&format!("v{i}"), 2, 1_000_000 + i))
            .unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
}

fn read(fs: &SimFs, name: &str) -> String {
    String::from_utf8(
        fs.live_bytes(&Path::new(ROOT).join(name))
            .unwrap_or_default(),
    )
    .unwrap()
}

fn partition_dir(topic: &str) -> PathBuf {
    Path::new(ROOT).join(tp(topic).dir_name())
}

fn set_aside(error: &Error) -> (TopicPartition, Work) {
    match error {
        Error::SetAside { path, work, .. } => {
            assert_eq!(path.parent(), Some(Path::new(ROOT)), "{error}");
            (TopicPartition::parse_dir(path).unwrap().0, *work)
        }
        other => panic!("not set aside: {other}"),
    }
}

#[test]
fn a_partition_whose_flush_fails_is_set_aside_and_the_others_flush_retain_and_checkpoint() {
    let fs = SimFs::new();
    let clock = MockClock::new(1_000_000);
    let config = common::small_config(600)
        .with_flush_ms(0)
        .with_retention_ms(10)
        .with_file_delete_delay_ms(0);
    let dir = open(&fs, &clock, config);
    // "a" sorts first: the pass meets it before the others.
    let logs: Vec<_> = ["a", "b", "c"]
        .iter()
        .map(|t| dir.create_log(&tp(t), None).unwrap())
        .collect();
    for log in &logs {
        fill(log, 30);
        assert!(log.segment_count() > 1);
    }
    fs.set_path_fault(&partition_dir("a"), Some(EIO));

    let error = dir.flush_due_logs().unwrap_err();
    assert_eq!(set_aside(&error), (tp("a"), Work::Flush));
    for log in &logs[1..] {
        assert_eq!(log.recovery_point(), log.log_end_offset());
    }
    assert!(logs[0].recovery_point() < logs[0].log_end_offset());
    let failed = dir.failed_partitions();
    assert_eq!(failed.len(), 1);
    assert_eq!(failed[0].topic_partition, tp("a"));
    assert_eq!(failed[0].work, Work::Flush);
    assert!(failed[0].is_offline());
    assert!(error.to_string().contains(&failed[0].error.to_string()));
    // Set aside: the next passes skip it and succeed.
    dir.flush_due_logs().unwrap();

    // Retention runs on the others (on a full disk, it is what frees space).
    clock.advance(60_000);
    let a_segments = logs[0].segment_count();
    assert!(dir.run_retention().unwrap() > 0);
    assert_eq!(logs[0].segment_count(), a_segments);
    for log in &logs[1..] {
        assert_eq!(log.segment_count(), 1);
    }
    // And the checkpoints are written, every partition's recovery point in them.
    dir.checkpoint().unwrap();
    let points = read(&fs, "recovery-point-offset-checkpoint");
    for log in &logs {
        let line = format!(
            "{} 0 {}\n",
            log.topic_partition().topic,
            log.recovery_point()
        );
        assert!(points.contains(&line), "{line:?} in {points:?}");
    }

    // Reset once the disk is back: the background work takes it again.
    fs.set_path_fault(&partition_dir("a"), None);
    let cleared = dir.clear_failure(&tp("a")).unwrap();
    assert_eq!(cleared.work, Work::Flush);
    assert!(dir.failed_partitions().is_empty());
    dir.flush_due_logs().unwrap();
    assert_eq!(logs[0].recovery_point(), logs[0].log_end_offset());
    // A flush failed once: no clean-shutdown marker, so the next open recovers.
    dir.close().unwrap();
    assert!(!fs.exists(&Path::new(ROOT).join(".kafka_cleanshutdown")));
}

fn compacted() -> LogConfig {
    LogConfig::from_pairs([
        ("cleanup.policy", "compact"),
        ("internal.segment.bytes", "600"),
        ("segment.index.bytes", "4096"),
    ])
    .unwrap()
}

#[test]
fn a_failed_cleaning_marks_the_partition_uncleanable_and_the_cleaner_cleans_the_others() {
    let fs = SimFs::new();
    let clock = MockClock::new(1_000_000);
    let dir = open(&fs, &clock, common::small_config(600));
    let a = dir.create_log(&tp("a"), Some(compacted())).unwrap();
    let b = dir.create_log(&tp("b"), Some(compacted())).unwrap();
    fill(&a, 40);
    fill(&b, 40);
    fs.set_path_fault(&partition_dir("a"), Some(EIO));

    // Equally dirty: "a" is met first and picked; its cleaning fails.
    let error = dir.run_cleaner().unwrap_err();
    assert_eq!(set_aside(&error), (tp("a"), Work::Cleaning));
    let (cleaned, _) = dir.run_cleaner().unwrap().expect("b is dirty");
    assert_eq!(cleaned, tp("b"));
    let failed = dir.failed_partitions();
    assert_eq!(failed.len(), 1);
    assert_eq!(
        (&failed[0].topic_partition, failed[0].work),
        (&tp("a"), Work::Cleaning)
    );
    assert!(!failed[0].is_offline());

    // The disk is back, but "a" stays uncleanable until reset; it still flushes.
    fs.set_path_fault(&partition_dir("a"), None);
    assert!(dir.run_cleaner().unwrap().is_none());
    dir.flush_due_logs().unwrap();
    a.flush().unwrap();
    assert!(dir.clear_failure(&tp("a")).is_some());
    let (cleaned, _) = dir.run_cleaner().unwrap().expect("a is dirty");
    assert_eq!(cleaned, tp("a"));
    assert!(dir.failed_partitions().is_empty());
    // A cleaning failed, no flush or retention did: the marker is written.
    dir.close().unwrap();
    assert!(fs.exists(&Path::new(ROOT).join(".kafka_cleanshutdown")));
}

#[test]
fn the_cleaner_checkpoint_follows_truncation_and_deletion() {
    let fs = SimFs::new();
    let clock = MockClock::new(1_000_000);
    let dir = open(&fs, &clock, common::small_config(600));
    let table = dir.create_log(&tp("table"), Some(compacted())).unwrap();
    let other = dir.create_log(&tp("other"), Some(compacted())).unwrap();
    fill(&table, 40);
    fill(&other, 40);
    let (_, first) = dir.run_cleaner().unwrap().unwrap();
    let (_, second) = dir.run_cleaner().unwrap().unwrap();
    let entries = |fs: &SimFs| read(fs, "cleaner-offset-checkpoint");
    assert_eq!(
        entries(&fs),
        format!(
            "0\n2\nother 0 {}\ntable 0 {}\n",
            first.end_offset, second.end_offset
        )
    );
    let cleaned_to = second.end_offset;
    assert!(cleaned_to > 10);

    // Truncated below the cleaned offset: the entry comes down to the new active segment.
    assert!(dir.truncate_to(&tp("table"), 5).unwrap());
    let active = *table.segments().keys().next_back().unwrap();
    assert!(active <= 5);
    assert_eq!(
        entries(&fs),
        format!("0\n2\nother 0 {}\ntable 0 {active}\n", first.end_offset)
    );
    // Deleted: the entry goes.
    assert!(dir.delete_log(&tp("other")).unwrap());
    assert_eq!(entries(&fs), format!("0\n1\ntable 0 {active}\n"));
}

/// Polls `done` for up to five seconds.
fn eventually(done: impl Fn() -> bool) -> bool {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !done() {
        if std::time::Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    true
}

#[test]
fn the_scheduler_goes_on_past_a_failing_partition_and_reports_a_failing_checkpoint() {
    let fs = SimFs::new();
    let clock = MockClock::new(1_000_000);
    let dir = open(&fs, &clock, common::small_config(600).with_flush_ms(0));
    let a = dir.create_log(&tp("a"), None).unwrap();
    let b = dir.create_log(&tp("b"), None).unwrap();
    fill(&a, 5);
    fill(&b, 5);
    fs.set_path_fault(&partition_dir("a"), Some(EIO));
    let checkpoint = Path::new(ROOT).join("recovery-point-offset-checkpoint");
    fs.set_path_fault(&checkpoint, Some(EIO));
    dir.start_scheduler(
        seglog_log::SchedulerConfig::default()
            .with_flush_check_interval_ms(5)
            .with_checkpoint_interval_ms(5),
    );
    assert!(eventually(|| b.recovery_point() == b.log_end_offset()));
    assert!(eventually(|| dir.checkpoint_error().is_some()));
    assert_eq!(dir.failed_partitions()[0].topic_partition, tp("a"));
    // Appends to b keep being flushed by the scheduler.
    fill(&b, 5);
    assert!(eventually(|| b.recovery_point() == b.log_end_offset()));
    // The checkpoint file comes back: the error clears, b's recovery point is in it.
    fs.set_path_fault(&checkpoint, None);
    assert!(eventually(|| dir.checkpoint_error().is_none()));
    let line = format!("b 0 {}\n", b.recovery_point());
    assert!(eventually(
        || read(&fs, "recovery-point-offset-checkpoint").contains(&line)
    ));
    assert!(a.recovery_point() < a.log_end_offset());
    fs.set_path_fault(&partition_dir("a"), None);
    dir.close().unwrap();
}
