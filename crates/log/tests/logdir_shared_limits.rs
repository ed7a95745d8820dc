//! The default caps are the process's, shared by a `LogDir`'s logs. A child process whose
//! open-file limit is lowered to 256 (`ulimit -n`) opens a log directory with the default
//! configuration (caps at 0: half the limit, 128 `.log` files, one cache for the directory) and
//! builds four partitions of 150 segments each, 600 in all, then opens it again and reads every
//! segment of every partition: with a cache per log (128 each) the same child runs out of
//! descriptors. In-process, a mapping budget derived from a given `vm.max_map_count` holds the
//! directory's mappings (its own count and the kernel's) while every segment is read.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests"
)]

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use seglog_fs::RealFs;
use seglog_log::{
    LogDir, LogDirOptions, ProcessDefaults, ProcessLimits, SegmentLimits, TopicPartition,
};
use seglog_record_format::BatchBuilder;

const PARTITIONS: i32 = 4;
const SEGMENTS: usize = 150;
const LIMIT: u64 = 256;
const PER_BATCH: i64 = 4;
/// Set in the child's environment.
const CHILD: &str = "SEGLOG_LOGDIR_LIMITS_CHILD";

/// A batch whose record values are the offsets they will get.
fn batch(first_offset: i64, builder: &mut BatchBuilder) -> Vec<u8> {
    common::offset_valued_batch(first_offset, PER_BATCH, builder)
}

/// The kernel's mappings of files under `dir` (nothing else maps or unmaps meanwhile).
fn kernel_mappings_under(dir: &Path) -> usize {
    let dir = dir.to_string_lossy();
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|line| line.contains(&*dir))
        .count()
}

/// Small segments, and the open-file cap `files` (0: the default).
fn options(limits: &SegmentLimits, files: i64) -> LogDirOptions {
    let config = common::small_config(600)
        .with_message_timestamp_before_max_ms(i64::MAX)
        .with_max_open_segment_files(files);
    assert_eq!(config.max_segment_mappings, 0);
    LogDirOptions::default()
        .with_default_config(config)
        .with_limits(limits.clone())
}

/// Builds `PARTITIONS` partitions of `SEGMENTS` segments each in a new directory under `root`,
/// closed cleanly.
fn build(root: &Path, options: LogDirOptions) {
    let (dir, _) = LogDir::open(RealFs, root, options).unwrap();
    let mut builder = BatchBuilder::new();
    for p in 0..PARTITIONS {
        let log = dir
            .create_log(&TopicPartition::new("orders", p), None)
            .unwrap();
        while log.segment_count() < SEGMENTS {
            let next = log.log_end_offset();
            log.append_as_leader(&mut batch(next, &mut builder))
                .unwrap();
        }
        log.wait_for_background_flushes();
    }
    dir.close().unwrap();
}

/// Opens the directory under `root` again and reads every segment of every partition.
fn reopen_and_read_all(root: &Path, options: LogDirOptions) -> Arc<LogDir<RealFs>> {
    let (dir, report) = LogDir::open(RealFs, root, options).unwrap();
    assert!(report.had_clean_shutdown && report.failed.is_empty());
    let mut buf = Vec::new();
    let logs = dir.logs();
    assert_eq!(logs.len(), PARTITIONS as usize);
    for log in &logs {
        assert_eq!(log.segment_count(), SEGMENTS);
        log.set_high_watermark(log.log_end_offset());
        for base in log.segments().keys() {
            common::check_offset_read(log, *base, &mut buf);
        }
    }
    dir
}

