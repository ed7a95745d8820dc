//! [`Owner`]: the owner's handle on an owned cell (see [`owned_cell`](super::owned_cell)), which
//! caches the words of the active mapping, so that the owner's lookups skip the cell's loads
//! (the `Arc`, `active`, the slot and the mapping's pointer) on the way to their first probe.

use std::ptr::NonNull;

use super::{Memory, SwapCell};
use crate::loom::Arc;

/// The only value allowed to swap or close its cell, and the words its active mapping viewed
/// when it last looked. For a shared cell (one a budget may evict) it caches nothing.
pub(crate) struct Owner<M: Memory, X> {
    cell: Arc<SwapCell<M, X>>,
    /// `Memory::cells` of the active mapping of an owned, open cell, taken by [`Owner::refresh`]
    /// after every change of the mapping and of the words it views; `None` otherwise.
    cells: Option<NonNull<[M::Word]>>,
}

#[expect(
    unsafe_code,
    reason = "the cached pointer is a shared view of `M::Word`s"
)]
// SAFETY:
// - `Owner` is `!Send` only because of `cells`, a pointer standing for a `&[M::Word]` into a
//   mapping the `Arc`'d cell owns; `M::Word: Send + Sync` (the `Word` trait's bound), so moving
//   that view to another thread is as sound as moving the `&[M::Word]` (and the `Arc`) would be.
unsafe impl<M: Memory + Send + Sync, X: Send + Sync> Send for Owner<M, X> {}

#[expect(
    unsafe_code,
    reason = "the cached pointer is a shared view of `M::Word`s"
)]
// SAFETY:
// - As for `Send`: through `&Owner`, `cells` is only read as a `&[M::Word]` (`Owner::cells`),
//   and `M::Word: Sync`.
unsafe impl<M: Memory + Send + Sync, X: Send + Sync> Sync for Owner<M, X> {}

impl<M: Memory, X> Owner<M, X> {
    /// The owner of `cell`, which nobody else may swap, close or evict.
    pub(crate) fn new(cell: Arc<SwapCell<M, X>>) -> Self {
        let mut owner = Self { cell, cells: None };
        owner.refresh();
        owner
    }

    /// The cell, for reads, pins and read handles (never for swaps: [`Owner::swap`]).
    #[inline]
    pub(crate) fn cell(&self) -> &Arc<SwapCell<M, X>> {
        &self.cell
    }

    /// Takes the active mapping's words again. Called after every swap and after `f` of
    /// [`Owner::with_memory_mut`], the only changes of what the cache holds.
    fn refresh(&mut self) {
        self.cells = if self.cell.is_owned() {
            self.cell.with_owned(|mem| NonNull::from(mem.cells()))
        } else {
            None
        };
    }

    /// Runs `f` on the active mapping (with a pin unless the cell is owned) and then takes its
    /// words again: for a change of the words it views (`MmapMemory::set_backed`).
    pub(crate) fn with_memory_mut<R>(&mut self, f: impl FnOnce(&M) -> R) -> Option<R> {
        let result = self.cell.with_active(true, f).ok();
        self.refresh();
        result
    }

    /// As [`SwapCell::swap`], then takes the new mapping's words.
    pub(crate) fn swap(&mut self, mem: Option<M>, wait: bool) -> Result<(), M> {
        let swapped = self.cell.swap(mem, wait);
        self.refresh();
        swapped
    }

    /// The words of an owned cell's active mapping, with no load from the cell; `None` for a
    /// shared cell, and once closed.
    #[inline]
    pub(crate) fn cells(&self) -> Option<&[M::Word]> {
        let cells = self.cells?;
        #[cfg(all(test, loom))]
        self.check_cache(cells);
        #[expect(unsafe_code, reason = "the owner's cached view of its active mapping")]
        // SAFETY:
        // - `cells` was made by `refresh` from the `&[M::Word]` that `Memory::cells` returned for
        //   the mapping the owned cell's `active` named: non-null, aligned, valid for its length.
        // - That mapping is still active and alive, unchanged in the words it views: an owned
        //   cell is never evicted (`SwapCell::evict` refuses it) and is swapped or closed only
        //   by its owner, through `Owner::swap` (`&mut self`, which refreshes the cache, or
        //   clears it when closed); nothing else retires its slots (docs/unsafe.md, "The owner's
        //   reads"). The words it views only ever grow (`MmapMemory::set_backed` takes a
        //   maximum, through `Owner::with_memory_mut`, which refreshes too), so the cached
        //   length never exceeds what the mapping views.
        // - The returned `&` borrows `self`, so no `&mut` operation of the owner (the only ones
        //   that unmap) can run while it lives; the words are atomics, shared with readers.
        unsafe {
            Some(cells.as_ref())
        }
    }

    /// Under loom, the cache must be the active mapping's view: the same pointer and length, read
    /// through the cell (so loom also tracks the slot's `UnsafeCell` as the unpinned read does).
    #[cfg(all(test, loom))]
    fn check_cache(&self, cells: NonNull<[M::Word]>) {
        let live = self.cell.with_owned(|mem| NonNull::from(mem.cells()));
        assert_eq!(live, Some(cells), "the owner's cache went stale");
    }
}
