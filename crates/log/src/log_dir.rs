//! [`LogDir`]: a log directory of many partition logs (Kafka's `LogManager` for one `log.dirs`
//! entry): the `.lock` file, the recovery-point and log-start-offset checkpoints, the
//! clean-shutdown marker, parallel loading, and a background scheduler for flush, retention,
//! file deletion and checkpoints.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};
use seglog_fs::{File, FileSystem, OpenMode};

use crate::checkpoint::{
    CLEANER_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint,
    RECOVERY_POINT_CHECKPOINT,
};
use crate::clean_shutdown::CleanShutdownMarker;
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::partition::{CleanOptions, CleanReport, LoadOptions, LoadReport, PartitionLog};
use crate::time::Time;
use crate::topic_partition::{DirKind, TopicPartition};

/// A partition's own configuration overrides, in Kafka's properties format. Kafka keeps topic
/// configs in its metadata log; seglog keeps them beside the segments, where Kafka ignores them.
pub const PARTITION_CONFIG_FILE: &str = "seglog.properties";

/// How often the scheduler wakes up, and what it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// `log.flush.scheduler.interval.ms`: how often logs past their `flush.ms` are flushed.
    pub flush_check_interval_ms: u64,
    /// `log.retention.check.interval.ms` (Kafka's default: 5 minutes).
    pub retention_check_interval_ms: u64,
    /// `log.flush.offset.checkpoint.interval.ms` (Kafka's default: 1 minute).
    pub checkpoint_interval_ms: u64,
    /// `log.cleaner.backoff.ms`: how often the cleaner looks for a log to compact (Kafka: 15 s).
    pub cleaner_backoff_ms: u64,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            flush_check_interval_ms: 1_000,
            retention_check_interval_ms: 300_000,
            checkpoint_interval_ms: 60_000,
            cleaner_backoff_ms: 15_000,
        }
    }
}

/// Loading progress, reported while a log directory opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProgress {
    /// How many partition logs the directory holds.
    pub total: usize,
    /// How many are loaded.
    pub done: usize,
    /// The one that just finished.
    pub partition: TopicPartition,
}

/// A progress callback.
pub type ProgressFn = dyn Fn(&LoadProgress) + Send + Sync;

/// Options for [`LogDir::open`].
pub struct LogDirOptions {
    /// The configuration of partitions without their own `seglog.properties`.
    pub default_config: LogConfig,
    /// `num.recovery.threads.per.data.dir`: how many logs load at once (Kafka 4.0: 2).
    pub recovery_threads: usize,
    /// The clock.
    pub time: Arc<dyn Time>,
    /// Called after each partition log loads.
    pub progress: Option<Arc<ProgressFn>>,
    /// Recover every segment of every log, as after an unclean shutdown with no recovery point
    /// (what `seglog recover` does), whatever the marker and checkpoints say.
    pub recover_all: bool,
}

impl std::fmt::Debug for LogDirOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogDirOptions")
            .field("default_config", &self.default_config)
            .field("recovery_threads", &self.recovery_threads)
            .finish_non_exhaustive()
    }
}

/// What opening a log directory did.
#[derive(Debug, Default)]
pub struct LogDirReport {
    /// Whether the `.kafka_cleanshutdown` marker was there (it is deleted on open).
    pub had_clean_shutdown: bool,
    /// A checkpoint that could not be read and was treated as empty, as Kafka does.
    pub checkpoint_errors: Vec<String>,
    /// Partition directories pending deletion (`-delete`) that were removed.
    pub deleted_dirs: Vec<PathBuf>,
    /// Every partition log's load report.
    pub logs: BTreeMap<TopicPartition, LoadReport>,
}

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

/// The log cleaner's settings (Kafka's `log.cleaner.*`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CleanerSettings {
    /// `log.cleaner.dedupe.buffer.size`: the key map's memory budget (Kafka: 128 MiB).
    pub dedupe_buffer_bytes: usize,
    /// `log.cleaner.io.max.bytes.per.second`: `None` for no limit (Kafka's default).
    pub io_max_bytes_per_second: Option<f64>,
}

impl Default for CleanerSettings {
    fn default() -> Self {
        Self {
            dedupe_buffer_bytes: 128 * 1024 * 1024,
            io_max_bytes_per_second: None,
        }
    }
}

impl<F: FileSystem> std::fmt::Debug for LogDir<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogDir")
            .field("path", &self.path)
            .field("logs", &self.logs.read().len())
            .finish_non_exhaustive()
    }
}

struct Scheduler {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: JoinHandle<()>,
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

