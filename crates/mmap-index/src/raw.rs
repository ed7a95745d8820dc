//! The generic index core shared by both index types: the entry count published to readers,
//! the writer's slot bookkeeping, and Kafka's warm-section search. It knows nothing about files;
//! it works over any [`Memory`], which is how the loom models drive exactly this code over a
//! plain buffer.
//!
//! Publication: the writer stores an entry's words (relaxed atomics), then stores the new count
//! with `Release`. A reader loads the count with `Acquire` before pinning the mapping, so every
//! slot below the count it saw is fully written. Readers also clamp the count to the pinned
//! mapping's capacity: a count loaded before a truncate-and-trim may exceed the smaller mapping
//! installed since.

use std::io;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use crate::entry::Entry;
use crate::map::{Memory, SwapCell, Unpinned, Word, owned_cell, prefetch, shared_cell};
use crate::sync::{Arc, AtomicUsize, Ordering};
use std::hint::select_unpredictable;

/// Maps an index file again after a mapping budget evicted it: the file's current path and the
/// word count of the mapping that was evicted.
pub(crate) type Remapper<M> = Box<dyn Fn(&Path, usize) -> io::Result<M> + Send + Sync>;

/// What readers share besides the mapping.
pub(crate) struct Meta<M> {
    /// The published entry count.
    pub(crate) entries: AtomicUsize,
    /// The segment's base offset.
    pub(crate) base_offset: i64,
    /// The current file name, for error messages and remaps. A rename holds the write lock
    /// across the file system's rename, and a remap holds the read lock while it opens the file,
    /// so a remap never opens a name that is going away.
    pub(crate) path: parking_lot::RwLock<PathBuf>,
    /// How to map the file again after an eviction; `None` for cells that are never evicted.
    pub(crate) remap: Option<Remapper<M>>,
}

/// Why a view could not be had.
#[derive(Debug)]
pub(crate) enum Gone {
    /// The index was closed.
    Closed,
    /// The index was evicted by its mapping budget and mapping it again failed.
    Remap(io::Error),
}

/// How many times a view retries when its cell is evicted again between the remap and the pin:
/// only a budget far smaller than the number of threads mapping at once gets near it.
const MAX_REMAPS_PER_VIEW: usize = 64;

/// Pins `cell`, mapping it again if it was evicted, and runs `f` with a view of at most
/// `entries()` entries (loaded before each pin attempt).
#[inline]
fn view_of<E: Entry, M: Memory, R>(
    cell: &SwapCell<M, Meta<M>>,
    as_owner: bool,
    entries: impl Fn() -> usize,
    f: impl FnOnce(&View<'_, E, M>) -> R,
) -> Result<R, Gone> {
    let meta = cell.extra();
    let mut f = Some(f);
    for _ in 0..MAX_REMAPS_PER_VIEW {
        let entries = entries();
        let found = cell.with_active(as_owner, |mem| {
            f.take().map(|f| f(&view(mem, entries, meta.base_offset)))
        });
        match found {
            Ok(result) => return result.ok_or(Gone::Closed),
            Err(Unpinned::Closed) => return Err(Gone::Closed),
            Err(Unpinned::Evicted) => remap(cell)?,
        }
    }
    Err(Gone::Remap(io::Error::other(
        "the mapping budget evicted this index again before it could be read",
    )))
}

/// Kafka's lookup over at most `entries` entries of `mem`: the entry in the largest slot whose
/// key is at most `target`, or [`Entry::absent`]. What [`Core::lookup_owned`] and
/// [`Reader::lookup_mapped`] run on the mapping, without [`view_of`]'s retry plumbing: a warm
/// lookup costs a few dozen nanoseconds, and that plumbing cost about half of them.
#[inline]
fn floor_or_absent<E: Entry, M: Memory>(
    mem: &M,
    entries: usize,
    base_offset: i64,
    target: i64,
) -> E::Decoded {
    view::<E, M>(mem, entries, base_offset)
        .floor(target)
        .unwrap_or_else(|| E::absent(base_offset))
}

/// Maps an evicted cell again (or finds that another thread did).
#[cold]
fn remap<M: Memory>(cell: &SwapCell<M, Meta<M>>) -> Result<(), Gone> {
    let meta = cell.extra();
    let Some(remapper) = &meta.remap else {
        return Err(Gone::Closed);
    };
    cell.remap(|words| remapper(&meta.path.read(), words))
        .map(drop)
        .map_err(Gone::Remap)
}

/// Which bound a slot search returns (Kafka's `SearchResultType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Bound {
    /// The largest slot whose field is at most the target.
    LargestLower,
    /// The smallest slot whose field is at least the target.
    SmallestUpper,
}

