//! `OffsetIndex`: the `.index` file, mapping offsets to `.log` positions (Kafka's
//! `OffsetIndex`), and its lock-free read handle.

use std::path::{Path, PathBuf};

use crate::MappingBudget;
use crate::entry::{Entry, OffsetEntry, OffsetPosition, kafka_absolute};
use crate::error::{CorruptKind, Error, IndexKind, Result};
use crate::file::{IndexFile, gone_error, relative};
use crate::map::MmapMemory;
use crate::raw::{Bound, Field, Reader};
use crate::store::Backing;
use crate::verify::{self, VerifyReport};

/// A memory-mapped offset index (`.index`): sparse `(offset, position)` entries with strictly
/// increasing offsets, 8 bytes each, big-endian.
///
/// There is one writer (this value; mutations take `&mut self`) and any number of lock-free
/// readers ([`OffsetIndex::reader`]). Dropping the index unmaps it, like [`OffsetIndex::unmap`].
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use seglog_mmap_index::{OffsetIndex, OffsetPosition};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("00000000000000000100.index");
/// let mut index = OffsetIndex::open(&path, 100, 4096)?; // creates and preallocates
/// assert_eq!(index.max_entries(), 512);
/// index.append(110, 0)?;
/// index.append(120, 4096)?;
///
/// let reader = index.reader(); // cloneable, Send + Sync, takes no lock
/// let found = std::thread::spawn(move || reader.lookup(115)).join().unwrap()?;
/// assert_eq!(found, OffsetPosition { offset: 110, position: 0 });
/// // Below the first entry: the base offset at position 0.
/// assert_eq!(index.lookup(105)?, OffsetPosition { offset: 100, position: 0 });
///
/// index.close()?; // trims the file to its 2 entries, then unmaps
/// assert_eq!(std::fs::metadata(&path)?.len(), 16);
/// # Ok(()) }
/// ```
pub struct OffsetIndex {
    file: IndexFile<OffsetEntry>,
    last_offset: i64,
}

impl std::fmt::Debug for OffsetIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetIndex")
            .field("path", &self.file.path())
            .field("base_offset", &self.file.base_offset())
            .field("entries", &self.file.entries())
            .field("max_entries", &self.file.max_entries())
            .field("last_offset", &self.last_offset)
            .finish_non_exhaustive()
    }
}

impl OffsetIndex {
    /// The size of one entry in bytes.
    pub const ENTRY_SIZE: usize = OffsetEntry::SIZE;

    /// Opens the index at `path`, as Kafka's constructor does: a missing file is created and
    /// preallocated to `floor(max_index_size / 8) * 8` bytes (an error if that is below one
    /// entry); an existing file is mapped whole and every full slot counts as an entry.
    pub fn open(path: impl AsRef<Path>, base_offset: i64, max_index_size: u32) -> Result<Self> {
        Self::open_with(&Backing::Mapped, path, base_offset, max_index_size)
    }

    /// Opens an existing index and never creates one (a missing file is an `Io` error with
    /// `NotFound`). Its `max_index_size` is 0, so [`OffsetIndex::reset`] resizes it to nothing.
    pub fn open_existing(path: impl AsRef<Path>, base_offset: i64) -> Result<Self> {
        Self::open_existing_with(&Backing::Mapped, path, base_offset)
    }

    /// Opens an existing index read-only (Kafka's `writable = false`, as `DumpLogSegments`
    /// uses): the file is opened `O_RDONLY` and mapped `PROT_READ`, so it also works on files
    /// and filesystems the process may not write. Lookups, `entry`, `sanity_check` and `verify`
    /// work; every operation that would modify the index fails with `ReadOnly`, and `close`
    /// only unmaps.
    pub fn open_read_only(path: impl AsRef<Path>, base_offset: i64) -> Result<Self> {
        Self::open_read_only_with(&Backing::Mapped, path, base_offset)
    }

    /// [`OffsetIndex::open`] on `backing`: a real mapped file, or a file of an
    /// [`IndexStore`](crate::IndexStore) held in anonymous memory.
    pub fn open_with(
        backing: &Backing,
        path: impl AsRef<Path>,
        base_offset: i64,
        max_index_size: u32,
    ) -> Result<Self> {
        Self::open_budgeted(backing, path.as_ref(), base_offset, max_index_size, None)
    }

    /// As [`OffsetIndex::open`], with the mapping counted against `budget`, which may unmap it while
    /// the index is not in use; the next lookup or append maps it again.
    pub fn open_in(
        path: impl AsRef<Path>,
        base_offset: i64,
        max_index_size: u32,
        budget: &MappingBudget,
    ) -> Result<Self> {
        Self::open_budgeted(
            &Backing::Mapped,
            path.as_ref(),
            base_offset,
            max_index_size,
            Some(budget),
        )
    }

