//! [`SwapCell`]: up to two mappings, the pin protocol that keeps a mapping alive while a reader
//! is inside it, and a mapping budget's eviction and remap.
//!
//! # The swap protocol
//! A [`SwapCell`] holds up to two mappings in two slots, and an `active` index naming the current
//! one. Each slot has one atomic *pin word*: a `RETIRED` bit and a count of pins. A reader pins
//! the active slot with a `fetch_add` on its word; if the returned word had the `RETIRED` bit, the
//! slot was already retired, so the reader takes its pin back without touching the mapping and
//! retries. Otherwise it reads, then unpins with a `fetch_sub`. The writer installs a new mapping
//! in the other slot, clears that slot's bit, flips `active`, and retires the old slot with a
//! `fetch_or` of the bit. Because the bit and the count live in one word, its modification order
//! decides everything: a pin that came before the retirement is counted by it, a pin that came
//! after sees the bit. Whoever leaves the word at exactly "retired, zero pins" (the writer's
//! `fetch_or` finding no pins, or the last `fetch_sub`) unmaps the mapping, and a
//! compare-exchange on the slot state makes that happen once. No `SeqCst` is needed.
//!
//! # Hazard readers
//! An index's lookups do not pin: [`SwapCell::with_hazard`] publishes the slot it reads in this
//! thread's hazard word (`hazard.rs`) and re-checks `active`, with no read-modify-write. For a
//! cell created with hazard readers, every retirement (swap, close, eviction) runs the
//! writer's side of that handshake (a heavy fence, then a wait while a hazard word names the
//! slot) between the flip of `active` and the `fetch_or` of the bit, so the slot can be
//! reclaimed (by the writer or the last pin) only once no hazard reader is inside it.
//!
//! # Eviction
//! A mapping budget ([`crate::MappingBudget`]) may *evict* a cell: `active` becomes
//! `EVICTED | slot` and the slot is retired exactly as a swap retires it, so the mapping goes as
//! soon as the lookups inside it return. Pins then fail with [`Unpinned::Evicted`]; whoever needs
//! the mapping calls [`SwapCell::remap`], which installs a new mapping in the other slot the way
//! a swap does (no flip of a live slot is involved, so no reader can be inside it).

use std::marker::PhantomData;

use super::Memory;
use super::hazard::{self, Hazard};
use crate::budget::Member;
use crate::loom::{Arc, AtomicUsize, Mutex, Ordering, UnsafeCell, yield_now};

mod evict;

/// `active` value once the cell is closed: no slot is current and pins fail.
const CLOSED: usize = usize::MAX;

/// `active` is `EVICTED | slot` while the cell is evicted: no slot is current, pins fail with
/// [`Unpinned::Evicted`], and `slot` (retired) is the one the last mapping lived in.
const EVICTED: usize = 1 << (usize::BITS - 2);

/// Why a pin failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unpinned {
    /// The cell was closed for good.
    Closed,
    /// A mapping budget unmapped the cell; [`SwapCell::remap`] maps it again.
    Evicted,
}

/// The pin word's flag: set while the slot is not live (retired, being reclaimed, or empty).
const RETIRED_BIT: usize = 1 << (usize::BITS - 1);

/// Slot states (who owns `mem`).
const EMPTY: usize = 0;
const LIVE: usize = 1;
const RETIRED: usize = 2;
const RECLAIMING: usize = 3;

/// One of the two mapping slots of a [`SwapCell`].
struct Slot<M> {
    /// `RETIRED_BIT | pins`: the readers inside, plus, transiently, readers that found the bit
    /// set and are taking their pin back.
    word: AtomicUsize,
    /// `EMPTY`, `LIVE`, `RETIRED` or `RECLAIMING`.
    state: AtomicUsize,
    /// Written only when no reader can read it: by the writer when installing into an `EMPTY`
    /// slot (its bit still set, so every pin attempt fails), or by the single winner of the
    /// `RETIRED -> RECLAIMING` exchange, made only once the word reached "retired, no pins".
    mem: UnsafeCell<Option<M>>,
}

