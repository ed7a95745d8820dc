//! [`DescriptorCache`]: a cap on the `.log` descriptors a set of segments holds open at once, so
//! that a partition of more segments than the process's open-file limit (`ulimit -n`) opens and
//! reads (Kafka keeps a `FileChannel` per segment and fails there with "Too many open files").
//!
//! A segment's `.log` is opened on first use and counted while it is open; the active segment
//! (and any segment being written, such as the cleaner's `.cleaned`) is *pinned*: never counted,
//! never closed. Opening a file when the count is at the cap first closes the least recently
//! used counted files, by a batch of a sixteenth of the cap so the scan is paid once per many
//! opens; a closed file is opened again, by its current path, on its next use. A file that may
//! hold unsynced bytes is synced before it is closed, by the thread that opened past the cap,
//! after it let go of the registry (a sync that fails keeps the file open and the error for the
//! segment's next flush), and a file a read or write is using stays open until that operation
//! drops its handle.
//!
//! Recency without a lock on the hot path, as `MappingBudget`'s: the cache has an `epoch` that
//! every admission advances, and a use stores it into the member's `last_used` when it moved.
//!
//! Lock order: a member's own lock is never held while taking the registry lock; the registry
//! lock only `try_lock`s a member to close it, and skips a busy one.

use std::any::Any;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};

use parking_lot::Mutex;

/// A cap on open `.log` descriptors shared by any number of segments (clone it to share).
///
/// The count is of open files of unpinned segments. The process may briefly hold more: a file
/// closed by the cache while a read uses it closes when that read returns, and a file that may
/// hold unsynced bytes, or is busy when picked, is skipped.
#[derive(Clone)]
pub struct DescriptorCache {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for DescriptorCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DescriptorCache")
            .field("max_open", &self.inner.max)
            .field("open", &self.open())
            .field("evictions", &self.evictions())
            .finish_non_exhaustive()
    }
}

impl PartialEq for DescriptorCache {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}

impl Eq for DescriptorCache {}

struct Inner {
    max: usize,
    /// Advanced by every admission; members remember the epoch of their last use.
    epoch: AtomicU64,
    registry: Mutex<Registry>,
    evictions: AtomicU64,
    opens: AtomicU64,
}

#[derive(Default)]
struct Registry {
    next_id: u64,
    /// The counted members, each holding an open file.
    open: HashMap<u64, Weak<dyn Close>>,
}

/// What [`Close::try_close`] did.
pub(crate) enum Closing {
    /// Taken away (the caller drops it after releasing the registry); `None` if it was closed.
    Closed(Option<Box<dyn Any + Send>>),
    /// It may hold unsynced bytes: [`Close::sync_and_close`] it, outside the registry lock.
    Unsynced,
    /// Pinned or busy: left open.
    Kept,
}

/// What the cache needs of a segment's file slot.
pub(crate) trait Close: Send + Sync {
    /// Takes the open file away, without waiting for anything.
    fn try_close(&self) -> Closing;
    /// Syncs the file, then closes it and leaves the registry if nothing wrote it meanwhile;
    /// whether it did. Called without the registry lock.
    fn sync_and_close(&self) -> bool;
    /// The epoch of the member's last use.
    fn last_used(&self) -> u64;
}

impl DescriptorCache {
    /// A cache of at most `max_open` counted open files (at least 1).
    pub fn new(max_open: usize) -> Self {
        Self {
            inner: Arc::new(Inner {
                max: max_open.max(1),
                epoch: AtomicU64::new(1),
                registry: Mutex::new(Registry::default()),
                evictions: AtomicU64::new(0),
                opens: AtomicU64::new(0),
            }),
        }
    }

    /// The cap.
    pub fn max_open(&self) -> usize {
        self.inner.max
    }

    /// How many counted files are open now.
    pub fn open(&self) -> usize {
        self.inner.registry.lock().open.len()
    }

    /// How many files the cache has closed so far.
    pub fn evictions(&self) -> u64 {
        self.inner.evictions.load(Ordering::Relaxed)
    }

    /// How many times a counted file was opened (a first open or a reopen after eviction).
    pub fn opens(&self) -> u64 {
        self.inner.opens.load(Ordering::Relaxed)
    }

