//! [`IndexReader`]: the cheap, cloneable, lock-free read handle of an [`Index`](crate::Index),
//! and the file side of the core's reader (errors that name the file).
#![forbid(unsafe_code)]

use std::path::PathBuf;

use crate::entry::Entry;
use crate::error::{Error, IndexKind, Result};
use crate::file::gone_error;
use crate::map::MmapMemory;
use crate::raw::{Gone, Reader, View};

/// A lock-free read handle on an [`Index`](crate::Index): cheap to clone, `Send + Sync`. Lookups
/// name the mapping they read in a per-thread hazard word (plain stores, no atomic
/// read-modify-write), and other reads pin it, so a concurrent resize or close never unmaps
/// memory a lookup is reading; once the index is closed they fail with `Closed`.
#[derive(Clone)]
pub struct IndexReader<E: Entry> {
    pub(crate) inner: Reader<E, MmapMemory>,
}

impl<E: Entry> std::fmt::Debug for IndexReader<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let name = match E::KIND {
            IndexKind::Offset => "OffsetIndexReader",
            IndexKind::Time => "TimeIndexReader",
        };
        f.debug_struct(name)
            .field("path", &self.path())
            .finish_non_exhaustive()
    }
}

impl<E: Entry> IndexReader<E> {
    /// Whether the index is mapped now: false once closed, and while its mapping budget
    /// has it unmapped (the next lookup maps it again).
    pub fn is_mapped(&self) -> bool {
        self.inner.is_mapped()
    }

    /// As [`Index::lookup`](crate::Index::lookup).
    #[expect(
        clippy::inline_always,
        reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
    )]
    #[inline(always)]
    pub fn lookup(&self, target: i64) -> Result<E::Decoded> {
        self.inner.lookup(target)
    }

    /// As [`Index::entry`](crate::Index::entry).
    pub fn entry(&self, n: usize) -> Result<E::Decoded> {
        self.inner.entry(n)
    }

    /// The number of entries published so far.
    pub fn entries(&self) -> Result<usize> {
        self.inner.published_entries()
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

/// The file side of a read handle: lookups and entries with errors that name the file.
impl<E: Entry> Reader<E, MmapMemory> {
    /// The error for a view that could not be had.
    fn gone(&self, gone: Gone) -> Error {
        gone_error(&self.meta().path.read(), E::KIND, gone)
    }

    /// Runs `f` on a consistent view, with a `Closed` or `Io` error naming the file.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&View<'_, E, MmapMemory>) -> R) -> Result<R> {
        self.view(f).map_err(|g| self.gone(g))
    }

    /// As `IndexFile::lookup`.
    #[expect(
        clippy::inline_always,
        reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
    )]
    #[inline(always)]
    pub(crate) fn lookup(&self, target: i64) -> Result<E::Decoded> {
        match self.lookup_mapped(target) {
            Some(found) => Ok(found),
            None => self.lookup_remapped(target),
        }
    }

    /// [`lookup`](Self::lookup) once the index was found evicted or closed: maps it again, or
    /// names the file in the error.
    #[cold]
    #[inline(never)]
    fn lookup_remapped(&self, target: i64) -> Result<E::Decoded> {
        let base = self.meta().base_offset;
        self.read(|v| v.floor(target).unwrap_or_else(|| E::absent(base)))
    }

    /// As `IndexFile::entry`, out of the entries published so far.
    pub(crate) fn entry(&self, n: usize) -> Result<E::Decoded> {
        let base = self.meta().base_offset;
        let (found, entries) = self.read(|v| (v.entry(n).map(|e| e.decode(base)), v.entries()))?;
        found.ok_or_else(|| Error::EntryOutOfRange {
            file: self.meta().path.read().clone(),
            kind: E::KIND,
            slot: n,
            entries,
        })
    }

    /// The number of entries published so far (clamped to the current mapping).
    pub(crate) fn published_entries(&self) -> Result<usize> {
        self.entries().map_err(|g| self.gone(g))
    }
}
