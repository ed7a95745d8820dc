//! [`LogSegment`]: one segment's `.log` with its lazy `.index` and `.timeindex`, as Kafka's
//! `LogSegment` (storage module, 4.x), with the per-batch index rule of KAFKA-806 and the
//! batch-base-offset reads of KAFKA-17803.
//!
//! Concurrency: one appender and any number of readers share a segment through `&self`. The
//! writer's state sits behind a mutex that only writers and the first index or `.log` access
//! take; readers use the published size (release/acquire), the indexes' lock-free read handles,
//! and reads of the `.log` that come from its memory mapping (a [`MappedFile`], created on the
//! first read on a real file system, lock-free, no system call) or else positioned reads.
//!
//! The mapping's rules (docs/unsafe.md, "Mapped data files"): it is created under the writer's
//! lock with the size as its published length; `append` publishes each new size after its write;
//! every `set_len` that may cut below the size (`truncate_to`, `recover`, trimming) first shrinks
//! the mapping, which waits until no reader can touch the bytes cut; `close` and `delete` unmap.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use seglog_mmap_index::{
    LazyOffsetIndex, LazyTimeIndex, MappedFile, MappingBudget, OffsetIndex, OffsetIndexReader,
    TimeIndex, TimeIndexReader, TimestampOffset,
};

use crate::descriptors::DescriptorCache;
use crate::error::{Error, Result};
use crate::naming;
use crate::txn_index::TransactionIndex;
use seglog_fs::{File, FileSystem, OpenMode, RealFs};

mod append;
mod index_image;
mod lifecycle;
mod log_file;
mod mapping;
mod read;
mod recover;
mod recover_image;
mod recovery_scan;
mod size;
mod time_lookup;
mod txn;

pub use crate::time_search::TimestampAndOffset;
pub use index_image::IndexImage;
pub use lifecycle::RollParams;
use log_file::LogFile;
pub use read::{FetchData, FileRegion, LogOffsetMetadata, LogOffsetPosition};
pub use recover::{RecoveryReport, RecoveryStop, StopReason};
pub use recovery_scan::{SegmentScan, TailWalk, scan_segment, walk_tail};
use size::PublishedSize;

/// The largest size a segment may have (Kafka's `Int.MAX`).
pub const MAX_SEGMENT_SIZE: u64 = i32::MAX as u64;

/// `TimestampOffset.UNKNOWN`: no max timestamp known yet.
const UNKNOWN: TimestampOffset = TimestampOffset {
    timestamp: -1,
    offset: -1,
};

/// What [`Writer::published_max`] holds while the max timestamp is [`UNKNOWN`] (not loaded).
const MAX_NOT_LOADED: i64 = i64::MIN;

/// The window used when walking batch headers.
pub(crate) const HEADER_WINDOW: usize = 4096;

/// The per-segment settings, from the log's configuration: `Default` (Kafka's defaults), then
/// the `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SegmentConfig {
    /// `index.interval.bytes`: bytes between offset index entries.
    pub index_interval_bytes: u32,
    /// `segment.index.bytes`: the preallocated size of each index file.
    pub max_index_size: u32,
    /// `preallocate`: create the `.log` at `initial_file_size` bytes.
    pub preallocate: bool,
    /// The length of a new `.log` when preallocating (`segment.bytes`).
    pub initial_file_size: u64,
    /// The roll jitter drawn for this segment (Kafka draws it once per segment).
    pub roll_jitter_ms: i64,
}

impl Default for SegmentConfig {
    fn default() -> Self {
        Self {
            index_interval_bytes: 4096,
            max_index_size: 10 * 1024 * 1024,
            preallocate: false,
            initial_file_size: 0,
            roll_jitter_ms: 0,
        }
    }
}

impl SegmentConfig {
    /// Sets [`index_interval_bytes`](Self::index_interval_bytes).
    #[must_use]
    pub fn with_index_interval_bytes(mut self, index_interval_bytes: u32) -> Self {
        self.index_interval_bytes = index_interval_bytes;
        self
    }

