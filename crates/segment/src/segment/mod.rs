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

use std::ops::ControlFlow;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;
use seglog_fs::{File, FileSystem, OpenMode, RealFs};
use seglog_mmap_index::{
    LazyOffsetIndex, LazyTimeIndex, MappedFile, MappingBudget, OffsetIndexReader, TimeIndexReader,
    TimestampOffset,
};
use seglog_record_format::{self as rf, NO_TIMESTAMP};

use crate::error::{Error, Result};
use crate::naming;
use crate::scan::{
    BatchHeader, MappedLog, Scan, ScanEnd, read_header_naming, read_up_to_io, scan_headers,
};

mod recover;

pub use recover::{RecoveryReport, RecoveryStop, StopReason};

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

/// The per-segment settings, from the log's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Kafka's `LogOffsetPosition`: where a batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetPosition {
    /// The batch's base offset (KAFKA-17803; for legacy entries, the entry's offset).
    pub offset: i64,
    /// The batch's byte position in the `.log`.
    pub position: u64,
    /// The batch's size in bytes.
    pub size: u64,
}

/// Kafka's `LogOffsetMetadata` for the start of a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetMetadata {
    /// The base offset of the batch the read starts with.
    pub message_offset: i64,
    /// The segment's base offset.
    pub segment_base_offset: i64,
    /// The read's start position in the segment.
    pub relative_position: u64,
}

/// A byte range of the `.log`, to be read into memory or copied to a file or socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRegion {
    /// The first byte.
    pub position: u64,
    /// How many bytes.
    pub length: u64,
}

/// The result of [`LogSegment::read`] (Kafka's `FetchDataInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchData {
    /// Where the read starts.
    pub offset_metadata: LogOffsetMetadata,
    /// The bytes to send. It starts at a batch boundary and may end inside a batch.
    pub region: FileRegion,
    /// Whether the first batch did not fit in the size asked for.
    pub first_entry_incomplete: bool,
}

/// A record found by timestamp (Kafka's `TimestampAndOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampAndOffset {
    /// The record's timestamp.
    pub timestamp: i64,
    /// The record's offset.
    pub offset: i64,
    /// The batch's partition leader epoch, if it has one.
    pub leader_epoch: Option<i32>,
}

