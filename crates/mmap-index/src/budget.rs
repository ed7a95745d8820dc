//! [`MappingBudget`]: a bound on the number of memory mappings a set of indexes (and `.log`
//! mappings) holds at once, so that a log of 100,000 segments read at random never needs
//! `vm.max_map_count` raised (KAFKA-6343, "Map failed").
//!
//! Every cell created with a budget is a *member*. A member that holds a mapping is *admitted*:
//! it is counted, and it lives in the registry. Admitting a member when the count is at the
//! budget first evicts the least recently used admitted members (by the budget's epoch, below)
//! until there is room; an evicted cell unmaps (after the lookups inside it return, see
//! `map/swap.rs`) and maps again on its next use, which admits it again.
//!
//! Recency without a lock on the hot path: the budget has an `epoch` that every admission
//! advances, and a lookup stores the current epoch into its cell's `last_used` only when it
//! differs (a load and, rarely, a store to the cell's own line; nothing shared is written).
//! Eviction picks the members with the oldest `last_used`: exact LRU at the granularity of
//! admissions, which is what decides which mappings survive.
//!
//! Lock order: a cell's writer lock may be held while taking the registry lock (admitting on
//! install, releasing on close); the registry lock never waits for a cell's writer lock: it only
//! `try_lock`s it to evict, and skips a busy cell (a busy cell is in use, so not a good victim).
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

/// A budget of memory mappings shared by any number of indexes and mapped files (clone it to
/// share). See the module documentation of `budget.rs` for how eviction works.
///
/// The count it keeps is of admitted members, each holding one mapping. The process may hold
/// briefly more, never more than one extra per thread in flight: a mapping evicted while a lookup
/// reads it goes when that lookup returns, a cell being resized holds its old and new mapping
/// until the old one's readers leave, and an evicted victim that is busy at that moment (being
/// installed into or closed) is skipped.
#[derive(Clone)]
pub struct MappingBudget {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for MappingBudget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MappingBudget")
            .field("max_mappings", &self.inner.max)
            .field("mapped", &self.mapped())
            .field("evictions", &self.evictions())
            .finish_non_exhaustive()
    }
}

impl PartialEq for MappingBudget {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for MappingBudget {}

struct Inner {
    max: usize,
    /// Advanced by every admission; members remember the epoch of their last use.
    epoch: AtomicU64,
    registry: parking_lot::Mutex<Registry>,
    evictions: AtomicU64,
    admissions: AtomicU64,
}

#[derive(Default)]
struct Registry {
    next_id: u64,
    /// The admitted members, each holding a mapping.
    mapped: HashMap<u64, Weak<dyn Evict>>,
}

/// What the budget needs of a cell.
pub(crate) trait Evict: Send + Sync {
    /// Unmaps the cell's mapping (without waiting for readers); false if it could not now.
    fn evict(&self) -> bool;
    /// The epoch of the cell's last use.
    fn last_used(&self) -> u64;
}

impl MappingBudget {
    /// A budget of at most `max_mappings` mappings (at least 1).
    pub fn new(max_mappings: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                max: max_mappings.max(1),
                epoch: AtomicU64::new(1),
                registry: parking_lot::Mutex::new(Registry::default()),
                evictions: AtomicU64::new(0),
                admissions: AtomicU64::new(0),
            }),
        }
    }

    /// The budget.
    pub fn max_mappings(&self) -> usize {
        self.inner.max
    }

    /// How many members hold a mapping now.
    pub fn mapped(&self) -> usize {
        self.inner.registry.lock().mapped.len()
    }

    /// How many mappings the budget has evicted so far.
    pub fn evictions(&self) -> u64 {
        self.inner.evictions.load(Ordering::Relaxed)
    }

    /// How many times a member was admitted (a first mapping or a remap after eviction).
    pub fn admissions(&self) -> u64 {
        self.inner.admissions.load(Ordering::Relaxed)
    }

    /// A new membership, not yet admitted.
    pub(crate) fn member(&self) -> Member {
        let id = {
            let mut registry = self.inner.registry.lock();
            registry.next_id += 1;
            registry.next_id
        };
        Member {
            budget: Arc::clone(&self.inner),
            id,
            last_used: AtomicU64::new(0),
            cell: OnceLock::new(),
        }
    }
}