    pub(crate) fn open_budgeted(
        backing: &Backing,
        path: &Path,
        base_offset: i64,
        max_index_size: u32,
        budget: Option<&MappingBudget>,
    ) -> Result<Self> {
        Self::from_file(IndexFile::open(
            backing,
            path,
            base_offset,
            max_index_size,
            budget,
        )?)
    }

    /// [`OffsetIndex::open_existing`] on `backing`.
    pub fn open_existing_with(
        backing: &Backing,
        path: impl AsRef<Path>,
        base_offset: i64,
    ) -> Result<Self> {
        Self::from_file(IndexFile::open_existing(
            backing,
            path.as_ref(),
            base_offset,
        )?)
    }

    /// [`OffsetIndex::open_read_only`] on `backing`.
    pub fn open_read_only_with(
        backing: &Backing,
        path: impl AsRef<Path>,
        base_offset: i64,
    ) -> Result<Self> {
        Self::from_file(IndexFile::open_read_only(
            backing,
            path.as_ref(),
            base_offset,
        )?)
    }

    /// Whether the index was opened with [`OffsetIndex::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.file.is_read_only()
    }

    fn from_file(file: IndexFile<OffsetEntry>) -> Result<Self> {
        let mut index = Self {
            file,
            last_offset: 0,
        };
        index.last_offset = index.read_last_entry()?.offset;
        Ok(index)
    }

    fn read_last_entry(&self) -> Result<OffsetPosition> {
        let base = self.file.base_offset();
        self.file.view(|v| {
            v.entries()
                .checked_sub(1)
                .and_then(|slot| v.entry(slot))
                .map_or(
                    OffsetPosition {
                        offset: base,
                        position: 0,
                    },
                    |e| e.decode(base),
                )
        })
    }

    /// Appends `(offset, position)`. Fails when the index is full, when `offset` is not larger
    /// than the last offset (unless the index is empty), or when `offset` is below the base or
    /// more than `i32::MAX` past it. Positions are not checked, as in Kafka.
    pub fn append(&mut self, offset: i64, position: u32) -> Result<()> {
        self.file.check_writable()?;
        if self.is_full() {
            return Err(Error::IndexFull {
                file: self.file.path().to_path_buf(),
                kind: IndexKind::Offset,
                entries: self.entries(),
            });
        }
        if self.entries() != 0 && offset <= self.last_offset {
            return Err(Error::InvalidOffset {
                file: self.file.path().to_path_buf(),
                offset,
                slot: self.entries(),
                last_offset: self.last_offset,
            });
        }
        let relative = self.file.relative_offset(offset)?;
        self.file.push(&OffsetEntry::new(relative, position))?;
        self.last_offset = offset;
        Ok(())
    }

    /// The entry with the largest offset at most `target`, or `(base_offset, 0)` when there is
    /// none. Kafka's warm-section search.
    pub fn lookup(&self, target: i64) -> Result<OffsetPosition> {
        let base = self.base_offset();
        self.file.view(|v| {
            v.floor(target).unwrap_or(OffsetPosition {
                offset: base,
                position: 0,
            })
        })
    }

    /// The `n`th entry.
    pub fn entry(&self, n: usize) -> Result<OffsetPosition> {
        let base = self.base_offset();
        self.file
            .view(|v| v.entry(n).map(|e| e.decode(base)))?
            .ok_or_else(|| Error::EntryOutOfRange {
                file: self.file.path().to_path_buf(),
                kind: IndexKind::Offset,
                slot: n,
                entries: self.entries(),
            })
    }

    /// An entry whose position is at least `start.position + fetch_size`: an offset guaranteed
    /// to lie past a fetch of `fetch_size` bytes from `start` (not necessarily the smallest such
    /// offset, as in Kafka). `None` when the index has no such entry.
    pub fn fetch_upper_bound_offset(
        &self,
        start: OffsetPosition,
        fetch_size: u32,
    ) -> Result<Option<OffsetPosition>> {
        let base = self.base_offset();
        self.file.view(|v| upper_bound(v, base, start, fetch_size))
    }

    /// Removes every entry whose offset is at least `offset` (Kafka's three cases). Truncating
    /// past the last entry changes nothing. The file keeps its length.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let base = self.base_offset();
        let entries =
            self.file.view(
                |v| match v.slot_for(offset, Field::Key, Bound::LargestLower) {
                    None => 0,
                    Some(slot) if v.entry(slot).is_some_and(|e| e.offset(base) == offset) => slot,
                    Some(slot) => slot + 1,
                },
            )?;
        self.truncate_to_entries(entries)
    }

    /// Removes every entry.
    pub fn truncate(&mut self) -> Result<()> {
        self.truncate_to_entries(0)
    }

    fn truncate_to_entries(&mut self, entries: usize) -> Result<()> {
        self.file.set_entries(entries)?;
        self.last_offset = self.read_last_entry()?.offset;
        Ok(())
    }

    /// Removes every entry and resizes the file back to `max_index_size`.
    pub fn reset(&mut self) -> Result<()> {
        self.file.reset()?;
        self.last_offset = self.read_last_entry()?.offset;
        Ok(())
    }

    /// Resizes the file to `floor(new_size / 8) * 8` bytes and remaps it; false when that is
    /// already its size. Refuses to cut off entries.
    pub fn resize(&mut self, new_size: u32) -> Result<bool> {
        self.file.resize(new_size)
    }

    /// Shrinks the file to exactly its entries.
    pub fn trim_to_valid_size(&mut self) -> Result<bool> {
        self.file.trim_to_valid_size()
    }

    /// Kafka's `sanityCheck`, with Kafka's conditions, order and messages. Reads no entries.
    pub fn sanity_check(&self) -> Result<()> {
        match self.sanity_problems().into_iter().next() {
            None => Ok(()),
            Some(corruption) => Err(Error::CorruptIndex {
                file: self.file.path().to_path_buf(),
                kind: IndexKind::Offset,
                corruption,
            }),
        }
    }

    fn sanity_problems(&self) -> Vec<CorruptKind> {
        let mut found = Vec::new();
        let base = self.base_offset();
        // Kafka's wrapping arithmetic, not the saturated `last_offset`: see `kafka_absolute`.
        let last_offset = self
            .file
            .view(|v| {
                v.entries()
                    .checked_sub(1)
                    .and_then(|slot| v.entry(slot))
                    .map(|e| kafka_absolute(base, e.relative()))
            })
            .ok()
            .flatten()
            .unwrap_or(self.last_offset);
        if self.entries() != 0 && last_offset < base {
            found.push(CorruptKind::LastOffsetBelowBase {
                last_offset,
                base_offset: base,
            });
        }
        if !self.length().is_multiple_of(Self::ENTRY_SIZE as u64) {
            found.push(CorruptKind::LengthNotMultiple {
                length: self.length(),
                entry_size: Self::ENTRY_SIZE,
            });
        }
        found
    }

    /// Every problem Kafka's sanity check finds, plus zero tails and out-of-order offsets.
    pub fn verify(&self) -> Result<VerifyReport> {
        let base = self.base_offset();
        let kafka = self.sanity_problems();
        let problems = self.file.view(|v| verify::scan(v, base, kafka))?;
        Ok(VerifyReport {
            kind: IndexKind::Offset,
            length: self.length(),
            entries: self.entries(),
            max_entries: self.max_entries(),
            problems,
        })
    }

    /// `msync` of the mapping.
    pub fn flush(&self) -> Result<()> {
        self.file.flush()
    }

    /// Trims the file to its entries, then unmaps it, deterministically: when this returns, the
    /// mapping is gone (after any lookup already inside it finished). Later operations fail
    /// with `Closed`; closing again does nothing.
    pub fn close(&mut self) -> Result<()> {
        self.file.close()
    }

    /// Unmaps without trimming (Kafka's `closeHandler`/`forceUnmap`).
    pub fn unmap(&mut self) {
        self.file.unmap();
    }

    /// Unmaps and deletes the file; false when it did not exist.
    pub fn delete(&mut self) -> Result<bool> {
        self.file.delete()
    }

    /// Renames the file. As in Kafka, the index takes the new name even if the rename fails.
    pub fn rename(&mut self, to: impl AsRef<Path>) -> Result<()> {
        self.file.rename(to.as_ref())
    }

    /// Records that the file now lives in `dir` (its directory was renamed); no I/O.
    pub fn update_parent_dir(&mut self, dir: impl AsRef<Path>) {
        self.file.update_parent_dir(dir.as_ref());
    }

    /// A cheap, cloneable, `Send + Sync` read handle whose lookups take no lock.
    pub fn reader(&self) -> OffsetIndexReader {
        OffsetIndexReader {
            inner: self.file.reader(),
        }
    }

    /// The last entry, or `(base_offset, 0)` when empty.
    pub fn last_entry(&self) -> Result<OffsetPosition> {
        self.read_last_entry()
    }

    /// The offset of the last entry, or the base offset when empty.
    pub fn last_offset(&self) -> i64 {
        self.last_offset
    }

    /// The number of entries.
    pub fn entries(&self) -> usize {
        self.file.entries()
    }

    /// The number of slots of the current mapping.
    pub fn max_entries(&self) -> usize {
        self.file.max_entries()
    }

    /// True when no slot is free (`entries >= max_entries`).
    pub fn is_full(&self) -> bool {
        self.entries() >= self.max_entries()
    }

    /// Whether `offset` can be stored relative to the base offset.
    pub fn can_append_offset(&self, offset: i64) -> bool {
        relative(self.base_offset(), offset).is_some()
    }

    /// `offset - base_offset` as stored, or `OffsetOverflow`.
    pub fn relative_offset(&self, offset: i64) -> Result<u32> {
        self.file.relative_offset(offset)
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.file.base_offset()
    }

    /// The maximum size given at open (0 for [`OffsetIndex::open_existing`]).
    pub fn max_index_size(&self) -> u32 {
        self.file.max_index_size()
    }

    /// The file length as of the last open or resize.
    pub fn length(&self) -> u64 {
        self.file.length()
    }

    /// The bytes used by entries.
    pub fn size_in_bytes(&self) -> u64 {
        (self.entries() * Self::ENTRY_SIZE) as u64
    }

    /// The file's current name.
    pub fn path(&self) -> &Path {
        self.file.path()
    }

    /// Whether the file is mapped now (false after close, and for a zero-length file).
    pub fn is_mapped(&self) -> bool {
        self.file.is_mapped()
    }

    /// Whether the index was closed, unmapped or deleted.
    pub fn is_closed(&self) -> bool {
        self.file.is_closed()
    }
}

