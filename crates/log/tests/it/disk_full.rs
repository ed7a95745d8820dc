//! Running out of disk space (`ENOSPC`) or file descriptors (`EMFILE`), simulated through the
//! `SimFs` seam: the append or roll fails with a clean error, nothing is published, the log stays
//! consistent (every earlier record reads back, a crash image recovers to them), and it takes
//! appends again once space or descriptors return. docs/reliability.md, section 6.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use seglog_fs::sim::{SimFs, Tear};
use seglog_log::{LoadOptions, MockClock, PartitionLog};

fn open(fs: &SimFs, dir: &Path, clock: &MockClock) -> PartitionLog<SimFs> {
    PartitionLog::open(
        fs.clone(),
        dir,
        common::small_config(4096),
        LoadOptions::default(),
        Arc::new(clock.clone()),
    )
    .unwrap()
    .0
}

fn values(log: &PartitionLog<SimFs>) -> Vec<String> {
    common::read_values(log, log.log_start_offset())
        .into_iter()
        .map(|(_, v)| v)
        .collect()
}

fn expected(prefixes: &[(&str, usize)]) -> Vec<String> {
    prefixes
        .iter()
        .flat_map(|(p, n)| (0..*n).map(move |i| format!("{p}-{i}")))
        .collect()
}

#[test]
fn an_append_that_runs_out_of_space_fails_cleanly_and_the_log_takes_appends_when_space_returns() {
    let fs = SimFs::new();
    let dir = Path::new("/sim/logs/orders-0");
    let clock = MockClock::new(1_000);
    let log = open(&fs, dir, &clock);
    log.append_as_leader(&mut common::producer_batch("a", 5, 1_000))
        .unwrap();
    log.flush().unwrap();
    let end = log.log_end_offset();
    let size = log.size();

    fs.set_space_limit(Some(fs.used_bytes() + 20));
    let err = log
        .append_as_leader(&mut common::producer_batch("b", 20, 2_000))
        .unwrap_err();
    let text = err.to_string();
    assert!(text.contains("No space left on device"), "{text}");
    assert!(text.contains(".log"), "the error names the file: {text}");
    assert_eq!(
        log.log_end_offset(),
        end,
        "a failed append publishes nothing"
    );
    assert_eq!(log.size(), size);
    assert_eq!(values(&log), expected(&[("a", 5)]));
    // Still full: a second try fails the same way and changes nothing.
    assert!(
        log.append_as_leader(&mut common::producer_batch("b", 20, 2_000))
            .is_err()
    );
    assert_eq!(log.log_end_offset(), end);

    // A power loss now recovers to exactly the flushed records.
    let crashed = fs.crash(Tear::DropAll);
    let recovered = open(&crashed, dir, &clock);
    assert_eq!(values(&recovered), expected(&[("a", 5)]));

    // Space returns: the same append succeeds at the same offset, over the short write's bytes.
    fs.set_space_limit(None);
    let info = log
        .append_as_leader(&mut common::producer_batch("b", 20, 2_000))
        .unwrap();
    assert_eq!(info.first_offset, end);
    log.flush().unwrap();
    assert_eq!(values(&log), expected(&[("a", 5), ("b", 20)]));
    log.close().unwrap();
    let reopened = open(&fs, dir, &clock);
    assert_eq!(values(&reopened), expected(&[("a", 5), ("b", 20)]));
    let crashed = open(&fs.crash(Tear::DropAll), dir, &clock);
    assert_eq!(values(&crashed), expected(&[("a", 5), ("b", 20)]));
}

#[test]
fn running_out_of_file_descriptors_fails_the_roll_cleanly_and_the_log_goes_on_afterwards() {
    let fs = SimFs::new();
    let dir = Path::new("/sim/logs/orders-0");
    let clock = MockClock::new(1_000);
    let log = open(&fs, dir, &clock);
    log.append_as_leader(&mut common::producer_batch("a", 3, 1_000))
        .unwrap();
    let end = log.log_end_offset();
    fs.set_open_limit(Some(0));
    let err = log.roll().unwrap_err().to_string();
    assert!(err.contains("Too many open files"), "{err}");
    assert_eq!(log.log_end_offset(), end);
    assert_eq!(values(&log), expected(&[("a", 3)]));
    // Appends to the open active segment need no new descriptor.
    log.append_as_leader(&mut common::producer_batch("b", 2, 2_000))
        .unwrap();
    fs.set_open_limit(None);
    log.roll().unwrap();
    log.append_as_leader(&mut common::producer_batch("c", 2, 3_000))
        .unwrap();
    log.wait_for_background_flushes();
    log.flush().unwrap();
    let all = expected(&[("a", 3), ("b", 2), ("c", 2)]);
    assert_eq!(values(&log), all);
    log.close().unwrap();
    assert_eq!(values(&open(&fs, dir, &clock)), all);
    assert_eq!(values(&open(&fs.crash(Tear::DropAll), dir, &clock)), all);
}

#[test]
fn opening_a_log_without_file_descriptors_fails_cleanly_and_succeeds_later() {
    let fs = SimFs::new();
    let dir = Path::new("/sim/logs/orders-0");
    let clock = MockClock::new(1_000);
    let log = open(&fs, dir, &clock);
    log.append_as_leader(&mut common::producer_batch("a", 3, 1_000))
        .unwrap();
    log.close().unwrap();
    drop(log);
    fs.set_open_limit(Some(0));
    let err = PartitionLog::open(
        fs.clone(),
        dir,
        common::small_config(4096),
        LoadOptions::default(),
        Arc::new(clock.clone()),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("Too many open files"), "{err}");
    fs.set_open_limit(None);
    assert_eq!(values(&open(&fs, dir, &clock)), expected(&[("a", 3)]));
}
