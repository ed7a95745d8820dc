//! The file side of an index, shared by both index types: create-and-preallocate or open, map
//! (`open.rs`), resize with a remap, flush, close (trim, then a deterministic unmap), rename and
//! delete (`ops.rs`), over the few file-system calls in `fs.rs`. Kafka's `AbstractIndex`, minus
//! the entry semantics.
#![forbid(unsafe_code)]

mod allocate;
mod fs;
mod open;
mod ops;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicUsize;

use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::map::MmapMemory;
use crate::raw::{Core, Gone, Reader, View};
use crate::search::Bound;
use seglog_fs::Backing;

pub(crate) use fs::{delete_if_exists, exists, rename, sync_if_exists};

/// `factor * (number / factor)`: Kafka's `roundDownToExactMultiple`.
pub(crate) fn round_down(number: u64, factor: usize) -> u64 {
    let factor = factor as u64;
    factor * (number / factor)
}

/// A mapped index file with entries of type `E`.
pub(crate) struct IndexFile<E: Entry> {
    core: Core<E, MmapMemory>,
    path: PathBuf,
    base_offset: i64,
    max_index_size: u32,
    /// The file length as of the last open or resize (Kafka's cached `length`).
    length: u64,
    /// Opened with `open_read_only`: mapped `PROT_READ`, every modification refused.
    read_only: bool,
    /// A real mapped file, or anonymous memory written back to a store.
    backing: Backing,
    /// The bytes from 0 known to have disk blocks: where the file's data ended at open, raised
    /// by every allocation, lowered by a shrink. Each new mapping views only these (shared with
    /// the budget's remapper); a stored backing has them all.
    allocated: Arc<AtomicUsize>,
}

impl<E: Entry> IndexFile<E> {
    /// The current content, `length` bytes, as a write-back would write it (stored backing).
    fn snapshot(&self) -> Vec<u8> {
        let len = usize::try_from(self.length).unwrap_or(0);
        self.core
            .with_memory(|mem| mem.snapshot(len))
            .unwrap_or_default()
    }

