//! The generic index core shared by both index types: the entry count published to readers,
//! the writer's slot bookkeeping, and the views the searches (`search.rs`) run on. It knows
//! nothing about files; it works over any [`Memory`], which is how the loom models drive exactly
//! this code over a plain buffer.
//!
//! Publication: the writer stores an entry's words (relaxed atomics), then stores the new count
//! with `Release`. A reader loads the count with `Acquire` before pinning the mapping, so every
//! slot below the count it saw is fully written. Readers also clamp the count to the pinned
//! mapping's capacity: a count loaded before a truncate-and-trim may exceed the smaller mapping
//! installed since.
#![forbid(unsafe_code)]

use std::io;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use crate::entry::Entry;
use crate::loom::{Arc, AtomicUsize, Ordering};
use crate::map::{Memory, Owner, SwapCell, Unpinned, Word, owned_cell, shared_cell};
use crate::search::{Bound, Field, Floor, slot_for};

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

/// Kafka's lookup over at most `entries` entries of `cells` (the owner's cached words, see
/// [`Core::lookup_owned`], or a reader's view of the mapping): the entry in the largest slot
/// whose key is at most `target`, or [`Entry::absent`]. Without [`view_of`]'s retry plumbing: a
/// warm lookup costs a few dozen nanoseconds, and that plumbing cost about half of them.
/// `entries` may exceed the slots `cells` covers: [`Entry::floor_warm`] searches only slots
/// below both.
#[expect(
    clippy::inline_always,
    reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
)]
#[inline(always)]
fn floor_or_absent<E: Entry, M: Memory>(
    cells: &[M::Word],
    entries: usize,
    base_offset: i64,
    target: i64,
) -> E::Decoded {
    let view = View::<E, M> {
        cells,
        writable: false,
        entries,
        base_offset,
        _entry: PhantomData,
    };
    view.floor(target).unwrap_or_else(|| E::absent(base_offset))
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
/// line: it is dominated by cache and TLB misses, and inlining it would make the warm path save
/// more registers on entry (docs/benchmarks.md has the figures).
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

/// Builds a view of `mem` with `entries` clamped to its capacity. The cells may cover fewer
/// slots (an index file's slots past its allocated blocks, which are holes): those read as zero
/// entries, as the file's bytes would, without being touched. The floor search sees only the
/// slots the cells cover.
fn view<E: Entry, M: Memory>(mem: &M, entries: usize, base_offset: i64) -> View<'_, E, M> {
    let cells = mem.cells();
    let capacity = mem.words() / E::WORDS;
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

    /// Kafka's lookup on a consistent view (see [`floor_or_absent`]), read through this
    /// thread's hazard word, with no pin (`SwapCell::with_hazard`); `None` when the index is
    /// closed or evicted, or the hazard read could not be had: [`view`](Self::view) then pins,
    /// reports it or maps it again.
    #[expect(
        clippy::inline_always,
        reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
    )]
    #[inline(always)]
    pub(crate) fn lookup_mapped(&self, target: i64) -> Option<E::Decoded> {
        // Loaded before the hazard's publication, as before a pin in `view`.
        let meta = self.cell.extra();
        let entries = meta.entries.load(Ordering::Acquire);
        // The count is not clamped to the mapping's capacity first: the floor search clamps it
        // to the words viewed, which are never more (one dependent step less before the probe).
        // Inlined, as `with_slot`'s closure: the search is the lookup.
        self.cell.with_hazard(
            #[inline(always)]
            |mem| floor_or_absent::<E, M>(mem.cells(), entries, meta.base_offset, target),
        )
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
    /// The cell, and for an owned one the active mapping's words (`map::Owner`).
    owner: Owner<M, Meta<M>>,
    /// `Meta::base_offset`, kept here so that a lookup need not load it through the cell.
    base_offset: i64,
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
        budget: Option<&crate::budget::MappingBudget>,
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
            shared_cell(mem, meta, budget, true)
        } else {
            owned_cell(mem, meta)
        };
        Self {
            owner: Owner::new(cell),
            base_offset,
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
        self.owner.cell().extra()
    }

    /// A new read handle.
    pub(crate) fn reader(&self) -> Reader<E, M> {
        Reader {
            cell: Arc::clone(self.owner.cell()),
            _entry: PhantomData,
        }
    }

    /// Kafka's lookup on the writer's own view (see [`floor_or_absent`]), without a pin, for an
    /// owned cell (an index without a mapping budget); `None` for a cell a budget may evict, and
    /// once closed: [`view`](Self::view) then pins, maps again, or reports it. It reads the
    /// mapping's words that the owner cached, so its first probe waits on no load from the cell.
    #[inline]
    pub(crate) fn lookup_owned(&self, target: i64) -> Option<E::Decoded> {
        let cells = self.owner.cells()?;
        Some(floor_or_absent::<E, M>(
            cells,
            self.entries,
            self.base_offset,
            target,
        ))
    }

    /// Runs `f` on the writer's own view (the writer's entry count), mapping the index again if
    /// its budget evicted it.
    #[inline]
    pub(crate) fn view<R>(&self, f: impl FnOnce(&View<'_, E, M>) -> R) -> Result<R, Gone> {
        if self.closed {
            return Err(Gone::Closed);
        }
        view_of(self.owner.cell(), true, || self.entries, f)
    }

    /// Runs `f` on the raw mapping, without mapping it again if it is evicted.
    pub(crate) fn with_memory<R>(&self, f: impl FnOnce(&M) -> R) -> Result<R, Unpinned> {
        if self.closed {
            return Err(Unpinned::Closed);
        }
        self.owner.cell().with_active(true, f)
    }

    /// As [`with_memory`](Self::with_memory), for an `f` that changes the words the mapping
    /// views (raises `MmapMemory::set_backed`): the owner takes them again afterwards.
    pub(crate) fn with_memory_mut<R>(&mut self, f: impl FnOnce(&M) -> R) -> Option<R> {
        if self.closed {
            return None;
        }
        self.owner.with_memory_mut(f)
    }

    /// Writes `entry` into the next slot and publishes it. `Ok(false)` if no slot is free, the
    /// mapping is read-only, or the slot lies past the cells viewed (its disk blocks are not
    /// allocated yet: the file side allocates them and pushes again).
    #[inline]
    pub(crate) fn push(&mut self, entry: &E) -> Result<bool, Gone> {
        if self.entries >= self.max_entries {
            return Ok(false);
        }
        let slot = self.entries;
        // The only store into index memory in the crate, so the one place a read-only
        // mapping must be protected.
        let stored = self.view(|v| {
            let fits = (slot + 1) * E::WORDS <= v.cells.len();
            if v.memory_writable() && fits {
                entry.store(v.cells, slot);
            }
            v.memory_writable() && fits
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
        if self.closed || self.owner.swap(Some(mem), wait).is_err() {
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
        let _ = self.owner.swap(None, wait);
    }

    /// Unmaps the mapping as a budget would (the loom models).
    #[cfg(all(test, loom))]
    pub(crate) fn evict(&self) -> bool {
        self.owner.cell().evict()
    }
}

impl<E, M: Memory> Drop for Core<E, M> {
    fn drop(&mut self) {
        // Unmap now rather than when the last reader handle goes away, and wait for lookups
        // already inside (bounded: no caller code runs under a pin), so that a file is never
        // shrunk by its next owner under a mapping of ours.
        let _ = self.owner.swap(None, true);
    }
}

// The loom models: compiled only in `cfg(loom)` test builds (`cargo xtask loom`).
#[cfg(all(test, loom))]
mod tests;
