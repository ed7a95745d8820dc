//! [`LogDir`]: a log directory of many partition logs (Kafka's `LogManager` for one `log.dirs`
//! entry): the `.lock` file, the recovery-point, log-start-offset and high-watermark checkpoints, the
//! clean-shutdown marker, parallel loading, and a background scheduler for flush, retention,
//! file deletion and checkpoints.

mod checkpoints;
mod cleaner;
mod failures;
mod future;
mod load;
mod options;
mod partitions;
mod pending_deletes;
mod scheduler;
mod scope;
mod topic_config;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use seglog_fs::FileSystem;

use crate::checkpoint::{
    LOG_START_OFFSET_CHECKPOINT, RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT,
};
use crate::clean_shutdown::CleanShutdownMarker;
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::listing::{self, LogDirEntry};
use crate::partition::PartitionLog;
use crate::segment_limits::SegmentLimits;
use crate::time::Time;
use crate::topic_partition::{DirKind, TopicPartition};

pub use crate::error::Work;
use checkpoints::{Kept, read_checkpoint};
pub use failures::BackgroundFailure;
use failures::Failures;
use future::FutureLogs;
pub(crate) use load::read_partition_config;
use load::{load_in_parallel, sort_loaded};
pub use options::{
    CleanerSettings, LoadProgress, LogDirOptions, LogDirReport, PARTITION_CONFIG_FILE,
    PartitionFailure, ProgressFn, SchedulerConfig,
};
use partitions::remove_dir_all;
use pending_deletes::PendingDeletes;
use scheduler::Scheduler;
pub use scope::Scope;

/// A log directory. Dropping it without [`LogDir::close`] leaves no clean-shutdown marker, so the
/// next open recovers.
pub struct LogDir<F: FileSystem> {
    fs: F,
    path: PathBuf,
    default_config: LogConfig,
    time: Arc<dyn Time>,
    /// What the logs at the default caps share (`LogDirOptions::limits`).
    limits: SegmentLimits,
    logs: RwLock<BTreeMap<TopicPartition, PartitionLog<F>>>,
    /// The lock on each open partition's directory, taken before it loads.
    partition_locks: Mutex<BTreeMap<TopicPartition, F::Lock>>,
    /// Partitions whose directory failed to load, with the cause: not opened, never written.
    unavailable: RwLock<BTreeMap<TopicPartition, (PathBuf, String)>>,
    scope: Scope,
    /// Whether the scope held every partition directory of the log directory on open.
    covers_all: bool,
    had_clean_shutdown: bool,
    /// The broker epoch of the marker found on open (-1 without one).
    broker_epoch: i64,
    recover_all: bool,
    /// The checkpoint entries read on open, kept for the partitions this handle does not hold.
    kept: Mutex<Kept>,
    _lock: F::Lock,
    scheduler: Mutex<Option<Scheduler>>,
    cleaner: Mutex<CleanerSettings>,
    /// Held across each read-modify-write of the cleaner checkpoint.
    cleaner_checkpoint_lock: Mutex<()>,
    /// What the background work set aside.
    failures: Failures,
    /// The `-future` logs loaded on open.
    futures: FutureLogs<F>,
    /// `-delete` directories waiting for `file.delete.delay.ms`.
    pending_deletes: PendingDeletes,
}

impl<F: FileSystem> std::fmt::Debug for LogDir<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogDir")
            .field("path", &self.path)
            .field("logs", &self.logs.read().len())
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// The recovery point `dir`'s checkpoint held for `tp` when it was opened.
fn kept_point<F: FileSystem>(dir: &LogDir<F>, tp: &TopicPartition) -> Option<i64> {
    dir.kept.lock().recovery_points.get(tp).copied()
}

impl<F: FileSystem> LogDir<F> {
    /// Opens (creating if needed) the log directory at `path` with every partition in it
    /// ([`Scope::All`]): see [`LogDir::open_scoped`].
    ///
    /// The `.lock` is exclusive, between handles of one process too: while a `LogDir` on `path`
    /// lives, opening `path` again fails with [`Error::Locked`].
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use seglog_log::{Error, LogConfig, LogDir, LogDirOptions, SystemClock};
    /// use seglog_fs::RealFs;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let root = tempfile::tempdir()?;
    /// let options = || LogDirOptions::default();
    /// let (dir, report) = LogDir::open(RealFs, root.path(), options())?;
    /// assert!(!report.had_clean_shutdown && report.logs.is_empty()); // a new directory
    /// assert!(matches!(LogDir::open(RealFs, root.path(), options()), Err(Error::Locked { .. })));
    ///
    /// dir.close()?; // writes the clean-shutdown marker
    /// drop(dir); // releases the lock
    /// let (_dir, report) = LogDir::open(RealFs, root.path(), options())?;
    /// assert!(report.had_clean_shutdown);
    /// # Ok(())
    /// # }
    /// ```
    pub fn open(fs: F, path: &Path, options: LogDirOptions) -> Result<(Arc<Self>, LogDirReport)> {
        Self::open_scoped(fs, path, options, Scope::All)
    }