    /// Sets [`max_index_size`](Self::max_index_size).
    #[must_use]
    pub fn with_max_index_size(mut self, max_index_size: u32) -> Self {
        self.max_index_size = max_index_size;
        self
    }

    /// Sets [`preallocate`](Self::preallocate).
    #[must_use]
    pub fn with_preallocate(mut self, preallocate: bool) -> Self {
        self.preallocate = preallocate;
        self
    }

    /// Sets [`initial_file_size`](Self::initial_file_size).
    #[must_use]
    pub fn with_initial_file_size(mut self, initial_file_size: u64) -> Self {
        self.initial_file_size = initial_file_size;
        self
    }

    /// Sets [`roll_jitter_ms`](Self::roll_jitter_ms).
    #[must_use]
    pub fn with_roll_jitter_ms(mut self, roll_jitter_ms: i64) -> Self {
        self.roll_jitter_ms = roll_jitter_ms;
        self
    }
}

/// The writer's state.
#[derive(Debug)]
struct Writer {
    offset_index: LazyOffsetIndex,
    time_index: LazyTimeIndex,
    bytes_since_last_index_entry: u64,
    /// `UNKNOWN` until loaded from the time index. Changed only through [`Writer::set_max`].
    max_timestamp_and_offset: TimestampOffset,
    /// The timestamp of `max_timestamp_and_offset` (or [`MAX_NOT_LOADED`]), shared with the
    /// segment so that [`LogSegment::max_timestamp_so_far`] reads it without the writer's lock,
    /// as Kafka reads its volatile `maxTimestampAndOffsetSoFar`: a time lookup walks every
    /// segment, and must not wait behind a flush that syncs an index under that lock.
    published_max: Arc<AtomicI64>,
    rolling_based_timestamp: Option<i64>,
    created_ms: i64,
    /// The batches of the append in progress, kept empty between appends: an append framing
    /// into it allocates nothing.
    batch_facts: Vec<BatchFacts>,
}

impl Writer {
    /// Sets the max timestamp and its offset, and publishes the timestamp to lock-free readers.
    fn set_max(&mut self, max: TimestampOffset) {
        self.max_timestamp_and_offset = max;
        let published = if max == UNKNOWN {
            MAX_NOT_LOADED
        } else {
            max.timestamp
        };
        self.published_max.store(published, Ordering::Release);
    }
}

/// One log segment. See the module documentation.
#[derive(Debug)]
pub struct LogSegment<F: FileSystem = RealFs> {
    fs: F,
    base_offset: i64,
    config: SegmentConfig,
    /// The `.log`'s descriptor, opened on demand and closed by a [`DescriptorCache`] if the
    /// segment has one; reached only through [`LogSegment::log`] and [`LogSegment::log_for_write`].
    log: LogFile<F>,
    /// The `.log`'s current path (it changes with the suffix).
    /// The `.log` path; cloned out under a momentary lock (never held across other locks, so a
    /// rename under the writer's lock cannot invert the order with a reader). The suffix rename
    /// and the descriptor's reopen hold it across their one system call, so a reopen never
    /// falls between the rename and the new path. Lock order: writer, descriptor slot, this.
    log_path: Mutex<Arc<PathBuf>>,
    /// The logical size of the `.log` (the file may be longer when preallocated).
    size: PublishedSize,
    offset_reader: OnceLock<OffsetIndexReader>,
    time_reader: OnceLock<TimeIndexReader>,
    /// The `.log` mapped for reads: unset until the first read (opening maps nothing); `None`
    /// inside when the file system is not real, the mapping failed, or the segment was closed or
    /// deleted before any read. Set and shrunk only under the writer's lock.
    mapped: OnceLock<Option<MappedFile>>,
    /// The budget the indexes' and the `.log`'s mappings count against, if any.
    budget: Option<MappingBudget>,
    /// Set by `on_become_inactive`, which appends to and trims the files without syncing them,
    /// and cleared by `flush`: whether those changes may still be unsynced.
    unsynced_since_inactive: AtomicBool,
    /// The writer's max timestamp, published for lock-free reads (see `Writer::published_max`).
    max_timestamp: Arc<AtomicI64>,
    writer: Mutex<Writer>,
    /// The `.txnindex`, behind its own lock so that fetches collecting aborted transactions do
    /// not wait for appends. Lock order: `writer`, then this.
    txn_index: Mutex<TransactionIndex<F>>,
}

