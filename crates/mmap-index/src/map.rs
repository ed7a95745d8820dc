//! The only module with `unsafe`: the memory-mapped backend and the two-slot mapping swap that
//! guarantees no mapping is unmapped while a reader is inside it (KAFKA-7442). Every site is
//! listed, with its argument, in `docs/unsafe.md`.
//!
//! # Memory
//! A [`Memory`] is an array of 32-bit words. Every access goes through an atomic (relaxed loads
//! and stores): the appender writes slots that readers may read at the same time after a
//! truncation, and atomics make that a race on values, never a data race. On x86-64 and aarch64
//! a relaxed 32-bit load or store is a plain `mov`/`ldr`/`str`.
//!
//! # The swap protocol
//! A [`SwapCell`] holds up to two mappings in two slots, and an `active` index naming the current
//! one. A reader *pins* the active slot (increments its `pins`, then re-checks that it is still
//! active), reads, and unpins. The writer installs a new mapping in the other slot, flips
//! `active`, and *retires* the old slot. A retired slot's mapping is dropped (unmapped) by
//! whoever brings its pin count to zero after retirement: the writer if no reader is inside,
//! otherwise the last reader to leave. Each side puts a `SeqCst` fence between its write and its
//! read ("reader: pin, fence, re-check `active`"; "reader: unpin, fence, read the state";
//! "writer: flip `active` and retire, fence, read the pins"), so of each pair at least one sees
//! the other (Dekker's argument with C++11 fences), and a compare-exchange on the state makes
//! exactly one of them unmap. Fences rather than `SeqCst` accesses because loom models fences
//! exactly but treats `SeqCst` accesses as `AcqRel`.

use std::fs::File;
use std::io;
use std::marker::PhantomData;

use crate::sync::{Arc, AtomicUsize, Mutex, Ordering, UnsafeCell, fence, yield_now};

/// How many mappings this process holds right now, over all indexes. Tests and benches read it
/// through [`live_mappings`](crate::live_mappings) to prove that lazy opens create none. A plain
/// std atomic even under loom: it is a statistic, not part of any protocol.
static LIVE_MAPPINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The number of index mappings currently alive in this process.
pub(crate) fn live_mappings() -> usize {
    LIVE_MAPPINGS.load(std::sync::atomic::Ordering::Relaxed)
}

/// One 32-bit word of shared memory, accessed atomically (relaxed).
pub(crate) trait Word: Send + Sync {
    /// Loads the word.
    fn load(&self) -> u32;
    /// Stores the word.
    fn store(&self, value: u32);
}

impl Word for std::sync::atomic::AtomicU32 {
    #[inline]
    fn load(&self) -> u32 {
        self.load(std::sync::atomic::Ordering::Relaxed)
    }

    #[inline]
    fn store(&self, value: u32) {
        self.store(value, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Loads word `index` of `cells`; a word past the end reads as zero.
#[inline]
pub(crate) fn load<W: Word>(cells: &[W], index: usize) -> u32 {
    cells.get(index).map_or(0, Word::load)
}

/// Stores word `index` of `cells`; a word past the end is ignored (callers check capacity).
#[inline]
pub(crate) fn store<W: Word>(cells: &[W], index: usize, value: u32) {
    if let Some(w) = cells.get(index) {
        w.store(value);
    }
}

/// Word-addressed shared memory that holds index entries.
pub(crate) trait Memory: Send + Sync + 'static {
    /// The word type.
    type Word: Word;
    /// The memory as words.
    fn cells(&self) -> &[Self::Word];
    /// The number of whole 32-bit words.
    #[inline]
    fn words(&self) -> usize {
        self.cells().len()
    }
}

/// A shared, writable memory map of an index file (`MAP_SHARED`, offset 0).
#[derive(Debug)]
pub(crate) struct MmapMemory {
    /// `None` for a zero-length file: nothing is mapped at all.
    map: Option<memmap2::MmapRaw>,
    /// `map.len() / 4`.
    words: usize,
}

impl MmapMemory {
    /// Maps the first `len` bytes of `file` read-write and shared.
    pub(crate) fn map(file: &File, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Ok(Self {
                map: None,
                words: 0,
            });
        }
        let map = memmap2::MmapOptions::new().len(len).map_raw(file)?;
        if map.len() != len
            || map
                .as_ptr()
                .align_offset(align_of::<std::sync::atomic::AtomicU32>())
                != 0
        {
            return Err(io::Error::other(
                "mmap returned a short or misaligned mapping",
            ));
        }
        LIVE_MAPPINGS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Self {
            map: Some(map),
            words: len / 4,
        })
    }

