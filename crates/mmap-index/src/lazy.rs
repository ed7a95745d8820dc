//! Lazily opened indexes (Kafka's `LazyIndex`): nothing is created, opened or mapped until the
//! index is first used, and renaming, deleting or closing an index that was never used does not
//! materialize it. With 10,000 segments per broker this is what keeps startup (KAFKA-7283) and
//! shutdown (KAFKA-9373) fast.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use seglog_fs::Backing;

use crate::MappingBudget;
use crate::error::{Error, Result};
use crate::file::{delete_if_exists, exists, rename};
use crate::offset_index::OffsetIndex;
use crate::time_index::TimeIndex;

mod sealed {
    pub trait Sealed {}
    impl Sealed for crate::OffsetIndex {}
    impl Sealed for crate::TimeIndex {}
}

/// The index types a [`LazyIndex`] can hold.
pub trait LazyOpen: sealed::Sealed + Sized {
    /// Opens (creating and preallocating if missing) the index, a mapped file's mapping counted
    /// against `budget`.
    fn open_index(
        backing: &Backing,
        path: &Path,
        base_offset: i64,
        max_index_size: u32,
        budget: Option<&MappingBudget>,
    ) -> Result<Self>;
    /// Closes it (trim, then unmap).
    fn close_index(&mut self) -> Result<()>;
    /// Unmaps and deletes it.
    fn delete_index(&mut self) -> Result<bool>;
    /// Renames it.
    fn rename_index(&mut self, to: &Path) -> Result<()>;
    /// Its current file name.
    fn index_path(&self) -> &Path;
    /// Records a new parent directory.
    fn index_update_parent_dir(&mut self, dir: &Path);
}

impl LazyOpen for OffsetIndex {
    fn open_index(
        backing: &Backing,
        path: &Path,
        base_offset: i64,
        max_index_size: u32,
        budget: Option<&MappingBudget>,
    ) -> Result<Self> {
        Self::open_budgeted(backing, path, base_offset, max_index_size, budget)
    }
    fn close_index(&mut self) -> Result<()> {
        self.close()
    }
    fn delete_index(&mut self) -> Result<bool> {
        self.delete()
    }
    fn rename_index(&mut self, to: &Path) -> Result<()> {
        self.rename(to)
    }
    fn index_path(&self) -> &Path {
        self.path()
    }
    fn index_update_parent_dir(&mut self, dir: &Path) {
        self.update_parent_dir(dir);
    }
}

impl LazyOpen for TimeIndex {
    fn open_index(
        backing: &Backing,
        path: &Path,
        base_offset: i64,
        max_index_size: u32,
        budget: Option<&MappingBudget>,
    ) -> Result<Self> {
        Self::open_budgeted(backing, path, base_offset, max_index_size, budget)
    }
    fn close_index(&mut self) -> Result<()> {
        self.close()
    }
    fn delete_index(&mut self) -> Result<bool> {
        self.delete()
    }
    fn rename_index(&mut self, to: &Path) -> Result<()> {
        self.rename(to)
    }
    fn index_path(&self) -> &Path {
        self.path()
    }
    fn index_update_parent_dir(&mut self, dir: &Path) {
        self.update_parent_dir(dir);
    }
}

/// A lazily opened offset index.
pub type LazyOffsetIndex = LazyIndex<OffsetIndex>;
/// A lazily opened time index.
pub type LazyTimeIndex = LazyIndex<TimeIndex>;

/// An index that is opened on first use. [`LazyIndex::new`] does no I/O at all.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use seglog_mmap_index::LazyOffsetIndex;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("00000000000000000000.index");
/// let mut lazy = LazyOffsetIndex::new(&path, 0, 1024);
/// assert!(!lazy.is_loaded() && !path.exists());
/// lazy.get_mut()?.append(3, 0)?; // creates, preallocates and maps the file
/// assert_eq!(lazy.get()?.lookup(5)?.offset, 3);
/// lazy.close()?;
/// # Ok(()) }
/// ```
pub struct LazyIndex<I> {
    path: PathBuf,
    base_offset: i64,
    max_index_size: u32,
    backing: Backing,
    budget: Option<MappingBudget>,
    index: OnceLock<I>,
    /// Serializes first opens through `&self`.
    opening: parking_lot::Mutex<()>,
}