/// The inputs of [`LogSegment::should_roll`] (Kafka's `RollParams`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollParams {
    /// The effective `segment.ms` (`LogConfig.maxSegmentMs`).
    pub max_segment_ms: i64,
    /// `segment.bytes`.
    pub max_segment_bytes: u64,
    /// The largest timestamp of the incoming batches.
    pub max_timestamp_in_messages: i64,
    /// The largest offset of the incoming batches.
    pub max_offset_in_messages: i64,
    /// The incoming bytes.
    pub messages_size: u64,
    /// The current time.
    pub now_ms: i64,
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
    log: F::File,
    /// The `.log`'s current path (it changes with the suffix).
    /// The `.log` path; cloned out under a momentary lock (never held across other locks, so a
    /// rename under the writer's lock cannot invert the order with a reader).
    log_path: Mutex<Arc<PathBuf>>,
    /// The logical size of the `.log` (the file may be longer when preallocated).
    size: AtomicU64,
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
        let log_path = naming::log_file(dir, base_offset, suffix);
        let mode = if file_already_exists {
            OpenMode::Existing
        } else {
            OpenMode::CreateOrOpen
        };
        let log = fs
            .open(&log_path, mode)
            .map_err(|e| Error::io(&log_path, "open", e))?;
        let mut size = log.len().map_err(|e| Error::io(&log_path, "stat", e))?;
        if size > MAX_SEGMENT_SIZE {
            return Err(Error::SegmentTooLarge {
                path: log_path,
                size,
            });
        }
        if !file_already_exists && size == 0 && config.preallocate && config.initial_file_size > 0 {
            log.set_len(config.initial_file_size)
                .map_err(|e| Error::io(&log_path, "preallocate", e))?;
            size = 0;
        }
        let offset_index = LazyOffsetIndex::with_backing(
            naming::offset_index_file(dir, base_offset, suffix),
            base_offset,
            config.max_index_size,
            fs.index_backing(),
        );
        let time_index = LazyTimeIndex::with_backing(
            naming::time_index_file(dir, base_offset, suffix),
            base_offset,
            config.max_index_size,
            fs.index_backing(),
        );
        let published_max = Arc::new(AtomicI64::new(MAX_NOT_LOADED));
        Ok(Self {
            fs,
            base_offset,
            config,
            log,
            log_path: Mutex::new(Arc::new(log_path)),
            size: AtomicU64::new(size),
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
            }),
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
        self.size.load(Ordering::Acquire)
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

    /// The `.log`'s mapping, created on first use on a real file system; `None` on `SimFs`, after
    /// a failed `mmap`, and once closed or deleted before any read.
    fn mapped(&self) -> Option<&MappedFile> {
        if let Some(mapped) = self.mapped.get() {
            let map = mapped.as_ref()?;
            if map.is_evicted()
                && let Some(file) = self.log.map_fd()
            {
                // The budget took the mapping away: map it again (ahead of the published
                // length). A failure leaves it unmapped, and this read uses `pread`.
                let _ = map.remap(file);
            }
            return Some(map);
        }
        let file = self.log.map_fd()?;
        // Under the writer's lock: the size cannot change (appends, truncations and recovery
        // hold it) between reading it and publishing it as the mapping's length.
        let _w = self.writer.lock();
        self.mapped
            .get_or_init(|| MappedFile::open_in(file, self.size(), self.budget.as_ref()).ok())
            .as_ref()
    }

    /// What reads of the `.log` go through: the mapping when there is one, else `pread`.
    #[inline]
    fn source(&self) -> MappedLog<'_, F::File> {
        MappedLog {
            file: &self.log,
            map: self.mapped(),
        }
    }

    /// The mapping if one was created (never creates one). Writer's lock held by the caller.
    fn existing_mapping(&self) -> Option<(&MappedFile, BorrowedFd<'_>)> {
        let map = self.mapped.get()?.as_ref()?;
        Some((map, self.log.map_fd()?))
    }

    /// Called with the writer's lock held before any `set_len(len)` of the `.log`: lowers the
    /// mapping's published length and waits until no reader can touch a byte at or past `len`.
    fn shrink_mapping(&self, len: u64) {
        if let Some((map, file)) = self.existing_mapping()
            && map.shrink_to(file, len).is_err()
        {
            map.close();
        }
    }

    /// Called with the writer's lock held by `close` and `delete`: unmaps (waiting for reads
    /// inside), and makes sure no later read maps the file again.
    fn close_mapping(&self) {
        if let Some(map) = self.mapped.get_or_init(|| None) {
            map.close();
        }
    }

    /// The `.log` path (a cheap clone; no lock is held afterwards).
    fn path(&self) -> Arc<PathBuf> {
        Arc::clone(&self.log_path.lock())
    }

    /// Appends already-offset-assigned batches whose largest offset is `largest_offset`
    /// (Kafka's `append`, with the per-batch index rule of KAFKA-806): for each batch, if more
    /// than `index.interval.bytes` were written since the last index entry (checked before the
    /// batch's own bytes count), the batch gets an offset index entry (its last offset, its start
    /// position) and a time index entry (the running max timestamp and the last offset of the
    /// batch holding it).
    pub fn append(&self, largest_offset: i64, records: &[u8]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut w = self.writer.lock();
        let batches = frame_whole(&self.path(), records)?;
        let physical_position = self.size.load(Ordering::Relaxed);
        if !self.can_convert_to_relative_offset(largest_offset) {
            return Err(Error::OffsetOverflow {
                path: self.log_path(),
                offset: largest_offset,
            });
        }
        let new_size = physical_position + records.len() as u64;
        if new_size > MAX_SEGMENT_SIZE {
            return Err(Error::SegmentTooLarge {
                path: self.log_path(),
                size: new_size,
            });
        }
        if physical_position == 0 {
            w.rolling_based_timestamp = batches.first().map(|b| b.max_timestamp);
        }
        self.log
            .write_all_at(records, physical_position)
            .map_err(|e| Error::io(&*self.path(), "write", e))?;
        Self::load_max_timestamp(&mut w)?;
        let mut position = physical_position;
        for batch in &batches {
            index_batch(&mut w, self.config.index_interval_bytes, batch, position)?;
            position += batch.size;
        }
        self.size.store(new_size, Ordering::Release);
        if let Some((map, file)) = self.existing_mapping() {
            // A failed remap leaves the old mapping in use: reads past it use `pread`.
            let _ = map.publish(file, new_size);
        }
        Ok(())
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

    /// The largest timestamp appended so far, or -1 (Kafka's `maxTimestampSoFar`). Takes no
    /// lock once the value is known (loaded from the time index or set by an append).
    pub fn max_timestamp_so_far(&self) -> Result<i64> {
        let published = self.max_timestamp.load(Ordering::Acquire);
        if published != MAX_NOT_LOADED {
            return Ok(published);
        }
        let mut w = self.writer.lock();
        Self::load_max_timestamp(&mut w)?;
        Ok(w.max_timestamp_and_offset.timestamp)
    }

    /// The last offset of the batch holding the largest timestamp (Kafka's
    /// `shallowOffsetOfMaxTimestampSoFar`).
    pub fn shallow_offset_of_max_timestamp_so_far(&self) -> Result<i64> {
        let mut w = self.writer.lock();
        Self::load_max_timestamp(&mut w)?;
        Ok(w.max_timestamp_and_offset.offset)
    }

    /// The largest record timestamp, if the segment has any (Kafka's `largestRecordTimestamp`).
    pub fn largest_record_timestamp(&self) -> Result<Option<i64>> {
        let ts = self.max_timestamp_so_far()?;
        Ok((ts >= 0).then_some(ts))
    }

    /// The largest record timestamp, or the `.log`'s modification time when there is none
    /// (Kafka's `largestTimestamp`, used by time retention and `offsetsForTimes`).
    pub fn largest_timestamp(&self) -> Result<i64> {
        match self.largest_record_timestamp()? {
            Some(ts) => Ok(ts),
            None => self.last_modified_ms(),
        }
    }

    /// The `.log`'s modification time.
    pub fn last_modified_ms(&self) -> Result<i64> {
        let path = self.path();
        self.fs
            .modified_ms(&path)
            .map_err(|e| Error::io(&*path, "stat", e))
    }

    /// Sets the modification time of the `.log` and of the index files that exist.
    pub fn set_last_modified_ms(&self, ms: i64) -> Result<()> {
        let w = self.writer.lock();
        self.fs
            .set_modified_ms(&self.path(), ms)
            .map_err(|e| Error::io(&*self.path(), "set mtime", e))?;
        for path in [w.offset_index.path(), w.time_index.path()] {
            if self.fs.exists(path) {
                self.fs
                    .set_modified_ms(path, ms)
                    .map_err(|e| Error::io(path, "set mtime", e))?;
            }
        }
        Ok(())
    }

    /// Kafka's `translateOffset`: the first batch at or after the index's floor position (and
    /// `starting_position`) whose last offset is at least `offset`; `None` when there is none.
    pub fn translate_offset(
        &self,
        offset: i64,
        starting_position: u64,
    ) -> Result<Option<LogOffsetPosition>> {
        let reader = self.offset_reader()?;
        let floor = reader.lookup(offset)?;
        if floor.offset < offset && starting_position <= u64::from(floor.position) {
            // The next index entry names the batch ending at the next indexed offset. If that
            // batch starts at or below `offset`, it holds `offset`, and every batch between the
            // two entries ends below its base: it is the answer, found with one header read
            // instead of a walk from the floor entry.
            if let Some(next) = reader.fetch_upper_bound_offset(floor, 1)?
                && let Some(h) = self.header_at(u64::from(next.position))?
                && h.magic > 1
                && h.offset_field <= offset
                && h.last_offset == next.offset
            {
                return Ok(Some(LogOffsetPosition {
                    offset: h.offset_field,
                    position: h.position,
                    size: h.size,
                }));
            }
        }
        self.search_for_offset(offset, u64::from(floor.position).max(starting_position))
    }

    /// The header of the batch at `position`, if a whole batch starts there.
    fn header_at(&self, position: u64) -> Result<Option<BatchHeader>> {
        read_header_naming(&self.source(), &|| self.log_path(), position, self.size())
    }

    fn search_for_offset(&self, offset: i64, from: u64) -> Result<Option<LogOffsetPosition>> {
        let path = self.path();
        let scan = scan_headers(
            &self.source(),
            &path,
            from,
            self.size(),
            HEADER_WINDOW,
            |h| {
                // Comparing the base offset first avoids nothing here (the header is read anyway),
                // but keeps Kafka's order: a batch whose base is past the target contains nothing
                // below it, and it is still the answer (offsets may have gaps).
                if h.last_offset >= offset {
                    let offset = if h.magic > 1 {
                        h.offset_field
                    } else {
                        h.last_offset
                    };
                    return Ok(ControlFlow::Break(LogOffsetPosition {
                        offset,
                        position: h.position,
                        size: h.size,
                    }));
                }
                Ok(ControlFlow::Continue(()))
            },
        )?;
        match scan {
            Scan::Stopped(found) => Ok(Some(found)),
            Scan::Ended(ScanEnd::Clean { .. }) => Ok(None),
            Scan::Ended(ScanEnd::Corrupt { position, error }) => Err(Error::Corrupt {
                path: PathBuf::clone(&path),
                position,
                source: error,
            }),
        }
    }

    /// Kafka's `read(startOffset, maxSize, maxPosition, minOneMessage)`: a region that starts at the
    /// batch holding `start_offset` and is at most `max_size` bytes (at least one whole batch when
    /// `min_one_message`), ending no later than `max_position`. `None` when the offset is past
    /// this segment's data.
    pub fn read(
        &self,
        start_offset: i64,
        max_size: i64,
        max_position: Option<u64>,
        min_one_message: bool,
    ) -> Result<Option<FetchData>> {
        if max_size < 0 {
            return Err(Error::InvalidMaxSize {
                path: self.log_path(),
                max_size,
            });
        }
        let Some(start) = self.translate_offset(start_offset, 0)? else {
            return Ok(None);
        };
        let offset_metadata = LogOffsetMetadata {
            message_offset: start.offset,
            segment_base_offset: self.base_offset,
            relative_position: start.position,
        };
        let max_size = max_size.unsigned_abs();
        let adjusted_max_size = if min_one_message {
            max_size.max(start.size)
        } else {
            max_size
        };
        let empty = FileRegion {
            position: start.position,
            length: 0,
        };
        let Some(max_position) = max_position else {
            return Ok(Some(FetchData {
                offset_metadata,
                region: empty,
                first_entry_incomplete: false,
            }));
        };
        if adjusted_max_size == 0 {
            return Ok(Some(FetchData {
                offset_metadata,
                region: empty,
                first_entry_incomplete: false,
            }));
        }
        let fetch_size = max_position
            .saturating_sub(start.position)
            .min(adjusted_max_size);
        Ok(Some(FetchData {
            offset_metadata,
            region: FileRegion {
                position: start.position,
                length: fetch_size,
            },
            first_entry_incomplete: adjusted_max_size < start.size,
        }))
    }

    /// Kafka's `read(startOffset, maxSize)`: up to the end of the segment, no minimum.
    pub fn read_simple(&self, start_offset: i64, max_size: i64) -> Result<Option<FetchData>> {
        self.read(start_offset, max_size, Some(self.size()), false)
    }

    /// Reads a region's bytes into `out` (replacing its contents); stops early at the end of the
    /// file, so `out` may be shorter than the region after a concurrent truncation. `out` is
    /// cleared on error.
    pub fn read_region(&self, region: FileRegion, out: &mut Vec<u8>) -> Result<()> {
        let len = usize::try_from(region.length).unwrap_or(usize::MAX);
        // Every byte kept is overwritten below: only the growth past `out`'s old length is
        // zeroed, so a buffer reused for reads of similar sizes is not cleared each time.
        out.resize(len, 0);
        match read_up_to_io(&self.source(), out, region.position) {
            Ok(n) => {
                out.truncate(n);
                Ok(())
            }
            Err(e) => {
                out.clear();
                Err(Error::io(&*self.path(), "read", e))
            }
        }
    }

    /// Copies a region to a file or socket without passing it through user space where the
    /// platform allows (`copy_file_range`, `sendfile`). Returns the bytes copied.
    pub fn copy_region_to(&self, region: FileRegion, out: BorrowedFd<'_>) -> Result<u64> {
        self.log
            .copy_range_to(region.position, region.length, out)
            .map_err(|e| Error::io(&*self.path(), "copy", e))
    }

    /// Kafka's `readNextOffset`: the offset after the last batch, or the base offset when empty.
    pub fn read_next_offset(&self) -> Result<i64> {
        let start = match self.offset_reader.get() {
            Some(reader) => u64::from(reader.lookup(i64::MAX)?.position),
            None => self.last_index_position_unmapped(),
        };
        let path = self.path();
        let mut next = self.base_offset;
        let scan = scan_headers(
            &self.source(),
            &path,
            start,
            self.size(),
            HEADER_WINDOW,
            |h| {
                next = h.last_offset.wrapping_add(1);
                Ok(ControlFlow::<()>::Continue(()))
            },
        )?;
        if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
            return Err(Error::Corrupt {
                path: PathBuf::clone(&path),
                position,
                source: error,
            });
        }
        Ok(next)
    }

    /// Whether the `.log` ends where a whole batch ends, judged by walking the batch headers from
    /// the offset index's last entry (as `read_next_offset` does, so no index is mapped). After a
    /// clean shutdown this always holds unless the files were damaged since; when it does not,
    /// the segment needs recovery. An index that cannot be read counts as a no.
    pub fn ends_at_batch_boundary(&self) -> bool {
        let start = match self.offset_reader.get() {
            Some(reader) => match reader.lookup(i64::MAX) {
                Ok(entry) => u64::from(entry.position),
                Err(_) => return false,
            },
            None => self.last_index_position_unmapped(),
        };
        let size = self.size();
        if start > size {
            return false;
        }
        let path = self.path();
        let scan = scan_headers(&self.source(), &path, start, size, HEADER_WINDOW, |_| {
            Ok(ControlFlow::<()>::Continue(()))
        });
        matches!(scan, Ok(Scan::Ended(ScanEnd::Clean { position })) if position == size)
    }

    /// The position of the offset index's last entry, read with one small positioned read of the
    /// index file rather than by mapping it, so that opening a log after a clean shutdown maps no
    /// index. Any doubt (no file, an empty or odd-sized file, a zero tail) gives 0: a longer scan,
    /// never a wrong answer, because the scan only needs a batch boundary at or before the end.
    fn last_index_position_unmapped(&self) -> u64 {
        const ENTRY: u64 = 8;
        let path = self.writer.lock().offset_index.path().to_path_buf();
        let Ok(file) = self.fs.open(&path, OpenMode::ReadOnly) else {
            return 0;
        };
        let Ok(len) = file.len() else {
            return 0;
        };
        if len < ENTRY {
            return 0;
        }
        let mut entry = [0_u8; 8];
        let at = (len / ENTRY - 1) * ENTRY;
        if file.read_exact_at(&mut entry, at).is_err() {
            return 0;
        }
        let [o0, o1, o2, o3, p0, p1, p2, p3] = entry;
        let relative = u32::from_be_bytes([o0, o1, o2, o3]);
        let position = u64::from(u32::from_be_bytes([p0, p1, p2, p3]));
        // A zero entry past slot 0 is an untrimmed tail; a position past the end is garbage.
        if (relative == 0 && at > 0) || position >= self.size() {
            return 0;
        }
        position
    }

    /// Kafka's `findOffsetByTimestamp`: the first record whose timestamp is at least `timestamp`
    /// and whose offset is at least `starting_offset`, found through the time index, then the
    /// offset index, then a scan that decompresses batches whose max timestamp qualifies.
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let ts_entry = self.time_reader()?.lookup(timestamp)?;
        let start = u64::from(
            self.offset_reader()?
                .lookup(ts_entry.offset.max(starting_offset))?
                .position,
        );
        self.search_for_timestamp(timestamp, start, starting_offset)
    }

    fn search_for_timestamp(
        &self,
        target: i64,
        from: u64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let path = self.path();
        let mut buf = Vec::new();
        let mut scratch = Vec::new();
        let scan = scan_headers(
            &self.source(),
            &path,
            from,
            self.size(),
            HEADER_WINDOW,
            |h| {
                if h.max_timestamp < target || h.last_offset < starting_offset {
                    return Ok(ControlFlow::Continue(()));
                }
                let found = self.first_record_at_or_after(
                    &h,
                    &mut buf,
                    &mut scratch,
                    target,
                    starting_offset,
                )?;
                Ok(found.map_or(ControlFlow::Continue(()), ControlFlow::Break))
            },
        )?;
        match scan {
            Scan::Stopped(found) => Ok(Some(found)),
            Scan::Ended(ScanEnd::Clean { .. }) => Ok(None),
            Scan::Ended(ScanEnd::Corrupt { position, error }) => Err(Error::Corrupt {
                path: PathBuf::clone(&path),
                position,
                source: error,
            }),
        }
    }

    /// Reads the whole batch of `h` and returns its first record with `timestamp >= target` and
    /// `offset >= starting_offset`.
    fn first_record_at_or_after(
        &self,
        h: &BatchHeader,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
        target: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let path = self.path();
        self.read_region(
            FileRegion {
                position: h.position,
                length: h.size,
            },
            buf,
        )?;
        let corrupt = |source: rf::Error| Error::Corrupt {
            path: PathBuf::clone(&path),
            position: h.position,
            source,
        };
        let framed = rf::batches(buf).next().transpose().map_err(corrupt)?;
        let Some(framed) = framed else {
            return Ok(None);
        };
        match framed.decode().map_err(corrupt)? {
            rf::Batch::V2(batch) => {
                let epoch = batch.partition_leader_epoch();
                let leader_epoch = (epoch >= 0).then_some(epoch);
                for record in batch.records_with(scratch).map_err(corrupt)? {
                    let record = record.map_err(corrupt)?;
                    if record.timestamp() >= target && record.offset() >= starting_offset {
                        return Ok(Some(TimestampAndOffset {
                            timestamp: record.timestamp(),
                            offset: record.offset(),
                            leader_epoch,
                        }));
                    }
                }
                Ok(None)
            }
            rf::Batch::Legacy(batch) => {
                for record in batch.to_records().map_err(corrupt)? {
                    if record.timestamp >= target && record.offset >= starting_offset {
                        return Ok(Some(TimestampAndOffset {
                            timestamp: record.timestamp,
                            offset: record.offset,
                            leader_epoch: None,
                        }));
                    }
                }
                Ok(None)
            }
        }
    }

    /// Kafka's `FileRecords.largestTimestampAfter`: the largest batch max timestamp from
    /// `position` on, with the last offset of its batch.
    fn largest_timestamp_after(&self, position: u64) -> Result<TimestampOffset> {
        let path = self.path();
        let mut best = TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: -1,
        };
        let scan = scan_headers(
            &self.source(),
            &path,
            position,
            self.size(),
            HEADER_WINDOW,
            |h| {
                if h.max_timestamp > best.timestamp {
                    best = TimestampOffset {
                        timestamp: h.max_timestamp,
                        offset: h.last_offset,
                    };
                }
                Ok(ControlFlow::<()>::Continue(()))
            },
        )?;
        if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
            return Err(Error::Corrupt {
                path: PathBuf::clone(&path),
                position,
                source: error,
            });
        }
        Ok(best)
    }

    /// The max timestamp of the first batch, or `i64::MAX` when there is none with a timestamp
    /// (Kafka's `getFirstBatchTimestamp`, used by `max.compaction.lag.ms`).
    pub fn first_batch_timestamp(&self) -> Result<i64> {
        let first = self.first_batch_header()?;
        Ok(first
            .map(|h| h.max_timestamp)
            .filter(|ts| *ts >= 0)
            .unwrap_or(i64::MAX))
    }

    fn first_batch_header(&self) -> Result<Option<BatchHeader>> {
        self.header_at(0)
    }

    /// Kafka's `timeWaitedForRoll`: with a known first-batch timestamp, how far `message_ts` is
    /// past it; otherwise how long ago the segment was created.
    pub fn time_waited_for_roll(&self, now_ms: i64, message_ts: i64) -> Result<i64> {
        let mut w = self.writer.lock();
        if w.rolling_based_timestamp.is_none() && self.size() > 0 {
            drop(w);
            let first = self.first_batch_header()?.map(|h| h.max_timestamp);
            w = self.writer.lock();
            if w.rolling_based_timestamp.is_none() {
                w.rolling_based_timestamp = first;
            }
        }
        Ok(match w.rolling_based_timestamp {
            Some(ts) if ts >= 0 => message_ts.saturating_sub(ts),
            _ => now_ms.saturating_sub(w.created_ms),
        })
    }

    /// Kafka's `shouldRoll`: size, time with jitter (never for an empty segment), a full index, or
    /// an incoming offset that cannot be stored relative to this segment.
    pub fn should_roll(&self, params: RollParams) -> Result<bool> {
        let waited = self.time_waited_for_roll(params.now_ms, params.max_timestamp_in_messages)?;
        let reached_roll_ms = waited
            > params
                .max_segment_ms
                .saturating_sub(self.config.roll_jitter_ms);
        let size = self.size();
        if size
            > params
                .max_segment_bytes
                .saturating_sub(params.messages_size)
            || (size > 0 && reached_roll_ms)
        {
            return Ok(true);
        }
        let w = self.writer.lock();
        Ok(w.offset_index.get()?.is_full()
            || w.time_index.get()?.is_full()
            || !self.can_convert_to_relative_offset(params.max_offset_in_messages))
    }

    /// Kafka's `onBecomeInactiveSegment`, called on roll: writes the final time index entry (the
    /// segment's max timestamp, skipping the full check), trims both indexes and the `.log`.
    pub fn on_become_inactive(&self) -> Result<()> {
        let mut w = self.writer.lock();
        Self::load_max_timestamp(&mut w)?;
        let last = w.max_timestamp_and_offset;
        w.time_index
            .get_mut()?
            .maybe_append(last.timestamp, last.offset, true)?;
        // Set first: a failure below may leave changes made before it.
        self.unsynced_since_inactive.store(true, Ordering::Release);
        w.offset_index.get_mut()?.trim_to_valid_size()?;
        w.time_index.get_mut()?.trim_to_valid_size()?;
        self.trim_log(&self.path())
    }

    /// Cuts a preallocated `.log` down to its logical size.
    fn trim_log(&self, path: &Path) -> Result<()> {
        let size = self.size();
        let len = self.log.len().map_err(|e| Error::io(path, "stat", e))?;
        if len > size {
            self.shrink_mapping(size);
            self.log
                .set_len(size)
                .map_err(|e| Error::io(path, "trim", e))?;
        }
        Ok(())
    }

    /// Kafka's `flush`: fdatasync of the `.log` and msync of the indexes that are open.
    pub fn flush(&self) -> Result<()> {
        // Cleared before the syncs: a change `on_become_inactive` makes meanwhile sets it again.
        self.unsynced_since_inactive.store(false, Ordering::Release);
        let result = self.flush_data().and_then(|()| {
            let w = self.writer.lock();
            if let Some(index) = w.offset_index.get_if_loaded() {
                index.flush()?;
            }
            if let Some(index) = w.time_index.get_if_loaded() {
                index.flush()?;
            }
            Ok(())
        });
        if result.is_err() {
            self.unsynced_since_inactive.store(true, Ordering::Release);
        }
        result
    }

    /// [`LogSegment::flush`], if the changes [`LogSegment::on_become_inactive`] made (the final
    /// time index entry, the trims) may not have been synced by a flush since; otherwise nothing.
    /// For a log whose recovery point already covers this segment: those changes came after the
    /// flush that synced its records (while it was active, its indexes need not be synced).
    pub fn flush_if_unsynced_since_inactive(&self) -> Result<()> {
        if self.unsynced_since_inactive.load(Ordering::Acquire) {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Makes the `.log`'s bytes durable (fdatasync) without touching the indexes and without
    /// taking the writer's lock, so appends go on during the sync. Enough for the segment that
    /// holds the recovery point: recovery rebuilds its indexes after a crash anyway.
    pub fn flush_data(&self) -> Result<()> {
        self.log
            .sync_data()
            .map_err(|e| Error::io(&*self.path(), "fsync", e))
    }

    /// Kafka's `close`: the final time index entry, then close (trim and unmap) the indexes that
    /// are open, then fsync and trim the `.log`. Errors propagate (KAFKA-19221), so a failed trim
    /// makes the shutdown unclean.
    pub fn close(&self) -> Result<()> {
        let mut w = self.writer.lock();
        if w.max_timestamp_and_offset != UNKNOWN && w.time_index.is_loaded() {
            let last = w.max_timestamp_and_offset;
            w.time_index
                .get_mut()?
                .maybe_append(last.timestamp, last.offset, true)?;
        }
        if w.offset_index.is_loaded() {
            w.offset_index.get_mut()?.close()?;
        } else {
            create_empty_index(&self.fs, w.offset_index.path())?;
        }
        if w.time_index.is_loaded() {
            w.time_index.get_mut()?.close()?;
        } else {
            create_empty_index(&self.fs, w.time_index.path())?;
        }
        self.close_mapping();
        self.log
            .sync_data()
            .map_err(|e| Error::io(&*self.path(), "fsync", e))?;
        self.trim_log(&self.path())
    }

    /// Kafka's `deleteIfExists`: deletes the `.log` and both indexes; missing files are fine.
    /// Indexes that were never opened are deleted without being opened.
    pub fn delete(&self) -> Result<()> {
        let mut w = self.writer.lock();
        self.close_mapping();
        match self.fs.remove_file(&self.path()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&*self.path(), "delete", e)),
        }
        w.offset_index.delete()?;
        w.time_index.delete()?;
        Ok(())
    }

    /// Kafka's `changeFileSuffixes`: renames the `.log` and both indexes from `old` to `new`
    /// suffix (`""`, `.deleted`, `.cleaned`, `.swap`), without opening lazy indexes.
    pub fn change_file_suffixes(&self, old: &str, new: &str) -> Result<()> {
        let mut w = self.writer.lock();
        let from = self.path();
        let to = replace_suffix(&from, old, new);
        self.fs
            .rename(&from, &to)
            .map_err(|e| Error::io(&*from, "rename", e))?;
        *self.log_path.lock() = Arc::new(to);
        let to = replace_suffix(w.offset_index.path(), old, new);
        w.offset_index.rename(&to)?;
        let to = replace_suffix(w.time_index.path(), old, new);
        w.time_index.rename(&to)?;
        Ok(())
    }

    /// Resizes both indexes (Kafka's `resizeIndexes`, used on the active segment after loading).
    pub fn resize_indexes(&self, size: u32) -> Result<()> {
        let mut w = self.writer.lock();
        w.offset_index.get_mut()?.resize(size)?;
        w.time_index.get_mut()?.resize(size)?;
        Ok(())
    }

    /// Walks this segment's whole batches from byte `from`, reading the `.log` in large chunks (for
    /// work that needs every byte of every batch, such as the cleaner). The callback gets each
    /// batch's position and bytes.
    pub fn scan_batches<T>(
        &self,
        from: u64,
        f: impl FnMut(u64, seglog_record_format::FramedBatch<'_>) -> Result<ControlFlow<T>>,
    ) -> Result<Scan<T>> {
        let path = self.path();
        crate::scan::scan_batches(&self.log, &path, from, self.size(), 4 << 20, f)
    }

    /// Walks the headers of the batches from byte `from` to the end, never reading a batch's body
    /// (for what needs only offsets, timestamps or producer ids of every batch).
    pub fn scan_batch_headers<T>(
        &self,
        from: u64,
        f: impl FnMut(BatchHeader) -> Result<ControlFlow<T>>,
    ) -> Result<Scan<T>> {
        let path = self.path();
        scan_headers(&self.source(), &path, from, self.size(), HEADER_WINDOW, f)
    }

    /// Resizes only the time index: Kafka's loader creates a missing `.timeindex` empty this way
    /// (`sanityCheck(timeIndexFileNewlyCreated)`), so that it is not preallocated full of zeros.
    pub fn resize_time_index(&self, size: u32) -> Result<()> {
        self.writer.lock().time_index.get_mut()?.resize(size)?;
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

    /// Kafka's `hasOverflow`: the next offset cannot be stored relative to the base.
    pub fn has_overflow(&self) -> Result<bool> {
        let next = self.read_next_offset()?;
        Ok(next > self.base_offset && !self.can_convert_to_relative_offset(next - 1))
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
        w.offset_index
            .get_mut()?
            .append(batch.last_offset, position)?;
        let max = w.max_timestamp_and_offset;
        w.time_index
            .get_mut()?
            .maybe_append(max.timestamp, max.offset, false)?;
        w.bytes_since_last_index_entry = 0;
    }
    w.bytes_since_last_index_entry += batch.size;
    Ok(())
}

/// Frames `records` completely, or refuses them: `append` takes whole batches only.
fn frame_whole(path: &Path, records: &[u8]) -> Result<Vec<BatchFacts>> {
    let invalid = |reason: String| Error::InvalidRecords {
        path: path.to_path_buf(),
        reason,
    };
    let mut facts = Vec::new();
    let mut batches = rf::batches(records);
    for batch in &mut batches {
        let batch = batch.map_err(|e| invalid(e.to_string()))?;
        let decoded = batch.decode().map_err(|e| invalid(e.to_string()))?;
        facts.push(BatchFacts {
            last_offset: decoded.last_offset(),
            max_timestamp: decoded.max_timestamp(),
            size: batch.size_in_bytes() as u64,
        });
    }
    if batches.position() != records.len() {
        return Err(invalid(format!(
            "{} trailing bytes after the last whole batch",
            records.len() - batches.position()
        )));
    }
    Ok(facts)
}

/// Leaves an empty (trimmed, zero-entry) index file where none exists, without mapping it: after a
/// clean close every segment has both index files, as Kafka's does (its flush opens them), so a
/// later load finds nothing to rebuild.
fn create_empty_index<F: FileSystem>(fs: &F, path: &Path) -> Result<()> {
    match fs.open(path, OpenMode::CreateNew) {
        Ok(file) => file.sync_data().map_err(|e| Error::io(path, "fsync", e)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io(path, "create", e)),
    }
}

fn replace_suffix(path: &Path, old: &str, new: &str) -> PathBuf {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = name.strip_suffix(old).unwrap_or(name);
    path.with_file_name(format!("{stem}{new}"))
}
