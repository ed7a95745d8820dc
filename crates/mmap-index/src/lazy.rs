//! Lazily opened indexes (Kafka's `LazyIndex`): nothing is created, opened or mapped until the
//! index is first used, and renaming, deleting or closing an index that was never used does not
//! materialize it. With 10,000 segments per broker this is what keeps startup (KAFKA-7283) and
//! shutdown (KAFKA-9373) fast.
#![forbid(unsafe_code)]

use std::path::Path;
use std::sync::OnceLock;

use crate::budget::MappingBudget;
use crate::entry::{Entry, OffsetEntry, TimeEntry};
use crate::error::{Error, Result};
use crate::file::{delete_if_exists, exists, rename, sync_if_exists};
use crate::index::Index;
use crate::options::IndexOptions;

/// A lazily opened offset index.
pub type LazyOffsetIndex = LazyIndex<OffsetEntry>;
/// A lazily opened time index.
pub type LazyTimeIndex = LazyIndex<TimeEntry>;

/// An index that is opened on first use, with the [`IndexOptions`] it was made from
/// ([`IndexOptions::lazy`]), which does no I/O at all.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use seglog_mmap_index::{LazyOffsetIndex, OffsetIndex};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("00000000000000000000.index");
/// let mut lazy: LazyOffsetIndex = OffsetIndex::options(&path, 0).max_index_size(1024).lazy();
/// assert!(!lazy.is_loaded() && !path.exists());
/// lazy.get_mut()?.append(3, 0)?; // creates, preallocates and maps the file
/// assert_eq!(lazy.get()?.lookup(5)?.offset, 3);
/// lazy.close()?;
/// # Ok(()) }
/// ```
pub struct LazyIndex<E: Entry> {
    /// How to open it; its path follows renames and directory moves.
    options: IndexOptions<E>,
    index: OnceLock<Index<E>>,
    /// Serializes first opens through `&self`.
    opening: parking_lot::Mutex<()>,
}

impl<E: Entry> std::fmt::Debug for LazyIndex<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyIndex")
            .field("path", &self.options.path)
            .field("base_offset", &self.options.base_offset)
            .field("loaded", &self.index.get().is_some())
            .finish_non_exhaustive()
    }
}

impl<E: Entry> IndexOptions<E> {
    /// A [`LazyIndex`] that opens the index with these options on first use. No file is
    /// touched.
    pub fn lazy(self) -> LazyIndex<E> {
        LazyIndex {
            options: self,
            index: OnceLock::new(),
            opening: parking_lot::Mutex::new(()),
        }
    }
}

impl<E: Entry> LazyIndex<E> {
    /// Counts the index's mapping against `budget` once it is opened (an index opened already
    /// keeps its mapping outside any budget; a stored backing is never counted). The budget may
    /// unmap the index while it is not in use; the next lookup or append maps it again.
    pub fn set_budget(&mut self, budget: Option<MappingBudget>) {
        self.options.budget = budget;
    }

    /// The index, opened (and the file created if missing) on first call. Safe to call from
    /// several threads: one opens, the others wait for it.
    pub fn get(&self) -> Result<&Index<E>> {
        if let Some(index) = self.index.get() {
            return Ok(index);
        }
        let _opening = self.opening.lock();
        if let Some(index) = self.index.get() {
            return Ok(index);
        }
        let index = self.options.open()?;
        Ok(self.index.get_or_init(|| index))
    }

    /// The index for writing, opened on first call.
    pub fn get_mut(&mut self) -> Result<&mut Index<E>> {
        if self.index.get().is_none() {
            let index = self.options.open()?;
            // We hold `&mut self`: nobody can have set it since the check.
            let _ = self.index.set(index);
        }
        self.index.get_mut().ok_or_else(|| {
            Error::io(
                &self.options.path,
                "open",
                std::io::Error::other("lazy index failed to initialize"),
            )
        })
    }

    /// The index if it has been opened.
    pub fn get_if_loaded(&self) -> Option<&Index<E>> {
        self.index.get()
    }

    /// Whether the index has been opened.
    pub fn is_loaded(&self) -> bool {
        self.index.get().is_some()
    }

    /// The file's current name (the opened index's, if it was renamed through it).
    pub fn path(&self) -> &Path {
        self.index.get().map_or(&self.options.path, Index::path)
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.options.base_offset
    }

    /// Records that the file now lives in `dir` (its directory was renamed); no I/O.
    pub fn update_parent_dir(&mut self, dir: impl AsRef<Path>) {
        if let Some(name) = self.options.path.file_name() {
            self.options.path = dir.as_ref().join(name);
        }
        if let Some(index) = self.index.get_mut() {
            index.update_parent_dir(dir.as_ref());
        }
    }

    /// Renames the file without opening it. A missing source file is not an error (Kafka's
    /// `LazyIndex.renameTo`), and the new name is taken in every case.
    pub fn rename(&mut self, to: impl AsRef<Path>) -> Result<()> {
        let to = to.as_ref();
        let (backing, path) = (self.options.backing_ref(), &self.options.path);
        let result = match self.index.get_mut() {
            Some(index) => index.rename(to),
            None if !exists(backing, path) => Ok(()),
            None => rename(backing, path, to),
        };
        self.options.path = to.to_path_buf();
        result
    }

    /// Deletes the file (unmapping it first if opened); false when it did not exist.
    pub fn delete(&mut self) -> Result<bool> {
        match self.index.get_mut() {
            Some(index) => index.delete(),
            None => delete_if_exists(self.options.backing_ref(), &self.options.path),
        }
    }

    /// Makes the file durable (Kafka's `flush`, which opens a lazy index to `msync` it): the
    /// opened index is flushed; a file not opened here is synced without mapping it, as its
    /// pages may still be unsynced (written by recovery, or before a reopen). Nothing for a
    /// missing file or read-only options.
    pub fn flush(&self) -> Result<()> {
        match self.index.get() {
            Some(index) => index.flush(),
            None if self.options.is_read_only() => Ok(()),
            None => sync_if_exists(self.options.backing_ref(), &self.options.path).map(|_| ()),
        }
    }

    /// Closes the index if it was opened; otherwise does nothing.
    pub fn close(&mut self) -> Result<()> {
        self.index.get_mut().map_or(Ok(()), Index::close)
    }
}