/// Which field a slot search compares (Kafka's `IndexSearchType`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Field {
    /// Offset (offset index) or timestamp (time index).
    Key,
    /// Position (offset index) or offset (time index).
    Value,
}

/// Kafka's `indexSlotRangeFor`, step for step, over `entries` slots whose field is `field_at`.
/// The probe sequence, the early return on equality and the warm-section split are Kafka's, so
/// results agree with Kafka even on files whose entries are not sorted.
#[inline]
pub(crate) fn slot_for(
    entries: usize,
    warm_entries: usize,
    target: i64,
    bound: Bound,
    field_at: impl Fn(usize) -> i64,
) -> Option<usize> {
    if entries == 0 {
        return None;
    }
    let last = entries - 1;
    let first_hot = last.saturating_sub(warm_entries);
    if field_at(first_hot) < target {
        return binary_search(first_hot, last, last, target, bound, &field_at);
    }
    if field_at(0) > target {
        return match bound {
            Bound::LargestLower => None,
            Bound::SmallestUpper => Some(0),
        };
    }
    binary_search(0, first_hot, last, target, bound, &field_at)
}

#[inline]
fn binary_search(
    begin: usize,
    end: usize,
    last: usize,
    target: i64,
    bound: Bound,
    field_at: &impl Fn(usize) -> i64,
) -> Option<usize> {
    let (mut lo, mut hi) = (begin, end);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        let found = field_at(mid);
        if found == target {
            return Some(mid);
        }
        // Selects, not branches: the direction is a coin flip for the branch predictor.
        let above = found > target;
        hi = select_unpredictable(above, mid - 1, hi);
        lo = select_unpredictable(above, lo, mid);
    }
    match bound {
        Bound::LargestLower => Some(lo),
        Bound::SmallestUpper => (lo != last).then_some(lo + 1),
    }
}

/// The lookup search over `slots`, [`floor_warm`] then [`floor_cold`] as the lookup path runs
/// them (see [`View::floor`]): the tests' reference for the two together.
#[cfg(test)]
pub(crate) fn floor_in<C, K: Ord + Copy>(
    slots: &[C],
    warm_entries: usize,
    target: K,
    key: impl Fn(&C) -> K,
) -> Option<usize> {
    match floor_warm(slots, warm_entries, target, &key) {
        Floor::Slot(slot) => Some(slot),
        Floor::Below => None,
        Floor::Cold(last) => Some(floor_cold(slots.get(..=last)?, target, key)),
    }
}

/// Where [`floor_warm`] found a lookup's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Floor {
    /// In this slot.
    Slot(usize),
    /// Below the first entry (or the index is empty).
    Below,
    /// In the cold range, slots `0..=` this one, whose first key is at most the target:
    /// [`floor_cold`] finds it.
    Cold(usize),
}