/// One cell's membership of a budget.
pub(crate) struct Member {
    budget: Arc<Inner>,
    id: u64,
    last_used: AtomicU64,
    /// The cell, set once it is shared (`bind`).
    cell: OnceLock<Weak<dyn Evict>>,
}

impl Member {
    /// Records the cell this membership belongs to. Until then, `admit` counts nothing.
    pub(crate) fn bind(&self, cell: Weak<dyn Evict>) {
        let _ = self.cell.set(cell);
    }

    /// Marks the cell used now. On the lookup path: one relaxed load of the shared epoch and one
    /// of our own word, and a store only when the epoch moved since our last use.
    #[inline]
    pub(crate) fn touch(&self) {
        let epoch = self.budget.epoch.load(Ordering::Relaxed);
        if self.last_used.load(Ordering::Relaxed) != epoch {
            self.last_used.store(epoch, Ordering::Relaxed);
        }
    }

    pub(crate) fn last_used(&self) -> u64 {
        self.last_used.load(Ordering::Relaxed)
    }

    /// Counts the cell as mapped, evicting least recently used members first if the budget is
    /// full. Called before (or right after) the cell maps; the caller may hold the cell's writer
    /// lock (the cell is not admitted, so it is never its own victim).
    pub(crate) fn admit(&self) {
        let Some(cell) = self.cell.get() else {
            return;
        };
        let budget = &*self.budget;
        let epoch = budget.epoch.fetch_add(1, Ordering::Relaxed) + 1;
        self.last_used.store(epoch, Ordering::Relaxed);
        budget.admissions.fetch_add(1, Ordering::Relaxed);
        // Victims are dropped after the lock is released: dropping the last handle on a cell
        // releases its membership, which takes the lock.
        let mut victims = Vec::new();
        {
            let mut registry = budget.registry.lock();
            if registry.mapped.contains_key(&self.id) {
                return;
            }
            if registry.mapped.len() >= budget.max {
                evict_oldest(budget, &mut registry, self.id, &mut victims);
            }
            registry.mapped.insert(self.id, Weak::clone(cell));
        }
        drop(victims);
    }

    /// No longer counts the cell (it was closed, dropped, or failed to map).
    pub(crate) fn release(&self) {
        self.budget.registry.lock().mapped.remove(&self.id);
    }
}

/// Evicts the least recently used members until the registry is below the budget, and by a
/// batch of a sixteenth of the budget, so that the scan is paid once per many admissions.
fn evict_oldest(
    budget: &Inner,
    registry: &mut Registry,
    except: u64,
    victims: &mut Vec<Arc<dyn Evict>>,
) {
    let target = budget.max.saturating_sub((budget.max / 16).max(1));
    let mut candidates: Vec<(u64, u64, Arc<dyn Evict>)> = Vec::with_capacity(registry.mapped.len());
    let mut dead = Vec::new();
    for (id, weak) in &registry.mapped {
        if *id == except {
            continue;
        }
        match weak.upgrade() {
            Some(cell) => candidates.push((cell.last_used(), *id, cell)),
            None => dead.push(*id),
        }
    }
    for id in dead {
        registry.mapped.remove(&id);
    }
    candidates.sort_unstable_by_key(|(used, id, _)| (*used, *id));
    for (_, id, cell) in candidates {
        if registry.mapped.len() <= target {
            victims.push(cell);
            continue;
        }
        if cell.evict() {
            registry.mapped.remove(&id);
            budget.evictions.fetch_add(1, Ordering::Relaxed);
        }
        victims.push(cell);
    }
}
