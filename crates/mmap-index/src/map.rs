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
//! # Eviction
//! A mapping budget ([`crate::MappingBudget`]) may *evict* a cell: `active` becomes
//! `EVICTED | slot` and the slot is retired exactly as a swap retires it, so the mapping goes as
//! soon as the lookups inside it return. Pins then fail with [`Unpinned::Evicted`]; whoever needs
//! the mapping calls [`SwapCell::remap`], which installs a new mapping in the other slot the way
//! a swap does (no flip of a live slot is involved, so no reader can be inside it).

use std::io;
use std::marker::PhantomData;
use std::os::fd::BorrowedFd;

use crate::budget::Member;
use crate::sync::{Arc, AtomicUsize, Mutex, Ordering, UnsafeCell, yield_now};

/// How many mappings this process holds right now, over all indexes. Tests and benches read it
/// through [`live_mappings`](crate::live_mappings) to prove that lazy opens create none. A plain
/// std atomic even under loom: it is a statistic, not part of any protocol.
static LIVE_MAPPINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The number of index mappings currently alive in this process.
pub(crate) fn live_mappings() -> usize {
    LIVE_MAPPINGS.load(std::sync::atomic::Ordering::Relaxed)
}

/// How many mappings of growing data files ([`MappedFile`](crate::MappedFile), the `.log`)
/// this process holds right now; kept apart from [`LIVE_MAPPINGS`] so that index accounting
/// (and the tests that rely on it) is unchanged.
static LIVE_FILE_MAPPINGS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The number of data-file mappings currently alive in this process.
pub(crate) fn live_file_mappings() -> usize {
    LIVE_FILE_MAPPINGS.load(std::sync::atomic::Ordering::Relaxed)
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

/// Asks the processor to bring the cache line holding `item` into its caches, without waiting
/// for it (a software prefetch). A hint only: it reads nothing the program can observe and never
/// faults. A no-op on targets other than x86-64.
#[inline(always)]
pub(crate) fn prefetch<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        let p = std::ptr::from_ref(item).cast::<i8>();
        #[expect(
            unsafe_code,
            reason = "a prefetch hint, which the SSE intrinsic marks unsafe"
        )]
        // SAFETY:
        // - `_mm_prefetch` needs SSE, which every x86-64 processor has (the target enables it).
        // - `PREFETCHT0` neither reads architecturally nor faults, whatever the address; `p` is
        //   anyway derived from a live reference.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(p);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = item;
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
    /// The words that hold the first `bytes` bytes (all the words when there are fewer). A
    /// data-file mapping, which may reach past the end of its file, is only ever viewed this
    /// way, up to a length its owner published (see `mapped_file`).
    #[inline]
    fn cells_up_to(&self, bytes: usize) -> &[Self::Word] {
        let cells = self.cells();
        cells.get(..bytes.div_ceil(4)).unwrap_or(cells)
    }
    /// Whether stores are allowed. The writer checks this before every store: a read-only
    /// mapping is only ever loaded from.
    #[inline]
    fn writable(&self) -> bool {
        true
    }
}

/// A shared memory map of an index file (`MAP_SHARED`, offset 0), writable or read-only.
#[derive(Debug)]
pub(crate) struct MmapMemory {
    /// `None` for a zero-length file: nothing is mapped at all.
    map: Option<memmap2::MmapRaw>,
    /// `map.len() / 4`.
    words: usize,
    /// False for a `PROT_READ` mapping, which must never be stored to.
    writable: bool,
    /// The live-mapping counter this mapping is counted in.
    counter: &'static std::sync::atomic::AtomicUsize,
}

impl MmapMemory {
    /// Maps the first `len` bytes of `file` shared, read-write or (for a file opened read-only)
    /// read-only.
    pub(crate) fn map(file: BorrowedFd<'_>, len: usize, writable: bool) -> io::Result<Self> {
        Self::map_counted(file, len, writable, &LIVE_MAPPINGS, true)
    }

    /// Maps the first `len` bytes of `file` shared and read-only (`PROT_READ`), counted as a
    /// data-file mapping. `len` may exceed the file's length (mapping ahead of a growing file):
    /// the owner of the mapping must then never let a reader touch a page past the end of file.
    pub(crate) fn map_data_read_only(file: BorrowedFd<'_>, len: usize) -> io::Result<Self> {
        Self::map_counted(file, len, false, &LIVE_FILE_MAPPINGS, false)
    }