/// The lookup search over `slots` (one item per entry), in two parts: Kafka's warm-section split
/// (probe the first warm entry, then entry 0) and the warm section's search here, and the cold
/// range's search in [`floor_cold`], which the lookup path calls out of line. Each is a floor
/// search inside its range, with `key` reading only the words it compares. Whenever keys strictly
/// increase (every index Kafka or this crate writes) the slot is exactly Kafka's
/// `largestLowerBoundSlotFor`, and the warm/cold
/// page-touch pattern is Kafka's; on a corrupt, unsorted file the slot may differ from the one
/// Kafka's probe order happens to return, but it is always one of `slots`.
///
/// The two ranges are searched differently, for speed:
/// - the warm section (cache-resident, the common case) branch-free, each probe's dependency
///   chain an address, one load, one compare and one conditional move: searching whole entries
///   rather than words (no stride arithmetic) and comparing in the stored width halved its cost;
/// - the cold range (up to 10 MiB, mostly cache and TLB misses) branch-free too, and while the
///   window spans more than a few cache lines each probe prefetches the four probes two levels
///   down, so that three levels' misses are in flight at once rather than one: random lookups
///   in a full 10 MiB index took half the time of the earlier branchy search, which overlapped
///   misses only when the predictor guessed the half (docs/benchmarks.md).
#[inline]
pub(crate) fn floor_warm<C, K: Ord + Copy>(
    slots: &[C],
    warm_entries: usize,
    target: K,
    key: impl Fn(&C) -> K,
) -> Floor {
    let Some(last) = slots.len().checked_sub(1) else {
        return Floor::Below;
    };
    let first_hot = last.saturating_sub(warm_entries);
    let Some(first) = slots.first() else {
        return Floor::Below;
    };
    if slots.get(first_hot).is_some_and(|hot| key(hot) < target) {
        // Invariant: key(slots[base]) <= target, and the answer is in `base..base + size`.
        // `size` shrinks the same way whatever a probe finds, so the next probe's address waits
        // only on `base`'s conditional move; a window whose length depended on the compare (an
        // earlier shape) put two more steps in that chain and cost a fifth of the lookup.
        // `mid < base + size <= slots.len()` holds for any keys, so the `get` never fails.
        let (mut base, mut size) = (first_hot, slots.len() - first_hot);
        while size > 1 {
            let half = size / 2;
            let mid = base + half;
            let Some(probe) = slots.get(mid) else { break };
            base = select_unpredictable(key(probe) <= target, mid, base);
            size -= half;
        }
        return Floor::Slot(base);
    }
    if key(first) > target {
        return Floor::Below;
    }
    Floor::Cold(first_hot)
}

/// The second part of the lookup search (see [`floor_warm`]): the floor search of the cold range
/// `range`, given `key(range[0]) <= target`.
#[inline]
pub(crate) fn floor_cold<C, K: Ord + Copy>(range: &[C], target: K, key: impl Fn(&C) -> K) -> usize {
    let (mut base, mut size) = (0, range.len());
    while size > 1 {
        let half = size / 2;
        let mid = base + half;
        if size > COLD_PREFETCH_ABOVE {
            // The four probes two levels down: `base` or `mid`, plus 0 or the next level's
            // half, plus the half after that.
            let next = size - half;
            let (h1, h2) = (next / 2, (next - next / 2) / 2);
            for probe in [base + h2, base + h1 + h2, mid + h2, mid + h1 + h2] {
                if let Some(slot) = range.get(probe) {
                    prefetch(slot);
                }
            }
        }
        let Some(probe) = range.get(mid) else { break };
        base = select_unpredictable(key(probe) <= target, mid, base);
        size -= half;
    }
    base
}

/// The cold search prefetches while its window holds more entries than this.
const COLD_PREFETCH_ABOVE: usize = 16;

/// A consistent view for one operation: a pinned mapping and an entry count that fits it.
pub(crate) struct View<'a, E, M: Memory> {
    cells: &'a [M::Word],
    writable: bool,
    entries: usize,
    base_offset: i64,
    _entry: PhantomData<fn() -> E>,
}

impl<E: Entry, M: Memory> View<'_, E, M> {
    /// The number of entries visible in this view.
    #[inline]
    pub(crate) fn entries(&self) -> usize {
        self.entries
    }

    /// Whether the pinned mapping may be stored to.
    #[inline]
    fn memory_writable(&self) -> bool {
        self.writable
    }

    /// The entry in `slot`, if `slot < entries`.
    #[inline]
    pub(crate) fn entry(&self, slot: usize) -> Option<E> {
        (slot < self.entries).then(|| E::load(self.cells, slot))
    }

    /// Kafka's slot search over this view.
    #[inline]
    pub(crate) fn slot_for(&self, target: i64, field: Field, bound: Bound) -> Option<usize> {
        let (cells, base) = (self.cells, self.base_offset);
        match field {
            Field::Key => slot_for(self.entries, E::WARM_ENTRIES, target, bound, |s| {
                E::load_key(cells, s, base)
            }),
            Field::Value => slot_for(self.entries, E::WARM_ENTRIES, target, bound, |s| {
                E::load_value(cells, s, base)
            }),
        }
    }

    /// The decoded entry in the largest slot whose key is at most `target` (see `floor_warm`).
    #[inline]
    pub(crate) fn floor(&self, target: i64) -> Option<E::Decoded> {
        match E::floor_warm(self.cells, self.entries, target, self.base_offset) {
            Floor::Slot(slot) => self.decoded(slot),
            Floor::Below => None,
            Floor::Cold(last) => {
                floor_cold_decoded::<E, M::Word>(self.cells, last, target, self.base_offset)
            }
        }
    }

    /// The entry in `slot`, decoded.
    #[inline]
    fn decoded(&self, slot: usize) -> Option<E::Decoded> {
        self.entry(slot).map(|e| e.decode(self.base_offset))
    }
}

