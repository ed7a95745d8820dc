//! `seglog.max.open.segment.files`: a log of more segments than the process may hold open files
//! works. The test runs itself again as a child process whose open-file limit is lowered to 256
//! (`ulimit -n`), with a cap of 64: the child builds a log of 1,000 segments (append and roll),
//! closes it, opens it again, reads every segment, appends and rolls, truncates, deletes old
//! segments by retention and closes, each step checked; and again with the default config (the
//! cap derived from the limit: 128). Without the cap (`-1`, a descriptor per segment as Kafka)
//! the same child fails with EMFILE ("Too many open files").
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
use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock};
use seglog_record_format::BatchBuilder;

const SEGMENTS: usize = 1_000;
const CAP: i64 = 64;
const LIMIT: u32 = 256;
const PER_BATCH: i64 = 4;
/// Set in the child's environment: the cap it runs with.
const CHILD: &str = "SEGLOG_DESCRIPTOR_CAP_CHILD";

/// A batch whose record values are the offsets they will get.
fn batch(first_offset: i64, builder: &mut BatchBuilder) -> Vec<u8> {
    common::offset_valued_batch(first_offset, PER_BATCH, builder)
}

fn open(dir: &Path, config: LogConfig) -> PartitionLog {
    PartitionLog::open(
        RealFs,
        dir,
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap()
    .0
}

/// The child's work, run with the open-file limit lowered.
fn child(cap: i64) {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    let config = common::small_config(600)
        .with_max_open_segment_files(cap)
        .with_file_delete_delay_ms(0)
        .with_message_timestamp_before_max_ms(i64::MAX);
    let mut builder = BatchBuilder::new();
    let mut buf = Vec::new();

    // Append and roll: 1,000 segments, more than the limit allows open at once.
    let log = open(&dir, config.clone());
    while log.segment_count() < SEGMENTS {
        let next = log.log_end_offset();
        log.append_as_leader(&mut batch(next, &mut builder))
            .unwrap();
    }
    log.wait_for_background_flushes();
    log.close().unwrap();
    drop(log);

    // Open again after a clean shutdown and read every segment.
    let log = open(&dir, config.clone());
    assert_eq!(log.segment_count(), SEGMENTS);
    log.set_high_watermark(log.log_end_offset());
    let bases: Vec<i64> = log.segments().values().map(|s| s.base_offset()).collect();
    for &base in &bases {
        common::check_offset_read(&log, base, &mut buf);
    }
    if let Some(cache) = log.descriptor_cache() {
        // The default (0): half the open-file limit.
        let max = if cap == 0 {
            LIMIT as usize / 2
        } else {
            cap as usize
        };
        assert_eq!(cache.max_open(), max);
        assert!(cache.open() <= max, "{cache:?}");
        assert!(cache.evictions() > 0, "{cache:?}");
        // The cap, the active segment's `.log`, and the directory's lock.
        let open = common::open_files_under(&dir);
        assert!(open <= max + 2, "{open} files open under the log");
    }

    // Append and roll on the reopened log; read the new records back.
    for _ in 0..20 {
        let next = log.log_end_offset();
        log.append_as_leader(&mut batch(next, &mut builder))
            .unwrap();
    }
    log.roll().unwrap();
    let next = log.log_end_offset();
    log.append_as_leader(&mut batch(next, &mut builder))
        .unwrap();
    log.set_high_watermark(log.log_end_offset());
    common::check_offset_read(&log, next, &mut buf);

    // Truncate to the middle of the log: the segments above go, reads below still work.
    let cut = bases[SEGMENTS / 2];
    assert!(log.truncate_to(cut).unwrap());
    assert_eq!(log.log_end_offset(), cut);
    assert_eq!(log.segment_count(), SEGMENTS / 2 + 1);
    common::check_offset_read(&log, bases[SEGMENTS / 2 - 1], &mut buf);
    let next = log.log_end_offset();
    log.append_as_leader(&mut batch(next, &mut builder))
        .unwrap();
    log.wait_for_background_flushes();
    log.close().unwrap();
    drop(log);

    // Retention by size on a third open: old segments are deleted, the rest still read.
    let size_now = {
        let log = open(&dir, config.clone());
        let size = log.size();
        log.close().unwrap();
        size
    };
    // (The records are stamped in 1970: no retention by time, or it would take them all.)
    let config = config
        .with_retention_bytes((size_now / 4) as i64)
        .with_retention_ms(-1);
    let log = open(&dir, config);
    let before = log.segment_count();
    let report = log.delete_old_segments().unwrap();
    assert!(
        report.total() > before / 2,
        "{} of {before}",
        report.total()
    );
    assert_eq!(log.segment_count(), before - report.total());
    log.set_high_watermark(log.log_end_offset());
    let bases: Vec<i64> = log.segments().values().map(|s| s.base_offset()).collect();
    for &base in &bases {
        common::check_offset_read(&log, base, &mut buf);
    }
    log.close().unwrap();
}

/// Runs this test binary's `name` test as a child with the open-file limit lowered to `LIMIT`.
fn run_child(name: &str, cap: i64) -> std::process::Output {
    let exe = std::env::current_exe().unwrap();
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -n {LIMIT} && exec \"$0\" \"$@\""))
        .arg(exe)
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env(CHILD, cap.to_string())
        .output()
        .unwrap()
}

#[test]
fn a_log_of_more_segments_than_the_open_file_limit_works_under_the_cap() {
    if let Ok(cap) = std::env::var(CHILD) {
        child(cap.parse().unwrap());
        return;
    }
    let out = run_child(
        "a_log_of_more_segments_than_the_open_file_limit_works_under_the_cap",
        CAP,
    );
    assert!(
        out.status.success(),
        "the child failed under `ulimit -n {LIMIT}`:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // The child really ran the test (and did not filter it out).
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("1 passed"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// The default configuration (the cap at 0, half the open-file limit: 128) opens and reads the
/// same log under the same limit.
#[test]
fn a_log_of_more_segments_than_the_open_file_limit_works_with_the_default_config() {
    if let Ok(cap) = std::env::var(CHILD) {
        assert_eq!(LogConfig::default().max_open_segment_files, 0);
        child(cap.parse().unwrap());
        return;
    }
    let name = "a_log_of_more_segments_than_the_open_file_limit_works_with_the_default_config";
    let out = run_child(name, 0);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the child failed under `ulimit -n {LIMIT}`:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("1 passed"), "{stdout}");
}

/// The control: with no cap (a descriptor per segment, as Kafka) the same child runs out of
/// descriptors, so the limit the test above runs under really binds.
#[test]
fn without_the_cap_the_same_log_runs_out_of_descriptors() {
    if let Ok(cap) = std::env::var(CHILD) {
        child(cap.parse().unwrap());
        return;
    }
    let out = run_child("without_the_cap_the_same_log_runs_out_of_descriptors", -1);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !out.status.success(),
        "no EMFILE without the cap:\n{stdout}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("Too many open files"), "{stdout}\n{stderr}");
}