impl<M> Slot<M> {
    fn new(mem: Option<M>, state: usize) -> Self {
        let word = if state == LIVE { 0 } else { RETIRED_BIT };
        Self {
            word: AtomicUsize::new(word),
            state: AtomicUsize::new(state),
            mem: UnsafeCell::new(mem),
        }
    }

    /// Replaces the slot's mapping. The caller must hold the slot exclusively (see `mem`).
    fn replace(&self, new: Option<M>) -> Option<M> {
        self.mem.with_mut(|p| {
            #[expect(unsafe_code, reason = "exclusive write to an inactive, unpinned slot")]
            // SAFETY:
            // - `p` comes from the slot's `UnsafeCell`, so it is non-null, aligned and valid.
            // - No other reference to the contents exists. Callers reach here only for an
            //   `EMPTY` slot (the writer, serialized by `SwapCell::writer`) or after winning the
            //   `RETIRED -> RECLAIMING` exchange, which is tried only once the pin word reached
            //   "retired, no pins". A reader reads `mem` only under a pin whose `fetch_add`
            //   found the bit clear, and the bit is set from retirement until the next install
            //   is complete, so no reader holds or can take such a pin here (see the module
            //   docs and docs/unsafe.md).
            unsafe {
                std::mem::replace(&mut *p, new)
            }
        })
    }
}

/// Two mapping slots, the `active` index, and a payload `X` shared with readers.
pub(crate) struct SwapCell<M, X> {
    active: AtomicUsize,
    slots: [Slot<M>; 2],
    /// Serializes installs, evictions and closes (there is one writer, but the cell does not
    /// rely on it; evictions and remaps come from other threads).
    writer: Mutex<()>,
    /// The words of the mapping evicted last, which `remap` maps again. Read and written under
    /// `writer` only; an atomic for interior mutability, not for ordering.
    evicted_words: std::sync::atomic::AtomicUsize,
    /// Membership of a mapping budget, if the cell has one.
    member: Option<Member>,
    /// An owned cell (see [`owned_cell`]): never evicted, and swapped or closed only by the one
    /// value that owns it, which may therefore read the active mapping without a pin.
    owned: bool,
    /// Whether readers may read through hazard words ([`SwapCell::with_hazard`]): then every
    /// retirement waits for them (see the module docs). Index cells have them; `.log` cells,
    /// whose growth swaps must not pay a heavy fence, do not.
    hazard_readers: bool,
    extra: X,
}

#[expect(
    unsafe_code,
    reason = "the UnsafeCell slots are shared under the swap protocol"
)]
// SAFETY:
// - `SwapCell` is `!Sync` only because of the slots' `UnsafeCell<Option<M>>`. Shared access to
//   the contents happens only through `Pin::with` (shared reads of an `M: Sync`) and
//   `Slot::replace` (exclusive, per the protocol in the module docs), so sharing the cell
//   between threads is sound when `M: Send + Sync` (mappings are created on one thread and
//   dropped on another) and `X: Sync`.
unsafe impl<M: Send + Sync, X: Sync> Sync for SwapCell<M, X> {}

impl<M: Memory, X> SwapCell<M, X> {
    /// A cell whose slot 0 holds `mem` and is active.
    #[cfg(all(test, loom))]
    pub(crate) fn new(mem: M, extra: X) -> Self {
        let mut cell = Self::with_member(mem, extra, None);
        cell.hazard_readers = true;
        cell
    }

    /// A cell whose slot 0 holds `mem`, counted by a mapping budget when `member` is given (the
    /// caller admits it once the cell is shared, see `budget`).
    pub(crate) fn with_member(mem: M, extra: X, member: Option<Member>) -> Self {
        Self {
            active: AtomicUsize::new(0),
            slots: [Slot::new(Some(mem), LIVE), Slot::new(None, EMPTY)],
            writer: Mutex::new(()),
            evicted_words: std::sync::atomic::AtomicUsize::new(0),
            member,
            owned: false,
            hazard_readers: false,
            extra,
        }
    }