fn upper_bound<M: crate::map::Memory>(
    v: &crate::raw::View<'_, OffsetEntry, M>,
    base: i64,
    start: OffsetPosition,
    fetch_size: u32,
) -> Option<OffsetPosition> {
    let target = i64::from(start.position) + i64::from(fetch_size);
    let slot = v.slot_for(target, Field::Value, Bound::SmallestUpper)?;
    v.entry(slot).map(|e| e.decode(base))
}

/// A lock-free read handle on an [`OffsetIndex`]: cheap to clone, `Send + Sync`. Lookups pin
/// the current mapping (one atomic increment and one decrement), so a concurrent resize
/// or close never unmaps memory a lookup is reading; once the index is closed they fail with
/// `Closed`.
#[derive(Clone)]
pub struct OffsetIndexReader {
    inner: Reader<OffsetEntry, MmapMemory>,
}

impl std::fmt::Debug for OffsetIndexReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetIndexReader")
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

impl OffsetIndexReader {
    fn gone(&self, gone: crate::raw::Gone) -> Error {
        gone_error(&self.path(), IndexKind::Offset, gone)
    }

    /// Whether the index is mapped now: false once closed, and while its mapping budget has it
    /// unmapped (the next lookup maps it again).
    pub fn is_mapped(&self) -> bool {
        self.inner.is_mapped()
    }