    /// A new membership, not yet counted.
    pub(crate) fn member(&self) -> Member {
        let id = {
            let mut registry = self.inner.registry.lock();
            registry.next_id += 1;
            registry.next_id
        };
        Member {
            cache: Arc::clone(&self.inner),
            id,
            last_used: AtomicU64::new(0),
            slot: OnceLock::new(),
        }
    }
}

/// One segment's membership of a cache.
pub(crate) struct Member {
    cache: Arc<Inner>,
    id: u64,
    last_used: AtomicU64,
    /// The slot, set once it is shared (`bind`).
    slot: OnceLock<Weak<dyn Close>>,
}

impl std::fmt::Debug for Member {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Member")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl Member {
    /// Records the slot this membership belongs to. Until then, `admit` counts nothing.
    pub(crate) fn bind(&self, slot: Weak<dyn Close>) {
        let _ = self.slot.set(slot);
    }

    /// Marks the file used now: a relaxed load of the shared epoch and of our own word, and a
    /// store only when the epoch moved since our last use.
    #[inline]
    pub(crate) fn touch(&self) {
        let epoch = self.cache.epoch.load(Ordering::Relaxed);
        if self.last_used.load(Ordering::Relaxed) != epoch {
            self.last_used.store(epoch, Ordering::Relaxed);
        }
    }

    pub(crate) fn last_used(&self) -> u64 {
        self.last_used.load(Ordering::Relaxed)
    }

    /// Counts the slot's file as open, closing least recently used files first if the cache is
    /// full. Called after the file was opened, without the slot's lock held.
    pub(crate) fn admit(&self) {
        let Some(slot) = self.slot.get() else {
            return;
        };
        let cache = &*self.cache;
        let epoch = cache.epoch.fetch_add(1, Ordering::Relaxed) + 1;
        self.last_used.store(epoch, Ordering::Relaxed);
        // The closed files are dropped (closed) after the registry lock is released, and the
        // unsynced ones synced and closed then.
        let mut closed = Vec::new();
        let mut to_sync = Vec::new();
        {
            let mut registry = cache.registry.lock();
            if registry.open.contains_key(&self.id) {
                return;
            }
            cache.opens.fetch_add(1, Ordering::Relaxed);
            if registry.open.len() >= cache.max {
                close_oldest(cache, &mut registry, &mut closed, &mut to_sync);
            }
            registry.open.insert(self.id, Weak::clone(slot));
        }
        drop(closed);
        for slot in to_sync {
            if slot.sync_and_close() {
                cache.evictions.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// No longer counts the slot (its file was closed, or it was pinned).
    pub(crate) fn release(&self) {
        self.cache.registry.lock().open.remove(&self.id);
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.release();
    }
}

/// Closes the least recently used files until the count is a sixteenth of the cap below it;
/// those that may be unsynced go to `to_sync`, counted as gone.
fn close_oldest(
    cache: &Inner,
    registry: &mut Registry,
    closed: &mut Vec<Box<dyn Any + Send>>,
    to_sync: &mut Vec<Arc<dyn Close>>,
) {
    let target = cache.max.saturating_sub((cache.max / 16).max(1));
    let mut candidates: Vec<(u64, u64, Arc<dyn Close>)> = Vec::with_capacity(registry.open.len());
    let mut dead = Vec::new();
    for (id, weak) in &registry.open {
        match weak.upgrade() {
            Some(slot) => candidates.push((slot.last_used(), *id, slot)),
            None => dead.push(*id),
        }
    }
    for id in dead {
        registry.open.remove(&id);
    }
    candidates.sort_unstable_by_key(|(used, id, _)| (*used, *id));
    for (_, id, slot) in candidates {
        if registry.open.len() > target + to_sync.len() {
            match slot.try_close() {
                Closing::Closed(file) => {
                    registry.open.remove(&id);
                    cache.evictions.fetch_add(1, Ordering::Relaxed);
                    closed.extend(file);
                }
                Closing::Unsynced => {
                    to_sync.push(Arc::clone(&slot));
                }
                Closing::Kept => {}
            }
        }
        // Dropped after the registry lock, too: the last handle on a slot whose segment went
        // meanwhile drops its membership, which takes that lock.
        closed.push(Box::new(slot));
    }
}