    /// Runs `f` on the active mapping. With `as_owner` on an owned cell (see [`owned_cell`]),
    /// without a pin: only the caller, the cell's owner, can retire the mapping, and it does so
    /// only through `&mut` access it cannot have while it holds the `&` it calls this with.
    /// Otherwise (a reader, or a cell a budget may evict) under a pin, as [`SwapCell::pin`].
    #[inline]
    pub(crate) fn with_active<R>(
        &self,
        as_owner: bool,
        f: impl FnOnce(&M) -> R,
    ) -> Result<R, Unpinned> {
        if as_owner && self.owned {
            return self.with_owned(f).ok_or(Unpinned::Closed);
        }
        let pin = self.pin()?;
        pin.with(f).ok_or(Unpinned::Closed)
    }

    /// Runs `f` on the active mapping, protected by this thread's hazard word instead of a pin
    /// (see `hazard.rs`): no read-modify-write. `None` without calling `f` when the cell has
    /// no hazard readers, this thread has no hazard word, no slot is active (closed or
    /// evicted), or a swap raced with the check; the caller then pins ([`SwapCell::pin`]),
    /// which also tells closed from evicted. `f` must be short and run no caller code: a
    /// retirement waits for it.
    #[expect(
        clippy::inline_always,
        reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
    )]
    #[inline(always)]
    pub(crate) fn with_hazard<R>(&self, f: impl FnOnce(&M) -> R) -> Option<R> {
        if !self.hazard_readers {
            return None;
        }
        let hazard = Hazard::mine()?;
        let index = self.active.load(Ordering::Relaxed);
        // Chosen by a branch, not by `index * size_of::<Slot>()`: predicted, the branch lets the
        // mapping's fields load without waiting on `active`.
        let [first, second] = &self.slots;
        let slot = match index {
            0 => first,
            1 => second,
            _ => return None,
        };
        hazard.publish(slot_id(slot));
        // Acquire: pairs with the install's release (the mapping in the slot is complete).
        // The hazard's fence orders this load after the publication: if the slot is still
        // active here, the writer's scan (after its flip and heavy fence) sees the hazard.
        if self.active.load(Ordering::Acquire) != index {
            return None;
        }
        if let Some(member) = &self.member {
            member.touch();
        }
        let result = read_slot(slot, f);
        drop(hazard);
        result
    }

    /// Whether this is an owned cell (see [`owned_cell`]).
    #[inline]
    pub(crate) fn is_owned(&self) -> bool {
        self.owned
    }

    /// Runs `f` on the active mapping without a pin; `None` once closed. Only the owner of an
    /// owned cell may call this, for the reasons [`with_active`](Self::with_active) gives.
    #[inline]
    pub(crate) fn with_owned<R>(&self, f: impl FnOnce(&M) -> R) -> Option<R> {
        debug_assert!(self.owned, "only an owned cell is read without a pin");
        with_slot(self, self.active.load(Ordering::Acquire), f)
    }

    /// The cell's budget membership.
    pub(crate) fn member(&self) -> Option<&Member> {
        self.member.as_ref()
    }

    fn lock_writer(&self) -> crate::loom::MutexGuard<'_, ()> {
        self.writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The payload shared with readers.
    #[inline]
    pub(crate) fn extra(&self) -> &X {
        &self.extra
    }

    /// Pins the active mapping; fails once the cell is closed or while it is evicted.
    #[inline]
    pub(crate) fn pin(&self) -> Result<Pin<'_, M, X>, Unpinned> {
        self.pin_slot().map(|slot| Pin {
            cell: self,
            slot,
            _not_send: PhantomData,
        })
    }

    #[inline]
    fn pin_slot(&self) -> Result<usize, Unpinned> {
        loop {
            let index = self.active.load(Ordering::Acquire);
            let Some(slot) = self.slots.get(index) else {
                return Err(if index == CLOSED {
                    Unpinned::Closed
                } else {
                    Unpinned::Evicted
                });
            };
            // Acquire: pairs with the install's release (the mapping is fully installed) and,
            // if we end up reclaiming, with the releases of the readers that left before us.
            if slot.word.fetch_add(1, Ordering::Acquire) & RETIRED_BIT == 0 {
                if let Some(member) = &self.member {
                    member.touch();
                }
                return Ok(index);
            }
            // Retired before our pin: we never touched the mapping. The writer flipped `active`
            // before retiring, and our acquire saw the retirement, so the next load of `active`
            // sees the flip.
            self.unpin(index);
        }
    }

    #[inline]
    fn unpin(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        // Release publishes our reads of the mapping to whoever reclaims it; acquire (when we
        // are the last) makes the earlier readers' reads happen before our own reclaim.
        if slot.word.fetch_sub(1, Ordering::AcqRel) == RETIRED_BIT | 1 {
            self.reclaim(index);
        }
    }

    /// Drops a retired slot's mapping, if nobody else is already doing so. Called only by
    /// whoever left the pin word at "retired, no pins".
    fn reclaim(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        if slot
            .state
            .compare_exchange(RETIRED, RECLAIMING, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            drop(slot.replace(None));
            // Release: the next install into this slot happens after the drop.
            slot.state.store(EMPTY, Ordering::Release);
        }
    }

    /// Installs `mem` as the active mapping (or closes the cell when `mem` is `None`) and
    /// retires the previous one. With `wait`, returns only once every mapping other than the
    /// new one is unmapped (the one just retired, and one retired by an earlier swap that did
    /// not wait), which waits for lookups that pinned them before their retirement (never for
    /// later ones). After a close, installing is refused and `mem` is handed back.
    pub(crate) fn swap(&self, mem: Option<M>, wait: bool) -> Result<(), M> {
        self.swap_with(mem, wait, true)
    }

    /// Installs `mem` as the active mapping, never waiting for anyone: if the spare slot still
    /// holds a mapping retired by an earlier swap that a reader has pinned, nothing happens and
    /// `mem` is handed back (the caller keeps the current mapping and may retry later). Also
    /// hands `mem` back once the cell is closed.
    pub(crate) fn try_install(&self, mem: M) -> Result<(), M> {
        self.swap_with(Some(mem), false, false)
    }

    fn swap_with(&self, mem: Option<M>, wait: bool, wait_for_spare: bool) -> Result<(), M> {
        let _writer = self.lock_writer();
        let current = self.active.load(Ordering::Acquire);
        if current == CLOSED {
            return mem.map_or(Ok(()), Err);
        }
        let evicted = current & EVICTED != 0;
        // The slot the current (or, when evicted, the last) mapping lives in.
        let last = current & !EVICTED;
        match mem {
            // A growth that must not wait must not map an evicted cell again either: the budget
            // decides when a cell is mapped.
            Some(mem) if evicted && !wait_for_spare => return Err(mem),
            Some(mem) => {
                if evicted && let Some(member) = &self.member {
                    member.admit();
                }
                self.install_locked(last, mem, wait_for_spare)?;
            }
            None => {
                self.active.store(CLOSED, Ordering::Release);
                if !evicted && let Some(member) = &self.member {
                    member.release();
                }
            }
        }
        if !evicted {
            self.retire(last);
        }
        if wait {
            self.wait_for_retired();
        }
        Ok(())
    }

    /// Installs `mem` in the slot other than `last` and makes it active. The caller holds the
    /// writer lock and retires `last` afterwards if it was live.
    fn install_locked(&self, last: usize, mem: M, wait_for_spare: bool) -> Result<(), M> {
        let mut next = usize::from(last == 0);
        // An evicted cell's last slot is retired too: if its readers already left and the other
        // slot still has one (evicted twice in a row while a lookup was inside the older
        // mapping), install there rather than wait for that lookup.
        let active = self.active.load(Ordering::Acquire);
        if active & EVICTED != 0
            && active != CLOSED
            && self.slot_state(next) != EMPTY
            && self.slot_state(last) == EMPTY
        {
            next = last;
        }
        let Some(slot) = self.slots.get(next) else {
            return Err(mem);
        };
        if !wait_for_spare && slot.state.load(Ordering::Acquire) != EMPTY {
            return Err(mem);
        }
        // The slot retired by the previous swap: wait for its last reader to leave.
        wait_until_empty(slot);
        drop(slot.replace(Some(mem)));
        slot.state.store(LIVE, Ordering::Release);
        // Release: a reader whose pin finds the bit clear sees the mapping installed
        // above. Transient pins of readers that found the bit set stay counted until
        // they take them back.
        slot.word.fetch_and(!RETIRED_BIT, Ordering::Release);
        self.active.store(next, Ordering::Release);
        Ok(())
    }

    fn slot_state(&self, index: usize) -> usize {
        self.slots
            .get(index)
            .map_or(RECLAIMING, |slot| slot.state.load(Ordering::Acquire))
    }

    /// Retires slot `index` (no longer active): its mapping goes when its last reader leaves.
    fn retire(&self, index: usize) {
        if let Some(old) = self.slots.get(index) {
            // The state first, so that whoever reclaims finds it `RETIRED`.
            old.state.store(RETIRED, Ordering::Release);
            // `active` no longer names the slot (every caller flipped it first): wait for the
            // hazard readers that validated it before the flip. Before the `fetch_or`, so that
            // no reclaim (ours or the last pin's) can run while one is inside.
            if self.hazard_readers {
                hazard::wait_for_readers(slot_id(old));
            }
            // AcqRel: readers that unpinned before this see their reads ordered before our
            // reclaim; readers whose pin comes after see the bit.
            if old.word.fetch_or(RETIRED_BIT, Ordering::AcqRel) == 0 {
                self.reclaim(index);
            }
        }
    }

    /// Waits until every slot but the active one is empty.
    fn wait_for_retired(&self) {
        for (index, slot) in self.slots.iter().enumerate() {
            if self.active.load(Ordering::Acquire) != index {
                wait_until_empty(slot);
            }
        }
    }
}

