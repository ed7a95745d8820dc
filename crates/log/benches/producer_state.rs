//! Producer-state loading benches (issue targets): opening, after a clean shutdown, a
//! 10,000-segment log whose segments carry idempotent batches and a producer snapshot at every
//! base offset and one at the log end (under 300 ms: the snapshot at the log end is loaded, no
//! segment is read), and loading one snapshot of 100,000 producers (under 100 ms).
#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "bench"
)]

#[path = "common/segments.rs"]
mod segments;

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use seglog_fs::RealFs;
use seglog_log::producer::{
    ProducerStateEntry, ProducerStateManager, ProducerStateManagerConfig, snapshot_path,
    write_snapshot,
};
use seglog_log::{LogConfig, MockClock, PartitionLog};

const TS: i64 = 1_700_000_000_000;

fn producers(n: i64) -> Vec<ProducerStateEntry> {
    (0..n)
        .map(|pid| ProducerStateEntry::new(pid, 0, -1, TS, None))
        .collect()
}

fn open_many_segments_with_snapshots(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("many-0");
    std::fs::create_dir_all(&dir).unwrap();
    let segments = 10_000_i64;
    let pids = 100_i64;
    let state = producers(pids);
    segments::one_batch_segments(
        &dir,
        segments,
        |base| segments::idempotent_batch(1, 100, base % pids, 0, (base / pids) as i32),
        // What a roll leaves: the state at the new segment's base.
        |base| write_snapshot(&RealFs, &snapshot_path(&dir, base), state.iter(), false).unwrap(),
    );
    write_snapshot(&RealFs, &snapshot_path(&dir, segments), state.iter(), true).unwrap();
    let clean = segments::clean_shutdown(segments);
    let mut group = c.benchmark_group("producer_state");
    group.sample_size(10);
    group.bench_function("open_10000_segments_clean_with_snapshots", |b| {
        b.iter(|| {
            let (log, report) = PartitionLog::open(
                RealFs,
                &dir,
                LogConfig::default(),
                clean,
                Arc::new(MockClock::new(TS)),
            )
            .unwrap();
            assert_eq!(report.segments_scanned, 0);
            assert_eq!(log.log_end_offset(), segments);
            assert_eq!(log.producer_id_count(), pids as usize);
            log
        });
    });
    group.finish();
}

fn load_large_snapshot(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("big-0");
    std::fs::create_dir_all(&dir).unwrap();
    let count = 100_000_i64;
    let offset = 1_000_000;
    write_snapshot(
        &RealFs,
        &snapshot_path(&dir, offset),
        producers(count).iter(),
        true,
    )
    .unwrap();
    let mut group = c.benchmark_group("producer_state");
    group.sample_size(20);
    group.bench_function("load_snapshot_100000_producers", |b| {
        b.iter(|| {
            let mut m = ProducerStateManager::new(
                RealFs,
                &dir,
                "big-0",
                60_000,
                ProducerStateManagerConfig::default(),
            )
            .unwrap();
            let corrupt = m.truncate_and_reload(0, offset, TS).unwrap();
            assert!(corrupt.is_empty());
            assert_eq!(m.active_producers().len(), count as usize);
            m
        });
    });
    group.finish();
}

criterion_group!(
    benches,
    open_many_segments_with_snapshots,
    load_large_snapshot
);
criterion_main!(benches);