    /// The mapped words as atomics.
    #[inline]
    fn atomics(&self) -> &[std::sync::atomic::AtomicU32] {
        let Some(map) = &self.map else {
            return &[];
        };
        #[expect(unsafe_code, reason = "viewing the mapped file as atomic words")]
        #[expect(
            clippy::cast_ptr_alignment,
            reason = "a mapping is page-aligned; `map` checks it"
        )]
        // SAFETY:
        // - `data` is non-null and aligned for `AtomicU32`: it is the start of a live mapping,
        //   which is page-aligned (and `map` checked the alignment).
        // - It is valid for reads and writes of `words * 4 <= map.len()` bytes for as long as
        //   `&self` lives, because `self.map` owns the mapping and unmaps it only on drop.
        // - The bytes are initialized (a shared file mapping always is) and any bit pattern is
        //   a valid `AtomicU32`.
        // - Nothing mutates the memory except through these atomics: within the process every
        //   access goes through `atomics`, and docs/unsafe.md's contract forbids other processes
        //   from writing the file and anyone from shrinking it under a live mapping.
        // - `words * 4` fits in `isize`: the kernel gave us a mapping of that many bytes.
        unsafe {
            std::slice::from_raw_parts(
                map.as_mut_ptr().cast::<std::sync::atomic::AtomicU32>(),
                self.words,
            )
        }
    }

    /// `msync(MS_SYNC)` of the whole mapping.
    pub(crate) fn flush(&self) -> io::Result<()> {
        self.map.as_ref().map_or(Ok(()), memmap2::MmapRaw::flush)
    }

    /// Whether a mapping exists (false for a zero-length file).
    pub(crate) fn is_mapped(&self) -> bool {
        self.map.is_some()
    }
}

impl Memory for MmapMemory {
    type Word = std::sync::atomic::AtomicU32;

    #[inline]
    fn cells(&self) -> &[std::sync::atomic::AtomicU32] {
        self.atomics()
    }
}