/// [`View::floor`] in the cold range `0..=last` (which holds only entries the view has). Out of
/// line: it costs hundreds of nanoseconds (cache and TLB misses), and with it inlined the warm
/// path saved six registers on entry and a one-entry lookup took 1 to 1.5 ns more.
#[inline(never)]
fn floor_cold_decoded<E: Entry, W: Word>(
    cells: &[W],
    last: usize,
    target: i64,
    base_offset: i64,
) -> Option<E::Decoded> {
    let slot = E::floor_cold(cells, last, target, base_offset);
    (slot <= last).then(|| E::load(cells, slot).decode(base_offset))
}

/// Builds a view of `mem` with `entries` clamped to its capacity.
fn view<E: Entry, M: Memory>(mem: &M, entries: usize, base_offset: i64) -> View<'_, E, M> {
    let cells = mem.cells();
    let capacity = cells.len() / E::WORDS;
    View {
        cells,
        writable: mem.writable(),
        entries: entries.min(capacity),
        base_offset,
        _entry: PhantomData,
    }
}

/// A cheap, cloneable, lock-free read handle on an index.
pub(crate) struct Reader<E, M: Memory> {
    cell: Arc<SwapCell<M, Meta<M>>>,
    _entry: PhantomData<fn() -> E>,
}

impl<E, M: Memory> Clone for Reader<E, M> {
    fn clone(&self) -> Self {
        Self {
            cell: Arc::clone(&self.cell),
            _entry: PhantomData,
        }
    }
}

impl<E: Entry, M: Memory> Reader<E, M> {
    /// Runs `f` on a consistent view, mapping the index again if its budget evicted it.
    #[inline]
    pub(crate) fn view<R>(&self, f: impl FnOnce(&View<'_, E, M>) -> R) -> Result<R, Gone> {
        let meta = self.cell.extra();
        // Acquire pairs with the writer's Release: slots below `entries` are written. Loaded
        // before the pin, as the protocol requires (docs/unsafe.md).
        view_of(
            &self.cell,
            false,
            || meta.entries.load(Ordering::Acquire),
            f,
        )
    }

    /// Kafka's lookup on a consistent view (see [`floor_or_absent`]); `None` when the index is
    /// closed or evicted, and [`view`](Self::view) must report it or map it again.
    #[inline]
    pub(crate) fn lookup_mapped(&self, target: i64) -> Option<E::Decoded> {
        // Loaded before the pin, as in `view`.
        let meta = self.cell.extra();
        let entries = meta.entries.load(Ordering::Acquire);
        let pin = self.cell.pin().ok()?;
        pin.with(|mem| floor_or_absent::<E, M>(mem, entries, meta.base_offset, target))
    }

    /// The published entry count, clamped to the current mapping.
    pub(crate) fn entries(&self) -> Result<usize, Gone> {
        self.view(|v| v.entries)
    }

    /// The shared metadata.
    pub(crate) fn meta(&self) -> &Meta<M> {
        self.cell.extra()
    }

    /// Whether the index is mapped now (not closed, not evicted).
    pub(crate) fn is_mapped(&self) -> bool {
        self.cell.pin().is_ok()
    }

    /// Unmaps the index as its budget would (the loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn evict_for_test(&self) -> bool {
        self.cell.evict()
    }
}

/// The single writer of an index: owns the slot count. Without a mapping budget it owns its
/// cell (see `map::owned_cell`) and reads and writes the mapping without pinning it, since only
/// its own `&mut self` operations retire a mapping. With a budget it pins the mapping per
/// operation like a reader (two uncontended atomics per index entry appended) and keeps no pin,
/// so that the budget can evict the mapping of an index whose writer is idle.
pub(crate) struct Core<E, M: Memory> {
    cell: Arc<SwapCell<M, Meta<M>>>,
    closed: bool,
    entries: usize,
    max_entries: usize,
    _entry: PhantomData<fn() -> E>,
}

impl<E: Entry, M: Memory> Core<E, M> {
    /// A core over `mem` that already holds `entries` entries.
    pub(crate) fn new(mem: M, entries: usize, base_offset: i64, path: PathBuf) -> Self {
        Self::with_budget(mem, entries, base_offset, path, None, None)
    }

