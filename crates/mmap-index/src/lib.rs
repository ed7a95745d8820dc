//! # seglog-mmap-index
//!
//! Kafka's two sparse index files, `.index` (8-byte offset entries) and `.timeindex` (12-byte
//! time entries), memory-mapped, with lock-free lookups. Byte-compatible with Kafka: entries are
//! big-endian, offsets are stored relative to the segment's base offset, new files are
//! preallocated to `floor(max_index_size / entry_size) * entry_size` bytes and trimmed on close.
//!
//! ```
//! use seglog_mmap_index::{OffsetIndex, TimeIndex};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! // The segment based at offset 100: entries hold offsets relative to it.
//! let path = dir.path().join("00000000000000000100.index");
//! let mut index = OffsetIndex::options(&path, 100).max_index_size(4096).open()?;
//! index.append(100, 0)?; // offset 100 is at byte 0 of the .log
//! index.append(150, 4096)?;
//! let reader = index.reader(); // lock-free lookups from other threads
//! assert_eq!(reader.lookup(170)?.position, 4096); // the floor entry: scan the .log from there
//! index.close()?; // trimmed to its entries
//!
//! // A read-only open takes the base offset from the file name.
//! let read_only = OffsetIndex::options_from_file_name(&path)?.read_only().open()?;
//! assert_eq!((read_only.base_offset(), read_only.entries()), (100, 2));
//!
//! let mut times = TimeIndex::options(dir.path().join("00000000000000000100.timeindex"), 100)
//!     .max_index_size(4096)
//!     .open()?;
//! times.maybe_append(1_700_000_000_000, 150, false)?;
//! assert_eq!(times.lookup(1_700_000_000_000)?.offset, 150);
//! # Ok(())
//! # }
//! ```
//!
//! Unix only, as `seglog-fs` is (mmap, `pread`, file descriptors).
//!
//! ## What this crate owns, and its boundary
//! - [`Index`], generic over the entry layout ([`OffsetEntry`], [`TimeEntry`]), as
//!   [`OffsetIndex`] and [`TimeIndex`]: one writer each (mutations take `&mut self`), with
//!   Kafka's append rules, warm-section lookup, three-case truncation, resize, trim, reset,
//!   flush, close, rename and delete; [`IndexReader`] ([`OffsetIndexReader`],
//!   [`TimeIndexReader`]): cheap, cloneable, lock-free read handles for other threads.
//! - [`IndexOptions`]: how an index is opened (Kafka's constructors: create and preallocate, or
//!   existing only, or read-only; on a real file or a stored [`Backing`](seglog_fs::Backing); under a budget), now
//!   ([`IndexOptions::open`]) or on first use ([`IndexOptions::lazy`], a [`LazyIndex`]: Kafka's
//!   lazy open, so that 10,000 segments cost nothing until used).
//! - [`MappingBudget`]: a bound on the mappings a set of indexes and mapped files holds at once;
//!   the least recently used are unmapped and mapped again on their next use (KAFKA-6343).
//! - [`IndexOptions::read_only`] (Kafka's `writable = false`, for dump tools): `O_RDONLY`,
//!   `PROT_READ`, every modification refused.
//! - [`MappedFile`]: a read-only shared mapping of a file its owner appends to (a segment's
//!   `.log`), with lock-free, system-call-free reads below a published length, growth that never
//!   waits for readers, and a shrink that waits until no reader can touch the bytes cut (see
//!   `docs/unsafe.md`, "Mapped data files"). Its mappings are counted by [`live_file_mappings`].
//! - `sanity_check` (Kafka's rules and messages) and `verify` (a [`VerifyReport`] that also
//!   finds zero tails and out-of-order entries, which Kafka's check misses).
//!
//! It does not decide when to add an entry (segment's index-interval rule), does no recovery,
//! and does not lock directories: the `seglog-segment` and `seglog-log` crates above do. It
//! builds on nothing but the OS: it does not depend on `seglog-record-format`.
//!
//! ## Invariants
//! - Opening an existing file takes `length / entry_size` entries without scanning, as Kafka
//!   does; a crash image's zero tail is therefore visible only to `verify`.
//! - The entry count is published with release/acquire ordering: a reader never sees a count
//!   that covers bytes not yet written.
//! - No mapping is unmapped while a lookup reads it (a budget's eviction included), and the
//!   appender never waits for readers
//!   (see `docs/unsafe.md` for the two-slot pin protocol and its loom models).
//! - Lookups use Kafka's warm-section split (the last 8 KiB first) and return exactly Kafka's
//!   slot whenever keys strictly increase, as they do in every file Kafka or this crate writes.
//!   Truncation and `fetch_upper_bound_offset`, whose fields may repeat, follow Kafka's probe
//!   order step for step.
//! - A lookup racing a truncation may still see entries from before it, as in Kafka; every
//!   word it reads is read atomically, so that is a stale answer, never undefined behaviour.
//! - A corrupt file never makes this crate panic; out-of-range words read as zero.
//! - This is the only crate of the workspace with `unsafe`, all of it in `src/map/` (the
//!   mappings, the pin protocol and eviction, the copy out of a `.log` mapping, the prefetch);
//!   every other module starts with `#![forbid(unsafe_code)]`.
//!
//! ## Modules, bottom to top
//! `error`, `loom`, `loan` < `budget` < `map` < `mapped_file`, `search` < `entry` < `raw` (the
//! generic core) < `verify` < `file` < `reader` < `index` < `offset_index`, `time_index` <
//! `options` < `lazy`. A module uses only modules to its left (and its own children).

#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")
)]

mod budget;
mod entry;
mod error;
mod file;
mod index;
mod lazy;
mod loan;
mod loom;
mod map;
mod mapped_file;
mod offset_index;
mod options;
mod raw;
mod reader;
mod search;
mod time_index;
mod verify;

pub use budget::MappingBudget;
pub use entry::{Entry, NO_TIMESTAMP, OffsetEntry, OffsetPosition, TimeEntry, TimestampOffset};
pub use error::{CorruptKind, Error, IndexKind, Result};
pub use index::Index;
pub use lazy::{LazyIndex, LazyOffsetIndex, LazyTimeIndex};
pub use mapped_file::{MAP_AHEAD_BYTES, MappedFile};
pub use offset_index::{OffsetIndex, OffsetIndexReader};
pub use options::{IndexOptions, base_offset_from_file_name};
pub use reader::IndexReader;
pub use time_index::{TimeIndex, TimeIndexReader};
pub use verify::{Problem, VerifyReport};

/// The number of index files this process has mapped right now (all indexes together). Lazy
/// indexes that were never used, closed indexes and zero-length files hold no mapping.
pub fn live_mappings() -> usize {
    map::live_mappings()
}

/// The number of data files ([`MappedFile`]s, a segment's `.log`) this process has mapped right
/// now. Counted apart from [`live_mappings`], which counts index mappings only.
pub fn live_file_mappings() -> usize {
    map::live_file_mappings()
}

/// Kafka's warm section: lookups first search the entries in the last 8 KiB of the index.
pub const WARM_SECTION_BYTES: usize = 8192;
