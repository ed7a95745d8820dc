//! Regression (found by `cargo xtask crash`): the indexes of a segment that a roll made inactive
//! were never synced when the recovery point had already reached its end (every record flushed
//! while the segment was active). The roll appends the final time index entry and trims both
//! indexes, and the roll's background flush (Kafka's "flush-log" up to the new segment) then had
//! nothing to do, so the segment went below the recovery point with unsynced indexes, which the
//! next load trusts: after a power loss its `.timeindex` held zeros.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::path::Path;
use std::sync::Arc;

use seglog_fs::FileSystem;
use seglog_fs::sim::{SimFs, Tear};
use seglog_log::{LoadOptions, MockClock, PartitionLog};
use seglog_segment::naming;

#[test]
fn the_indexes_of_a_rolled_segment_are_durable_once_the_rolls_flush_is_done() {
    let fs = SimFs::new();
    let dir = Path::new("/sim/logs/orders-0");
    let clock = MockClock::new(1_000);
    let (log, _) = PartitionLog::open(
        fs.clone(),
        dir,
        common::small_config(1 << 20),
        LoadOptions::default(),
        Arc::new(clock.clone()),
    )
    .unwrap();
    log.append_as_leader(&mut common::producer_batch("a", 3, 1_000))
        .unwrap();
    // Everything is durable and the recovery point is at the log end, inside the active segment.
    log.flush().unwrap();
    log.roll().unwrap();
    log.wait_for_background_flushes();
    // Any later directory sync makes the names of the rolled segment's files durable.
    fs.sync_dir(dir).unwrap();

    let crashed = fs.crash(Tear::DropAll);
    for path in [
        naming::offset_index_file(dir, 0, ""),
        naming::time_index_file(dir, 0, ""),
    ] {
        let live = fs.live_bytes(&path).unwrap();
        assert!(!live.is_empty() || path.extension().is_some_and(|e| e == "index"));
        assert_eq!(
            crashed.live_bytes(&path).as_ref(),
            Some(&live),
            "{} after a power loss",
            path.display()
        );
    }
}
