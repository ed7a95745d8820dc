//! A burst of rolls runs their background flushes on one thread, in roll order, and every one of
//! them runs: the recovery point ends at the last roll. (A thread per roll let 10,000 quick rolls
//! hold over 5,000 threads at once, each syncing; docs/perf/scale.md.) Its own test binary,
//! because it counts the process's threads.
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use common::{open, partition_dir, producer_batch, small_config};
use seglog_log::{LoadOptions, MockClock};

/// The process's thread count, from `/proc/self/status`.
fn threads() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .unwrap()
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_burst_of_rolls_flushes_on_one_thread() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    let clock = MockClock::new(0);
    let (log, _) = open(&dir, small_config(1 << 20), LoadOptions::default(), &clock);
    let before = threads();
    let mut most = before;
    for i in 0..400 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
        log.roll().unwrap();
        most = most.max(threads());
    }
    assert!(
        most <= before + 1,
        "{most} threads during the rolls, {before} before"
    );
    log.wait_for_background_flushes();
    assert_eq!(log.recovery_point(), log.log_end_offset());
    assert_eq!(log.recovery_point(), 800);
}
