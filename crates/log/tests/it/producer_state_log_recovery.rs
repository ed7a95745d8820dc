//! Producer state through recovery, the cases of Kafka's `LogLoaderTest` and `UnifiedLogTest`
//! that docs/kafka-tests-transactions.md listed as open: each test is Kafka's case `testFooBar` as
//! `test_foo_bar`, on real files (the snapshot flush failure on a file system that fails it).

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use std::io;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use seglog_fs::{File, FileSystem, OpenMode};

use seglog_log::producer::list_snapshot_files;
use seglog_log::{LoadOptions, LogConfig, MockClock, PartitionLog, RealFs, naming};

use crate::common;
use crate::common::txn::{Data, Producer};
use crate::txn_log::facts;

const NOW: i64 = 1_700_000_000_000;

fn config(pairs: &[(&str, &str)]) -> LogConfig {
    LogConfig::from_pairs(pairs.iter().copied()).unwrap()
}

/// Kafka's `LogTestUtils.appendTransactionalAsLeader` (`transactional`) and
/// `appendNonTransactionalAsLeader` (`pid` -1): `n` records valued by their sequence, the
/// producer's from `seq`, stamped now (no timestamp without a producer, as Kafka's helper).
fn batch(pid: i64, seq: i32, n: i32) -> Vec<u8> {
    let records = (0..n)
        .map(|i| (None, Some((seq.max(0) + i).to_string().into_bytes())))
        .collect();
    let mut data = Data::with_records(0, records).timestamp(-1);
    if pid >= 0 {
        data = data
            .producer(Producer { id: pid, epoch: 0 }, seq, true)
            .timestamp(NOW);
    }
    let mut out = Vec::new();
    data.write(&mut out);
    out
}

fn snapshot_offsets(dir: &Path) -> Vec<i64> {
    list_snapshot_files(&RealFs, dir)
        .unwrap()
        .into_iter()
        .map(|s| s.offset)
        .collect()
}

/// Every `.txnindex` entry of the log, oldest segment first, as (pid, first, last, lso): Kafka's
/// `LogTestUtils.allAbortedTransactions`.
fn all_aborted(log: &PartitionLog) -> Vec<(i64, i64, i64, i64)> {
    log.segments()
        .values()
        .flat_map(|s| s.all_aborted_txns().unwrap())
        .map(|t| {
            (
                t.producer_id(),
                t.first_offset(),
                t.last_offset(),
                t.last_stable_offset(),
            )
        })
        .collect()
}

#[test]
fn test_recover_last_segment_with_no_snapshots() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let small = || config(&[("internal.segment.bytes", "640")]);
    let log = common::open(&dir, small(), LoadOptions::default(), &clock).0;
    let mut seqs = [0_i32; 5];
    let mut append = |pid: i64, n: i32| {
        let seq = &mut seqs[usize::try_from(pid).unwrap()];
        log.append_as_leader(&mut batch(pid, *seq, n)).unwrap();
        *seq += n;
    };
    let plain = |n: i32| {
        log.append_as_leader(&mut batch(-1, -1, n)).unwrap();
    };
    let end_txn = |pid: i64, commit: bool| {
        log.append_end_txn_marker(pid, 0, 0, commit, 0).unwrap();
    };
    // Kafka's mix of transactional and plain data; the log end after each step.
    append(1, 5); // 5
    plain(3); // 8
    append(2, 2); // 10
    append(1, 4); // 14
    append(3, 3); // 17
    plain(2); // 19
    append(1, 10); // 29
    end_txn(1, false); // 30
    append(2, 6); // 36
    append(4, 3); // 39
    plain(10); // 49
    append(3, 9); // 58
    end_txn(3, true); // 59
    append(4, 8); // 67
    append(2, 7); // 74
    end_txn(2, false); // 75
    plain(10); // 85
    append(4, 4); // 89
    end_txn(4, true); // 90
    assert_eq!(log.log_end_offset(), 90);
    let want = vec![(1, 0, 29, 8), (2, 8, 74, 36)];
    assert_eq!(all_aborted(&log), want);
    // Kafka's layout (the batches are its bytes): the last segment starts after the ABORT at 74
    // and holds the COMMIT of producer 4, whose transaction opened at 36 in an earlier segment;
    // the state of producers 1..=3 is in the earlier segments only.
    let last_base = log.active_segment().base_offset();
    assert_eq!((log.segment_count(), last_base), (4, 75));
    let producers = facts(&log);
    assert_eq!(producers.len(), 4);

    // Kafka's `deleteProducerSnapshotFiles`, then the last segment's `.index` and `.txnindex`
    // deleted to force its recovery; the close takes a snapshot at the log end again.
    log.wait_for_background_flushes();
    for snapshot in list_snapshot_files(&RealFs, &dir).unwrap() {
        std::fs::remove_file(snapshot.path).unwrap();
    }
    log.close().unwrap();
    std::fs::remove_file(naming::offset_index_file(&dir, last_base, "")).unwrap();
    // Kafka's `txnIndex.deleteIfExists()`: a segment without an ABORT has no `.txnindex` file.
    let txn_index = naming::txn_index_file(&dir, last_base, "");
    if txn_index.exists() {
        std::fs::remove_file(txn_index).unwrap();
    }
    assert_eq!(snapshot_offsets(&dir), vec![90]);

    let options = LoadOptions::default().with_recovery_point(last_base);
    let (reloaded, report) = common::open(
        &dir,
        config(&[("internal.segment.bytes", "5120")]),
        options,
        &clock,
    );
    assert_eq!(all_aborted(&reloaded), want);
    // The recovery of the last segment began from a state rebuilt from the log start: a replay
    // of the last segment alone would have lost producers 1..=3.
    assert_eq!(report.recovered.len(), 1, "{:?}", report.plan);
    assert_eq!(report.recovered[0].0, last_base);
    assert_eq!(facts(&reloaded), producers);
    reloaded.set_high_watermark(reloaded.log_end_offset());
    assert_eq!(reloaded.first_unstable_offset(), None);
}