    /// Creates the partition log of `tp` (or returns the existing one, and then ignores `config`).
    /// With `config`, the partition keeps its own configuration in `seglog.properties`, which
    /// later opens of the directory read; without, it takes the directory's default.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use seglog_log::{LogConfig, LogDir, PARTITION_CONFIG_FILE, TopicPartition};
    /// # use seglog_log::{LogDirOptions, SystemClock};
    /// # use seglog_fs::RealFs;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let options = || LogDirOptions {
    /// #     default_config: LogConfig::default(),
    /// #     recovery_threads: 2,
    /// #     time: Arc::new(SystemClock),
    /// #     progress: None,
    /// #     recover_all: false,
    /// # };
    /// # let (dir, _) = LogDir::open(RealFs, root.path(), options())?;
    /// let orders = TopicPartition::new("orders", 0);
    /// let log = dir.create_log(&orders, None)?;
    /// assert_eq!(log.dir(), root.path().join("orders-0"));
    /// assert_eq!(log.config(), &LogConfig::default()); // the directory's default
    /// let again = dir.create_log(&orders, None)?; // the same log
    /// assert_eq!(again.dir(), log.dir());
    ///
    /// let users = TopicPartition::new("users", 0);
    /// let compacted = LogConfig::parse("cleanup.policy=compact")?;
    /// dir.create_log(&users, Some(compacted.clone()))?;
    /// assert!(root.path().join("users-0").join(PARTITION_CONFIG_FILE).exists());
    /// dir.close()?;
    /// drop(dir);
    /// let (dir, _) = LogDir::open(RealFs, root.path(), options())?;
    /// assert_eq!(dir.log(&users).expect("reloaded").config(), &compacted);
    /// # Ok(())
    /// # }
    /// ```
    pub fn create_log(
        &self,
        tp: &TopicPartition,
        config: Option<LogConfig>,
    ) -> Result<PartitionLog<F>> {
        let mut logs = self.logs.write();
        if let Some(log) = logs.get(tp) {
            return Ok(log.clone());
        }
        let dir = self.path.join(tp.dir_name());
        self.fs
            .create_dir_all(&dir)
            .map_err(|e| Error::io(&dir, e))?;
        let config = match config {
            Some(config) => {
                write_file(
                    &self.fs,
                    &dir.join(PARTITION_CONFIG_FILE),
                    config.to_properties().as_bytes(),
                )?;
                config
            }
            None => self.default_config.clone(),
        };
        let (log, _) = PartitionLog::open(
            self.fs.clone(),
            &dir,
            config,
            LoadOptions::default(),
            Arc::clone(&self.time),
        )?;
        self.fs
            .sync_dir(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        logs.insert(tp.clone(), log.clone());
        Ok(log)
    }

    /// Deletes the partition log of `tp`: its directory is renamed `<tp>.<id>-delete` at once (so a
    /// crash cannot bring it back) and then removed. Returns false when there is no such log.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use seglog_log::{LogDir, TopicPartition};
    /// # use seglog_log::{LogConfig, LogDirOptions, SystemClock};
    /// # use seglog_fs::RealFs;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let options = || LogDirOptions {
    /// #     default_config: LogConfig::default(),
    /// #     recovery_threads: 2,
    /// #     time: Arc::new(SystemClock),
    /// #     progress: None,
    /// #     recover_all: false,
    /// # };
    /// # let (dir, _) = LogDir::open(RealFs, root.path(), options())?;
    /// let orders = TopicPartition::new("orders", 0);
    /// let path = dir.create_log(&orders, None)?.dir().to_path_buf();
    /// assert!(path.exists());
    ///
    /// assert!(dir.delete_log(&orders)?);
    /// assert!(!path.exists() && dir.log(&orders).is_none());
    /// for entry in std::fs::read_dir(root.path())? {
    ///     // Not even the `orders-0.<id>-delete` it was renamed to first.
    ///     assert!(!entry?.file_name().to_string_lossy().starts_with("orders"));
    /// }
    /// assert!(!dir.delete_log(&orders)?); // no such log any more
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete_log(&self, tp: &TopicPartition) -> Result<bool> {
        let Some(log) = self.logs.write().remove(tp) else {
            return Ok(false);
        };
        log.wait_for_background_flushes();
        let from = log.dir().to_path_buf();
        drop(log);
        let unique = format!(
            "{:016x}{:016x}",
            self.time.now_ms(),
            DELETE_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let to = self.path.join(format!("{}.{unique}-delete", tp.dir_name()));
        self.fs
            .rename(&from, &to)
            .map_err(|e| Error::io(&from, e))?;
        self.fs
            .sync_dir(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        remove_dir_all(&self.fs, &to)?;
        Ok(true)
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

    /// One pass of the background work: flush logs past `flush.ms`, delete files whose delay
    /// passed. Retention and checkpoints have their own cadence (see [`LogDir::start_scheduler`]).
    pub fn flush_due_logs(&self) -> Result<()> {
        let now = self.time.now_ms();
        for log in self.logs() {
            if now.saturating_sub(log.last_flush_ms()) >= log.config().flush_ms {
                log.flush()?;
            }
            log.delete_expired_files()?;
        }
        Ok(())
    }

    /// Sets the cleaner's memory budget and I/O limit.
    pub fn set_cleaner_settings(&self, settings: CleanerSettings) {
        *self.cleaner.lock() = settings;
    }

    fn cleaner_checkpoint(&self) -> OffsetCheckpoint<F> {
        OffsetCheckpoint::new(self.fs.clone(), self.path.join(CLEANER_OFFSET_CHECKPOINT))
    }

    /// Where the next cleaning of `log` starts (Kafka's `firstDirtyOffset`): the cleaner checkpoint,
    /// or the log start offset when there is none or it is out of the log's range.
    fn first_dirty_offset(&self, log: &PartitionLog<F>) -> i64 {
        let checkpointed = self
            .cleaner_checkpoint()
            .read()
            .ok()
            .and_then(|c| c.get(log.topic_partition()).copied());
        match checkpointed {
            Some(o) if o >= log.log_start_offset() && o <= log.log_end_offset() => o,
            _ => log.log_start_offset(),
        }
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

    /// Compacts the partition log of `tp` now, whatever its dirty ratio, and moves its cleaner
    /// checkpoint. `None` when there is no such log.
    pub fn compact(&self, tp: &TopicPartition) -> Result<Option<CleanReport>> {
        let Some(log) = self.log(tp) else {
            return Ok(None);
        };
        let settings = *self.cleaner.lock();
        let options = CleanOptions {
            first_dirty_offset: self.first_dirty_offset(&log),
            dedupe_buffer_bytes: settings.dedupe_buffer_bytes,
            io_max_bytes_per_second: settings.io_max_bytes_per_second,
        };
        let report = log.clean(&options)?;
        if !report.aborted {
            let checkpoint = self.cleaner_checkpoint();
            let mut entries = checkpoint.read().unwrap_or_default();
            entries.insert(tp.clone(), report.end_offset);
            checkpoint.write(&entries)?;
        }
        Ok(Some(report))
    }

    /// Kafka's `grabFilthiestCompactedLog` and one cleaning: among logs with `cleanup.policy`
    /// compact, the one with the highest dirty ratio above `min.cleanable.dirty.ratio` (strictly),
    /// or any with dirty bytes whose oldest dirty record is past `max.compaction.lag.ms`.
    pub fn run_cleaner(&self) -> Result<Option<(TopicPartition, CleanReport)>> {
        let now = self.time.now_ms();
        let mut best: Option<(f64, TopicPartition)> = None;
        for log in self.logs() {
            let config = log.config();
            if !config.cleanup_policy.compact {
                continue;
            }
            let first_dirty = self.first_dirty_offset(&log);
            let (_, dirty, ratio) = log.dirty_ratio(first_dirty)?;
            let mut overdue = false;
            if config.max_compaction_lag_ms < i64::MAX && dirty > 0 {
                let uncleanable = log.first_uncleanable_offset(first_dirty)?;
                for (base, segment) in log.segments().range(..uncleanable) {
                    if *base >= first_dirty || segment.read_next_offset()? > first_dirty {
                        let ts = segment.first_batch_timestamp()?;
                        overdue |= ts < now.saturating_sub(config.max_compaction_lag_ms);
                    }
                }
            }
            let eligible = (overdue && dirty > 0) || ratio > config.min_cleanable_dirty_ratio;
            if eligible && best.as_ref().is_none_or(|(r, _)| ratio > *r) {
                best = Some((ratio, log.topic_partition().clone()));
            }
        }
        let Some((_, tp)) = best else { return Ok(None) };
        Ok(self.compact(&tp)?.map(|report| (tp, report)))
    }

    /// Runs retention on every log.
    pub fn run_retention(&self) -> Result<usize> {
        let mut deleted = 0;
        for log in self.logs() {
            deleted += log.delete_old_segments()?.total();
            deleted += log.delete_expired_files()?;
        }
        Ok(deleted)
    }

    /// Starts the background scheduler (one thread): flush checks, retention and checkpoints at
    /// their intervals. [`LogDir::close`] stops it and waits for it.
    pub fn start_scheduler(self: &Arc<Self>, config: SchedulerConfig) {
        let mut slot = self.scheduler.lock();
        if slot.is_some() {
            return;
        }
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let me = Arc::downgrade(self);
        let stop_thread = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let tick = Duration::from_millis(config.flush_check_interval_ms.max(1));
            let mut since_retention = 0_u64;
            let mut since_checkpoint = 0_u64;
            let mut since_cleaner = 0_u64;
            loop {
                {
                    let (lock, cond) = &*stop_thread;
                    let mut stopped = lock.lock();
                    if !*stopped {
                        cond.wait_for(&mut stopped, tick);
                    }
                    if *stopped {
                        return;
                    }
                }
                let Some(dir) = me.upgrade() else { return };
                // Errors are retried on the next tick; a failing directory stays visible through
                // the foreground calls, which return them.
                let _ = dir.flush_due_logs();
                since_retention += config.flush_check_interval_ms;
                since_checkpoint += config.flush_check_interval_ms;
                if since_retention >= config.retention_check_interval_ms {
                    since_retention = 0;
                    let _ = dir.run_retention();
                }
                if since_checkpoint >= config.checkpoint_interval_ms {
                    since_checkpoint = 0;
                    let _ = dir.checkpoint();
                }
                since_cleaner += config.flush_check_interval_ms;
                if since_cleaner >= config.cleaner_backoff_ms {
                    since_cleaner = 0;
                    // Clean while there is something to clean, one log at a time.
                    while let Ok(Some(_)) = dir.run_cleaner() {}
                }
            }
        });
        *slot = Some(Scheduler { stop, handle });
    }

    fn stop_scheduler(&self) {
        if let Some(scheduler) = self.scheduler.lock().take() {
            let (lock, cond) = &*scheduler.stop;
            *lock.lock() = true;
            cond.notify_all();
            let _ = scheduler.handle.join();
        }
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

static DELETE_COUNTER: AtomicUsize = AtomicUsize::new(0);

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

fn remove_dir_all<F: FileSystem>(fs: &F, dir: &Path) -> Result<()> {
    for entry in fs.read_dir(dir).map_err(|e| Error::io(dir, e))? {
        match fs.remove_file(&entry) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&entry, e)),
        }
    }
    let _ = fs.remove_dir(dir);
    Ok(())
}

fn write_file<F: FileSystem>(fs: &F, path: &Path, bytes: &[u8]) -> Result<()> {
    let file = fs
        .open(path, OpenMode::CreateOrOpen)
        .map_err(|e| Error::io(path, e))?;
    file.set_len(0).map_err(|e| Error::io(path, e))?;
    file.write_all_at(bytes, 0)
        .map_err(|e| Error::io(path, e))?;
    file.sync_data().map_err(|e| Error::io(path, e))
}

fn read_partition_config<F: FileSystem>(
    fs: &F,
    dir: &Path,
    default: &LogConfig,
) -> Result<LogConfig> {
    let path = dir.join(PARTITION_CONFIG_FILE);
    let file = match fs.open(&path, OpenMode::ReadOnly) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(default.clone()),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let len = usize::try_from(file.len().map_err(|e| Error::io(&path, e))?).unwrap_or(0);
    let mut buf = vec![0; len.min(1 << 20)];
    file.read_exact_at(&mut buf, 0)
        .map_err(|e| Error::io(&path, e))?;
    LogConfig::parse(&String::from_utf8_lossy(&buf))
}

type Loaded<F> = (TopicPartition, PartitionLog<F>, LoadReport);

fn load_in_parallel<F: FileSystem>(
    fs: &F,
    partitions: &[(TopicPartition, PathBuf)],
    options: &LogDirOptions,
    recovery_points: &BTreeMap<TopicPartition, i64>,
    log_starts: &BTreeMap<TopicPartition, i64>,
    had_clean_shutdown: bool,
) -> Result<Vec<Loaded<F>>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Result<Loaded<F>>>> = Mutex::new(Vec::new());
    let threads = options.recovery_threads.clamp(1, partitions.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((tp, dir)) = partitions.get(i) else {
                        return;
                    };
                    if failed.load(Ordering::Relaxed) {
                        return;
                    }
                    let load = LoadOptions {
                        recovery_point: recovery_points.get(tp).copied().unwrap_or(0),
                        log_start_offset: log_starts.get(tp).copied().unwrap_or(0),
                        had_clean_shutdown,
                    };
                    let result = read_partition_config(fs, dir, &options.default_config).and_then(
                        |config| {
                            PartitionLog::open(
                                fs.clone(),
                                dir,
                                config,
                                load,
                                Arc::clone(&options.time),
                            )
                            .map(|(log, report)| (tp.clone(), log, report))
                        },
                    );
                    failed.fetch_or(result.is_err(), Ordering::Relaxed);
                    results.lock().push(result);
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if let Some(progress) = &options.progress {
                        progress(&LoadProgress {
                            total: partitions.len(),
                            done: finished,
                            partition: tp.clone(),
                        });
                    }
                }
            });
        }
    });
    results.into_inner().into_iter().collect()
}