    /// Opens (creating if needed) the log directory at `path`, loading the partitions `scope`
    /// names: resolves `path`'s symlinks, takes the `.lock`, reads and deletes the
    /// clean-shutdown marker, reads the checkpoints, then locks and loads each partition
    /// directory with `recovery_threads` threads.
    ///
    /// A partition that fails to load (a bad `seglog.properties`, a directory another writer has
    /// locked, damage its loader refuses) is reported in [`LogDirReport::failed`] and not opened;
    /// the others open as usual, and [`LogDir::create_log`] refuses the failed one. A directory
    /// that is not a partition's (`lost+found`) is reported in [`LogDirReport::not_partitions`]
    /// and left alone.
    ///
    /// With [`Scope::All`], `-delete` directories are removed (as Kafka's `LogManager` does).
    /// With [`Scope::Only`], nothing outside the named partitions is loaded, changed or removed;
    /// [`LogDir::checkpoint`] keeps the other partitions' checkpoint entries as they were, and
    /// [`LogDir::close`] writes the clean-shutdown marker only if it was there on open, so that
    /// the next full open still recovers partitions this one never loaded.
    pub fn open_scoped(
        fs: F,
        path: &Path,
        options: LogDirOptions,
        scope: Scope,
    ) -> Result<(Arc<Self>, LogDirReport)> {
        fs.create_dir_all(path).map_err(|e| Error::io(path, e))?;
        let path = &fs.canonicalize(path).map_err(|e| Error::io(path, e))?;
        let lock = fs.try_lock(&path.join(".lock")).map_err(|e| {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                Error::Locked { path: path.clone() }
            } else {
                Error::io(path.join(".lock"), e)
            }
        })?;
        // Deleted before loading: a crash while loading counts as unclean next time (KAFKA-10471).
        // Its broker epoch is kept, to be written back on close.
        let marker = CleanShutdownMarker::new(fs.clone(), path);
        let broker_epoch = marker.broker_epoch().ok().flatten().unwrap_or(-1);
        let mut report = LogDirReport {
            had_clean_shutdown: marker.take()?,
            ..LogDirReport::default()
        };
        let recovery_points =
            read_checkpoint(&fs, &path.join(RECOVERY_POINT_CHECKPOINT), &mut report);
        let log_starts = read_checkpoint(&fs, &path.join(LOG_START_OFFSET_CHECKPOINT), &mut report);
        let high_watermarks =
            read_checkpoint(&fs, &path.join(REPLICATION_OFFSET_CHECKPOINT), &mut report);
        // Removed at once when asked (an offline repair) or without a delay; else queued, as
        // Kafka queues them.
        let delete_now =
            options.delete_dirs_at_open || options.default_config.file_delete_delay_ms <= 0;
        let mut future_dirs = Vec::new();
        let (partitions, covers_all) = match &scope {
            Scope::All => {
                let listed = list_partitions(&fs, path, delete_now, &mut report)?;
                future_dirs = listed.futures;
                (listed.live, true)
            }
            Scope::Only(only) => (
                only.iter()
                    .map(|tp| (tp.clone(), path.join(tp.dir_name())))
                    .filter(|(_, dir)| fs.is_dir(dir))
                    .collect(),
                only_partitions(&fs, path, only),
            ),
        };
        let load_points = if options.recover_all {
            BTreeMap::new()
        } else {
            recovery_points.clone()
        };
        let clean = report.had_clean_shutdown && !options.recover_all;
        let loaded = load_in_parallel(
            &fs,
            &partitions,
            &options,
            &load_points,
            &log_starts,
            &high_watermarks,
            clean,
        );
        let (logs, locks, unavailable) = sort_loaded(loaded, &mut report);
        let futures = load_futures(
            &fs,
            &future_dirs,
            &options,
            &partitions,
            &log_starts,
            &mut report,
        );
        let dir = Arc::new(Self {
            fs,
            path: path.clone(),
            default_config: options.default_config,
            time: options.time,
            limits: options.limits,
            logs: RwLock::new(logs),
            partition_locks: Mutex::new(locks),
            unavailable: RwLock::new(unavailable),
            scope,
            covers_all,
            had_clean_shutdown: report.had_clean_shutdown,
            broker_epoch,
            recover_all: options.recover_all,
            kept: Mutex::new(Kept {
                recovery_points,
                log_starts,
                high_watermarks,
            }),
            _lock: lock,
            scheduler: Mutex::new(None),
            cleaner: Mutex::new(CleanerSettings::default()),
            cleaner_checkpoint_lock: Mutex::new(()),
            failures: Failures::new(path.clone()),
            futures: RwLock::new(futures),
            pending_deletes: PendingDeletes::default(),
        });
        for pending in &report.pending_deletion {
            dir.pending_deletes.push(pending.clone(), dir.time.now_ms());
        }
        // A checkpointed recovery point above the log end the load found (records past it lost,
        // or a batch-granular truncation's end) is rewritten at once: left on disk, it would
        // count the records appended there next as durable before they are synced, once a new
        // segment's name is (the crash harness, seed 101 workload 13).
        let stale = dir.logs().iter().any(|log| {
            kept_point(&dir, log.topic_partition()).is_some_and(|p| p > log.recovery_point())
        });
        if stale {
            dir.checkpoint()?;
        }
        Ok((dir, report))
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The mapping budget and descriptor cache its logs at the default caps share.
    pub fn limits(&self) -> &SegmentLimits {
        &self.limits
    }

