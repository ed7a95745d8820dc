//! A mapping budget's side of [`SwapCell`]: eviction (the unmap of a cold cell) and the remap
//! of an evicted one (see the parent module's docs, "Eviction").
#![forbid(unsafe_code)]

use std::io;

use super::{CLOSED, EVICTED, Memory, RETIRED_BIT, SwapCell, with_slot};
use crate::budget::Member;
use crate::loom::Ordering;

impl<M: Memory, X> SwapCell<M, X> {
    /// Unmaps the active mapping without closing the cell (a mapping budget evicting it): pins
    /// fail with [`Unpinned::Evicted`] until [`SwapCell::remap`] maps it again. Never waits
    /// for pins (the mapping goes when the pinned lookups inside it return); waits only for
    /// the hazard readers inside it (one search each, see `hazard.rs`). False, doing nothing, when the writer
    /// lock is busy (an install, close or remap is running: the cell is in use) or when nothing
    /// is mapped.
    pub(crate) fn evict(&self) -> bool {
        if self.owned {
            // Only its owner may retire an owned cell's mapping (see `with_active`).
            return false;
        }
        let _writer = match self.writer.try_lock() {
            Ok(guard) => guard,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        let current = self.active.load(Ordering::Acquire);
        if current & EVICTED != 0 {
            return false;
        }
        let words = self.with_slot_memory(current, Memory::words).unwrap_or(0);
        self.evicted_words
            .store(words, std::sync::atomic::Ordering::Relaxed);
        // Release: pairs with the acquire of readers that then find the cell evicted.
        self.active.store(EVICTED | current, Ordering::Release);
        self.retire(current);
        true
    }

    /// The word count of slot `index`'s mapping. The caller holds the writer lock on a live
    /// slot, which only the writer lock retires, so the mapping cannot go meanwhile.
    fn with_slot_memory<R>(&self, index: usize, f: impl FnOnce(&M) -> R) -> Option<R> {
        let slot = self.slots.get(index)?;
        // A pin, like any reader: cheap, and it keeps the argument of `with_slot` unchanged.
        if slot.word.fetch_add(1, Ordering::Acquire) & RETIRED_BIT != 0 {
            self.unpin(index);
            return None;
        }
        let result = with_slot(self, index, f);
        self.unpin(index);
        result
    }

    /// Maps an evicted cell again: `make` gets the word count of the mapping that was evicted
    /// and returns the new mapping. Returns false without calling `make` when the cell is not
    /// evicted (someone else remapped it, or it is closed: pin again to find out).
    pub(crate) fn remap(&self, make: impl FnOnce(usize) -> io::Result<M>) -> io::Result<bool> {
        let _writer = self.lock_writer();
        let current = self.active.load(Ordering::Acquire);
        if current == CLOSED || current & EVICTED == 0 {
            return Ok(false);
        }
        if let Some(member) = &self.member {
            member.admit();
        }
        let words = self
            .evicted_words
            .load(std::sync::atomic::Ordering::Relaxed);
        let mem = match make(words) {
            Ok(mem) => mem,
            Err(e) => {
                if let Some(member) = &self.member {
                    member.release();
                }
                return Err(e);
            }
        };
        if self.install_locked(current & !EVICTED, mem, true).is_err() {
            if let Some(member) = &self.member {
                member.release();
            }
            return Err(io::Error::other("no mapping slot to remap into"));
        }
        Ok(true)
    }

    /// Whether the cell is evicted now.
    pub(crate) fn is_evicted(&self) -> bool {
        let active = self.active.load(Ordering::Acquire);
        active != CLOSED && active & EVICTED != 0
    }
}

impl<M: Memory, X: Send + Sync + 'static> crate::budget::Evict for SwapCell<M, X> {
    fn evict(&self) -> bool {
        SwapCell::evict(self)
    }

    fn last_used(&self) -> u64 {
        self.member.as_ref().map_or(0, Member::last_used)
    }
}
