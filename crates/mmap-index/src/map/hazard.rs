//! Hazard words: how an index lookup reads the active mapping with no read-modify-write.
//!
//! Each reading thread owns one word of a process-wide registry. A lookup stores the identity
//! of the slot it is about to read there (a plain `Release` store), then re-loads the cell's
//! `active`: if the slot is still active, the writer cannot have finished scanning the
//! registry for it, so the slot stays alive until the lookup clears its word. A writer that
//! retires a slot flips `active` first, then runs a *heavy fence* and scans every word, waiting
//! while one names the slot. The two fences make this a Dekker handshake: either the writer's
//! scan sees the reader's word, or the reader's re-load sees the flip and backs off.
//!
//! The reader's fence is the expensive half of such a handshake, so it is moved to the writer:
//! with `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`, the writer's heavy fence runs a full
//! barrier on every processor running a thread of this process, and the reader needs only a
//! compiler fence. Where `membarrier` is not available (an old kernel, a seccomp filter), both
//! sides use a `SeqCst` fence; the choice is made once, before any word is handed out. Loom
//! cannot model `membarrier`, so the models run with `SeqCst` fences on both sides.
//!
//! A thread that finds no free word (more reading threads than [`WORDS`]) or runs during its
//! own teardown gets none; its lookups pin instead (`SwapCell::pin`).
#![forbid(unsafe_code)]

use std::cell::Cell;

use crate::loom::{AtomicUsize, Ordering, fence, yield_now};

/// How many threads can hold a hazard word at once.
#[cfg(not(all(test, loom)))]
const WORDS: usize = 128;
#[cfg(all(test, loom))]
const WORDS: usize = 4;

/// A word with its owner flag, alone in its cache line so that readers on different cores do
/// not share one.
#[repr(align(64))]
struct Entry {
    /// The identity of the slot its thread is reading (its address), or 0.
    word: AtomicUsize,
    /// 1 while a thread owns the word.
    taken: AtomicUsize,
    /// 1 when its owner must fence itself (`membarrier` is unavailable); set by the owner when
    /// it claims the word, read only by the owner.
    reader_fence: AtomicUsize,
}

impl Entry {
    #[cfg(not(all(test, loom)))]
    const fn new() -> Self {
        Self {
            word: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            reader_fence: AtomicUsize::new(0),
        }
    }

    #[cfg(all(test, loom))]
    fn new() -> Self {
        Self {
            word: AtomicUsize::new(0),
            taken: AtomicUsize::new(0),
            reader_fence: AtomicUsize::new(0),
        }
    }
}

struct Registry {
    entries: [Entry; WORDS],
    /// One past the highest word ever handed out: the writer scans only below it.
    high: AtomicUsize,
}

#[cfg(not(all(test, loom)))]
static REGISTRY: Registry = Registry {
    entries: [const { Entry::new() }; WORDS],
    high: AtomicUsize::new(0),
};

#[cfg(not(all(test, loom)))]
fn registry() -> &'static Registry {
    &REGISTRY
}

#[cfg(all(test, loom))]
loom::lazy_static! {
    static ref REGISTRY: Registry = Registry {
        entries: std::array::from_fn(|_| Entry::new()),
        high: AtomicUsize::new(0),
    };
}

#[cfg(all(test, loom))]
fn registry() -> &'static Registry {
    &REGISTRY
}

// `MINE`: this thread's word, or `None` while it has none. `const`-initialized without `Drop`,
// so a lookup's access is a plain thread-local load.
#[cfg(not(all(test, loom)))]
std::thread_local! {
    static MINE: Cell<Option<&'static Entry>> = const { Cell::new(None) };
    static RELEASE: ReleaseOnExit = const { ReleaseOnExit };
}

#[cfg(all(test, loom))]
loom::thread_local! {
    static MINE: Cell<Option<&'static Entry>> = Cell::new(None);
}

/// Gives this thread's word back when the thread exits.
#[cfg(not(all(test, loom)))]
struct ReleaseOnExit;

#[cfg(not(all(test, loom)))]
impl Drop for ReleaseOnExit {
    fn drop(&mut self) {
        if let Ok(Some(entry)) = MINE.try_with(|m| m.replace(None)) {
            // The thread is not inside a lookup here (lookups clear their word on return).
            entry.taken.store(0, Ordering::Release);
        }
    }
}

/// This thread's hazard word, held for one read of one slot: cleared on drop.
pub(crate) struct Hazard {
    entry: &'static Entry,
}

impl Hazard {
    /// This thread's word, claiming one the first time; `None` when none is free.
    #[inline]
    pub(crate) fn mine() -> Option<Self> {
        let entry = match MINE.try_with(Cell::get).ok()? {
            Some(entry) => entry,
            None => claim()?,
        };
        Some(Self { entry })
    }