    /// As [`OffsetIndex::lookup`].
    #[inline]
    pub fn lookup(&self, target: i64) -> Result<OffsetPosition> {
        let base = self.base_offset();
        self.inner
            .view(|v| {
                v.floor(target).unwrap_or(OffsetPosition {
                    offset: base,
                    position: 0,
                })
            })
            .map_err(|g| self.gone(g))
    }

    /// As [`OffsetIndex::entry`].
    pub fn entry(&self, n: usize) -> Result<OffsetPosition> {
        let base = self.base_offset();
        let found = self
            .inner
            .view(|v| (v.entry(n).map(|e| e.decode(base)), v.entries()));
        match found {
            Err(g) => Err(self.gone(g)),
            Ok((Some(entry), _)) => Ok(entry),
            Ok((None, entries)) => Err(Error::EntryOutOfRange {
                file: self.path(),
                kind: IndexKind::Offset,
                slot: n,
                entries,
            }),
        }
    }

    /// As [`OffsetIndex::fetch_upper_bound_offset`].
    pub fn fetch_upper_bound_offset(
        &self,
        start: OffsetPosition,
        fetch_size: u32,
    ) -> Result<Option<OffsetPosition>> {
        let base = self.base_offset();
        self.inner
            .view(|v| upper_bound(v, base, start, fetch_size))
            .map_err(|g| self.gone(g))
    }

    /// The number of entries published so far.
    pub fn entries(&self) -> Result<usize> {
        self.inner.entries().map_err(|g| self.gone(g))
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.inner.meta().base_offset
    }

    /// The file's current name.
    pub fn path(&self) -> PathBuf {
        self.inner.meta().path.read().clone()
    }
}
