//! [`MappedFile`]: a read-only, shared memory map of a file that one owner appends to (a
//! segment's `.log`), so that reading a batch header or a batch costs no system call.
//!
//! It reuses the index's two-slot [`SwapCell`]: readers pin the active mapping, copy out bytes
//! below the published length (a plain `memcpy`: nobody writes them while the pin is held) or
//! lend them to a closure ([`MappedFile::with_published`]), and unpin; the owner grows the mapping with a swap that never waits, and shrinks it with a swap
//! that waits until the old mapping is unmapped, before it shrinks the file (refused instead,
//! [`Error::LoanHeld`], when the thread asking holds a loan of the file: `loan.rs`). The contract and the
//! soundness argument are in `docs/unsafe.md` ("Mapped data files"); the read and its copy are in
//! `map/copy.rs`, with the crate's other `unsafe`.
//!
//! # The published length
//! Readers never read at or past the *published length*, which the owner keeps at most the
//! file's length at all times:
//! - after writing bytes (with `pwrite`), the owner publishes the new length with `Release`;
//! - before shrinking the file to `n`, the owner lowers the published length to `n` and swaps in
//!   a mapping of at most `n` bytes, waiting until every older mapping is unmapped.
//!
//! A reader loads the published length with `Acquire` *after* pinning a mapping. So a reader of
//! a mapping installed after a shrink sees the lowered length (or a later one), and a reader of
//! an older mapping keeps that mapping, and so the file's old length, alive until it unpins:
//! the shrink waits for it. Either way every byte a reader touches lies below the file's length
//! while it touches it, so no read can hit a page past the end of the file (`SIGBUS`).

#![forbid(unsafe_code)]

use std::io;
use std::os::fd::BorrowedFd;

use crate::budget::MappingBudget;
use crate::error::{Error, Result};
use crate::loan::{LoanGuard, held_by_this_thread};
use crate::loom::{Arc, AtomicUsize, Ordering};
use crate::map::{
    Memory, MmapMemory, SwapCell, Unpinned, lend_published, read_published, shared_cell,
};

/// How far ahead of the published length a growing mapping reaches, and the unit it grows by:
/// an appender remaps once per this many bytes appended, and only when a reader has mapped the
/// file at all.
pub const MAP_AHEAD_BYTES: u64 = 64 << 20;

/// The generic core, over any [`Memory`], so that the loom models run exactly this code.
pub(crate) struct FileCore<M: Memory> {
    /// The mappings, with the published length shared with readers.
    cell: Arc<SwapCell<M, AtomicUsize>>,
    /// Bytes readable through the active mapping (owner-maintained; a hint for when to grow,
    /// not a bound: readers clamp to the mapping they pinned).
    capacity: AtomicUsize,
}

impl<M: Memory> FileCore<M> {
    /// A core over `mem`, with `len` bytes published.
    #[cfg(all(test, loom))]
    pub(crate) fn new(mem: M, len: usize) -> Self {
        Self::with_budget(mem, len, None)
    }

    /// A core whose mapping counts against `budget`, which may evict it (see `remap`).
    pub(crate) fn with_budget(mem: M, len: usize, budget: Option<&MappingBudget>) -> Self {
        let capacity = mem.words() * 4;
        Self {
            cell: shared_cell(mem, AtomicUsize::new(len), budget, false),
            capacity: AtomicUsize::new(capacity),
        }
    }

    /// Copies the bytes at `position` into `buf`, up to the published length and the end of the
    /// pinned mapping, one relaxed word load at a time; returns how many it copied. `None` once
    /// closed. The loom models' read: [`MappedFile::read_at`] runs the same `map::read_with`
    /// with a plain copy instead.
    #[cfg(all(test, loom))]
    pub(crate) fn read_at(&self, position: usize, buf: &mut [u8]) -> Option<usize> {
        crate::map::read_with(&self.cell, position, buf, crate::map::copy_words)
    }

    /// Lends the `len` bytes at `position` to `lend` as words (the loom models' view; see
    /// `map::lend_with`, which [`MappedFile::with_published`] runs with a byte slice instead).
    #[cfg(all(test, loom))]
    pub(crate) fn lend_at<R>(
        &self,
        position: usize,
        len: usize,
        lend: impl FnOnce(&[M::Word], usize, usize) -> R,
    ) -> Option<R> {
        crate::map::lend_with(&self.cell, position, len, lend)
    }