    /// The partition log of `tp`, if there is one.
    pub fn log(&self, tp: &TopicPartition) -> Option<PartitionLog<F>> {
        self.logs.read().get(tp).cloned()
    }

    /// Every partition log.
    pub fn logs(&self) -> Vec<PartitionLog<F>> {
        self.logs.read().values().cloned().collect()
    }

    /// Kafka's `LogManager.truncateTo` for one partition: truncates the log of `tp` (see
    /// [`PartitionLog::truncate_to`]), lowers its cleaner checkpoint entry to the new active
    /// segment's base offset when it was above (Kafka's `maybeTruncateCheckpoint`, for a
    /// compacted log), and then writes the checkpoints at once, so that no
    /// recovery point on disk stays above the truncation: records appended later below a stale
    /// one would otherwise never be synced by a log reopened after an unclean shutdown.
    /// `Ok(false)` when there is no such log or nothing was truncated.
    pub fn truncate_to(&self, tp: &TopicPartition, offset: i64) -> Result<bool> {
        let Some(log) = self.log(tp) else {
            return Ok(false);
        };
        let truncated = log.truncate_to(offset)?;
        if truncated {
            self.truncate_cleaner_checkpoint(&log)?;
            self.checkpoint()?;
        }
        Ok(truncated)
    }

    /// Clean shutdown: stops the scheduler, flushes and closes every log, writes the checkpoints,
    /// then writes the clean-shutdown marker if every partition of the directory is known to be
    /// clean: it was there on open (Kafka's rule), or this handle loaded every partition
    /// directory there was on open and none failed; and no background flush or retention
    /// failed since ([`LogDir::failed_partitions`]). A log that fails to close is recorded
    /// there too; the others are closed, the checkpoints written, no marker, and the first such
    /// error returned. The `.lock` is released when the last handle drops.
    ///
    /// Refused, changing nothing, when this thread is inside a callback of
    /// [`FetchDataInfo::for_each_record`](crate::FetchDataInfo::for_each_record) on a segment of
    /// one of its logs (see [`PartitionLog::close`]).
    pub fn close(&self) -> Result<()> {
        for log in self.logs() {
            log.check_no_loan_held("close")?;
        }
        self.stop_scheduler();
        // One partition that fails to close does not keep the others open (Kafka's shutdown
        // closes every log and then skips the marker of a directory where one failed).
        let mut failed = None;
        for log in self.logs() {
            if let Err(error) = log.close() {
                let now = self.time.now_ms();
                let error = self
                    .failures
                    .record(log.topic_partition(), Work::Flush, error, now);
                failed.get_or_insert(error);
            }
        }
        for future in self.future_logs() {
            if let Err(error) = future.close() {
                log::error!(
                    "{}: the future log failed to close: {error}",
                    future.dir().display()
                );
                failed.get_or_insert(error);
            }
        }
        self.checkpoint()?;
        if let Some(error) = failed {
            return Err(error);
        }
        if self.writes_clean_shutdown_marker() {
            self.write_clean_shutdown_marker()?;
        }
        Ok(())
    }

    /// Writes the marker back with the broker epoch it had on open (-1 without one).
    fn write_clean_shutdown_marker(&self) -> Result<()> {
        let epoch = if self.had_clean_shutdown {
            self.broker_epoch
        } else {
            -1
        };
        CleanShutdownMarker::new(self.fs.clone(), &self.path).write(epoch)
    }

    /// Gives back an open that changed nothing: the clean-shutdown marker it took is written
    /// again, so that a refused command leaves the directory as it found it.
    pub(super) fn abandon_unchanged(&self) -> Result<()> {
        if self.had_clean_shutdown {
            self.write_clean_shutdown_marker()?;
        }
        Ok(())
    }