/// The child's work, in a process whose `ulimit -n` is `LIMIT`, with the open-file cap `files`.
fn child(files: i64) {
    let defaults = *ProcessDefaults::get();
    assert_eq!(defaults.max_open_segment_files, Some(LIMIT as usize / 2));
    let root = tempfile::tempdir().unwrap();
    let limits = LogDirOptions::default().limits;
    build(root.path(), options(&limits, files));
    let dir = reopen_and_read_all(root.path(), options(&limits, files));
    assert_eq!(dir.limits(), &limits);
    for log in dir.logs() {
        assert_eq!(log.descriptor_cache(), limits.descriptor_cache());
        assert_eq!(log.mapping_budget(), limits.mapping_budget());
    }
    let cache = limits.descriptor_cache().unwrap();
    assert_eq!(cache.max_open(), LIMIT as usize / 2);
    assert!(cache.open() <= cache.max_open(), "{cache:?}");
    assert!(cache.evictions() > 0, "{cache:?}");
    // The cap, each partition's active `.log` and directory lock, and the directory's `.lock`.
    let open = common::open_files_under(root.path());
    let most = cache.max_open() + 2 * PARTITIONS as usize + 1;
    assert!(
        open <= most,
        "{open} files open under the directory, over {most}"
    );
    dir.close().unwrap();
    // The cache outlives the directory's logs: closed and dropped, they hold none of it.
    drop(dir);
    assert_eq!(cache.open(), 0, "{cache:?}");
}

/// Runs this test binary's `name` test as a child with the open-file limit lowered to `LIMIT`.
fn run_child(name: &str, files: i64) -> std::process::Output {
    let exe = std::env::current_exe().unwrap();
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {LIMIT} && exec \"$0\" \"$@\""))
        .arg(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, files.to_string())
        .output()
        .unwrap()
}

#[test]
fn a_logdir_of_more_segments_than_the_open_file_limit_works_with_the_default_caps() {
    if let Ok(files) = std::env::var(CHILD) {
        child(files.parse().unwrap());
        return;
    }
    let name = "a_logdir_of_more_segments_than_the_open_file_limit_works_with_the_default_caps";
    let out = run_child(name, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed under `ulimit -n {LIMIT}`:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The child really ran the test (and did not filter it out).
    assert!(stdout.contains("1 passed"), "{stdout}");
}

/// The control: the same cap per log (each log its own cache of 128, as an explicit value gives)
/// runs out of descriptors, so the directory-wide sharing is what keeps the test above within
/// the limit.
#[test]
fn a_cache_per_log_of_the_same_size_runs_out_of_descriptors() {
    if let Ok(files) = std::env::var(CHILD) {
        child(files.parse().unwrap());
        return;
    }
    let name = "a_cache_per_log_of_the_same_size_runs_out_of_descriptors";
    let out = run_child(name, LIMIT as i64 / 2);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "no EMFILE with a cache per log:\n{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Too many open files"), "{stdout}\n{stderr}");
}

/// A mapping budget sized by the default's rule from a given `vm.max_map_count` (the machine's
/// cannot be lowered without root's sysctl), shared by a directory's logs at the default cap,
/// holds their mappings while every segment of every partition is read.
#[test]
fn a_derived_mapping_budget_holds_a_logdirs_mappings() {
    if std::env::var(CHILD).is_ok() {
        return;
    }
    let defaults = ProcessDefaults::derive(
        ProcessLimits::NONE
            .with_open_files(None)
            .with_max_map_count(Some(100)),
    );
    assert_eq!(defaults.max_segment_mappings, 50);
    let limits = SegmentLimits::from_defaults(&defaults);
    assert!(limits.descriptor_cache().is_none());
    let root = tempfile::tempdir().unwrap();
    build(root.path(), options(&limits, 0));
    let dir = reopen_and_read_all(root.path(), options(&limits, 0));
    let budget = limits.mapping_budget().unwrap();
    for log in dir.logs() {
        assert_eq!(log.mapping_budget(), Some(budget));
    }
    assert!(budget.mapped() <= 50, "{budget:?}");
    assert!(budget.evictions() > 0, "{budget:?}");
    let kernel = kernel_mappings_under(root.path());
    assert!(
        kernel <= 50,
        "{kernel} mappings under the directory, over 50"
    );
    dir.close().unwrap();
    drop(dir);
    assert_eq!(budget.mapped(), 0, "{budget:?}");
}
