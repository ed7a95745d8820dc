//! [`LogDir`]: a log directory of many partition logs (Kafka's `LogManager` for one `log.dirs`
//! entry): the `.lock` file, the recovery-point and log-start-offset checkpoints, the
//! clean-shutdown marker, parallel loading, and a background scheduler for flush, retention,
//! file deletion and checkpoints.

mod cleaner;
mod load;
mod options;
mod partitions;
mod scheduler;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::{Mutex, RwLock};
use seglog_fs::FileSystem;

use crate::checkpoint::{LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT};
use crate::clean_shutdown::CleanShutdownMarker;
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::partition::PartitionLog;
use crate::time::Time;
use crate::topic_partition::{DirKind, TopicPartition};

use load::load_in_parallel;
pub(crate) use load::read_partition_config;
pub use options::{
    CleanerSettings, LoadProgress, LogDirOptions, LogDirReport, PARTITION_CONFIG_FILE, ProgressFn,
    SchedulerConfig,
};
use partitions::remove_dir_all;
use scheduler::Scheduler;

/// A log directory. Dropping it without [`LogDir::close`] leaves no clean-shutdown marker, so the
/// next open recovers.
pub struct LogDir<F: FileSystem> {
    fs: F,
    path: PathBuf,
    default_config: LogConfig,
    time: Arc<dyn Time>,
    logs: RwLock<BTreeMap<TopicPartition, PartitionLog<F>>>,
    _lock: F::Lock,
    scheduler: Mutex<Option<Scheduler>>,
    cleaner: Mutex<CleanerSettings>,
}

impl<F: FileSystem> std::fmt::Debug for LogDir<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogDir")
            .field("path", &self.path)
            .field("logs", &self.logs.read().len())
            .finish_non_exhaustive()
    }
}

impl<F: FileSystem> LogDir<F> {
    /// Opens (creating if needed) the log directory at `path`: takes the `.lock`, reads and deletes
    /// the clean-shutdown marker, reads the checkpoints, and loads every partition log with
    /// `recovery_threads` threads.
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
    /// let options = || LogDirOptions {
    ///     default_config: LogConfig::default(),
    ///     recovery_threads: 2,
    ///     time: Arc::new(SystemClock),
    ///     progress: None,
    ///     recover_all: false,
    ///     discard: false,
    /// };
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
        fs.create_dir_all(path).map_err(|e| Error::io(path, e))?;
        let lock = fs.try_lock(&path.join(".lock")).map_err(|e| {
            if e.kind() == std::io::ErrorKind::WouldBlock {
                Error::Locked {
                    path: path.to_path_buf(),
                }
            } else {
                Error::io(path.join(".lock"), e)
            }
        })?;
        // Deleted before loading: a crash while loading counts as unclean next time (KAFKA-10471).
        let mut report = LogDirReport {
            had_clean_shutdown: CleanShutdownMarker::new(fs.clone(), path).take()?,
            ..LogDirReport::default()
        };
        let recovery_points =
            read_checkpoint(&fs, &path.join(RECOVERY_POINT_CHECKPOINT), &mut report);
        let log_starts = read_checkpoint(&fs, &path.join(LOG_START_OFFSET_CHECKPOINT), &mut report);
        let mut partitions = Vec::new();
        for entry in fs.read_dir(path).map_err(|e| Error::io(path, e))? {
            let name = entry
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name.starts_with('.') || !fs.is_dir(&entry) {
                continue;
            }
            match TopicPartition::parse_dir(&entry)? {
                (tp, DirKind::Live) => partitions.push((tp, entry)),
                (_, DirKind::Delete) => {
                    remove_dir_all(&fs, &entry)?;
                    report.deleted_dirs.push(entry);
                }
                // Future and stray directories belong to a broker's reassignment: leave them.
                (_, DirKind::Future | DirKind::Stray) => {}
            }
        }
        let (recovery_points, clean) = if options.recover_all {
            (BTreeMap::new(), false)
        } else {
            (recovery_points, report.had_clean_shutdown)
        };
        let loaded = load_in_parallel(
            &fs,
            &partitions,
            &options,
            &recovery_points,
            &log_starts,
            clean,
        )?;
        let mut logs = BTreeMap::new();
        for (tp, log, load) in loaded {
            report.logs.insert(tp.clone(), load);
            logs.insert(tp, log);
        }
        let dir = Arc::new(Self {
            fs,
            path: path.to_path_buf(),
            default_config: options.default_config,
            time: options.time,
            logs: RwLock::new(logs),
            _lock: lock,
            scheduler: Mutex::new(None),
            cleaner: Mutex::new(CleanerSettings::default()),
        });
        Ok((dir, report))
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The partition log of `tp`, if there is one.
    pub fn log(&self, tp: &TopicPartition) -> Option<PartitionLog<F>> {
        self.logs.read().get(tp).cloned()
    }

