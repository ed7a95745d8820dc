//! `TimeIndex`: the `.timeindex` file, mapping timestamps to offsets (Kafka's `TimeIndex`), and
//! its lock-free read handle.

use std::path::{Path, PathBuf};

use crate::MappingBudget;
use crate::entry::{Entry, NO_TIMESTAMP, TimeEntry, TimestampOffset, kafka_absolute};
use crate::error::{CorruptKind, Error, IndexKind, Result};
use crate::file::{IndexFile, gone_error, relative};
use crate::map::MmapMemory;
use crate::raw::{Bound, Field, Reader};
use crate::store::Backing;
use crate::verify::{self, VerifyReport};

/// A memory-mapped time index (`.timeindex`): sparse `(timestamp, offset)` entries, 12 bytes
/// each, big-endian, with strictly increasing timestamps and non-decreasing offsets. An entry
/// `(T, O)` means "the largest timestamp seen up to offset `O` is `T`".
///
/// The index counts as full one slot early (`max_entries - 1`): the last slot is kept for the
/// entry [`TimeIndex::maybe_append`] writes with `skip_full_check` when the segment rolls or
/// closes.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use seglog_mmap_index::{TimeIndex, TimestampOffset};
///
/// let dir = tempfile::tempdir()?;
/// let mut index = TimeIndex::open(dir.path().join("00000000000000000000.timeindex"), 0, 120)?;
/// assert_eq!(index.max_entries(), 10);
/// assert!(index.maybe_append(1_000, 5, false)?);
/// assert!(!index.maybe_append(1_000, 7, false)?); // same timestamp: skipped, as in Kafka
/// assert!(index.maybe_append(2_000, 9, false)?);
/// assert_eq!(index.lookup(1_500)?, TimestampOffset { timestamp: 1_000, offset: 5 });
/// // Below the first entry: no timestamp, the base offset.
/// assert_eq!(index.reader().lookup(10)?, TimestampOffset { timestamp: -1, offset: 0 });
/// # Ok(()) }
/// ```
pub struct TimeIndex {
    file: IndexFile<TimeEntry>,
    last_entry: TimestampOffset,
}

impl std::fmt::Debug for TimeIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeIndex")
            .field("path", &self.file.path())
            .field("base_offset", &self.file.base_offset())
            .field("entries", &self.file.entries())
            .field("max_entries", &self.file.max_entries())
            .field("last_entry", &self.last_entry)
            .finish_non_exhaustive()
    }
}

impl TimeIndex {
    /// The size of one entry in bytes.
    pub const ENTRY_SIZE: usize = TimeEntry::SIZE;

    /// Opens the index at `path`, as Kafka's constructor does: a missing file is created and
    /// preallocated to `floor(max_index_size / 12) * 12` bytes (an error if that is below one
    /// entry); an existing file is mapped whole and every full slot counts as an entry.
    pub fn open(path: impl AsRef<Path>, base_offset: i64, max_index_size: u32) -> Result<Self> {
        Self::open_with(&Backing::Mapped, path, base_offset, max_index_size)
    }

    /// Opens an existing index and never creates one (a missing file is an `Io` error with
    /// `NotFound`). Its `max_index_size` is 0, so [`TimeIndex::reset`] resizes it to nothing.
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

    /// [`TimeIndex::open`] on `backing`: a real mapped file, or a file of an
    /// [`IndexStore`](crate::IndexStore) held in anonymous memory.
    pub fn open_with(
        backing: &Backing,
        path: impl AsRef<Path>,
        base_offset: i64,
        max_index_size: u32,
    ) -> Result<Self> {
        Self::open_budgeted(backing, path.as_ref(), base_offset, max_index_size, None)
    }

    /// As [`TimeIndex::open`], with the mapping counted against `budget`, which may unmap it while
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

    /// [`TimeIndex::open_existing`] on `backing`.
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

    /// [`TimeIndex::open_read_only`] on `backing`.
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

    /// Whether the index was opened with [`TimeIndex::open_read_only`].
    pub fn is_read_only(&self) -> bool {
        self.file.is_read_only()
    }