    /// Whether [`LogDir::close`] writes the clean-shutdown marker (see there).
    pub fn writes_clean_shutdown_marker(&self) -> bool {
        !self.failures.io_failed()
            && (self.had_clean_shutdown || (self.covers_all && self.unavailable.read().is_empty()))
    }
}

impl<F: FileSystem> Drop for LogDir<F> {
    fn drop(&mut self) {
        self.stop_scheduler();
    }
}

/// Whether `only` names every live partition directory of the log directory `path` (which is
/// only listed, not touched).
fn only_partitions<F: FileSystem>(
    fs: &F,
    path: &Path,
    only: &std::collections::BTreeSet<TopicPartition>,
) -> bool {
    listing::log_dir_entries(fs, path).is_ok_and(|entries| {
        entries.iter().all(|(_, kind)| match kind {
            LogDirEntry::Partition(tp, DirKind::Live) => only.contains(tp),
            _ => true,
        })
    })
}

/// What a full open found in the log directory.
struct Listed {
    live: Vec<(TopicPartition, PathBuf)>,
    futures: Vec<(TopicPartition, PathBuf)>,
}

/// The partition directories of a full open: the live ones and the `-future` ones. A `-delete`
/// directory is removed when `delete_now`, else reported to be queued; a `-stray` one (Kafka's
/// KRaft stray replica) and a directory that is not a partition's are reported and left alone.
fn list_partitions<F: FileSystem>(
    fs: &F,
    path: &Path,
    delete_now: bool,
    report: &mut LogDirReport,
) -> Result<Listed> {
    let mut listed = Listed {
        live: Vec::new(),
        futures: Vec::new(),
    };
    for (entry, kind) in listing::log_dir_entries(fs, path).map_err(|e| Error::io(path, e))? {
        match kind {
            LogDirEntry::Partition(tp, DirKind::Live) => listed.live.push((tp, entry)),
            LogDirEntry::Partition(tp, DirKind::Future) => listed.futures.push((tp, entry)),
            LogDirEntry::Partition(_, DirKind::Delete) if !delete_now => {
                report.pending_deletion.push(entry);
            }
            LogDirEntry::Partition(tp, DirKind::Delete) => match remove_dir_all(fs, &entry) {
                Ok(()) => report.deleted_dirs.push(entry),
                Err(error) => report.failed.push(PartitionFailure {
                    topic_partition: tp,
                    path: entry,
                    error,
                }),
            },
            LogDirEntry::Partition(_, DirKind::Stray) => {
                log::warn!(
                    "{}: a stray partition directory, left alone",
                    entry.display()
                );
                report.stray_dirs.push(entry);
            }
            LogDirEntry::NotAPartition => report.not_partitions.push(entry),
        }
    }
    Ok(listed)
}

/// Loads the `-future` directories as future logs (Kafka's `loadLog` with `isFuture`). Two of
/// one partition are both refused (Kafka refuses to start: "Duplicate log directories found").
/// A future log's recovery point is 0 (the checkpoints' entry of its partition is its current
/// log's when this directory holds one), its log start offset the checkpoint's when it has
/// no current log here.
fn load_futures<F: FileSystem>(
    fs: &F,
    dirs: &[(TopicPartition, PathBuf)],
    options: &LogDirOptions,
    live: &[(TopicPartition, PathBuf)],
    log_starts: &BTreeMap<TopicPartition, i64>,
    report: &mut LogDirReport,
) -> BTreeMap<TopicPartition, (PartitionLog<F>, F::Lock)> {
    let (single, duplicates): (Vec<_>, Vec<_>) = dirs
        .iter()
        .cloned()
        .partition(|(tp, _)| dirs.iter().filter(|(other, _)| other == tp).count() == 1);
    for (tp, dir) in duplicates {
        report.failed.push(PartitionFailure {
            topic_partition: tp,
            path: dir.clone(),
            error: Error::PartitionUnavailable {
                path: dir,
                cause: "duplicate future log directories of this partition".into(),
            },
        });
    }
    let starts = log_starts
        .iter()
        .filter(|(tp, _)| !live.iter().any(|(l, _)| l == *tp))
        .map(|(tp, offset)| (tp.clone(), *offset))
        .collect();
    let clean = report.had_clean_shutdown && !options.recover_all;
    let mut futures = BTreeMap::new();
    for (tp, dir, result) in load_in_parallel(
        fs,
        &single,
        options,
        &BTreeMap::new(),
        &starts,
        &BTreeMap::new(),
        clean,
    ) {
        match result {
            Ok((log, load, lock)) => {
                report.futures.insert(tp.clone(), load);
                futures.insert(tp, (log, lock));
            }
            Err(error) => report.failed.push(PartitionFailure {
                topic_partition: tp,
                path: dir,
                error,
            }),
        }
    }
    futures
}
