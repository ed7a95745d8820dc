//! A log directory (or a single partition directory) opened for inspection: which partition
//! directories it holds, and where its checkpoints live. No `.lock` is taken.

use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;

use super::partition::PartitionView;
use crate::error::{Error, Result};
use crate::topic_partition::TopicPartition;

/// A log directory, or one partition directory, read-only.
#[derive(Debug, Clone)]
pub struct LogDirView<F: FileSystem> {
    fs: F,
    path: PathBuf,
    partitions: Vec<PathBuf>,
}

impl<F: FileSystem> LogDirView<F> {
    /// Opens `path`: a partition directory (`topic-N`) stands for itself; any other directory
    /// is walked for its `topic-N` subdirectories. A directory with none and no `.lock` is not a
    /// log directory: [`Error::NotALogDir`].
    pub fn open(fs: F, path: &Path) -> Result<Self> {
        let partitions = partition_dirs(&fs, path)?;
        if partitions.is_empty()
            && TopicPartition::parse_dir(path).is_err()
            && !fs.exists(&path.join(".lock"))
        {
            return Err(Error::NotALogDir {
                path: path.to_path_buf(),
            });
        }
        Ok(Self {
            fs,
            path: path.to_path_buf(),
            partitions,
        })
    }

    /// The file system it reads through.
    pub fn fs(&self) -> &F {
        &self.fs
    }

    /// The path it was opened at.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The partition directories, sorted by path.
    pub fn partitions(&self) -> &[PathBuf] {
        &self.partitions
    }

    /// Whether the path opened is itself a partition directory.
    pub fn is_partition(&self) -> bool {
        self.partitions.len() == 1 && self.partitions.first().is_some_and(|d| *d == self.path)
    }

    /// The log directory, where the checkpoints live: the parent of a partition directory, else
    /// the path itself.
    pub fn log_dir(&self) -> Option<&Path> {
        if self.is_partition() {
            self.path.parent()
        } else {
            Some(&self.path)
        }
    }

    /// Opens one of the [`partitions`](Self::partitions).
    pub fn partition(&self, dir: &Path) -> Result<PartitionView<F>> {
        PartitionView::open(self.fs.clone(), dir)
    }
}

/// The partition directories under `path`: itself if it is one, else its `topic-N` children,
/// sorted.
pub fn partition_dirs<F: FileSystem>(fs: &F, path: &Path) -> Result<Vec<PathBuf>> {
    if TopicPartition::parse_dir(path).is_ok() && fs.is_dir(path) {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = fs.read_dir(path).map_err(|source| Error::Unreadable {
        path: path.to_path_buf(),
        what: "cannot list",
        source,
    })?;
    let mut dirs: Vec<PathBuf> = entries
        .into_iter()
        .filter(|entry| fs.is_dir(entry) && TopicPartition::parse_dir(entry).is_ok())
        .collect();
    dirs.sort();
    Ok(dirs)
}
