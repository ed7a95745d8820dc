//! Regression (found by `cargo xtask crash`, seed 20261130): a flush made a segment's `.log` data
//! durable but not its name. A flush synced the directory only for segments at or above the
//! recovery point, taking those to be the ones created since the last flush. A segment can be
//! created below it: here a truncation cut a whole batch (the log end stays at the target, as in
//! Kafka, so the recovery point does too), a reopen found the log empty, a roll recreated the empty
//! active segment under the same name (KAFKA-6388), and the next reopen took the checkpointed
//! recovery point again, above the recreated segment's base. A durable append then synced the new
//! `.log`, and after a power loss its name still led to the deleted file: acknowledged records
//! gone.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use seglog_fs::sim::{SimFs, Tear};
use seglog_log::{LoadOptions, MockClock, PartitionLog};

fn open(fs: &SimFs, dir: &Path, recovery_point: i64, clock: &MockClock) -> PartitionLog<SimFs> {
    let options = LoadOptions::default().with_recovery_point(recovery_point);
    let (log, _) = PartitionLog::open(
        fs.clone(),
        dir,
        common::small_config(1 << 20),
        options,
        Arc::new(clock.clone()),
    )
    .unwrap();
    log
}

#[test]
fn records_acked_durable_in_a_recreated_segment_survive_a_power_loss() {
    let fs = SimFs::new();
    let dir = Path::new("/sim/logs/orders-0");
    let clock = MockClock::new(1_000);
    let log = open(&fs, dir, 0, &clock);
    log.append_durable(&mut common::producer_batch("old", 3, 1_000))
        .unwrap();
    // The batch holding offset 2 goes whole; the log end (and the recovery point) stay at 2.
    assert!(log.truncate_to(2).unwrap());
    assert_eq!(log.recovery_point(), 2);
    // What a checkpoint written now holds, read back by each unclean reopen below.
    let checkpointed = log.recovery_point();
    drop(log);

    let log = open(&fs, dir, checkpointed, &clock);
    assert_eq!(log.log_end_offset(), 0);
    // KAFKA-6388: the empty active segment is deleted and created again under the same name.
    log.roll().unwrap();
    log.append_as_leader(&mut common::producer_batch("new", 2, 2_000))
        .unwrap();
    drop(log);

    let log = open(&fs, dir, checkpointed, &clock);
    assert_eq!(log.log_end_offset(), 2);
    assert_eq!(
        log.recovery_point(),
        2,
        "the checkpoint, capped by the log end"
    );
    log.append_durable(&mut common::producer_batch("acked", 2, 3_000))
        .unwrap();
    let acked = common::read_values(&log, 0);
    assert_eq!(acked.len(), 4);
    drop(log);

    let crashed = fs.crash(Tear::DropAll);
    let log = open(&crashed, dir, checkpointed, &clock);
    assert_eq!(common::read_values(&log, 0), acked, "after a power loss");
}
