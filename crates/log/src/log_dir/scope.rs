//! Which partitions an open of a log directory loads, and opening one partition directory by
//! its path: symlinks resolved first, so that every path to a partition reaches the same lock.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::FileSystem;

use super::{LogDir, LogDirOptions, LogDirReport};
use crate::error::{Error, Result};
use crate::topic_partition::{DirKind, TopicPartition};

/// Which partitions of a log directory [`LogDir::open_scoped`] loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Every partition directory, as Kafka's `LogManager` loads a log directory; `-delete`
    /// directories are removed.
    All,
    /// These partitions only (those whose directory exists): nothing else in the log directory
    /// is loaded, changed or removed. The log directory is listed, names only, to learn whether
    /// these are all its partitions (then [`LogDir::close`] may write the clean-shutdown marker).
    Only(BTreeSet<TopicPartition>),
}

impl Scope {
    /// One partition.
    pub fn partition(tp: TopicPartition) -> Self {
        Self::Only(BTreeSet::from([tp]))
    }
}

impl<F: FileSystem> LogDir<F> {
    /// Opens the one partition directory `partition_dir` (`<log dir>/topic-N`, which need not
    /// exist yet) within its log directory, touching nothing else there ([`Scope::Only`]).
    /// Symlinks are resolved first: the log directory is the real parent of the real partition
    /// directory, whatever path reached it. Returns the log directory, the partition's name and
    /// the open's report; the log is `dir.log(&tp)`, or `None` when the directory does not exist
    /// (then [`LogDir::create_log`] makes it).
    ///
    /// Fails with [`Error::NotAPartitionDir`] when the real directory's name is not `topic-N`,
    /// [`Error::PartitionLocked`] when another writer holds the partition, and
    /// [`Error::PartitionUnavailable`] when it fails to load (the cause is in the message).
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use seglog_log::{LogConfig, LogDir, LogDirOptions, SystemClock, TopicPartition};
    /// use seglog_fs::RealFs;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let root = tempfile::tempdir()?;
    /// let options = || LogDirOptions::default().with_recovery_threads(1);
    /// let (dir, _) = LogDir::open(RealFs, root.path(), options())?;
    /// dir.create_log(&TopicPartition::new("a", 0), None)?;
    /// dir.create_log(&TopicPartition::new("b", 0), None)?;
    /// drop(dir); // no close: an unclean shutdown
    ///
    /// let (dir, tp, report) = LogDir::open_partition(RealFs, &root.path().join("a-0"), options())?;
    /// assert_eq!(tp, TopicPartition::new("a", 0));
    /// assert_eq!(report.logs.keys().collect::<Vec<_>>(), [&tp]); // b-0 was not loaded
    /// assert!(dir.log(&tp).is_some() && dir.log(&TopicPartition::new("b", 0)).is_none());
    /// dir.close()?;
    /// // b-0 was never recovered, so no clean-shutdown marker: the next full open recovers it.
    /// assert!(!dir.writes_clean_shutdown_marker());
    /// assert!(!root.path().join(".kafka_cleanshutdown").exists());
    /// # Ok(())
    /// # }
    /// ```
    pub fn open_partition(
        fs: F,
        partition_dir: &Path,
        options: LogDirOptions,
    ) -> Result<(Arc<Self>, TopicPartition, LogDirReport)> {
        let real = canonical_partition_dir(&fs, partition_dir)?;
        let (tp, kind) = TopicPartition::parse_dir(&real)?;
        let parent = real
            .parent()
            .filter(|_| kind == DirKind::Live)
            .ok_or_else(|| Error::NotAPartitionDir { path: real.clone() })?;
        let (dir, mut report) =
            Self::open_scoped(fs, parent, options, Scope::partition(tp.clone()))?;
        if let Some(failure) = report.failed.pop() {
            // Nothing was loaded: the open leaves the directory as it found it.
            dir.abandon_unchanged()?;
            return Err(match failure.error {
                locked @ Error::PartitionLocked { .. } => locked,
                error => Error::PartitionUnavailable {
                    path: failure.path,
                    cause: error.to_string(),
                },
            });
        }
        Ok((dir, tp, report))
    }
}

/// `partition_dir` with its symlinks resolved: the directory itself if it exists, else its
/// nearest existing ancestor resolved and the rest of the path appended.
fn canonical_partition_dir<F: FileSystem>(fs: &F, partition_dir: &Path) -> Result<PathBuf> {
    let absolute = std::path::absolute(partition_dir).map_err(|e| Error::io(partition_dir, e))?;
    let mut existing = absolute.as_path();
    let mut rest = Vec::new();
    while !fs.exists(existing) {
        let (Some(parent), Some(name)) = (existing.parent(), existing.file_name()) else {
            break;
        };
        rest.push(name.to_owned());
        existing = parent;
    }
    let mut real = fs
        .canonicalize(existing)
        .map_err(|e| Error::io(existing, e))?;
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    Ok(real)
}
