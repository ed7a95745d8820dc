//! [`IndexOptions`]: how an index is opened (Kafka's constructors), for an [`Index`] now or a
//! [`LazyIndex`](crate::LazyIndex) on first use.
#![forbid(unsafe_code)]

use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use crate::budget::MappingBudget;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::file::IndexFile;
use crate::index::Index;
use seglog_fs::Backing;

/// How to open an index file: where it is, its segment's base offset (given, or read from a
/// Kafka file name by [`from_file_name`](Self::from_file_name)), and the options below. A base
/// offset given for a file whose name holds another is refused on open
/// ([`Error::BaseOffsetMismatch`](crate::Error::BaseOffsetMismatch)); a name without one (a
/// scratch file) takes the one given.
/// [`open`](Self::open) opens it now; [`lazy`](Self::lazy) on first use.
///
/// - With [`max_index_size`](Self::max_index_size), Kafka's constructor: a missing file is
///   created and preallocated to `floor(max_index_size / ENTRY_SIZE) * ENTRY_SIZE` bytes (an
///   error if that is below one entry); an existing file is mapped whole and every full slot
///   counts as an entry.
/// - Without it, the file must exist (a missing one is an `Io` error with `NotFound`), and the
///   index's `max_index_size` is 0, so that `reset` resizes it to nothing.
/// - [`read_only`](Self::read_only): Kafka's `writable = false`; the file must exist.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use seglog_mmap_index::OffsetIndex;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("00000000000000000100.index");
/// let mut index = OffsetIndex::options(&path, 100).max_index_size(4096).open()?;
/// index.append(110, 0)?;
/// index.close()?;
/// let read_only = OffsetIndex::options(&path, 100).read_only().open()?;
/// assert_eq!(read_only.entries(), 1);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct IndexOptions<E: Entry> {
    pub(crate) path: PathBuf,
    pub(crate) base_offset: i64,
    /// `Some`: create and preallocate a missing file (Kafka's constructor); `None`: open an
    /// existing file only.
    max_index_size: Option<u32>,
    read_only: bool,
    backing: Backing,
    pub(crate) budget: Option<MappingBudget>,
    _entry: PhantomData<fn() -> E>,
}

impl<E: Entry> Index<E> {
    /// The options to open the index at `path` of the segment based at `base_offset`: the same
    /// as [`IndexOptions::new`].
    pub fn options(path: impl AsRef<Path>, base_offset: i64) -> IndexOptions<E> {
        IndexOptions::new(path, base_offset)
    }

    /// The options to open the index at `path`, based at the offset its Kafka file name holds:
    /// the same as [`IndexOptions::from_file_name`].
    pub fn options_from_file_name(path: impl AsRef<Path>) -> Result<IndexOptions<E>> {
        IndexOptions::from_file_name(path)
    }
}

/// The base offset a Kafka index file's name holds (Kafka's `offsetFromFileName`): the digits
/// before the name's first `.`, as in `00000000000000000100.index` or
/// `00000000000000000100.timeindex.swap`; `None` for a name without them.
pub fn base_offset_from_file_name(path: &Path) -> Option<i64> {
    let name = path.file_name()?.to_str()?;
    let (digits, _) = name.split_once('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

impl<E: Entry> IndexOptions<E> {
    /// Options to open the existing index at `path`, based at the offset its Kafka file name
    /// holds (`00000000000000000100.index` is based at 100); a name without one is
    /// [`Error::NoBaseOffsetInName`](crate::Error::NoBaseOffsetInName).
    pub fn from_file_name(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        match base_offset_from_file_name(path) {
            Some(base_offset) => Ok(Self::new(path, base_offset)),
            None => Err(Error::NoBaseOffsetInName {
                file: path.to_path_buf(),
            }),
        }
    }

    /// Options to open the existing index at `path`, read-write, on a real mapped file, outside
    /// any mapping budget.
    pub fn new(path: impl AsRef<Path>, base_offset: i64) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            base_offset,
            max_index_size: None,
            read_only: false,
            backing: Backing::Mapped,
            budget: None,
            _entry: PhantomData,
        }
    }

    /// Kafka's constructor: creates and preallocates a missing file to
    /// `floor(max_index_size / ENTRY_SIZE) * ENTRY_SIZE` bytes; `reset` resizes the file back to
    /// that. Ignored with [`read_only`](Self::read_only).
    #[must_use]
    pub fn max_index_size(mut self, max_index_size: u32) -> Self {
        self.max_index_size = Some(max_index_size);
        self
    }

    /// Opens an existing index read-only (Kafka's `writable = false`, as `DumpLogSegments`
    /// uses): the file is opened `O_RDONLY` and its bytes up to where its data ends are read
    /// (`pread`) into private memory, so it also works on files and filesystems the process may
    /// not write. It is never mapped: a read-only opener takes no lock, so another process may
    /// trim, truncate or delete the file meanwhile, and a shared mapping would then fault
    /// (`SIGBUS`) on a page past the new end; the copy is what the file held when it was read.
    /// Lookups, `entry`, `sanity_check` and `verify` work; every operation that would modify the
    /// index fails with `ReadOnly`, and `close` only drops the copy. A budget does not count it.
    #[must_use]
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    /// Where the index's bytes live: a real mapped file (the default), or a file of an
    /// [`IndexStore`](seglog_fs::IndexStore) held in anonymous memory.
    #[must_use]
    pub fn backing(mut self, backing: Backing) -> Self {
        self.backing = backing;
        self
    }

    /// Counts the index's mapping against `budget`, which may unmap it while the index is not in
    /// use; the next lookup or append maps it again. A stored backing or a read-only open is
    /// never counted.
    #[must_use]
    pub fn budget(mut self, budget: &MappingBudget) -> Self {
        self.budget = Some(budget.clone());
        self
    }

    /// Opens the index (see the type's documentation for what each option does).
    pub fn open(&self) -> Result<Index<E>> {
        Index::from_file(self.open_file()?)
    }

    /// Refuses a base offset that differs from the one the file name holds.
    pub(crate) fn check_base_offset(&self) -> Result<()> {
        match base_offset_from_file_name(&self.path) {
            Some(from_name) if from_name != self.base_offset => Err(Error::BaseOffsetMismatch {
                file: self.path.clone(),
                from_name,
                given: self.base_offset,
            }),
            _ => Ok(()),
        }
    }

    /// Opens the index file.
    fn open_file(&self) -> Result<IndexFile<E>> {
        self.check_base_offset()?;
        let (backing, path, base, budget) = (
            &self.backing,
            self.path.as_path(),
            self.base_offset,
            self.budget.as_ref(),
        );
        match self.max_index_size {
            _ if self.read_only => IndexFile::open_existing(backing, path, base, true, budget),
            Some(max_index_size) => IndexFile::open(backing, path, base, max_index_size, budget),
            None => IndexFile::open_existing(backing, path, base, false, budget),
        }
    }

    /// Whether the index opens read-only.
    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The backing the index lives on.
    pub(crate) fn backing_ref(&self) -> &Backing {
        &self.backing
    }
}