    /// A core whose mapping counts against `budget`, which may evict it; `remap` maps it again.
    pub(crate) fn with_budget(
        mem: M,
        entries: usize,
        base_offset: i64,
        path: PathBuf,
        remap: Option<Remapper<M>>,
        budget: Option<&crate::MappingBudget>,
    ) -> Self {
        let max_entries = mem.words() / E::WORDS;
        let entries = entries.min(max_entries);
        let meta = Meta {
            entries: AtomicUsize::new(entries),
            base_offset,
            path: parking_lot::RwLock::new(path),
            remap,
        };
        // A cell that can never be evicted (no remapper, hence no budget) is owned by this
        // core, the only value that swaps or closes it (through `&mut self`), so the writer's
        // own views read the mapping without pinning it.
        let cell = if meta.remap.is_some() {
            shared_cell(mem, meta, budget)
        } else {
            owned_cell(mem, meta)
        };
        Self {
            cell,
            closed: false,
            entries,
            max_entries,
            _entry: PhantomData,
        }
    }

    /// The number of entries.
    pub(crate) fn entries(&self) -> usize {
        self.entries
    }

    /// The number of slots of the current mapping.
    pub(crate) fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// Whether the mapping has been closed.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// The shared metadata.
    pub(crate) fn meta(&self) -> &Meta<M> {
        self.cell.extra()
    }

    /// A new read handle.
    pub(crate) fn reader(&self) -> Reader<E, M> {
        Reader {
            cell: Arc::clone(&self.cell),
            _entry: PhantomData,
        }
    }

    /// Kafka's lookup on the writer's own view (see [`floor_or_absent`]), without a pin, for an
    /// owned cell (an index without a mapping budget); `None` for a cell a budget may evict, and
    /// once closed: [`view`](Self::view) then pins, maps again, or reports it.
    #[inline]
    pub(crate) fn lookup_owned(&self, target: i64) -> Option<E::Decoded> {
        if self.closed || !self.cell.is_owned() {
            return None;
        }
        let (entries, base) = (self.entries, self.cell.extra().base_offset);
        self.cell
            .with_owned(|mem| floor_or_absent::<E, M>(mem, entries, base, target))
    }

    /// Runs `f` on the writer's own view (the writer's entry count), mapping the index again if
    /// its budget evicted it.
    #[inline]
    pub(crate) fn view<R>(&self, f: impl FnOnce(&View<'_, E, M>) -> R) -> Result<R, Gone> {
        if self.closed {
            return Err(Gone::Closed);
        }
        view_of(&self.cell, true, || self.entries, f)
    }

    /// Runs `f` on the raw mapping, without mapping it again if it is evicted.
    pub(crate) fn with_memory<R>(&self, f: impl FnOnce(&M) -> R) -> Result<R, Unpinned> {
        if self.closed {
            return Err(Unpinned::Closed);
        }
        self.cell.with_active(true, f)
    }

    /// Writes `entry` into the next slot and publishes it. `Ok(false)` if no slot is free or the
    /// mapping is read-only.
    #[inline]
    pub(crate) fn push(&mut self, entry: &E) -> Result<bool, Gone> {
        if self.entries >= self.max_entries {
            return Ok(false);
        }
        let slot = self.entries;
        // The only store into index memory in the crate, so the one place a read-only
        // mapping must be protected.
        let stored = self.view(|v| {
            if v.memory_writable() {
                entry.store(v.cells, slot);
            }
            v.memory_writable()
        })?;
        if !stored {
            return Ok(false);
        }
        self.entries = slot + 1;
        // Release: a reader that sees the new count sees the words stored above.
        self.meta().entries.store(self.entries, Ordering::Release);
        Ok(true)
    }

    /// Sets the entry count to `entries` (a truncation; never more than the capacity).
    pub(crate) fn set_entries(&mut self, entries: usize) {
        self.entries = entries.min(self.max_entries);
        self.meta().entries.store(self.entries, Ordering::Release);
    }

    /// Replaces the mapping. With `wait`, returns once the old mapping is unmapped.
    pub(crate) fn remap(&mut self, mem: M, wait: bool) -> bool {
        let max_entries = mem.words() / E::WORDS;
        if self.closed || self.cell.swap(Some(mem), wait).is_err() {
            return false;
        }
        self.max_entries = max_entries;
        if self.entries > max_entries {
            self.set_entries(max_entries);
        }
        true
    }

    /// Closes the cell and unmaps the mapping; returns once it is unmapped when `wait`.
    pub(crate) fn close(&mut self, wait: bool) {
        self.closed = true;
        // `swap(None, ..)` never hands anything back.
        let _ = self.cell.swap(None, wait);
    }

    /// Unmaps the mapping as a budget would (the loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn evict(&self) -> bool {
        self.cell.evict()
    }
}