impl<F: FileSystem> LogSegment<F> {
    /// Kafka's `LogSegment.open`: opens (or creates, when `file_already_exists` is false) the
    /// `.log` named by `base_offset` and `suffix` in `dir`. The indexes are opened lazily.
    pub fn open(
        fs: F,
        dir: &Path,
        base_offset: i64,
        config: SegmentConfig,
        file_already_exists: bool,
        suffix: &str,
        now_ms: i64,
    ) -> Result<Self> {
        let segment = (base_offset, suffix);
        Self::open_with(fs, dir, segment, config, file_already_exists, now_ms, None)
    }

    /// [`LogSegment::open`] of an existing segment (no suffix) whose `.txnindex` a directory
    /// listing found or not, so that opening it looks for no file but the `.log` (a loader of
    /// many segments lists the directory once instead of a `stat` per segment).
    pub fn open_listed(
        fs: F,
        dir: &Path,
        base_offset: i64,
        config: SegmentConfig,
        now_ms: i64,
        txn_index_exists: bool,
    ) -> Result<Self> {
        let segment = (base_offset, "");
        Self::open_with(
            fs,
            dir,
            segment,
            config,
            true,
            now_ms,
            Some(txn_index_exists),
        )
    }

    fn open_with(
        fs: F,
        dir: &Path,
        (base_offset, suffix): (i64, &str),
        config: SegmentConfig,
        file_already_exists: bool,
        now_ms: i64,
        txn_index_exists: Option<bool>,
    ) -> Result<Self> {
        let log_path = naming::log_file(dir, base_offset, suffix);
        let mode = if file_already_exists {
            OpenMode::Existing
        } else {
            OpenMode::CreateOrOpen
        };
        // A listed segment (a load's) is only `stat`ed: its `.log` opens on first use, so a load
        // of many segments opens none of them (nor closes them again past the descriptor cap).
        let (log, mut size) = if txn_index_exists.is_some() {
            let size = fs
                .file_len(&log_path)
                .map_err(|e| Error::io(&log_path, "stat", e))?;
            (None, size)
        } else {
            let log = fs
                .open(&log_path, mode)
                .map_err(|e| Error::io(&log_path, "open", e))?;
            let size = log.len().map_err(|e| Error::io(&log_path, "stat", e))?;
            (Some(log), size)
        };
        if size > MAX_SEGMENT_SIZE {
            return Err(Error::SegmentTooLarge {
                path: log_path,
                size,
            });
        }
        if !file_already_exists
            && size == 0
            && config.preallocate
            && config.initial_file_size > 0
            && let Some(log) = &log
        {
            log.set_len(config.initial_file_size)
                .map_err(|e| Error::io(&log_path, "preallocate", e))?;
            size = 0;
        }
        let offset_index = OffsetIndex::options(
            naming::offset_index_file(dir, base_offset, suffix),
            base_offset,
        )
        .max_index_size(config.max_index_size)
        .backing(fs.index_backing())
        .lazy();
        let time_index = TimeIndex::options(
            naming::time_index_file(dir, base_offset, suffix),
            base_offset,
        )
        .max_index_size(config.max_index_size)
        .backing(fs.index_backing())
        .lazy();
        let txn_index = TransactionIndex::open_known(
            fs.clone(),
            naming::txn_index_file(dir, base_offset, suffix),
            base_offset,
            txn_index_exists,
        )?;
        let published_max = Arc::new(AtomicI64::new(MAX_NOT_LOADED));
        Ok(Self {
            fs,
            base_offset,
            config,
            // A segment created now is the active one, or one being built (the cleaner's):
            // written to until `on_become_inactive`, so pinned.
            log: LogFile::new(log, !file_already_exists, None),
            log_path: Mutex::new(Arc::new(log_path)),
            size: PublishedSize::new(size),
            offset_reader: OnceLock::new(),
            time_reader: OnceLock::new(),
            mapped: OnceLock::new(),
            budget: None,
            unsynced_since_inactive: AtomicBool::new(false),
            max_timestamp: Arc::clone(&published_max),
            writer: Mutex::new(Writer {
                offset_index,
                time_index,
                bytes_since_last_index_entry: 0,
                max_timestamp_and_offset: UNKNOWN,
                published_max,
                rolling_based_timestamp: None,
                created_ms: now_ms,
                batch_facts: Vec::new(),
            }),
            txn_index: Mutex::new(txn_index),
        })
    }

