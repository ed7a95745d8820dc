//! Regression (found by `cargo xtask crash`): a recovery-point checkpoint written before a
//! truncation stayed on disk above it. Records appended after the truncation below that stale
//! value were never synced by a log reopened after an unclean shutdown (it adopts the checkpoint
//! as its recovery point), so a durable append acknowledged them and a power loss removed them.
//! `LogDir::truncate_to` checkpoints right after truncating, as Kafka's `LogManager.truncateTo`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use seglog_fs::sim::{SimFs, Tear};
use seglog_log::{LogDir, LogDirOptions, MockClock, TopicPartition};

fn options(clock: &MockClock) -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(common::small_config(1 << 20))
        .with_recovery_threads(1)
        .with_time(Arc::new(clock.clone()))
}

#[test]
fn records_acked_durable_after_a_truncation_and_an_unclean_reopen_survive_a_power_loss() {
    let fs = SimFs::new();
    let root = Path::new("/sim/logs");
    let tp = TopicPartition::new("orders", 0);
    let clock = MockClock::new(1_000);
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    let log = dir.create_log(&tp, None).unwrap();
    log.append_as_leader(&mut common::producer_batch("old", 10, 1_000))
        .unwrap();
    log.flush().unwrap();
    dir.checkpoint().unwrap(); // recovery point 10 on disk
    assert!(dir.truncate_to(&tp, 0).unwrap());
    log.roll().unwrap();
    log.wait_for_background_flushes();
    log.append_as_leader(&mut common::producer_batch("new", 5, 2_000))
        .unwrap();
    // An unclean shutdown without a power loss: the unsynced records are still there.
    drop(log);
    drop(dir);
    let (dir, _) = LogDir::open(fs.clone(), root, options(&clock)).unwrap();
    let log = dir.log(&tp).unwrap();
    log.append_durable(&mut common::producer_batch("acked", 1, 3_000))
        .unwrap();
    drop(log);
    drop(dir);

    let crashed = fs.crash(Tear::DropAll);
    let (dir, _) = LogDir::open(crashed, root, options(&clock)).unwrap();
    let values: Vec<String> = common::read_values(&dir.log(&tp).unwrap(), 0)
        .into_iter()
        .map(|(_, v)| v)
        .collect();
    let expected: Vec<String> = (0..5)
        .map(|i| format!("new-{i}"))
        .chain(std::iter::once("acked-0".to_owned()))
        .collect();
    assert_eq!(values, expected);
}
