//! Creating a partition log (with its own configuration, if given) and deleting one: renamed
//! `-delete` at once, so that a crash cannot bring it back, then removed.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use seglog_fs::{File, FileSystem, OpenMode};

use super::{LogDir, PARTITION_CONFIG_FILE};
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::partition::{LoadOptions, PartitionLog};
use crate::topic_partition::TopicPartition;

impl<F: FileSystem> LogDir<F> {
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
    /// #     discard: false,
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
    /// #     discard: false,
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
}

static DELETE_COUNTER: AtomicUsize = AtomicUsize::new(0);

pub(super) fn remove_dir_all<F: FileSystem>(fs: &F, dir: &Path) -> Result<()> {
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