    /// Writes the content back to the store (a stored backing; a no-op for a mapped file).
    fn write_back(&self) -> Result<()> {
        match self.backing.store() {
            Some(store) if !self.read_only && !self.core.is_closed() => store
                .write_pages(&self.path, &self.snapshot())
                .map_err(|e| Error::io(&self.path, "write", e)),
            _ => Ok(()),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub(crate) fn max_index_size(&self) -> u32 {
        self.max_index_size
    }

    pub(crate) fn length(&self) -> u64 {
        self.length
    }

    pub(crate) fn entries(&self) -> usize {
        self.core.entries()
    }

    pub(crate) fn max_entries(&self) -> usize {
        self.core.max_entries()
    }

    pub(crate) fn is_mapped(&self) -> bool {
        !self.core.is_closed()
            && self
                .core
                .with_memory(MmapMemory::is_mapped)
                .unwrap_or(false)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Fails with `Closed` or `ReadOnly` unless the index may be modified.
    #[inline]
    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.core.is_closed() {
            Err(self.closed_error())
        } else if self.read_only {
            Err(Error::ReadOnly {
                file: self.path.clone(),
                kind: E::KIND,
            })
        } else {
            Ok(())
        }
    }

    pub(crate) fn closed_error(&self) -> Error {
        Error::Closed {
            file: self.path.clone(),
            kind: E::KIND,
        }
    }

    /// The error for a view that could not be had.
    pub(crate) fn gone_error(&self, gone: Gone) -> Error {
        gone_error(&self.path, E::KIND, gone)
    }

    pub(crate) fn reader(&self) -> Reader<E, MmapMemory> {
        self.core.reader()
    }

    /// The last entry, or [`Entry::absent`] when there is none.
    pub(crate) fn last_entry(&self) -> Result<E::Decoded> {
        let base = self.base_offset;
        self.view(|v| last_entry(v, base))
    }

    /// The entry with the largest key at most `target`, or [`Entry::absent`] (Kafka's lookup).
    #[inline]
    pub(crate) fn lookup(&self, target: i64) -> Result<E::Decoded> {
        match self.core.lookup_owned(target) {
            Some(found) => Ok(found),
            None => self.lookup_pinned(target),
        }
    }

    /// [`lookup`](Self::lookup) under a pin (an index under a mapping budget), mapping it again
    /// if it was evicted; or the error of a closed index. Out of line, so that the owned path
    /// inlines.
    #[inline(never)]
    fn lookup_pinned(&self, target: i64) -> Result<E::Decoded> {
        let base = self.base_offset;
        self.view(|v| v.floor(target).unwrap_or_else(|| E::absent(base)))
    }

    /// The `n`th entry, or `EntryOutOfRange`.
    pub(crate) fn entry(&self, n: usize) -> Result<E::Decoded> {
        let base = self.base_offset;
        self.view(|v| v.entry(n).map(|e| e.decode(base)))?
            .ok_or_else(|| Error::EntryOutOfRange {
                file: self.path.clone(),
                kind: E::KIND,
                slot: n,
                entries: self.entries(),
            })
    }

    /// The entry count that `truncate_to(offset)` leaves: Kafka's three cases, searching the
    /// entry's offset field.
    pub(crate) fn entries_below(&self, offset: i64) -> Result<usize> {
        let base = self.base_offset;
        self.view(
            |v| match v.slot_for(offset, E::OFFSET_FIELD, Bound::LargestLower) {
                None => 0,
                Some(slot) if v.entry(slot).is_some_and(|e| e.offset(base) == offset) => slot,
                Some(slot) => slot + 1,
            },
        )
    }

    /// Runs `f` on the writer's view, or fails with `Closed`.
    #[inline]
    pub(crate) fn view<R>(&self, f: impl FnOnce(&View<'_, E, MmapMemory>) -> R) -> Result<R> {
        self.core.view(f).map_err(|g| self.gone_error(g))
    }

    /// Kafka's `relativeOffset`.
    #[inline]
    pub(crate) fn relative_offset(&self, offset: i64) -> Result<u32> {
        relative(self.base_offset, offset).ok_or_else(|| Error::OffsetOverflow {
            file: self.path.clone(),
            offset,
        })
    }

    #[inline]
    pub(crate) fn push(&mut self, entry: &E) -> Result<()> {
        let pushed = self.core.push(entry).map_err(|g| self.gone_error(g))?;
        if pushed {
            Ok(())
        } else {
            self.push_unbacked(entry)
        }
    }

    pub(crate) fn set_entries(&mut self, entries: usize) -> Result<()> {
        self.check_writable()?;
        self.core.set_entries(entries);
        Ok(())
    }
}

/// The last entry of a view, or [`Entry::absent`].
fn last_entry<E: Entry>(v: &View<'_, E, MmapMemory>, base: i64) -> E::Decoded {
    v.entries()
        .checked_sub(1)
        .and_then(|slot| v.entry(slot))
        .map_or_else(|| E::absent(base), |e| e.decode(base))
}

/// The error for a view that could not be had: closed, or a failed remap after an eviction.
pub(crate) fn gone_error(path: &Path, kind: crate::error::IndexKind, gone: Gone) -> Error {
    match gone {
        Gone::Closed => Error::Closed {
            file: path.to_path_buf(),
            kind,
        },
        Gone::Remap(e) => Error::io(path, "mmap", e),
    }
}

/// `offset - base` if it fits Kafka's relative-offset range `0..=i32::MAX`.
pub(crate) fn relative(base_offset: i64, offset: i64) -> Option<u32> {
    let relative = offset.checked_sub(base_offset)?;
    if (0..=i64::from(i32::MAX)).contains(&relative) {
        u32::try_from(relative).ok()
    } else {
        None
    }
}

impl<E: Entry> Drop for IndexFile<E> {
    /// A stored index that was never closed leaves its content to the store, as a process that
    /// exits leaves its dirty pages to the kernel (not synced). Errors cannot be reported here.
    fn drop(&mut self) {
        let _ = self.write_back();
    }
}
