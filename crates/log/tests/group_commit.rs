//! Durable appends: each returns only after fdatasync, and concurrent appenders share fsync rounds.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_sign_loss,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

use common::{partition_dir, producer_batch};
use seglog_fs::FileSystem;
use seglog_fs::sim::{SimFs, Tear};
use seglog_log::{LoadOptions, LoadReport, LogConfig, PartitionLog, SystemClock};

/// A new log on `fs`, in a partition directory that exists both in `fs` and on disk (the log's
/// directory lock, under the returned temporary directory).
fn open_new(fs: &SimFs) -> (tempfile::TempDir, PathBuf, PartitionLog<SimFs>) {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    fs.create_dir_all(&dir).unwrap();
    std::fs::create_dir_all(&dir).unwrap();
    let (log, _) = open(fs.clone(), &dir);
    (root, dir, log)
}

/// Opens the log in `dir` on `fs` with the default configuration.
fn open(fs: SimFs, dir: &Path) -> (PartitionLog<SimFs>, LoadReport) {
    PartitionLog::open(
        fs,
        dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap()
}

#[test]
fn durable_appends_survive_a_power_loss() {
    let fs = SimFs::new();
    // Every file, the indexes included, lives in SimFs.
    let (_root, dir, log) = open_new(&fs);
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
    let (reopened, report) = open(crashed, &dir);
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
    let (_root, _, log) = open_new(&fs);
    // The linger's own bound (at most 1 ms of wall time) holds only when the released appenders
    // run within it, which a loaded machine does not promise: the test lingers until they are
    // back, so what it checks is the linger's rule, not the scheduler.
    log.set_group_commit_linger(Duration::from_secs(1));
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
    let (_root, dir, log) = open_new(&fs);
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
    let (reopened, _) = open(fs.crash(Tear::DropAll), &dir);
    assert!(
        recovery_point <= reopened.log_end_offset(),
        "recovery point {recovery_point} is past the durable log end {}",
        reopened.log_end_offset()
    );
}

#[test]
fn a_flush_that_a_truncation_overtook_does_not_raise_the_recovery_point() {
    // Regression: a flush that began before a follower's truncation, and ended after the log
    // was cut and written again at the same offsets, moved the recovery point over the new,
    // never synced records; a crash would then have trusted them without a scan.
    let fs = SimFs::new();
    let (_root, dir, log) = open_new(&fs);
    fs.sync_dir(&dir).unwrap();
    for i in 0..10 {
        log.append_as_leader(&mut producer_batch(&format!("old{i}"), 3, 1_000))
            .unwrap();
    }
    let end = log.log_end_offset();
    // The flush's first fsync (the `.log`'s) takes what it makes durable, the old records, and
    // then waits inside the sync until the test lets it go.
    let (began, began_rx) = mpsc::channel();
    let (release, release_rx) = mpsc::channel::<()>();
    let hold = Mutex::new(Some((began, release_rx)));
    fs.set_sync_hook(Some(Arc::new(move || {
        // Taken out first: the truncation's own syncs call the hook while this one waits.
        let held = hold.lock().unwrap().take();
        if let Some((began, release)) = held {
            began.send(()).unwrap();
            // Released by a send, or by the test dropping the sender.
            let _ = release.recv();
        }
    })));
    let overtaken = std::thread::scope(|s| {
        let flusher = s.spawn(|| log.flush());
        loop {
            match began_rx.recv_timeout(Duration::from_millis(10)) {
                Ok(()) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => assert!(
                    !flusher.is_finished(),
                    "the flush returned without an fsync: the test proves nothing"
                ),
                Err(mpsc::RecvTimeoutError::Disconnected) => unreachable!("the hook holds it"),
            }
        }
        // The flush's fsync is in flight: cut the log (with syncs of its own, which the hook
        // lets through) and write it again.
        log.truncate_to(end / 2).unwrap();
        while log.log_end_offset() < end {
            log.append_as_leader(&mut producer_batch("new", 3, 1_000))
                .unwrap();
        }
        let overtaken = !flusher.is_finished();
        drop(release);
        flusher.join().unwrap().unwrap();
        overtaken
    });
    fs.set_sync_hook(None);
    assert!(
        overtaken,
        "the truncation and the rewrite did not land inside the flush: the test proves nothing"
    );
    assert!(
        log.recovery_point() <= end / 2,
        "recovery point {} covers records written after the truncation to {} and never synced",
        log.recovery_point(),
        end / 2
    );
}

#[test]
fn syncing_past_the_log_end_is_out_of_range_not_a_wait() {
    // Regression: sync_up_to with an offset the log does not hold started fsync rounds forever.
    let fs = SimFs::new();
    let (_root, _, log) = open_new(&fs);
    log.append_durable(&mut producer_batch("a", 3, 1_000))
        .unwrap();
    let end = log.log_end_offset();
    log.sync_up_to(end).unwrap();
    let err = log.sync_up_to(end + 1).unwrap_err();
    assert!(
        matches!(err, seglog_log::Error::OffsetOutOfRange { offset, .. } if offset == end + 1),
        "{err:?}"
    );
}
