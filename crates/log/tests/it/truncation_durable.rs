//! Regression (found by `cargo xtask crash`): a truncation was never made durable. It lowers the
//! recovery point to the truncation offset, so the roll's background flush skipped the truncated
//! segment; records appended (even durably) at the freed offsets in a new segment then sat beside
//! the old tail, which a power loss brought back, and reads at those offsets found old data.
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
        common::small_config(1 << 20),
        LoadOptions::default(),
        Arc::new(clock.clone()),
    )
    .unwrap()
    .0
}

#[test]
fn records_appended_durably_after_a_truncation_and_a_roll_survive_a_power_loss() {
    let fs = SimFs::new();
    let dir = Path::new("/sim/logs/orders-0");
    let clock = MockClock::new(1_000);
    let log = open(&fs, dir, &clock);
    log.append_durable(&mut common::producer_batch("old", 5, 1_000))
        .unwrap();
    log.append_durable(&mut common::producer_batch("old-tail", 5, 1_000))
        .unwrap();
    assert!(log.truncate_to(5).unwrap());
    log.roll().unwrap();
    log.wait_for_background_flushes();
    let info = log
        .append_durable(&mut common::producer_batch("new", 2, 2_000))
        .unwrap();
    assert_eq!(info.first_offset, 5);

    let recovered = open(&fs.crash(Tear::DropAll), dir, &clock);
    let values: Vec<(i64, String)> = common::read_values(&recovered, 0);
    let expected: Vec<(i64, String)> = (0..5)
        .map(|i| (i, format!("old-{i}")))
        .chain((0..2).map(|i| (5 + i, format!("new-{i}"))))
        .collect();
    assert_eq!(values, expected);
    assert_eq!(recovered.log_end_offset(), 7);
}
