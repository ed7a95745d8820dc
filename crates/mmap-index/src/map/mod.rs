//! The only module with `unsafe`: the mapped memory, the two-slot mapping swap that guarantees
//! no mapping is unmapped while a reader is inside it (KAFKA-7442), eviction (a mapping budget's
//! unmap side), the copy out of a `.log` mapping, and the cold search's prefetch. Every site is
//! listed, with its argument, in `docs/unsafe.md`. Every other module of the crate is
//! `#![forbid(unsafe_code)]`.
//!
//! - `mmap.rs`: [`MmapMemory`], a shared (or anonymous) mapping viewed as atomic words, and the
//!   live-mapping counters;
//! - `swap.rs`: [`SwapCell`], the pin protocol, eviction and remap;
//! - `owned.rs`: [`Owner`], an owned cell's owner, which caches its active mapping's words;
//! - `copy.rs`: the reads of a `.log` mapping below its published length (a copy, or a loan of
//!   the bytes to a closure).
//!
//! # Memory
//! A [`Memory`] is an array of 32-bit words. Every access goes through an atomic (relaxed loads
//! and stores): the appender writes slots that readers may read at the same time after a
//! truncation, and atomics make that a race on values, never a data race. On x86-64 and aarch64
//! a relaxed 32-bit load or store is a plain `mov`/`ldr`/`str`.

mod copy;
mod hazard;
mod mmap;
mod owned;
mod swap;

#[cfg(all(test, loom))]
pub(crate) use copy::{copy_words, lend_with, read_with};
pub(crate) use copy::{lend_published, read_published};
pub(crate) use mmap::{MmapMemory, live_file_mappings, live_mappings};
pub(crate) use owned::Owner;
pub(crate) use swap::{SwapCell, Unpinned, owned_cell, shared_cell};

/// One 32-bit word of shared memory, accessed atomically (relaxed).
pub trait Word: Send + Sync {
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
    /// The number of whole 32-bit words: the capacity. [`cells`](Self::cells) may view fewer
    /// (an index file's words past its allocated blocks); loads past them read as zero.
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