/// One unkeyed record stamped now, without a producer (Kafka's `TestUtils.records` of one
/// `SimpleRecord`).
fn one(value: &str) -> Vec<u8> {
    let mut out = Vec::new();
    Data::with_records(0, vec![(None, Some(value.as_bytes().to_vec()))])
        .leader_epoch(0)
        .timestamp(NOW)
        .write(&mut out);
    out
}

/// The files of `dir` (not its subdirectories) whose name ends with `suffix`.
fn files_ending(dir: &Path, suffix: &str) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(suffix))
        .collect();
    names.sort();
    names
}

#[test]
fn test_corrupted_log_recovery_does_not_delete_producer_state_snapshots_post_recovery() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let log = common::open(&dir, LogConfig::default(), LoadOptions::default(), &clock).0;
    // Segments [0-0] .. [8-8] and the empty active segment at 9; a snapshot at each roll.
    for i in 0..9 {
        log.append_as_leader(&mut one(&i.to_string())).unwrap();
        log.roll().unwrap();
    }
    log.wait_for_background_flushes();
    assert_eq!(log.segment_count(), 10);
    assert_eq!(
        (log.log_start_offset(), log.active_segment().base_offset()),
        (0, 9)
    );
    assert_eq!(log.log_end_offset(), 9);
    assert_eq!(log.producer_snapshot_offsets(), (1..10).collect::<Vec<_>>());
    assert_eq!(snapshot_offsets(&dir), (1..10).collect::<Vec<_>>());

    // The log start moves to 4; no segment is deleted yet.
    log.set_high_watermark(log.log_end_offset());
    assert!(log.delete_records_before(4).unwrap());
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (4, 9));
    // Kafka's `new FileWriter(segment.log.file)`: segment 1's `.log` replaced by 13 bytes of
    // garbage.
    std::fs::write(naming::log_file(&dir, 1, ""), b"corruptRecord").unwrap();
    log.close().unwrap();

    // The unclean reopen cuts segment 1 to nothing and drops the segments after it; the log end
    // (1) is then below the log start (4): every segment goes, and an empty one starts at 4.
    let options = LoadOptions::default().with_log_start_offset(4);
    let log = common::open(&dir, LogConfig::default(), options, &clock).0;
    assert_eq!(log.segment_count(), 1);
    assert_eq!(log.log_start_offset(), 4);
    assert_eq!(log.active_segment().base_offset(), 4);
    assert_eq!(log.log_end_offset(), 4);
    // Kafka's check: no snapshot at 1..=4, on disk or known to the log.
    let below_5 = |offsets: Vec<i64>| -> Vec<i64> {
        offsets.into_iter().filter(|o| (1..5).contains(o)).collect()
    };
    assert_eq!(below_5(snapshot_offsets(&dir)), Vec::<i64>::new());
    assert_eq!(below_5(log.producer_snapshot_offsets()), Vec::<i64>::new());

    // New segments [4-4] .. [8-8] and the active one at 9, a snapshot at 5..=9 again.
    for i in 0..5 {
        log.append_as_leader(&mut one(&i.to_string())).unwrap();
        log.roll().unwrap();
    }
    log.wait_for_background_flushes();
    assert_eq!(log.active_segment().base_offset(), 9);
    assert_eq!(log.log_end_offset(), 9);
    let five_to_nine: Vec<i64> = (5..10).collect();
    assert_eq!(log.producer_snapshot_offsets(), five_to_nine);
    assert_eq!(snapshot_offsets(&dir), five_to_nine);

    // The deletions the reopen scheduled (after `file.delete.delay.ms`) take none of them.
    clock.advance(LogConfig::default().file_delete_delay_ms + 1);
    log.delete_expired_files().unwrap();
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (4, 9));
    assert_eq!(log.producer_snapshot_offsets(), five_to_nine);
    assert_eq!(snapshot_offsets(&dir), five_to_nine);
    assert_eq!(files_ending(&dir, ".deleted"), Vec::<String>::new());
}