impl Drop for MmapMemory {
    fn drop(&mut self) {
        if self.map.take().is_some() {
            LIVE_MAPPINGS.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

/// `active` value once the cell is closed: no slot is current and pins fail.
const CLOSED: usize = usize::MAX;

/// Slot states.
const EMPTY: usize = 0;
const LIVE: usize = 1;
const RETIRED: usize = 2;
const RECLAIMING: usize = 3;

/// One of the two mapping slots of a [`SwapCell`].
struct Slot<M> {
    /// Readers currently inside (plus, transiently, readers that are about to find out the slot
    /// is no longer active).
    pins: AtomicUsize,
    /// `EMPTY`, `LIVE`, `RETIRED` or `RECLAIMING`.
    state: AtomicUsize,
    /// Written only while the slot is not active and not pinned by a reader that could read it:
    /// by the writer when installing into an `EMPTY` slot, or by the single winner of the
    /// `RETIRED -> RECLAIMING` exchange.
    mem: UnsafeCell<Option<M>>,
}

impl<M> Slot<M> {
    fn new(mem: Option<M>, state: usize) -> Self {
        Self {
            pins: AtomicUsize::new(0),
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
            // - No other reference to the contents exists: callers reach here only for an
            //   `EMPTY` slot (writer, serialized by `SwapCell::writer`) or after winning the
            //   `RETIRED -> RECLAIMING` exchange once the pin count reached zero after
            //   retirement; a reader reads `mem` only after pinning the slot *and* seeing it
            //   active, which neither state allows (see the module docs and docs/unsafe.md).
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
    /// Serializes installs and closes (there is one writer, but the cell does not rely on it).
    writer: Mutex<()>,
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
    pub(crate) fn new(mem: M, extra: X) -> Self {
        Self {
            active: AtomicUsize::new(0),
            slots: [Slot::new(Some(mem), LIVE), Slot::new(None, EMPTY)],
            writer: Mutex::new(()),
            extra,
        }
    }

    /// The payload shared with readers.
    #[inline]
    pub(crate) fn extra(&self) -> &X {
        &self.extra
    }

    /// Pins the active mapping; `None` once the cell is closed.
    #[inline]
    pub(crate) fn pin(&self) -> Option<Pin<'_, M, X>> {
        self.pin_slot().map(|slot| Pin {
            cell: self,
            slot,
            _not_send: PhantomData,
        })
    }

    /// Pins the active mapping for as long as the returned guard lives (the writer keeps one).
    pub(crate) fn pin_owned(cell: &Arc<Self>) -> Option<OwnedPin<M, X>> {
        cell.pin_slot().map(|slot| OwnedPin {
            cell: Arc::clone(cell),
            slot,
        })
    }

    #[inline]
    fn pin_slot(&self) -> Option<usize> {
        loop {
            let index = self.active.load(Ordering::Acquire);
            let slot = self.slots.get(index)?;
            slot.pins.fetch_add(1, Ordering::Relaxed);
            // Pairs with the fence in `swap`: either we see the flip, or the writer sees our pin.
            fence(Ordering::SeqCst);
            // Acquire: a slot we find active was fully installed before the flip we read.
            if self.active.load(Ordering::Acquire) == index {
                return Some(index);
            }
            // The writer flipped between our two loads: we never touched the mapping.
            self.unpin(index);
        }
    }

    #[inline]
    fn unpin(&self, index: usize) {
        let Some(slot) = self.slots.get(index) else {
            return;
        };
        // Release publishes our reads of the mapping to whoever reclaims it; Acquire (when we are
        // the last) makes the earlier readers' reads happen before our own reclaim.
        if slot.pins.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Pairs with the fence in `swap`: either we see the retirement, or the writer sees
            // the count at zero and reclaims itself.
            fence(Ordering::SeqCst);
            if slot.state.load(Ordering::Acquire) == RETIRED {
                self.reclaim(index);
            }
        }
    }

    /// Drops a retired slot's mapping, if nobody else is already doing so.
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
    /// retires the previous one. With `wait`, returns only once the previous mapping is
    /// unmapped, which waits for lookups that pinned it before the flip (never for later ones).
    /// After a close, installing is refused and `mem` is handed back.
    pub(crate) fn swap(&self, mem: Option<M>, wait: bool) -> Result<(), M> {
        let _writer = self
            .writer
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let current = self.active.load(Ordering::Acquire);
        if current == CLOSED {
            return mem.map_or(Ok(()), Err);
        }
        match mem {
            Some(mem) => {
                let next = usize::from(current == 0);
                let Some(slot) = self.slots.get(next) else {
                    return Err(mem);
                };
                // The slot retired by the previous swap: wait for its last reader to leave.
                wait_until_empty(slot);
                drop(slot.replace(Some(mem)));
                slot.state.store(LIVE, Ordering::Release);
                // Release: a reader that sees `next` active sees the mapping installed above.
                self.active.store(next, Ordering::Release);
            }
            None => self.active.store(CLOSED, Ordering::Release),
        }
        if let Some(old) = self.slots.get(current) {
            old.state.store(RETIRED, Ordering::Release);
            // Pairs with the fences in `pin_slot` and `unpin` (see the module docs).
            fence(Ordering::SeqCst);
            // Acquire: a zero written by the last reader's release makes its reads happen
            // before our reclaim.
            if old.pins.load(Ordering::Acquire) == 0 {
                self.reclaim(current);
            }
            if wait {
                wait_until_empty(old);
            }
        }
        Ok(())
    }
}

/// Spins (yielding) until a retired slot has been reclaimed. Bounded by the lookups that pinned
/// the slot while it was active: each is a finite binary search that runs no caller code.
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

/// A pin that owns a reference to its cell: the writer holds one on the active mapping so that
/// appends touch no shared counter.
pub(crate) struct OwnedPin<M: Memory, X> {
    cell: Arc<SwapCell<M, X>>,
    slot: usize,
}

impl<M: Memory, X> OwnedPin<M, X> {
    /// Runs `f` on the pinned mapping.
    #[inline]
    pub(crate) fn with<R>(&self, f: impl FnOnce(&M) -> R) -> Option<R> {
        with_slot(&self.cell, self.slot, f)
    }
}

impl<M: Memory, X> Drop for OwnedPin<M, X> {
    fn drop(&mut self) {
        self.cell.unpin(self.slot);
    }
}

#[inline]
fn with_slot<M: Memory, X, R>(
    cell: &SwapCell<M, X>,
    slot: usize,
    f: impl FnOnce(&M) -> R,
) -> Option<R> {
    let slot = cell.slots.get(slot)?;
    slot.mem.with(|p| {
        #[expect(unsafe_code, reason = "shared read of a pinned mapping")]
        // SAFETY:
        // - `p` comes from the slot's `UnsafeCell`: non-null, aligned, valid.
        // - The caller holds a pin taken while this slot was active (`pin_slot` re-checked
        //   `active` after incrementing `pins`). Until that pin is released, `pins > 0`, so the
        //   slot is neither reclaimed (reclaim needs the count to reach zero after retirement)
        //   nor reinstalled (install needs `EMPTY`, which only reclaim sets). Hence no
        //   `&mut` to the contents exists while this shared reference lives.
        let mem = unsafe { &*p };
        mem.as_ref().map(f)
    })
}