    fn from_file(file: IndexFile<TimeEntry>) -> Result<Self> {
        let base_offset = file.base_offset();
        let mut index = Self {
            file,
            last_entry: TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: base_offset,
            },
        };
        index.last_entry = index.read_last_entry()?;
        Ok(index)
    }

    fn read_last_entry(&self) -> Result<TimestampOffset> {
        let base = self.file.base_offset();
        self.file.view(|v| {
            v.entries()
                .checked_sub(1)
                .and_then(|slot| v.entry(slot))
                .map_or(
                    TimestampOffset {
                        timestamp: NO_TIMESTAMP,
                        offset: base,
                    },
                    |e| e.decode(base),
                )
        })
    }

    /// Appends `(timestamp, offset)` if `timestamp` is strictly greater than the last one;
    /// returns whether it did. Kafka's checks, in Kafka's order: full (unless
    /// `skip_full_check`), then an offset below the last one, then a timestamp below the last
    /// one; an equal timestamp is silently skipped. With `skip_full_check` on a mapping whose
    /// every slot is used (an untrimmed crash image, KAFKA-12734 / KAFKA-19200) this returns
    /// `MappingFull` where Kafka overflows its buffer.
    pub fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<bool> {
        self.file.check_writable()?;
        let file = || self.file.path().to_path_buf();
        if !skip_full_check && self.is_full() {
            return Err(Error::IndexFull {
                file: file(),
                kind: IndexKind::Time,
                entries: self.entries(),
            });
        }
        if self.entries() != 0 && offset < self.last_entry.offset {
            return Err(Error::InvalidOffset {
                file: file(),
                offset,
                slot: self.entries(),
                last_offset: self.last_entry.offset,
            });
        }
        if self.entries() != 0 && timestamp < self.last_entry.timestamp {
            return Err(Error::TimestampNotIncreasing {
                file: file(),
                timestamp,
                slot: self.entries(),
                last_timestamp: self.last_entry.timestamp,
            });
        }
        if timestamp <= self.last_entry.timestamp {
            return Ok(false);
        }
        let relative = self.file.relative_offset(offset)?;
        if self.entries() >= self.max_entries() {
            return Err(Error::MappingFull {
                file: file(),
                entries: self.entries(),
                max_entries: self.max_entries(),
            });
        }
        self.file.push(&TimeEntry::new(timestamp, relative))?;
        self.last_entry = TimestampOffset { timestamp, offset };
        Ok(true)
    }

    /// The entry with the largest timestamp at most `target`, or `(NO_TIMESTAMP, base_offset)`
    /// when there is none. Kafka's warm-section search.
    pub fn lookup(&self, target: i64) -> Result<TimestampOffset> {
        let base = self.base_offset();
        self.file.view(|v| {
            v.floor(target).unwrap_or(TimestampOffset {
                timestamp: NO_TIMESTAMP,
                offset: base,
            })
        })
    }

    /// The `n`th entry.
    pub fn entry(&self, n: usize) -> Result<TimestampOffset> {
        let base = self.base_offset();
        self.file
            .view(|v| v.entry(n).map(|e| e.decode(base)))?
            .ok_or_else(|| Error::EntryOutOfRange {
                file: self.file.path().to_path_buf(),
                kind: IndexKind::Time,
                slot: n,
                entries: self.entries(),
            })
    }

    /// Removes every entry whose offset is at least `offset`, searching by offset (Kafka's
    /// three cases, `IndexSearchType.VALUE`). The file keeps its length.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let base = self.base_offset();
        let entries =
            self.file.view(
                |v| match v.slot_for(offset, Field::Value, Bound::LargestLower) {
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
        self.last_entry = self.read_last_entry()?;
        Ok(())
    }

    /// Removes every entry and resizes the file back to `max_index_size`.
    pub fn reset(&mut self) -> Result<()> {
        self.file.reset()?;
        self.last_entry = self.read_last_entry()?;
        Ok(())
    }

    /// Resizes the file to `floor(new_size / 12) * 12` bytes and remaps it; false when that is
    /// already its size. Re-reads the last entry, as Kafka does. Refuses to cut off entries.
    pub fn resize(&mut self, new_size: u32) -> Result<bool> {
        let resized = self.file.resize(new_size)?;
        if resized {
            self.last_entry = self.read_last_entry()?;
        }
        Ok(resized)
    }

    /// Shrinks the file to exactly its entries.
    pub fn trim_to_valid_size(&mut self) -> Result<bool> {
        self.resize(u32::try_from(self.size_in_bytes()).unwrap_or(u32::MAX))
    }

    /// Kafka's `sanityCheck`, with Kafka's conditions, order and messages. Reads entry 0.
    pub fn sanity_check(&self) -> Result<()> {
        match self.sanity_problems()?.into_iter().next() {
            None => Ok(()),
            Some(corruption) => Err(Error::CorruptIndex {
                file: self.file.path().to_path_buf(),
                kind: IndexKind::Time,
                corruption,
            }),
        }
    }

    fn sanity_problems(&self) -> Result<Vec<CorruptKind>> {
        let mut found = Vec::new();
        let last = self.last_entry;
        if self.entries() != 0 {
            let first = self.file.view(|v| v.entry(0).map(|e| e.timestamp.get()))?;
            if let Some(first_timestamp) = first.filter(|&first| last.timestamp < first) {
                found.push(CorruptKind::LastTimestampBelowFirst {
                    last_timestamp: last.timestamp,
                    first_timestamp,
                });
            }
            // Kafka's wrapping arithmetic, not the saturated `last.offset`: see `kafka_absolute`.
            let base = self.base_offset();
            let last_offset = self
                .file
                .view(|v| {
                    v.entries()
                        .checked_sub(1)
                        .and_then(|slot| v.entry(slot))
                        .map(|e| kafka_absolute(base, e.relative()))
                })?
                .unwrap_or(last.offset);
            if last_offset < base {
                found.push(CorruptKind::LastOffsetBelowBase {
                    last_offset,
                    base_offset: base,
                });
            }
        }
        if !self.length().is_multiple_of(Self::ENTRY_SIZE as u64) {
            found.push(CorruptKind::LengthNotMultiple {
                length: self.length(),
                entry_size: Self::ENTRY_SIZE,
            });
        }
        Ok(found)
    }

    /// Every problem Kafka's sanity check finds, plus zero tails, a last timestamp of 0, and
    /// offsets or timestamps out of order.
    pub fn verify(&self) -> Result<VerifyReport> {
        let base = self.base_offset();
        let kafka = self.sanity_problems()?;
        let problems = self.file.view(|v| verify::scan(v, base, kafka))?;
        Ok(VerifyReport {
            kind: IndexKind::Time,
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

    /// Trims the file to its entries, then unmaps it, deterministically. Later operations fail
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
    pub fn reader(&self) -> TimeIndexReader {
        TimeIndexReader {
            inner: self.file.reader(),
        }
    }

    /// The last entry, or `(NO_TIMESTAMP, base_offset)` when empty.
    pub fn last_entry(&self) -> TimestampOffset {
        self.last_entry
    }

    /// The number of entries.
    pub fn entries(&self) -> usize {
        self.file.entries()
    }

    /// The number of slots of the current mapping.
    pub fn max_entries(&self) -> usize {
        self.file.max_entries()
    }

    /// True at `max_entries - 1` entries: the last slot is reserved for the roll/close entry.
    pub fn is_full(&self) -> bool {
        self.entries() + 1 >= self.max_entries()
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

    /// The maximum size given at open (0 for [`TimeIndex::open_existing`]).
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

/// A lock-free read handle on a [`TimeIndex`]: cheap to clone, `Send + Sync`. See
/// [`OffsetIndexReader`](crate::OffsetIndexReader) for the guarantees.
#[derive(Clone)]
pub struct TimeIndexReader {
    inner: Reader<TimeEntry, MmapMemory>,
}

impl std::fmt::Debug for TimeIndexReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeIndexReader")
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

impl TimeIndexReader {
    fn gone(&self, gone: crate::raw::Gone) -> Error {
        gone_error(&self.path(), IndexKind::Time, gone)
    }

    /// Whether the index is mapped now: false once closed, and while its mapping budget has it
    /// unmapped (the next lookup maps it again).
    pub fn is_mapped(&self) -> bool {
        self.inner.is_mapped()
    }

    /// As [`TimeIndex::lookup`].
    #[inline]
    pub fn lookup(&self, target: i64) -> Result<TimestampOffset> {
        let base = self.base_offset();
        self.inner
            .view(|v| {
                v.floor(target).unwrap_or(TimestampOffset {
                    timestamp: NO_TIMESTAMP,
                    offset: base,
                })
            })
            .map_err(|g| self.gone(g))
    }

    /// As [`TimeIndex::entry`].
    pub fn entry(&self, n: usize) -> Result<TimestampOffset> {
        let base = self.base_offset();
        let found = self
            .inner
            .view(|v| (v.entry(n).map(|e| e.decode(base)), v.entries()));
        match found {
            Err(g) => Err(self.gone(g)),
            Ok((Some(entry), _)) => Ok(entry),
            Ok((None, entries)) => Err(Error::EntryOutOfRange {
                file: self.path(),
                kind: IndexKind::Time,
                slot: n,
                entries,
            }),
        }
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