    /// The published length.
    pub(crate) fn published(&self) -> usize {
        self.cell.extra().load(Ordering::Acquire)
    }

    /// Bytes readable through the active mapping.
    pub(crate) fn capacity(&self) -> usize {
        self.capacity.load(Ordering::Relaxed)
    }

    /// Publishes `len` (owner only; the file must already hold `len` bytes).
    #[inline]
    pub(crate) fn publish(&self, len: usize) {
        self.cell.extra().store(len, Ordering::Release);
    }

    /// Installs a larger mapping without waiting for anyone. False when the cell is closed or
    /// the spare slot is still pinned by a reader of a mapping retired earlier (the caller keeps
    /// the current mapping and retries later; readers fall back to `pread` meanwhile).
    pub(crate) fn grow(&self, mem: M) -> bool {
        let capacity = mem.words() * 4;
        if self.cell.try_install(mem).is_err() {
            return false;
        }
        self.capacity.store(capacity, Ordering::Relaxed);
        true
    }

    /// Lowers the published length to at most `len` (the owner is about to shrink the file to
    /// `len`). Call before creating the smaller mapping for [`shrink`](Self::shrink).
    pub(crate) fn lower(&self, len: usize) {
        let published = self.cell.extra().load(Ordering::Relaxed);
        if len < published {
            self.cell.extra().store(len, Ordering::Release);
        }
    }

    /// Swaps in `mem` (at most `len` bytes; the caller called [`lower`](Self::lower) first) and
    /// returns once every other mapping is unmapped: then the file may be shrunk to `len`.
    /// With `mem` `None`, closes instead (also waiting).
    pub(crate) fn shrink(&self, mem: Option<M>) {
        let capacity = mem.as_ref().map_or(0, |m| m.words() * 4);
        if let Err(mem) = self.cell.swap(mem, true) {
            // Closed already: nothing is mapped any more.
            drop(mem);
        }
        self.capacity.store(capacity, Ordering::Relaxed);
    }

    /// Closes the cell and returns once nothing is mapped.
    pub(crate) fn close(&self) {
        // `swap(None, ..)` never hands anything back.
        let _ = self.cell.swap(None, true);
        self.capacity.store(0, Ordering::Relaxed);
    }

    /// Whether the cell has been closed.
    /// Whether the budget has the mapping unmapped now.
    pub(crate) fn is_evicted(&self) -> bool {
        self.cell.is_evicted()
    }

    /// Maps an evicted file again with `make(published length)`; false if it was not evicted.
    pub(crate) fn remap(&self, make: impl FnOnce(usize) -> io::Result<M>) -> io::Result<bool> {
        let cell = &self.cell;
        let remapped = cell.remap(|_| make(cell.extra().load(Ordering::Acquire)))?;
        if remapped {
            let capacity = cell.pin().ok().and_then(|p| p.with(Memory::words));
            self.capacity
                .store(capacity.unwrap_or(0) * 4, Ordering::Relaxed);
        }
        Ok(remapped)
    }

    /// Unmaps as a budget would (the loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn evict(&self) -> bool {
        self.cell.evict()
    }

    pub(crate) fn is_closed(&self) -> bool {
        matches!(self.cell.pin(), Err(Unpinned::Closed))
    }
}

impl<M: Memory> Drop for FileCore<M> {
    fn drop(&mut self) {
        // Unmap now and deterministically, waiting for copies and loans already inside (a copy
        // runs no caller code; a loan's closure is bounded by `with_published`'s contract). No
        // loan of this file can be held by this thread: a loan borrows the file, which a drop
        // cannot.
        self.close();
    }
}

