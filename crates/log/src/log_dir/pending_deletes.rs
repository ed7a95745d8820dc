//! `-delete` directories waiting for `file.delete.delay.ms` (Kafka's `LogManager.logsToBeDeleted`
//! and `deleteLogs`): a deleted partition's directory, renamed at once so that a crash cannot
//! bring it back, and one found on open, are removed once the delay of the directory's default
//! configuration passed since they were queued, by the scheduler or [`LogDir::delete_due_dirs`].

use std::path::{Path, PathBuf};

use parking_lot::Mutex;
use seglog_fs::FileSystem;

use super::LogDir;
use super::partitions::remove_dir_all;
use crate::error::Result;

/// The queue: each directory and when it was queued (the log directory's clock).
#[derive(Debug, Default)]
pub(super) struct PendingDeletes(Mutex<Vec<(PathBuf, i64)>>);

impl PendingDeletes {
    pub(super) fn push(&self, dir: PathBuf, now: i64) {
        self.0.lock().push((dir, now));
    }

    /// Takes the directories whose delay passed at `now`.
    fn take_due(&self, now: i64, delay_ms: i64) -> Vec<PathBuf> {
        let mut queue = self.0.lock();
        let (due, waiting) = std::mem::take(&mut *queue)
            .into_iter()
            .partition(|(_, queued)| now.saturating_sub(*queued) >= delay_ms);
        *queue = waiting;
        due.into_iter().map(|(dir, _)| dir).collect()
    }

    fn list(&self) -> Vec<PathBuf> {
        self.0.lock().iter().map(|(dir, _)| dir.clone()).collect()
    }
}

impl<F: FileSystem> LogDir<F> {
    /// Kafka's `deleteLogs`: removes the `-delete` directories queued at least
    /// `file.delete.delay.ms` (of the directory's default configuration) ago, and returns them.
    /// A directory that fails to be removed is logged and dropped from the queue, as Kafka
    /// does (the next open finds it and queues it again); the first such error is returned
    /// after the others were removed.
    pub fn delete_due_dirs(&self) -> Result<Vec<PathBuf>> {
        let now = self.time.now_ms();
        let due = self
            .pending_deletes
            .take_due(now, self.default_config.file_delete_delay_ms);
        let mut removed = Vec::new();
        let mut failed = None;
        for dir in due {
            match remove_dir(&self.fs, &self.path, &dir) {
                Ok(()) => removed.push(dir),
                Err(error) => {
                    log::error!(
                        "{}: could not remove the deleted partition: {error}",
                        dir.display()
                    );
                    failed.get_or_insert(error);
                }
            }
        }
        failed.map_or(Ok(removed), Err)
    }

    /// The `-delete` directories waiting for their delay.
    pub fn pending_deletions(&self) -> Vec<PathBuf> {
        self.pending_deletes.list()
    }
}

/// Removes `dir` and makes its removal durable (a sync of the log directory `parent`).
fn remove_dir<F: FileSystem>(fs: &F, parent: &Path, dir: &Path) -> Result<()> {
    remove_dir_all(fs, dir)?;
    fs.sync_dir(parent)
        .map_err(|e| crate::error::Error::io(parent, e))
}