impl<E, M: Memory> Drop for Core<E, M> {
    fn drop(&mut self) {
        // Unmap now rather than when the last reader handle goes away, and wait for lookups
        // already inside (bounded: no caller code runs under a pin), so that a file is never
        // shrunk by its next owner under a mapping of ours.
        let _ = self.cell.swap(None, true);
    }
}

// The loom models: compiled only in `cfg(loom)` test builds (`cargo xtask loom`).
#[cfg(all(test, loom))]
mod tests;

#[cfg(all(test, not(loom)))]
mod search_tests {
    use super::*;

    fn kafka_llb(keys: &[i64], target: i64) -> Option<usize> {
        slot_for(keys.len(), 2, target, Bound::LargestLower, |s| keys[s])
    }

    #[test]
    fn largest_lower_bound_matches_a_floor_search() {
        let keys: Vec<i64> = (0..40).map(|i| i * 10 + 5).collect();
        for target in -5..420 {
            let expected = keys.iter().rposition(|&k| k <= target);
            assert_eq!(kafka_llb(&keys, target), expected, "target {target}");
        }
    }

    #[test]
    fn smallest_upper_bound_matches_kafka_including_its_first_entry_quirk() {
        let keys = [0_i64, 10, 23, 37];
        let sub = |t| slot_for(keys.len(), 1024, t, Bound::SmallestUpper, |s| keys[s]);
        assert_eq!(sub(5), Some(1));
        assert_eq!(sub(10), Some(1));
        assert_eq!(sub(22), Some(2));
        assert_eq!(sub(23), Some(2));
        assert_eq!(sub(38), None);
        assert_eq!(sub(-1), Some(0));
        // Kafka's quirk (reference 3.2): an exact match on entry 0 through the cold path gives
        // slot 1, or no slot when there is only one entry.
        assert_eq!(sub(0), Some(1));
        let one = [7_i64];
        assert_eq!(slot_for(1, 1024, 7, Bound::SmallestUpper, |s| one[s]), None);
    }

    #[test]
    fn floor_search_matches_kafkas_search_on_increasing_keys() {
        for n in [0_usize, 1, 2, 3, 7, 8, 9, 40, 129] {
            let keys: Vec<i64> = (0..n).map(|i| i64::try_from(i).unwrap() * 5 + 3).collect();
            for warm in [0, 1, 2, 4, 1024] {
                for target in -2..i64::try_from(n).unwrap() * 5 + 8 {
                    let kafka = slot_for(n, warm, target, Bound::LargestLower, |s| keys[s]);
                    assert_eq!(
                        floor_in(&keys, warm, target, |&k| k),
                        kafka,
                        "n {n} warm {warm} t {target}"
                    );
                }
            }
        }
    }

    #[test]
    fn cold_search_with_prefetch_matches_a_sorted_oracle() {
        // Cold ranges far larger than `COLD_PREFETCH_ABOVE`, with uneven gaps, so that every
        // window size and both sides of each probe are taken.
        for n in [17_usize, 18, 33, 100, 1000, 4097] {
            let mut key = 0_i64;
            let keys: Vec<i64> = (0..n)
                .map(|i| {
                    key += 1 + i64::try_from(i * 7 % 13).unwrap();
                    key
                })
                .collect();
            for warm in [0, 3, 16] {
                for target in keys[0] - 2..=key + 2 {
                    let oracle = keys.partition_point(|&k| k <= target).checked_sub(1);
                    assert_eq!(
                        floor_in(&keys, warm, target, |&k| k),
                        oracle,
                        "n {n} t {target}"
                    );
                }
            }
        }
    }

    #[test]
    fn empty_index_has_no_slot() {
        assert_eq!(slot_for(0, 8, 3, Bound::LargestLower, |_| 0), None);
        assert_eq!(slot_for(0, 8, 3, Bound::SmallestUpper, |_| 0), None);
    }
}
