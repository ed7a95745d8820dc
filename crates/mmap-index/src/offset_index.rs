//! `OffsetIndex`: the `.index` file, mapping offsets to `.log` positions (Kafka's
//! `OffsetIndex`), and its lock-free read handle: the operations of [`Index`] and
//! [`IndexReader`] over [`OffsetEntry`].
#![forbid(unsafe_code)]

use crate::entry::{Entry, OffsetEntry, OffsetPosition, kafka_absolute};
use crate::error::{CorruptKind, Error, IndexKind, Result};
use crate::index::Index;
use crate::map::Memory;
use crate::raw::View;
use crate::reader::IndexReader;
use crate::search::{Bound, Field};
use crate::verify::{self, VerifyReport};

/// A memory-mapped offset index (`.index`): sparse `(offset, position)` entries with strictly
/// increasing offsets, 8 bytes each, big-endian.
///
/// There is one writer (this value; mutations take `&mut self`) and any number of lock-free
/// readers ([`Index::reader`]). Dropping the index unmaps it, like [`Index::unmap`].
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use seglog_mmap_index::{OffsetIndex, OffsetPosition};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("00000000000000000100.index");
/// // Creates and preallocates the file.
/// let mut index = OffsetIndex::options(&path, 100).max_index_size(4096).open()?;
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
pub type OffsetIndex = Index<OffsetEntry>;

impl std::fmt::Debug for Index<OffsetEntry> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OffsetIndex")
            .field("path", &self.file.path())
            .field("base_offset", &self.file.base_offset())
            .field("entries", &self.file.entries())
            .field("max_entries", &self.file.max_entries())
            .field("last_offset", &self.last.offset)
            .finish_non_exhaustive()
    }
}

impl Index<OffsetEntry> {
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
        if self.entries() != 0 && offset <= self.last.offset {
            return Err(Error::InvalidOffset {
                file: self.file.path().to_path_buf(),
                offset,
                slot: self.entries(),
                last_offset: self.last.offset,
            });
        }
        let relative = self.file.relative_offset(offset)?;
        self.file.push(&OffsetEntry::new(relative, position))?;
        self.last = OffsetPosition { offset, position };
        Ok(())
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
            .unwrap_or(self.last.offset);
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

    /// The last entry, or `(base_offset, 0)` when empty.
    pub fn last_entry(&self) -> Result<OffsetPosition> {
        self.file.last_entry()
    }

    /// The offset of the last entry, or the base offset when empty.
    pub fn last_offset(&self) -> i64 {
        self.last.offset
    }

    /// True when no slot is free (`entries >= max_entries`).
    pub fn is_full(&self) -> bool {
        self.entries() >= self.max_entries()
    }
}

fn upper_bound<M: Memory>(
    v: &View<'_, OffsetEntry, M>,
    base: i64,
    start: OffsetPosition,
    fetch_size: u32,
) -> Option<OffsetPosition> {
    let target = i64::from(start.position) + i64::from(fetch_size);
    let slot = v.slot_for(target, Field::Value, Bound::SmallestUpper)?;
    v.entry(slot).map(|e| e.decode(base))
}

/// A lock-free read handle on an [`OffsetIndex`] (see [`IndexReader`]).
pub type OffsetIndexReader = IndexReader<OffsetEntry>;

impl IndexReader<OffsetEntry> {
    /// As [`Index::fetch_upper_bound_offset`].
    pub fn fetch_upper_bound_offset(
        &self,
        start: OffsetPosition,
        fetch_size: u32,
    ) -> Result<Option<OffsetPosition>> {
        let base = self.base_offset();
        self.inner.read(|v| upper_bound(v, base, start, fetch_size))
    }
}
