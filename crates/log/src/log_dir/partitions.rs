//! Creating a partition log (with its own configuration, if given; a failed creation leaves
//! nothing behind) and deleting one: renamed `-delete` at once, so that a crash cannot bring it
//! back, then removed.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use seglog_fs::{File, FileSystem, OpenMode};

use super::load::{load_one, lock_partition};
use super::{LogDir, PARTITION_CONFIG_FILE};
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::partition::{LoadOptions, PartitionLog};
use crate::topic_partition::TopicPartition;

impl<F: FileSystem> LogDir<F> {
    /// Creates the partition log of `tp` (or returns the existing one, and then ignores `config`;
    /// a directory on disk that this handle did not load, being outside its [`Scope`](super::Scope),
    /// is loaded as an open would). With `config`, the partition keeps its own configuration in
    /// `seglog.properties`, which later opens of the directory read; without, it takes the
    /// directory's default. A partition that failed to load is refused
    /// ([`Error::PartitionUnavailable`]); a creation that fails (an invalid `config`, say)
    /// leaves no directory or file behind.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use seglog_log::{LogConfig, LogDir, PARTITION_CONFIG_FILE, TopicPartition};
    /// # use seglog_log::{LogDirOptions, SystemClock};
    /// # use seglog_fs::RealFs;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let options = || LogDirOptions::default();
    /// # let (dir, _) = LogDir::open(RealFs, root.path(), options())?;
    /// let orders = TopicPartition::new("orders", 0);
    /// let log = dir.create_log(&orders, None)?;
    /// assert_eq!(log.dir(), root.path().join("orders-0"));
    /// assert_eq!(*log.config(), LogConfig::default()); // the directory's default
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
    /// assert_eq!(*dir.log(&users).expect("reloaded").config(), compacted);
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
        if let Some((path, cause)) = self.unavailable.read().get(tp) {
            return Err(Error::PartitionUnavailable {
                path: path.clone(),
                cause: cause.clone(),
            });
        }
        let dir = self.path.join(tp.dir_name());
        if self.fs.is_dir(&dir) {
            // On disk but outside this handle's scope: loaded as an open would load it.
            return self.load_existing(&mut logs, tp, &dir);
        }
        if let Some(config) = &config {
            config.validate()?;
        }
        self.fs
            .create_dir_all(&dir)
            .map_err(|e| Error::io(&dir, e))?;
        let lock = lock_partition(&self.fs, &dir)?;
        match self.open_new(&dir, config) {
            Ok(log) => {
                self.partition_locks.lock().insert(tp.clone(), lock);
                logs.insert(tp.clone(), log.clone());
                Ok(log)
            }
            Err(e) => {
                // Nothing of a failed creation stays: the directory is new and locked, so all
                // in it is ours.
                let _ = remove_dir_all(&self.fs, &dir);
                let _ = self.fs.sync_dir(&self.path);
                Err(e)
            }
        }
    }

    fn open_new(&self, dir: &Path, config: Option<LogConfig>) -> Result<PartitionLog<F>> {
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
        let (log, _) = PartitionLog::open_with_limits(
            self.fs.clone(),
            dir,
            config,
            LoadOptions::default(),
            Arc::clone(&self.time),
            &self.limits,
        )?;
        self.fs
            .sync_dir(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        Ok(log)
    }

    /// Loads the existing partition directory `dir` with the checkpoints read on open.
    fn load_existing(
        &self,
        logs: &mut std::collections::BTreeMap<TopicPartition, PartitionLog<F>>,
        tp: &TopicPartition,
        dir: &Path,
    ) -> Result<PartitionLog<F>> {
        let load = {
            let kept = self.kept.lock();
            LoadOptions {
                recovery_point: if self.recover_all {
                    0
                } else {
                    kept.recovery_points.get(tp).copied().unwrap_or(0)
                },
                log_start_offset: kept.log_starts.get(tp).copied().unwrap_or(0),
                had_clean_shutdown: self.had_clean_shutdown && !self.recover_all,
                // What its recovery drops is kept aside, whatever the directory was opened with.
                discard: false,
                topic_id: None,
                high_watermark: kept.high_watermarks.get(tp).copied(),
            }
        };
        let (log, _, lock) = load_one(
            &self.fs,
            dir,
            &self.default_config,
            load,
            &self.time,
            &self.limits,
        )?;
        self.partition_locks.lock().insert(tp.clone(), lock);
        logs.insert(tp.clone(), log.clone());
        Ok(log)
    }

    /// Deletes the partition log of `tp` (Kafka's `asyncDelete`): its directory is renamed
    /// `<tp>.<id>-delete` at once (so a crash cannot bring it back) and removed once the
    /// `file.delete.delay.ms` of the directory's default configuration passed (at once when it
    /// is 0; else by the scheduler or [`LogDir::delete_due_dirs`]); its cleaner checkpoint
    /// entry and any failure record ([`LogDir::failed_partitions`]) go with it. Returns false
    /// when there is no such log.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// use seglog_log::{LogDir, LogDirOptions, MockClock, TopicPartition};
    /// # use seglog_fs::RealFs;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// let clock = MockClock::new(1_700_000_000_000);
    /// let options = LogDirOptions::default().with_time(Arc::new(clock.clone()));
    /// let (dir, _) = LogDir::open(RealFs, root.path(), options)?;
    /// let orders = TopicPartition::new("orders", 0);
    /// let path = dir.create_log(&orders, None)?.dir().to_path_buf();
    /// assert!(path.exists());
    ///
    /// assert!(dir.delete_log(&orders)?);
    /// assert!(!path.exists() && dir.log(&orders).is_none());
    /// let pending = dir.pending_deletions(); // `orders-0.<id>-delete`, for 60 s by default
    /// assert!(pending[0].to_string_lossy().ends_with("-delete") && pending[0].exists());
    /// clock.advance(60_000);
    /// assert_eq!(dir.delete_due_dirs()?, pending);
    /// assert!(!pending[0].exists());
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
        self.rename_to_delete(tp, &from)?;
        self.kept.lock().forget(tp);
        self.partition_locks.lock().remove(tp);
        self.failures.clear(tp);
        self.remove_cleaner_checkpoint(tp)?;
        // At once when `file.delete.delay.ms` is 0.
        self.delete_due_dirs()?;
        Ok(true)
    }

    /// Renames the partition directory `from` of `tp` to `<tp>.<id>-delete`, makes the rename
    /// durable, and queues it for deletion (Kafka's `asyncDelete`).
    pub(super) fn rename_to_delete(&self, tp: &TopicPartition, from: &Path) -> Result<()> {
        let unique = format!(
            "{:016x}{:016x}",
            self.time.now_ms(),
            DELETE_COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let to = self.path.join(format!("{}.{unique}-delete", tp.dir_name()));
        self.fs.rename(from, &to).map_err(|e| Error::io(from, e))?;
        self.fs
            .sync_dir(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        log::info!(
            "{tp}: renamed to {} and queued for deletion after file.delete.delay.ms",
            to.display()
        );
        self.pending_deletes.push(to, self.time.now_ms());
        Ok(())
    }
}

static DELETE_COUNTER: AtomicUsize = AtomicUsize::new(0);

/// Removes `dir` and everything in it, subdirectories included (a partition's
/// `seglog-quarantine` holds one per load that set files aside), as Kafka's `Utils.delete` does.
/// A symlink is removed, never followed: only what `remove_file` refuses as a directory is
/// descended into.
pub(super) fn remove_dir_all<F: FileSystem>(fs: &F, dir: &Path) -> Result<()> {
    for entry in fs.read_dir(dir).map_err(|e| Error::io(dir, e))? {
        match fs.remove_file(&entry) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) if e.kind() == std::io::ErrorKind::IsADirectory => remove_dir_all(fs, &entry)?,
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
