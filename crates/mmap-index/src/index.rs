//! [`Index`]: a memory-mapped index file with entries of one layout, and the operations both
//! index types share (truncation, resize, trim, reset, flush, close, rename, delete, the
//! accessors). The entry-specific operations (appends, `fetch_upper_bound_offset`, the sanity
//! check) are in `offset_index.rs` and `time_index.rs`; opening is [`IndexOptions`]'s.
#![forbid(unsafe_code)]

use std::path::Path;

use crate::entry::Entry;
use crate::error::Result;
use crate::file::{IndexFile, relative};
use crate::reader::IndexReader;

/// A memory-mapped index file whose entries have the layout `E`: an
/// [`OffsetIndex`](crate::OffsetIndex) or a [`TimeIndex`](crate::TimeIndex). Open one with
/// [`Index::options`] (an [`IndexOptions`](crate::IndexOptions)).
///
/// There is one writer (this value; mutations take `&mut self`) and any number of lock-free
/// readers ([`Index::reader`]). Dropping the index unmaps it, like [`Index::unmap`].
pub struct Index<E: Entry> {
    pub(crate) file: IndexFile<E>,
    /// The last entry, or the entry type's absent value (`(base_offset, 0)` or
    /// `(NO_TIMESTAMP, base_offset)`); re-read after every change of the entries.
    pub(crate) last: E::Decoded,
}

impl<E: Entry> Index<E> {
    /// The size of one entry in bytes.
    pub const ENTRY_SIZE: usize = E::SIZE;

    /// The index over an opened file.
    pub(crate) fn from_file(file: IndexFile<E>) -> Result<Self> {
        let last = file.last_entry()?;
        Ok(Self { file, last })
    }

    /// Whether the index was opened read-only ([`IndexOptions::read_only`](crate::IndexOptions::read_only)).
    pub fn is_read_only(&self) -> bool {
        self.file.is_read_only()
    }

    /// The entry with the largest key (offset, or timestamp) at most `target`, or the entry
    /// type's absent value (`(base_offset, 0)`, or `(NO_TIMESTAMP, base_offset)`) when there is
    /// none. Kafka's warm-section search.
    #[inline]
    pub fn lookup(&self, target: i64) -> Result<E::Decoded> {
        self.file.lookup(target)
    }

    /// The `n`th entry.
    pub fn entry(&self, n: usize) -> Result<E::Decoded> {
        self.file.entry(n)
    }

    /// Removes every entry whose offset is at least `offset` (Kafka's three cases,
    /// searching the entries' offsets). Truncating past the last entry changes nothing.
    /// The file keeps its length.
    pub fn truncate_to(&mut self, offset: i64) -> Result<()> {
        let entries = self.file.entries_below(offset)?;
        self.truncate_to_entries(entries)
    }

    /// Removes every entry.
    pub fn truncate(&mut self) -> Result<()> {
        self.truncate_to_entries(0)
    }

    fn truncate_to_entries(&mut self, entries: usize) -> Result<()> {
        self.file.set_entries(entries)?;
        self.last = self.file.last_entry()?;
        Ok(())
    }

    /// Removes every entry and resizes the file back to `max_index_size`.
    pub fn reset(&mut self) -> Result<()> {
        self.file.reset()?;
        self.last = self.file.last_entry()?;
        Ok(())
    }

    /// Resizes the file to `floor(new_size / ENTRY_SIZE) * ENTRY_SIZE` bytes and remaps it;
    /// false when that is already its size. Re-reads the last entry, as Kafka's `TimeIndex`
    /// does. Refuses to cut off entries.
    pub fn resize(&mut self, new_size: u32) -> Result<bool> {
        let resized = self.file.resize(new_size)?;
        if resized {
            self.last = self.file.last_entry()?;
        }
        Ok(resized)
    }

    /// Gives the file's next `entries` slots (at most the free ones) disk blocks, so that
    /// appending that many entries cannot fail for lack of space: on a full disk this is the
    /// error (`Io`, naming the file), where a store into a hole through the mapping would be a
    /// `SIGBUS`. Appends do it themselves, a chunk at a time; a caller that must not fail
    /// halfway (a segment indexing the batches it already wrote) reserves first. The file's
    /// length does not change.
    pub fn reserve(&mut self, entries: usize) -> Result<()> {
        self.file.reserve(entries)
    }

    /// Shrinks the file to exactly its entries.
    pub fn trim_to_valid_size(&mut self) -> Result<bool> {
        self.resize(u32::try_from(self.size_in_bytes()).unwrap_or(u32::MAX))
    }

    /// `msync` of the mapping.
    pub fn flush(&self) -> Result<()> {
        self.file.flush()
    }

    /// Trims the file to its entries, unmaps it and syncs it (entries and length),
    /// deterministically: when this returns, the mapping is gone (after any lookup
    /// already inside it finished). Later operations fail with `Closed`; closing again
    /// does nothing.
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

    /// Renames the file. As in Kafka, the index takes the new name even if the rename
    /// fails.
    pub fn rename(&mut self, to: impl AsRef<Path>) -> Result<()> {
        self.file.rename(to.as_ref())
    }

    /// Records that the file now lives in `dir` (its directory was renamed); no I/O.
    pub fn update_parent_dir(&mut self, dir: impl AsRef<Path>) {
        self.file.update_parent_dir(dir.as_ref());
    }

    /// A cheap, cloneable, `Send + Sync` read handle whose lookups take no lock.
    pub fn reader(&self) -> IndexReader<E> {
        IndexReader {
            inner: self.file.reader(),
        }
    }

    /// The number of entries.
    pub fn entries(&self) -> usize {
        self.file.entries()
    }

    /// The number of slots of the current mapping.
    pub fn max_entries(&self) -> usize {
        self.file.max_entries()
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

    /// The maximum size given at open (0 for an index opened without
    /// [`IndexOptions::max_index_size`](crate::IndexOptions::max_index_size)).
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
