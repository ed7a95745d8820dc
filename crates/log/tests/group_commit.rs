//! Durable appends: each returns only after fdatasync, and concurrent appenders share fsync rounds.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{partition_dir, producer_batch};
use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock};
use seglog_segment::io::{FileSystem, SimFs, Tear};

#[test]
fn durable_appends_survive_a_power_loss() {
    let fs = SimFs::new();
    let real_root = tempfile::tempdir().unwrap();
    // Every file, the indexes included, lives in SimFs.
    let dir = partition_dir(real_root.path());
    fs.create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let (log, _) = PartitionLog::open(
        fs.clone(),
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    fs.sync_dir(&dir).unwrap();
    let mut acked = Vec::new();
    for i in 0..20 {
        let info = log
            .append_durable(&mut producer_batch(&format!("d{i}"), 3, 1_000))
            .unwrap();
        acked.push(info.last_offset);
    }
    // Unsynced appends after the last durable one may be lost.
    log.append_as_leader(&mut producer_batch("volatile", 3, 1_000))
        .unwrap();
    let crashed = fs.crash(Tear::KeepPrefix(7));
    let (reopened, report) = PartitionLog::open(
        crashed,
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    assert!(report.segments_scanned >= 1);
    assert_eq!(
        reopened.log_end_offset(),
        acked.last().unwrap() + 1,
        "exactly the acked prefix survives"
    );
    let values = common::read_values(&reopened, 0);
    assert_eq!(values.len(), 60);
    assert_eq!(values[59].1, "d19-2");
}

#[test]
fn concurrent_durable_appenders_share_fsyncs() {
    // A simulated disk whose fsync takes 2 ms, so the test does not depend on this machine's disk.
    let fs = SimFs::new();
    fs.set_sync_latency(Duration::from_millis(2));
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    fs.create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let (log, _) = PartitionLog::open(
        fs.clone(),
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let appenders = 4;
    let per_thread = 50;
    let syncs_before = fs.stats().file_syncs;
    let started = Instant::now();
    std::thread::scope(|s| {
        for t in 0..appenders {
            let log = log.clone();
            s.spawn(move || {
                for i in 0..per_thread {
                    log.append_durable(&mut producer_batch(&format!("t{t}-{i}"), 16, 1_000))
                        .unwrap();
                }
            });
        }
    });
    let elapsed = started.elapsed();
    let appends = (appenders * per_thread) as u64;
    let rounds = log.group_commit_rounds();
    let syncs = fs.stats().file_syncs - syncs_before;
    eprintln!(
        "{appends} durable appends, {rounds} group-commit rounds, {syncs} file fsyncs, {elapsed:?}"
    );
    // Rounds started at once would each miss the appenders the last one released (about 2
    // appends a round with 4 appenders); lingering for them gives close to 4.
    assert!(
        rounds * 3 <= appends,
        "group commit batched fewer than 3 appends a round: {rounds} rounds for {appends} appends"
    );
    assert!(
        syncs <= rounds + 2,
        "each round is one fsync of the active segment: {syncs} for {rounds}"
    );
    assert_eq!(log.log_end_offset(), (appends * 16) as i64);
    assert_eq!(log.recovery_point(), log.log_end_offset());
}

#[test]
fn recovery_point_never_covers_an_append_that_missed_the_sync() {
    // Regression: a flush moved the recovery point to the log end offset read after its fsync,
    // so an append written while the fsync ran counted as durable (its first offset did).
    let fs = SimFs::new();
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    fs.create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let (log, _) = PartitionLog::open(
        fs.clone(),
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    fs.sync_dir(&dir).unwrap();
    log.append_as_leader(&mut producer_batch("synced", 3, 1_000))
        .unwrap();
    fs.set_sync_latency(Duration::from_millis(300));
    std::thread::scope(|s| {
        let flusher = s.spawn(|| log.flush());
        // Lands inside the fsync unless the flusher is very late (then the fsync covers it).
        std::thread::sleep(Duration::from_millis(100));
        log.append_as_leader(&mut producer_batch("late", 3, 1_000))
            .unwrap();
        flusher.join().unwrap().unwrap();
    });
    let recovery_point = log.recovery_point();
    // What the syncs made durable: a power loss that keeps nothing unsynced.
    let (reopened, _) = PartitionLog::open(
        fs.crash(Tear::DropAll),
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    assert!(
        recovery_point <= reopened.log_end_offset(),
        "recovery point {recovery_point} is past the durable log end {}",
        reopened.log_end_offset()
    );
}
