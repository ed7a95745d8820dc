//! Kafka's `TransactionIndex` (4.4): a segment's `.txnindex`, the aborted transactions whose
//! ABORT markers the segment holds, in marker order, for read_committed fetches.
//!
//! One concept a file: `entry` (the 34-byte [`AbortedTxn`]), `file` (the lazily opened file and
//! its position), `query` (reading entries, collect, sanity check); this file holds the index
//! and its writes. Like Kafka's, the file is created only by the first append, never
//! preallocated, and read only up to the handle's position; reading a file that has no open
//! handle (it did not exist at open, or the index was closed) finds no entries, as Kafka 4.4's
//! does.

mod entry;
mod file;
mod query;

use std::path::{Path, PathBuf};

use seglog_fs::{FileSystem, RealFs};

use crate::error::{Error, Result};
pub use entry::{AbortedTxn, CURRENT_VERSION, ENTRY_SIZE};
use file::TxnFile;
pub use query::TxnIndexSearchResult;

/// One segment's transaction index. See the module documentation.
#[derive(Debug)]
pub struct TransactionIndex<F: FileSystem = RealFs> {
    /// The segment's base offset (Kafka's `startOffset`), for the sanity check.
    start_offset: i64,
    file: TxnFile<F>,
    /// The last offset appended since open or reset: Kafka does not read it back from the file.
    last_offset: Option<i64>,
}

impl<F: FileSystem> TransactionIndex<F> {
    /// Kafka's constructor: opens `path` read-write if it exists; otherwise the first append
    /// creates it.
    pub fn open(fs: F, path: impl Into<PathBuf>, start_offset: i64) -> Result<Self> {
        Self::open_known(fs, path, start_offset, None)
    }

    /// [`TransactionIndex::open`], told whether the file exists (from a directory listing)
    /// instead of looking; `None` looks.
    pub(crate) fn open_known(
        fs: F,
        path: impl Into<PathBuf>,
        start_offset: i64,
        exists: Option<bool>,
    ) -> Result<Self> {
        Ok(Self::with_file(
            TxnFile::open(fs, path.into(), false, exists)?,
            start_offset,
        ))
    }

    /// [`TransactionIndex::open`] for a reader that must not write: opened read-only, and
    /// appends fail.
    pub fn open_read_only(fs: F, path: impl Into<PathBuf>, start_offset: i64) -> Result<Self> {
        Ok(Self::with_file(
            TxnFile::open(fs, path.into(), true, None)?,
            start_offset,
        ))
    }

    fn with_file(file: TxnFile<F>, start_offset: i64) -> Self {
        Self {
            start_offset,
            file,
            last_offset: None,
        }
    }

    /// The file's current path (it may not exist).
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// The segment base offset the sanity check holds entries to.
    pub fn start_offset(&self) -> i64 {
        self.start_offset
    }

    /// The path as Kafka's messages print it (`getAbsolutePath`).
    fn absolute_path(&self) -> PathBuf {
        std::path::absolute(self.path()).unwrap_or_else(|_| self.path().to_path_buf())
    }

    /// Kafka's `append`: the last offset must be above the last one appended since open or
    /// reset; then the entry is written at the end, creating the file if needed.
    pub fn append(&mut self, txn: AbortedTxn) -> Result<()> {
        if let Some(current) = self.last_offset
            && current >= txn.last_offset()
        {
            return Err(Error::TxnIndexOrder {
                path: self.absolute_path(),
                last_offset: txn.last_offset(),
                current,
            });
        }
        // Set before the write, as Kafka does.
        self.last_offset = Some(txn.last_offset());
        self.file.write(&txn.to_bytes())
    }

    /// Kafka's `truncateTo`: cuts the file at the first entry whose last offset is at least
    /// `offset`; nothing if there is none.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        if let Some((position, previous)) = self.cut_point(offset)? {
            self.file.truncate(position)?;
            self.last_offset = previous;
        }
        Ok(())
    }

    /// Kafka's `reset`: removes every entry (the file stays, empty; none is created).
    pub fn reset(&mut self) -> Result<()> {
        self.file.truncate(0)?;
        self.last_offset = None;
        Ok(())
    }

    /// Kafka's `flush`: syncs the file if it is open.
    pub fn flush(&mut self) -> Result<()> {
        self.file.flush()
    }

    /// Whether an append or cut since the last flush may be unsynced.
    pub fn is_unsynced(&self) -> bool {
        self.file.is_unsynced()
    }

    /// Kafka's `close`: closes the file. A later append opens it again; reads until then find
    /// no entries (Kafka 4.4's iterator needs an open channel).
    pub fn close(&mut self) {
        self.file.close();
    }

    /// Kafka's `deleteIfExists`: closes and deletes the file; whether it existed.
    pub fn delete_if_exists(&mut self) -> Result<bool> {
        self.file.delete_if_exists()
    }

    /// Kafka's `renameTo`: moves the file, if it exists, to `to`, and uses that name from now on
    /// (even if the move failed).
    pub fn rename_to(&mut self, to: &Path) -> Result<()> {
        self.file.rename_to(to)
    }

    /// Kafka's `updateParentDir`: the same file name, now in `dir`.
    pub fn update_parent_dir(&mut self, dir: &Path) {
        self.file.update_parent_dir(dir);
    }
}