/// A shared cell over `mem`, admitted to `budget` when one is given.
#[cfg(not(all(test, loom)))]
pub(crate) fn shared_cell<M: Memory, X: Send + Sync + 'static>(
    mem: M,
    extra: X,
    budget: Option<&crate::budget::MappingBudget>,
    hazard_readers: bool,
) -> Arc<SwapCell<M, X>> {
    let member = budget.map(crate::budget::MappingBudget::member);
    let mut cell = SwapCell::with_member(mem, extra, member);
    cell.hazard_readers = hazard_readers;
    let cell = Arc::new(cell);
    if let Some(member) = cell.member() {
        let weak = Arc::downgrade(&cell);
        let weak: std::sync::Weak<dyn crate::budget::Evict> = weak;
        member.bind(weak);
        member.admit();
    }
    cell
}

/// A shared cell over `mem` that no budget counts and that is never evicted, for an owner that
/// is the only value ever to swap or close it, always through `&mut` access of its own (an
/// index's `Core`): the owner may then read the active mapping without a pin
/// ([`SwapCell::with_active`]), because no retirement can run while it holds `&`. Readers
/// sharing the cell pin as usual.
pub(crate) fn owned_cell<M: Memory, X: Send + Sync + 'static>(
    mem: M,
    extra: X,
) -> Arc<SwapCell<M, X>> {
    let mut cell = SwapCell::with_member(mem, extra, None);
    cell.owned = true;
    cell.hazard_readers = true;
    Arc::new(cell)
}