    /// Every partition log.
    pub fn logs(&self) -> Vec<PartitionLog<F>> {
        self.logs.read().values().cloned().collect()
    }

    /// Writes `recovery-point-offset-checkpoint` (every log's recovery point) and
    /// `log-start-offset-checkpoint` (only logs whose start is past their first segment, as Kafka
    /// writes it).
    pub fn checkpoint(&self) -> Result<()> {
        let logs = self.logs();
        let recovery: BTreeMap<TopicPartition, i64> = logs
            .iter()
            .map(|l| (l.topic_partition().clone(), l.recovery_point()))
            .collect();
        OffsetCheckpoint::new(self.fs.clone(), self.path.join(RECOVERY_POINT_CHECKPOINT))
            .write(&recovery)?;
        let starts: BTreeMap<TopicPartition, i64> = logs
            .iter()
            .filter(|l| {
                l.segments()
                    .keys()
                    .next()
                    .is_some_and(|first| l.log_start_offset() > *first)
            })
            .map(|l| (l.topic_partition().clone(), l.log_start_offset()))
            .collect();
        OffsetCheckpoint::new(self.fs.clone(), self.path.join(LOG_START_OFFSET_CHECKPOINT))
            .write(&starts)?;
        Ok(())
    }

    /// Kafka's `LogManager.truncateTo` for one partition: truncates the log of `tp` (see
    /// [`PartitionLog::truncate_to`]) and then writes the checkpoints at once, so that no
    /// recovery point on disk stays above the truncation: records appended later below a stale
    /// one would otherwise never be synced by a log reopened after an unclean shutdown.
    /// `Ok(false)` when there is no such log or nothing was truncated.
    pub fn truncate_to(&self, tp: &TopicPartition, offset: i64) -> Result<bool> {
        let Some(log) = self.log(tp) else {
            return Ok(false);
        };
        let truncated = log.truncate_to(offset)?;
        if truncated {
            self.checkpoint()?;
        }
        Ok(truncated)
    }

    /// Clean shutdown: stops the scheduler, flushes and closes every log, writes the checkpoints,
    /// then writes the clean-shutdown marker. The `.lock` is released when the last handle drops.
    pub fn close(&self) -> Result<()> {
        self.stop_scheduler();
        for log in self.logs() {
            log.close()?;
        }
        self.checkpoint()?;
        CleanShutdownMarker::new(self.fs.clone(), &self.path).write(-1)?;
        Ok(())
    }
}

impl<F: FileSystem> Drop for LogDir<F> {
    fn drop(&mut self) {
        self.stop_scheduler();
    }
}

fn read_checkpoint<F: FileSystem>(
    fs: &F,
    path: &Path,
    report: &mut LogDirReport,
) -> BTreeMap<TopicPartition, i64> {
    match OffsetCheckpoint::new(fs.clone(), path).read() {
        Ok(entries) => entries,
        Err(e) => {
            // Kafka treats an unreadable recovery-point or log-start checkpoint as empty.
            report.checkpoint_errors.push(e.to_string());
            BTreeMap::new()
        }
    }
}