/// The real file system, except that syncing a `.snapshot` file fails while `fail` is set: the
/// failure Kafka's test injects into `flushProducerStateSnapshot`.
#[derive(Debug, Clone, Default)]
struct FailingSnapshotSyncFs {
    fail: Arc<AtomicBool>,
}

#[derive(Debug)]
struct MaybeFailingFile {
    file: <RealFs as FileSystem>::File,
    fail: Option<Arc<AtomicBool>>,
}

impl FileSystem for FailingSnapshotSyncFs {
    type File = MaybeFailingFile;
    type Lock = <RealFs as FileSystem>::Lock;

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<MaybeFailingFile> {
        let snapshot = path.extension().is_some_and(|e| e == "snapshot");
        Ok(MaybeFailingFile {
            file: RealFs.open(path, mode)?,
            fail: snapshot.then(|| Arc::clone(&self.fail)),
        })
    }
    fn exists(&self, path: &Path) -> bool {
        RealFs.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        RealFs.is_dir(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }
    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        RealFs.remove_dir(dir)
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        RealFs.read_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        RealFs.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        RealFs.sync_dir(dir)
    }
    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        RealFs.modified_ms(path)
    }
    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        RealFs.set_modified_ms(path, ms)
    }
    fn try_lock(&self, path: &Path) -> io::Result<Self::Lock> {
        RealFs.try_lock(path)
    }
    fn try_lock_dir(&self, dir: &Path) -> io::Result<Self::Lock> {
        RealFs.try_lock_dir(dir)
    }
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        RealFs.canonicalize(path)
    }
}

impl File for MaybeFailingFile {
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize> {
        self.file.read_at(buf, position)
    }
    fn write_all_at(&self, buf: &[u8], position: u64) -> io::Result<()> {
        self.file.write_all_at(buf, position)
    }
    fn len(&self) -> io::Result<u64> {
        self.file.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        if self
            .fail
            .as_ref()
            .is_some_and(|f| f.load(Ordering::Acquire))
        {
            return Err(io::Error::other("injected snapshot sync failure"));
        }
        self.file.sync_data()
    }
    fn allocate(&self, offset: u64, len: u64) -> io::Result<()> {
        self.file.allocate(offset, len)
    }
    fn data_end(&self) -> io::Result<u64> {
        self.file.data_end()
    }
    fn map_fd(&self) -> Option<BorrowedFd<'_>> {
        self.file.map_fd()
    }
    fn copy_range_to(&self, position: u64, len: u64, out: BorrowedFd<'_>) -> io::Result<u64> {
        self.file.copy_range_to(position, len, out)
    }
}

#[test]
fn test_recovery_point_not_incremented_on_producer_state_snapshot_flush_failure() {
    for inline in [false, true] {
        let root = tempfile::tempdir().unwrap();
        let fs = FailingSnapshotSyncFs::default();
        let (log, _) = PartitionLog::open(
            fs.clone(),
            &common::partition_dir(root.path()),
            LogConfig::default(),
            LoadOptions::default(),
            Arc::new(MockClock::new(NOW)),
        )
        .unwrap();
        log.set_roll_flush_inline(inline);
        fs.fail.store(true, Ordering::Release);
        log.append_as_leader(&mut one("a")).unwrap();
        // Kafka's `roll(Some(1L))`; the flush after it (in the background unless `inline`)
        // fails at the snapshot's sync and leaves the recovery point.
        log.roll().unwrap();
        log.wait_for_background_flushes();
        assert_eq!(log.active_segment().base_offset(), 1);
        assert_eq!(log.latest_producer_snapshot_offset(), Some(1));
        assert_eq!(log.recovery_point(), 0, "inline {inline}");

        // Once syncs work again, the flush after the next roll moves it.
        fs.fail.store(false, Ordering::Release);
        log.append_as_leader(&mut one("b")).unwrap();
        log.roll().unwrap();
        log.wait_for_background_flushes();
        assert_eq!(log.recovery_point(), 2, "inline {inline}");
    }
}