    /// Anonymous memory holding a copy of `bytes`, counted as an index mapping: the page cache
    /// of an index whose file lives in an [`IndexStore`](seglog_fs::IndexStore) rather than on a real
    /// file system. `writable` as for [`MmapMemory::map`].
    pub(crate) fn anonymous(bytes: &[u8], writable: bool) -> io::Result<Self> {
        if bytes.is_empty() {
            return Ok(Self {
                map: None,
                words: 0,
                writable,
                counter: &LIVE_MAPPINGS,
            });
        }
        let mut anon = memmap2::MmapOptions::new().len(bytes.len()).map_anon()?;
        anon.copy_from_slice(bytes);
        let map = memmap2::MmapRaw::from(anon);
        if map.len() != bytes.len()
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
            words: bytes.len() / 4,
            writable,
            counter: &LIVE_MAPPINGS,
        })
    }

    /// The first `len` bytes of the memory (zeros past its end), read word by word with the same
    /// relaxed atomic loads as lookups: what a write-back of the mapping would write.
    pub(crate) fn snapshot(&self, len: usize) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(len);
        for word in self.atomics() {
            let value = word.load(std::sync::atomic::Ordering::Relaxed);
            bytes.extend_from_slice(zerocopy::IntoBytes::as_bytes(&value));
        }
        bytes.resize(len, 0);
        bytes
    }

    fn map_counted(
        file: BorrowedFd<'_>,
        len: usize,
        writable: bool,
        counter: &'static std::sync::atomic::AtomicUsize,
        random_access: bool,
    ) -> io::Result<Self> {
        if len == 0 {
            return Ok(Self {
                map: None,
                words: 0,
                writable,
                counter,
            });
        }
        let mut options = memmap2::MmapOptions::new();
        options.len(len);
        let map = if writable {
            options.map_raw(&file)?
        } else {
            options.map_raw_read_only(&file)?
        };
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
        if random_access {
            // An index is read by binary search and written a few bytes at a time: readahead on
            // a fault only zero-fills pages of the preallocated (sparse) tail that no entry will
            // reach soon, which made each append's first touch of a page cost microseconds.
            // Advice is a hint: a kernel that refuses it changes nothing but speed.
            let _ = map.advise(memmap2::Advice::Random);
        }
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(Self {
            map: Some(map),
            words: len / 4,
            writable,
            counter,
        })
    }

    /// The mapped words as atomics.
    #[inline]
    fn atomics(&self) -> &[std::sync::atomic::AtomicU32] {
        self.atomics_prefix(self.words)
    }

    /// The first `words` mapped words (at most all of them) as atomics.
    #[inline]
    fn atomics_prefix(&self, words: usize) -> &[std::sync::atomic::AtomicU32] {
        let Some(map) = &self.map else {
            return &[];
        };
        let words = words.min(self.words);
        #[expect(unsafe_code, reason = "viewing the mapped file as atomic words")]
        #[expect(
            clippy::cast_ptr_alignment,
            reason = "a mapping is page-aligned; `map` checks it"
        )]
        // SAFETY:
        // - The pointer is non-null and aligned for `AtomicU32`: a live mapping's start is
        //   page-aligned (and `map` checked it).
        // - Valid for `words * 4 <= map.len()` bytes while `&self` lives (unmapped only on drop),
        //   all in pages the file backs: an index maps only its file (or anonymous memory of
        //   exactly its length, for a stored backing); a data-file mapping is viewed only below
        //   a published length (docs/unsafe.md); `words * 4` fits `isize`.
        // - The bytes are initialized and any bit pattern is a valid `AtomicU32`.
        // - We access them only through these atomics; docs/unsafe.md rules out other writers
        //   except the kernel's `pwrite` (a race on values) and shrinking under a mapping.
        // - A read-only mapping is only read (`Relaxed` loads, a `.log`'s plain copy), which std
        //   allows on read-only memory; `Core::push` checks `Memory::writable` before any store.
        unsafe {
            std::slice::from_raw_parts(
                map.as_mut_ptr().cast::<std::sync::atomic::AtomicU32>(),
                words,
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

    #[inline]
    fn words(&self) -> usize {
        self.words
    }

    #[inline]
    fn cells_up_to(&self, bytes: usize) -> &[std::sync::atomic::AtomicU32] {
        self.atomics_prefix(bytes.div_ceil(4))
    }

    #[inline]
    fn writable(&self) -> bool {
        self.writable
    }
}

impl Drop for MmapMemory {
    fn drop(&mut self) {
        if self.map.take().is_some() {
            self.counter
                .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
        }
    }
}

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
        Self::with_member(mem, extra, None)
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

    fn lock_writer(&self) -> crate::sync::MutexGuard<'_, ()> {
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

    /// Unmaps the active mapping without closing the cell (a mapping budget evicting it): pins
    /// fail with [`Unpinned::Evicted`] until [`SwapCell::remap`] maps it again. Never waits:
    /// the mapping goes when the lookups inside it return. False, doing nothing, when the writer
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

/// A shared cell over `mem`, admitted to `budget` when one is given.
#[cfg(not(all(test, loom)))]
pub(crate) fn shared_cell<M: Memory, X: Send + Sync + 'static>(
    mem: M,
    extra: X,
    budget: Option<&crate::MappingBudget>,
) -> Arc<SwapCell<M, X>> {
    let member = budget.map(crate::MappingBudget::member);
    let cell = Arc::new(SwapCell::with_member(mem, extra, member));
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
    Arc::new(cell)
}

/// Loom's `Arc` has no weak handles: the models run without a budget (they drive `evict` and
/// `remap` directly).
#[cfg(all(test, loom))]
pub(crate) fn shared_cell<M: Memory, X: Send + Sync + 'static>(
    mem: M,
    extra: X,
    _budget: Option<&crate::MappingBudget>,
) -> Arc<SwapCell<M, X>> {
    Arc::new(SwapCell::new(mem, extra))
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
        // - Either the caller holds a pin taken while this slot was active (`pin_slot`
        //   re-checked `active` after incrementing `pins`): until that pin is released,
        //   `pins > 0`, so the slot is neither reclaimed (reclaim needs the count to reach zero
        //   after retirement) nor reinstalled (install needs `EMPTY`, which only reclaim sets).
        // - Or the caller is the owner of an owned cell reading the slot `active` named
        //   (`with_owned`, and `with_active` through it): only a retirement makes a live slot
        //   reclaimable, an owned cell is never evicted, and only its owner swaps or closes it,
        //   through `&mut` access that cannot overlap the `&` it holds for this call, so the
        //   slot stays live until it returns (docs/unsafe.md, "The owner's reads").
        // Hence no `&mut` to the contents exists while this shared reference lives.
        let mem = unsafe { &*p };
        mem.as_ref().map(f)
    })
}