/// A read-only, shared memory map of a file that its owner appends to and sometimes truncates
/// (a segment's `.log`), with lock-free readers: [`read_at`](Self::read_at) pins the mapping,
/// copies the bytes out and unpins, with no system call.
///
/// The owner (one thread at a time; the segment's writer lock) must keep the published length
/// at most the file's length:
/// - [`publish`](Self::publish) a length only after the file holds that many bytes (after the
///   `pwrite`); it grows the mapping, without waiting for readers, when the length passes it;
/// - call [`shrink_to`](Self::shrink_to) *before* shrinking the file (`set_len`); it returns once
///   no reader can touch a byte at or past the new length;
/// - never rewrite bytes below the published length, and let no other process shrink or write
///   the file (docs/unsafe.md, contract 1).
///
/// Readers are never blocked by the appender; [`read_at`](Self::read_at) may return fewer bytes
/// than asked for (the published length, or the end of the current mapping, while a remap is
/// pending), and the caller reads the rest with `pread`.
#[derive(Debug)]
pub struct MappedFile {
    core: FileCore<MmapMemory>,
}

impl std::fmt::Debug for FileCore<MmapMemory> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileCore")
            .field("published", &self.published())
            .field("capacity", &self.capacity())
            .finish_non_exhaustive()
    }
}

fn to_usize(len: u64) -> io::Result<usize> {
    usize::try_from(len).map_err(|_| io::Error::other("length does not fit in memory"))
}

/// The mapping length for a published length of `len`: the next multiple of
/// [`MAP_AHEAD_BYTES`] strictly above it.
fn ahead(len: u64) -> io::Result<usize> {
    to_usize((len / MAP_AHEAD_BYTES + 1).saturating_mul(MAP_AHEAD_BYTES))
}

impl MappedFile {
    /// Maps `file`, whose first `len` bytes are written, ahead of `len`; `len` is published.
    /// `file` must be open for reading.
    pub fn open(file: BorrowedFd<'_>, len: u64) -> io::Result<Self> {
        Self::open_in(file, len, None)
    }

    /// As [`open`](Self::open), with the mapping counted against `budget` when one is given. The
    /// budget may unmap it (reads then return `Some(0)`, and the owner falls back to `pread`)
    /// until [`remap`](Self::remap) maps it again.
    pub fn open_in(
        file: BorrowedFd<'_>,
        len: u64,
        budget: Option<&MappingBudget>,
    ) -> io::Result<Self> {
        let mem = MmapMemory::map_data_read_only(file, ahead(len)?)?;
        Ok(Self {
            core: FileCore::with_budget(mem, to_usize(len)?, budget),
        })
    }

    /// Whether the mapping budget has the file unmapped now.
    pub fn is_evicted(&self) -> bool {
        self.core.is_evicted()
    }

    /// Maps the file again after its budget evicted it (ahead of the published length, as a
    /// growth does). Returns false, doing nothing, when it was not evicted, and also when this
    /// thread holds a loan of the file ([`with_published`](Self::with_published)): installing a
    /// mapping may wait for a reader of an older one, which could be that loan; the caller then
    /// reads another way (`pread`) until the loan ends.
    pub fn remap(&self, file: BorrowedFd<'_>) -> io::Result<bool> {
        if self.is_lent_by_this_thread() {
            return Ok(false);
        }
        self.core
            .remap(|published| MmapMemory::map_data_read_only(file, ahead(published as u64)?))
    }

    /// Copies the bytes at `position` into `buf` from the mapping, up to the published length
    /// and the end of the current mapping; returns how many were copied (0 at or past them).
    /// `None` once closed. No system call, no lock, no allocation.
    #[inline]
    pub fn read_at(&self, position: u64, buf: &mut [u8]) -> Option<usize> {
        let position = usize::try_from(position).unwrap_or(usize::MAX);
        read_published(&self.core.cell, position, buf)
    }

    /// Lends the `len` bytes at `position` to `f`, straight from the mapping (no copy, no system
    /// call, no lock, no allocation), and returns what `f` returns; `None`, without calling `f`,
    /// when they are not all below the published length and inside the current mapping (the
    /// file is closed, evicted, or a remap is pending): the caller then reads them another way
    /// ([`read_at`](Self::read_at), `pread`).
    ///
    /// The bytes do not change while `f` runs: the mapping stays pinned, and a shrink
    /// ([`shrink_to`](Self::shrink_to), [`close`](Self::close), drop) by another thread waits
    /// until `f` returns. So `f` must be bounded and must not itself wait for another thread
    /// that shrinks or closes this file (that thread waits for `f`: a deadlock). A shrink or
    /// close of this file from inside `f`, on `f`'s own thread, would wait for `f` the same way:
    /// it is refused instead, with [`Error::LoanHeld`], and changes nothing.
    ///
    /// A thread holds at most eight loans at once (closures nested in closures, of any files);
    /// past that, this returns `None` without calling `f`.
    #[inline]
    pub fn with_published<R>(
        &self,
        position: u64,
        len: usize,
        f: impl FnOnce(&[u8]) -> R,
    ) -> Option<R> {
        let position = usize::try_from(position).ok()?;
        // Recorded before the pin and cleared after the unpin (the guard drops last, on unwind
        // too), so the record covers every moment this thread holds a pin of the loan.
        let _loan = LoanGuard::enter(self.id())?;
        lend_published(&self.core.cell, position, len, f)
    }