    /// Publishes that this thread is about to read the slot `id`. The caller must re-load
    /// `active` afterwards and read the slot only if it is still active.
    #[inline]
    pub(crate) fn publish(&self, id: usize) {
        // Release: the writer that sees a later value of this word (0, or another slot) after
        // its scan's acquire also sees this thread's earlier reads as done.
        self.entry.word.store(id, Ordering::Release);
        light_fence(self.entry.reader_fence.load(Ordering::Relaxed) != 0);
    }

    /// Clears the word: this thread reads no slot any more.
    #[inline]
    pub(crate) fn clear(&self) {
        // Release: our reads of the slot happen before the writer's reclaim that sees this.
        self.entry.word.store(0, Ordering::Release);
    }
}

impl Drop for Hazard {
    #[inline]
    fn drop(&mut self) {
        self.clear();
    }
}

/// The reader's half of the handshake: a compiler fence when the writer runs `membarrier`, a
/// `SeqCst` fence otherwise (and always under loom).
#[inline]
fn light_fence(reader_fence: bool) {
    #[cfg(not(all(test, loom)))]
    if reader_fence {
        fence(Ordering::SeqCst);
    } else {
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
    }
    #[cfg(all(test, loom))]
    {
        let _ = reader_fence;
        fence(Ordering::SeqCst);
    }
}

/// Claims a free word for this thread; `None` when all are taken.
#[cold]
#[inline(never)]
fn claim() -> Option<&'static Entry> {
    let reader_fence = !membarrier::expedited();
    let registry = registry();
    let index = registry.entries.iter().position(|e| {
        e.taken
            .compare_exchange(0, 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    })?;
    let entry = registry.entries.get(index)?;
    // Before this thread publishes anything in the word: a writer that must see the word sees
    // this too (the word's later stores come after it, and the fences order them).
    registry.high.fetch_max(index + 1, Ordering::SeqCst);
    #[cfg(not(all(test, loom)))]
    if RELEASE.try_with(|_| ()).is_err() {
        // The thread is being torn down: no destructor would give the word back.
        entry.taken.store(0, Ordering::Release);
        return None;
    }
    entry
        .reader_fence
        .store(usize::from(reader_fence), Ordering::Relaxed);
    if MINE.try_with(|m| m.set(Some(entry))).is_err() {
        entry.taken.store(0, Ordering::Release);
        return None;
    }
    Some(entry)
}

/// The writer's half of the handshake, after it made the slot `id` unreachable (flipped
/// `active` away from it): returns once no thread can be reading it through a hazard word.
/// Bounded by one lookup per word that names the slot (a finite search that runs no caller
/// code), plus scheduling.
pub(crate) fn wait_for_readers(id: usize) {
    heavy_fence();
    let registry = registry();
    let high = registry.high.load(Ordering::SeqCst);
    for entry in registry.entries.iter().take(high) {
        // Acquire: pairs with the reader's release of a later value, so its reads of the slot
        // happen before whatever the caller does next (the reclaim).
        while entry.word.load(Ordering::Acquire) == id {
            yield_now();
        }
    }
}

/// The writer's fence: `membarrier` when registered, else (and under loom) a `SeqCst` fence.
fn heavy_fence() {
    #[cfg(not(all(test, loom)))]
    if membarrier::expedited() {
        membarrier::barrier();
        return;
    }
    fence(Ordering::SeqCst);
}

/// Registration and use of `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`.
#[cfg(not(all(test, loom)))]
mod membarrier {
    use std::sync::OnceLock;

    use rustix::thread::{MembarrierCommand, membarrier};

    static EXPEDITED: OnceLock<bool> = OnceLock::new();

    /// Whether the process is registered for expedited barriers (registers on first call).
    /// Fixed once decided, before any hazard word is handed out, so readers and writers agree.
    pub(super) fn expedited() -> bool {
        *EXPEDITED.get_or_init(|| {
            // `SEGLOG_NO_MEMBARRIER` forces the fallback (the tests of that path).
            std::env::var_os("SEGLOG_NO_MEMBARRIER").is_none()
                && membarrier(MembarrierCommand::RegisterPrivateExpedited).is_ok()
                && membarrier(MembarrierCommand::PrivateExpedited).is_ok()
        })
    }

    /// A full barrier on every processor running a thread of this process.
    pub(super) fn barrier() {
        // Once registered, the command fails only for arguments the kernel does not know,
        // which the registration's own trial call ruled out; a failure would leave readers
        // without their fence, so it must not be ignored.
        if let Err(e) = membarrier(MembarrierCommand::PrivateExpedited) {
            panic!("membarrier failed after a successful registration: {e}");
        }
    }
}

#[cfg(all(test, loom))]
mod membarrier {
    /// Loom cannot model `membarrier`: both sides fence.
    pub(super) fn expedited() -> bool {
        false
    }
}