    /// Counts the segment's mappings (both indexes and the `.log`) against `budget`, which
    /// unmaps the least recently used mappings of all its segments to stay within it; a mapping
    /// it took away is made again on the segment's next use. Call it right after opening: an
    /// index or `.log` already mapped stays outside the budget.
    #[must_use]
    pub fn with_mapping_budget(mut self, budget: Option<MappingBudget>) -> Self {
        let w = self.writer.get_mut();
        w.offset_index.set_budget(budget.clone());
        w.time_index.set_budget(budget.clone());
        self.budget = budget;
        self
    }

    /// Counts the segment's `.log` descriptor against `cache`, which closes the least recently
    /// used descriptors of all its segments to stay within its cap; a closed `.log` is opened
    /// again, by its current path, on the segment's next use. The active segment (one created
    /// by the open, until [`LogSegment::on_become_inactive`], or one appended to) is never
    /// counted nor closed. Call it right after opening.
    #[must_use]
    pub fn with_descriptor_cache(mut self, cache: Option<&DescriptorCache>) -> Self {
        if let Some(cache) = cache {
            self.log = self.log.with_cache(cache);
        }
        self
    }

    /// Whether the `.log`'s descriptor is open now (a [`DescriptorCache`] may have closed it).
    pub fn log_is_open(&self) -> bool {
        self.log.is_open()
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The segment's settings.
    pub fn config(&self) -> SegmentConfig {
        self.config
    }

    /// The logical size of the `.log` in bytes.
    pub fn size(&self) -> u64 {
        self.size.load()
    }

    /// The `.log` file's current path.
    pub fn log_path(&self) -> PathBuf {
        PathBuf::clone(&self.path())
    }

    /// The `.index` file's current path (the file may not exist yet).
    pub fn offset_index_path(&self) -> PathBuf {
        self.writer.lock().offset_index.path().to_path_buf()
    }

    /// The `.timeindex` file's current path (the file may not exist yet).
    pub fn time_index_path(&self) -> PathBuf {
        self.writer.lock().time_index.path().to_path_buf()
    }

    /// Whether the offset index has been opened (and so created and mapped).
    pub fn indexes_loaded(&self) -> (bool, bool) {
        let w = self.writer.lock();
        (w.offset_index.is_loaded(), w.time_index.is_loaded())
    }

    /// Kafka's `canConvertToRelativeOffset`: `offset - base` fits in `[0, i32::MAX]`.
    pub fn can_convert_to_relative_offset(&self, offset: i64) -> bool {
        offset
            .checked_sub(self.base_offset)
            .is_some_and(|rel| (0..=i64::from(i32::MAX)).contains(&rel))
    }

    /// A lock-free reader of the offset index (opening the index on first use).
    pub(crate) fn offset_reader(&self) -> Result<&OffsetIndexReader> {
        if let Some(r) = self.offset_reader.get() {
            return Ok(r);
        }
        let w = self.writer.lock();
        let reader = w.offset_index.get()?.reader();
        Ok(self.offset_reader.get_or_init(|| reader))
    }

    /// A lock-free reader of the time index (opening the index on first use).
    pub(crate) fn time_reader(&self) -> Result<&TimeIndexReader> {
        if let Some(r) = self.time_reader.get() {
            return Ok(r);
        }
        let w = self.writer.lock();
        let reader = w.time_index.get()?.reader();
        Ok(self.time_reader.get_or_init(|| reader))
    }

    /// The `.log` path (a cheap clone; no lock is held afterwards).
    fn path(&self) -> Arc<PathBuf> {
        Arc::clone(&self.log_path.lock())
    }

    /// Opens the `.log` again by its current path, under the path lock so that no rename
    /// (`change_file_suffixes` renames under it) comes between reading the path and opening it.
    fn reopen(&self) -> Result<F::File> {
        let path = self.log_path.lock();
        self.fs
            .open(&path, OpenMode::Existing)
            .map_err(|e| Error::io(&**path, "reopen", e))
    }

    /// The `.log` for reading (opened again if the descriptor cache closed it). The handle keeps
    /// the descriptor open while it is held, whatever the cache does meanwhile.
    pub(crate) fn log(&self) -> Result<Arc<F::File>> {
        self.log.get(&|| self.reopen(), false)
    }

    /// The `.log` for a write or cut: as [`LogSegment::log`], and kept open until a flush
    /// syncs it, so the cache never closes a file that may hold unsynced bytes.
    pub(crate) fn log_for_write(&self) -> Result<Arc<F::File>> {
        self.log.get(&|| self.reopen(), true)
    }

    /// Loads the max timestamp so far from the time index if it is still unknown
    /// (Kafka's lazy `maxTimestampSoFar()`).
    fn load_max_timestamp(w: &mut Writer) -> Result<()> {
        if w.max_timestamp_and_offset == UNKNOWN {
            let loaded = w.time_index.get()?.last_entry();
            w.set_max(loaded);
        }
        Ok(())
    }

    /// The number of entries in the offset and time indexes (opening them).
    pub fn index_entries(&self) -> Result<(usize, usize)> {
        let w = self.writer.lock();
        Ok((
            w.offset_index.get()?.entries(),
            w.time_index.get()?.entries(),
        ))
    }
}

/// What the index rule needs of a batch.
#[derive(Debug, Clone, Copy)]
struct BatchFacts {
    last_offset: i64,
    max_timestamp: i64,
    size: u64,
}

/// The index rule for one batch at `position`, shared by append and recovery so that both build
/// byte-identical indexes: track the running max timestamp; if more than `interval` bytes were
/// written since the last entry (strictly more, counted before this batch), add an offset entry
/// (the batch's last offset, its start position) and a time entry (the running max timestamp and
/// the last offset of the batch that holds it).
///
/// A full index (`is_full`) takes no more entries; the batches after its last entry stay
/// unindexed, and lookups scan forward to them. Kafka throws there ("Attempt to append to a full
/// index"), failing a rebuild that finds more entries due than append wrote (each open restarts
/// the byte count) or than the index holds: docs/reliability.md, section 10.
fn index_batch(w: &mut Writer, interval: u32, batch: &BatchFacts, position: u64) -> Result<()> {
    if batch.max_timestamp > w.max_timestamp_and_offset.timestamp {
        w.set_max(TimestampOffset {
            timestamp: batch.max_timestamp,
            offset: batch.last_offset,
        });
    }
    if w.bytes_since_last_index_entry > u64::from(interval) {
        // Segments are below 2 GiB, so a batch position always fits.
        let position = u32::try_from(position).unwrap_or(u32::MAX);
        let offset_index = w.offset_index.get_mut()?;
        if !offset_index.is_full() {
            offset_index.append(batch.last_offset, position)?;
        }
        let max = w.max_timestamp_and_offset;
        let time_index = w.time_index.get_mut()?;
        if !time_index.is_full() {
            time_index.maybe_append(max.timestamp, max.offset, false)?;
        }
        w.bytes_since_last_index_entry = 0;
    }
    w.bytes_since_last_index_entry += batch.size;
    Ok(())
}