    /// Whether this thread is inside a closure that [`with_published`](Self::with_published)
    /// of this file called (its loan is held): a shrink or close from here would be refused.
    pub fn is_lent_by_this_thread(&self) -> bool {
        held_by_this_thread(self.id())
    }

    /// This file's identity in the loan record: the core's address, which cannot change or be
    /// reused while a loan borrows `self`.
    #[inline]
    fn id(&self) -> usize {
        std::ptr::from_ref(&self.core).addr()
    }

    /// [`Error::LoanHeld`] when this thread holds a loan of this file: an operation that waits
    /// for every loan to end would wait for its own caller.
    fn refuse_if_lent(&self) -> Result<()> {
        if self.is_lent_by_this_thread() {
            return Err(Error::LoanHeld);
        }
        Ok(())
    }

    /// The published length.
    pub fn len(&self) -> u64 {
        self.core.published() as u64
    }

    /// Whether the published length is zero.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The bytes the current mapping covers (0 once closed).
    pub fn mapped_len(&self) -> u64 {
        self.core.capacity() as u64
    }

    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    /// Publishes `len` bytes of `file` (the file already holds them; `len` is not below the
    /// published length unless [`shrink_to`](Self::shrink_to) came first). When `len` passes the
    /// current mapping, maps further ahead and installs it without waiting for readers; if that
    /// cannot be done right now, reads past the mapping fall back to `pread` and the next
    /// publication retries. A failed `mmap` is returned, and leaves the old mapping in use.
    #[inline]
    pub fn publish(&self, file: BorrowedFd<'_>, len: u64) -> io::Result<()> {
        let len_usize = to_usize(len)?;
        self.core.publish(len_usize);
        if len_usize > self.core.capacity() && !self.core.is_closed() && !self.core.is_evicted() {
            let mem = MmapMemory::map_data_read_only(file, ahead(len)?)?;
            self.core.grow(mem);
        }
        Ok(())
    }

    /// Prepares to shrink `file` to `len`: lowers the published length, swaps in a mapping of
    /// at most `len` bytes and returns once every older mapping is unmapped, so the file may then
    /// be shrunk. Waits only for reads already inside an older mapping (each one bounded copy,
    /// or the closure of a [`with_published`](Self::with_published) on another thread).
    /// If the smaller mapping cannot be created, closes instead (reads then use `pread`).
    ///
    /// A `len` at or past the published length needs no wait and always succeeds. Below it,
    /// [`Error::LoanHeld`], changing nothing, when this thread holds a loan of this file (the
    /// wait would be for this thread's own caller): the file must not be shrunk then.
    pub fn shrink_to(&self, file: BorrowedFd<'_>, len: u64) -> Result<()> {
        // A length past the address space is past the published length too.
        let len_usize = usize::try_from(len).unwrap_or(usize::MAX);
        if len_usize >= self.core.published() {
            // Readers never read at or past the published length: nothing they touch goes.
            return Ok(());
        }
        self.refuse_if_lent()?;
        self.core.lower(len_usize);
        match MmapMemory::map_data_read_only(file, len_usize) {
            Ok(mem) => self.core.shrink(Some(mem)),
            Err(_) => self.core.shrink(None),
        }
        Ok(())
    }

    /// Unmaps, and returns once nothing is mapped any more (waiting for reads already inside).
    /// Later reads return `None`. [`Error::LoanHeld`], changing nothing, when this thread holds
    /// a loan of this file (the wait would be for this thread's own caller).
    pub fn close(&self) -> Result<()> {
        self.refuse_if_lent()?;
        self.core.close();
        Ok(())
    }
}