/// Loom's `Arc` has no weak handles: the models run without a budget (they drive `evict` and
/// `remap` directly).
#[cfg(all(test, loom))]
pub(crate) fn shared_cell<M: Memory, X: Send + Sync + 'static>(
    mem: M,
    extra: X,
    _budget: Option<&crate::budget::MappingBudget>,
    hazard_readers: bool,
) -> Arc<SwapCell<M, X>> {
    let mut cell = SwapCell::new(mem, extra);
    cell.hazard_readers = hazard_readers;
    Arc::new(cell)
}

impl<M, X> Drop for SwapCell<M, X> {
    fn drop(&mut self) {
        if let Some(member) = &self.member {
            member.release();
        }
    }
}

/// Spins (yielding) until a retired slot has been reclaimed. Bounded by the lookups that pinned
/// the slot before its retirement: each is a finite binary search that runs no caller code.
fn wait_until_empty<M>(slot: &Slot<M>) {
    while slot.state.load(Ordering::Acquire) != EMPTY {
        yield_now();
    }
}

/// A pin on the active mapping, borrowed from the cell. Not `Send`: it is a scope guard.
pub(crate) struct Pin<'a, M: Memory, X> {
    cell: &'a SwapCell<M, X>,
    slot: usize,
    _not_send: PhantomData<*const ()>,
}