impl<I> std::fmt::Debug for LazyIndex<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyIndex")
            .field("path", &self.path)
            .field("base_offset", &self.base_offset)
            .field("loaded", &self.index.get().is_some())
            .finish_non_exhaustive()
    }
}

impl<I: LazyOpen> LazyIndex<I> {
    /// Remembers where the index lives. No file is touched.
    pub fn new(path: impl Into<PathBuf>, base_offset: i64, max_index_size: u32) -> Self {
        Self::with_backing(path, base_offset, max_index_size, Backing::Mapped)
    }

    /// [`LazyIndex::new`] for an index on `backing` (see [`Backing`]). No file is touched.
    pub fn with_backing(
        path: impl Into<PathBuf>,
        base_offset: i64,
        max_index_size: u32,
        backing: Backing,
    ) -> Self {
        Self {
            path: path.into(),
            base_offset,
            max_index_size,
            backing,
            budget: None,
            index: OnceLock::new(),
            opening: parking_lot::Mutex::new(()),
        }
    }

    /// Counts the index's mapping against `budget` once it is opened (an index opened already
    /// keeps its mapping outside any budget; a stored backing is never counted). The budget may
    /// unmap the index while it is not in use; the next lookup or append maps it again.
    pub fn set_budget(&mut self, budget: Option<MappingBudget>) {
        self.budget = budget;
    }

    /// The index, opened (and the file created if missing) on first call. Safe to call from
    /// several threads: one opens, the others wait for it.
    pub fn get(&self) -> Result<&I> {
        if let Some(index) = self.index.get() {
            return Ok(index);
        }
        let _opening = self.opening.lock();
        if let Some(index) = self.index.get() {
            return Ok(index);
        }
        let index = I::open_index(
            &self.backing,
            &self.path,
            self.base_offset,
            self.max_index_size,
            self.budget.as_ref(),
        )?;
        Ok(self.index.get_or_init(|| index))
    }

    /// The index for writing, opened on first call.
    pub fn get_mut(&mut self) -> Result<&mut I> {
        if self.index.get().is_none() {
            let index = I::open_index(
                &self.backing,
                &self.path,
                self.base_offset,
                self.max_index_size,
                self.budget.as_ref(),
            )?;
            // We hold `&mut self`: nobody can have set it since the check.
            let _ = self.index.set(index);
        }
        self.index.get_mut().ok_or_else(|| {
            Error::io(
                &self.path,
                "open",
                std::io::Error::other("lazy index failed to initialize"),
            )
        })
    }

    /// The index if it has been opened.
    pub fn get_if_loaded(&self) -> Option<&I> {
        self.index.get()
    }

    /// Whether the index has been opened.
    pub fn is_loaded(&self) -> bool {
        self.index.get().is_some()
    }

    /// The file's current name (the opened index's, if it was renamed through it).
    pub fn path(&self) -> &Path {
        self.index.get().map_or(&self.path, LazyOpen::index_path)
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// Records that the file now lives in `dir` (its directory was renamed); no I/O.
    pub fn update_parent_dir(&mut self, dir: impl AsRef<Path>) {
        if let Some(name) = self.path.file_name() {
            self.path = dir.as_ref().join(name);
        }
        if let Some(index) = self.index.get_mut() {
            index.index_update_parent_dir(dir.as_ref());
        }
    }

    /// Renames the file without opening it. A missing source file is not an error (Kafka's
    /// `LazyIndex.renameTo`), and the new name is taken in every case.
    pub fn rename(&mut self, to: impl AsRef<Path>) -> Result<()> {
        let to = to.as_ref();
        let result = match self.index.get_mut() {
            Some(index) => index.rename_index(to),
            None if !exists(&self.backing, &self.path) => Ok(()),
            None => rename(&self.backing, &self.path, to),
        };
        self.path = to.to_path_buf();
        result
    }

    /// Deletes the file (unmapping it first if opened); false when it did not exist.
    pub fn delete(&mut self) -> Result<bool> {
        match self.index.get_mut() {
            Some(index) => index.delete_index(),
            None => delete_if_exists(&self.backing, &self.path),
        }
    }

    /// Closes the index if it was opened; otherwise does nothing.
    pub fn close(&mut self) -> Result<()> {
        self.index.get_mut().map_or(Ok(()), LazyOpen::close_index)
    }
}
