//! The syncs of the producer snapshots an open writes, made once at the end of the open.
//!
//! Kafka's loader writes each snapshot synced (`takeSnapshot()`: the file's `force`); seglog
//! also syncs the directory after the rename. Made as each snapshot is written, those syncs
//! wait on the file system's journal, which waits behind whatever writeback is under way, once
//! per snapshot and on the recovery thread. While a partition loads, its snapshots are written
//! and renamed unsynced and their paths kept here; before the open returns, each one still
//! there is synced and then the directory once ([`DeferredSyncs::sync`]), so what is durable
//! when the open returns is what it was. A [`LogDir`](crate::LogDir) makes the syncs of all its
//! partitions at once, on several threads, so that they share the journal's commits.
//!
//! A power loss inside the open can leave a snapshot named but empty or torn (its name made
//! durable by another directory sync of the load before its data). The next open reads it as
//! corrupt, deletes it and rebuilds the state from the log and an older snapshot, as it does
//! for any corrupt snapshot (Kafka's `CorruptSnapshotException` path).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use seglog_fs::{File, FileSystem, OpenMode};

use crate::error::{Error, Result};

/// The snapshots written unsynced by a partition's open, shared by the producer state
/// managers of that open.
#[derive(Debug, Clone, Default)]
pub(crate) struct DeferredSyncs {
    paths: Arc<Mutex<Vec<PathBuf>>>,
}

impl DeferredSyncs {
    /// Keeps `path` to be synced.
    pub(crate) fn push(&self, path: PathBuf) {
        self.paths.lock().push(path);
    }

    /// Whether no snapshot waits for its sync.
    #[must_use]
    pub(crate) fn is_empty(&self) -> bool {
        self.paths.lock().is_empty()
    }

    /// Syncs every kept snapshot that is still there (a later step of the load may have deleted
    /// it), then the partition directory `dir` once; forgets them.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the file or directory whose sync failed.
    pub(crate) fn sync<F: FileSystem>(&self, fs: &F, dir: &Path) -> Result<()> {
        let mut paths = std::mem::take(&mut *self.paths.lock());
        if paths.is_empty() {
            return Ok(());
        }
        paths.sort_unstable();
        paths.dedup();
        for path in &paths {
            let file = match fs.open(path, OpenMode::Existing) {
                Ok(file) => file,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(Error::io(path, e)),
            };
            file.sync_data().map_err(|e| Error::io(path, e))?;
        }
        fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
    }
}