impl<M: Memory, X> Pin<'_, M, X> {
    /// Runs `f` on the pinned mapping.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&M) -> R) -> Option<R> {
        with_slot(self.cell, self.slot, f)
    }
}

impl<M: Memory, X> Drop for Pin<'_, M, X> {
    #[inline]
    fn drop(&mut self) {
        self.cell.unpin(self.slot);
    }
}

/// The identity a hazard word publishes for `slot`: its address, unique while the cell lives
/// (a reader holds the cell's `Arc` while its word names the slot).
#[inline]
fn slot_id<M>(slot: &Slot<M>) -> usize {
    std::ptr::from_ref(slot).addr()
}

/// Runs `f` on the mapping of `cell`'s slot number `slot` ([`read_slot`]).
#[expect(
    clippy::inline_always,
    reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
)]
#[inline(always)]
fn with_slot<M: Memory, X, R>(
    cell: &SwapCell<M, X>,
    slot: usize,
    f: impl FnOnce(&M) -> R,
) -> Option<R> {
    read_slot(cell.slots.get(slot)?, f)
}

/// Runs `f` on `slot`'s mapping; `None` for an empty slot. The caller holds a pin on the slot, a
/// hazard word it validated, or the owned cell (the SAFETY argument below).
#[expect(
    clippy::inline_always,
    reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
)]
#[inline(always)]
fn read_slot<M: Memory, R>(slot: &Slot<M>, f: impl FnOnce(&M) -> R) -> Option<R> {
    // Inlined to the last closure: a reader's lookup runs its whole search in `f`, and LLVM
    // left this closure out of line, a call with its arguments through memory.
    slot.mem.with(
        #[inline(always)]
        |p| {
            #[expect(
                unsafe_code,
                reason = "shared read of a pinned or hazard-protected mapping"
            )]
            // SAFETY: `p` comes from the slot's `UnsafeCell` (non-null, aligned, valid), and no
            // `&mut` to the contents exists while this `&` lives, because the caller either
            // - holds a pin whose `fetch_add` found the bit clear: the slot is neither reclaimed
            //   (that needs "retired, no pins") nor reinstalled (that needs `EMPTY`) before unpin;
            // - or published the slot in its hazard word and then found it still active
            //   (`with_hazard`): `retire` waits, after its flip and heavy fence, until no hazard
            //   word names the slot before it sets the bit, so neither can happen before `f` ends;
            // - or owns an owned cell and reads the slot `active` named (`with_owned`): only its
            //   own `&mut` swaps retire, and they cannot overlap this call (docs/unsafe.md, "The
            //   owner's reads").
            let mem = unsafe { &*p };
            mem.as_ref().map(f)
        },
    )
}
