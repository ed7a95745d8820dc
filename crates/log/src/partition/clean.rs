//! Compaction of one partition log (Kafka's `Cleaner.doClean`): build a key map over the dirty
//! range, rewrite every segment below its end keeping only the latest record per key, and swap the
//! cleaned segments in with Kafka's crash-safe protocol (`.cleaned`, `.swap`, `.deleted`).
//!
//! What is modelled, and what is not:
//! - the dirty range runs from the cleaner checkpoint to the first uncleanable offset (the active
//!   segment's base, the high watermark, and `min.compaction.lag.ms`);
//! - a record is kept when its offset is beyond the map, or when it is its key's latest; unkeyed
//!   records in the cleaned range are dropped; tombstones are kept until their batch's delete
//!   horizon (set on the first cleaning that keeps them to now + `delete.retention.ms`);
//! - batches keep their base and last offsets; an emptied batch is dropped, except the last of
//!   each group, kept empty so the group's offsets stay covered, and the last data batch of each
//!   producer, kept empty so its epoch and last sequence survive (Kafka keeps those of active
//!   producers; seglog keeps no producer state and never expires a producer);
//! - control batches are kept as they are, and transactions are not modelled: records of aborted
//!   transactions are treated as committed, and markers are never removed;
//! - legacy (v0/v1) tombstones are kept (Kafka's legacy horizon uses segment modification times).

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use seglog_fs::FileSystem;
use seglog_record_format::{
    self as rf, Batch, BatchBuilder, BatchOptions, Header, NewRecord, TimestampType,
    write_empty_batch,
};
use seglog_segment::{LogSegment, naming};

use super::{Inner, PartitionLog};
use crate::error::Result;
use crate::offset_map::{OffsetMap, key_hash};
use crate::sync::Arc;

/// How a cleaning runs.
#[derive(Debug, Clone, Copy)]
pub struct CleanOptions {
    /// Where the dirty range starts (the cleaner checkpoint; raised to the log start offset).
    pub first_dirty_offset: i64,
    /// The key map's memory budget (`log.cleaner.dedupe.buffer.size` per thread).
    pub dedupe_buffer_bytes: usize,
    /// `log.cleaner.io.max.bytes.per.second`: reading and writing slow down to stay under it.
    pub io_max_bytes_per_second: Option<f64>,
}

impl Default for CleanOptions {
    fn default() -> Self {
        Self {
            first_dirty_offset: 0,
            dedupe_buffer_bytes: 128 * 1024 * 1024,
            io_max_bytes_per_second: None,
        }
    }
}

/// What one cleaning did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct CleanReport {
    /// Where the dirty range started.
    pub first_dirty_offset: i64,
    /// Where the next cleaning starts: one past the last offset the key map covered.
    pub end_offset: i64,
    /// The first offset that could not be cleaned yet.
    pub first_uncleanable_offset: i64,
    /// Keys in the map.
    pub keys: usize,
    /// Cleaned segments written (one per group).
    pub groups: usize,
    /// Old segments replaced.
    pub segments_replaced: usize,
    /// Bytes read from old segments and written to cleaned ones.
    pub bytes_read: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Records read and kept.
    pub records_read: u64,
    /// Records kept.
    pub records_kept: u64,
    /// Tombstones removed because their delete horizon had passed.
    pub tombstones_removed: u64,
    /// True when a source segment disappeared meanwhile (retention or truncation) and the cleaning
    /// was abandoned without changing anything.
    pub aborted: bool,
}

/// Where a test may stop a cleaning, as a crash would, to check the loader's recovery.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopAfter {
    /// Run to the end.
    Never,
    /// After the `.cleaned` files are written and flushed.
    Cleaned,
    /// After `.cleaned` was renamed `.swap`.
    Swapped,
    /// After the old segments were renamed `.deleted`.
    OldDeleted,
}

impl<F: FileSystem> PartitionLog<F> {
    /// Kafka's `firstUncleanableDirtyOffset`: the active segment's base, the high watermark, and
    /// the first non-active segment at or after `first_dirty` whose largest timestamp is younger
    /// than `min.compaction.lag.ms`, whichever is lowest (and never below `first_dirty`).
    pub fn first_uncleanable_offset(&self, first_dirty: i64) -> Result<i64> {
        let now = self.inner.time.now_ms();
        let segments = self.segments();
        let active = segments.keys().next_back().copied().unwrap_or(0);
        let mut bound = active.min(self.high_watermark());
        let lag = self.inner.config.min_compaction_lag_ms;
        if lag > 0 {
            let floor = segments
                .range(..=first_dirty)
                .next_back()
                .map_or(i64::MIN, |(b, _)| *b);
            for (base, segment) in segments.range(floor..active) {
                if segment.largest_timestamp()? > now.saturating_sub(lag) {
                    bound = bound.min(*base);
                    break;
                }
            }
        }
        Ok(bound.max(first_dirty))
    }

    /// Kafka's cleanable ratio: the bytes from the segment holding `first_dirty` up to the first
    /// uncleanable segment, over the bytes of every segment below it. Returns
    /// `(clean_bytes, dirty_bytes, ratio)`.
    pub fn dirty_ratio(&self, first_dirty: i64) -> Result<(u64, u64, f64)> {
        let uncleanable = self.first_uncleanable_offset(first_dirty)?;
        let segments = self.segments();
        let dirty_start = segments
            .range(..=first_dirty)
            .next_back()
            .map_or(i64::MIN, |(b, _)| *b);
        let clean: u64 = segments.range(..first_dirty).map(|(_, s)| s.size()).sum();
        let dirty: u64 = segments
            .range(dirty_start..uncleanable)
            .map(|(_, s)| s.size())
            .sum();
        let total = clean + dirty;
        let ratio = if total == 0 {
            0.0
        } else {
            to_f64(dirty) / to_f64(total)
        };
        Ok((clean, dirty, ratio))
    }

    /// Runs one cleaning. Appends and reads go on meanwhile; the swap takes the writer lock only
    /// to replace the segments, and gives up if retention or truncation removed one of them.
    pub fn clean(&self, options: &CleanOptions) -> Result<CleanReport> {
        self.clean_until(options, StopAfter::Never)
    }

    #[doc(hidden)]
    pub fn clean_until(&self, options: &CleanOptions, stop: StopAfter) -> Result<CleanReport> {
        let inner = &self.inner;
        let now = inner.time.now_ms();
        let log_end = self.log_end_offset();
        let first_dirty = options
            .first_dirty_offset
            .clamp(self.log_start_offset(), log_end);
        let uncleanable = self.first_uncleanable_offset(first_dirty)?;
        let mut report = CleanReport {
            first_dirty_offset: first_dirty,
            end_offset: first_dirty,
            first_uncleanable_offset: uncleanable,
            ..CleanReport::default()
        };
        if first_dirty >= uncleanable {
            return Ok(report);
        }
        let segments = self.segments();
        let mut throttle = Throttle::new(options.io_max_bytes_per_second);
        let map = build_offset_map(
            &segments,
            first_dirty,
            uncleanable,
            options.dedupe_buffer_bytes,
            &mut throttle,
        )?;
        report.keys = map.len();
        if map.latest_offset() < first_dirty {
            return Ok(report);
        }
        report.end_offset = map.latest_offset() + 1;
        let groups = group_segments(inner, &segments, report.end_offset)?;
        let mut work = Work {
            last_batch_of_producer: last_batch_of_each_producer(&segments)?,
            ..Work::default()
        };
        for group in groups {
            let cleaned =
                inner.clean_group(&group, &map, now, &mut report, &mut throttle, &mut work)?;
            if stop == StopAfter::Cleaned {
                return Ok(report);
            }
            if !inner.swap_in(&group, &cleaned, stop)? {
                report.aborted = true;
                return Ok(report);
            }
            if stop != StopAfter::Never {
                return Ok(report);
            }
            report.groups += 1;
            report.segments_replaced += group.len();
        }
        Ok(report)
    }
}

fn to_f64(n: u64) -> f64 {
    // Byte counts of one log stay far below 2^53.
    f64::from(u32::try_from(n >> 20).unwrap_or(u32::MAX)) * 1_048_576.0
        + f64::from(u32::try_from(n & 0xF_FFFF).unwrap_or(0))
}

/// Buffers reused from batch to batch.
#[derive(Default)]
struct Work {
    builder: BatchBuilder,
    scratch: Vec<u8>,
    out: Vec<u8>,
    keep: Vec<bool>,
    /// The key hash of each record of a batch that the map is asked about (0: not asked).
    hashes: Vec<u128>,
    /// The last offset of the last data batch of each producer in the log.
    last_batch_of_producer: HashMap<i64, i64>,
}

/// Keeps reading and writing under `log.cleaner.io.max.bytes.per.second`.
struct Throttle {
    rate: Option<f64>,
    started: Instant,
    bytes: u64,
}

impl Throttle {
    fn new(rate: Option<f64>) -> Self {
        Self {
            rate: rate.filter(|r| *r > 0.0),
            started: Instant::now(),
            bytes: 0,
        }
    }

    fn account(&mut self, bytes: u64) {
        let Some(rate) = self.rate else { return };
        self.bytes += bytes;
        let due = Duration::from_secs_f64(to_f64(self.bytes) / rate);
        let elapsed = self.started.elapsed();
        if let Some(ahead) = due.checked_sub(elapsed) {
            std::thread::sleep(ahead);
        }
    }
}

/// The last offset of the last data batch of every producer with a batch in `segments` (Kafka's
/// `lastRecordsOfActiveProducers`; seglog keeps no producer state, so the log is its record, and
/// producers never expire). Only batch headers are read.
fn last_batch_of_each_producer<F: FileSystem>(
    segments: &super::SegmentMap<F>,
) -> Result<HashMap<i64, i64>> {
    let mut last = HashMap::new();
    for segment in segments.values() {
        segment.scan_batch_headers(0, |h| {
            if h.producer_id != rf::NO_PRODUCER_ID && !h.is_control {
                last.insert(h.producer_id, h.last_offset);
            }
            Ok(ControlFlow::<()>::Continue(()))
        })?;
    }
    Ok(last)
}

/// Kafka's `buildOffsetMap`: the latest offset of every key from `start` up to `end`, stopping at a
/// batch boundary when the map is full (a later cleaning continues from there).
fn build_offset_map<F: FileSystem>(
    segments: &super::SegmentMap<F>,
    start: i64,
    end: i64,
    budget: usize,
    throttle: &mut Throttle,
) -> Result<OffsetMap> {
    let mut map = OffsetMap::with_budget(budget);
    let floor = segments
        .range(..=start)
        .next_back()
        .map_or(i64::MIN, |(b, _)| *b);
    let dirty: Vec<(i64, &Arc<LogSegment<F>>)> =
        segments.range(floor..end).map(|(b, s)| (*b, s)).collect();
    let mut scratch = Vec::new();
    let mut pending: Vec<(u128, i64)> = Vec::new();
    for (base, segment) in &dirty {
        let mut full = false;
        let scan = segment.scan_batches(0, |_, framed| {
            let batch = framed.decode().map_err(|e| corrupt(segment, &e))?;
            if batch.last_offset() < start {
                return Ok(ControlFlow::Continue(()));
            }
            let first = batch_first_offset(&batch);
            if first >= end {
                return Ok(ControlFlow::Break(()));
            }
            throttle.account(framed.size_in_bytes() as u64);
            if let Batch::V2(b) = &batch {
                if b.is_control() {
                    map.advance_to(b.last_offset());
                    return Ok(ControlFlow::Continue(()));
                }
                let count = usize::try_from(b.records_count()).unwrap_or(0);
                if map.len() > 0 && map.room() < count {
                    full = true;
                    return Ok(ControlFlow::Break(()));
                }
                map.fit_first_batch(count);
            }
            // Stop at the first key that does not fit: the map then covers exactly the records
            // before it (offsets increase within a batch), and the next cleaning starts there.
            pending.clear();
            for_each_record(&batch, &mut scratch, |offset, key, _| {
                if let Some(key) = key
                    && (start..end).contains(&offset)
                {
                    pending.push((key_hash(key), offset));
                }
            })
            .map_err(|e| corrupt(segment, &e))?;
            map.touch(pending.iter().map(|(hash, _)| *hash));
            let overflow = !pending.iter().all(|(hash, offset)| map.put(*hash, *offset));
            if overflow {
                full = true;
                return Ok(ControlFlow::Break(()));
            }
            map.advance_to(batch.last_offset().min(end - 1));
            Ok(ControlFlow::Continue(()))
        })?;
        whole_segment_read(segment, &scan)?;
        if full {
            break;
        }
        // Past a fully read segment, jump over any offset gap to the next segment of the log,
        // which may be the first uncleanable one (Kafka's `testCleaningBeyondMissingOffsets`).
        if let Some((next_base, _)) = segments.range(base + 1..).next() {
            map.advance_to((next_base - 1).min(end - 1));
        }
    }
    Ok(map)
}

/// A walk that ended before the segment's end met a corrupt or partial batch: the cleaning stops
/// with an error naming the file and byte (Kafka: "Log segment may be corrupt, batch size X > Y
/// bytes left in segment"), instead of rewriting the segment without the bytes past it.
fn whole_segment_read<F: FileSystem, T>(
    segment: &LogSegment<F>,
    scan: &seglog_segment::scan::Scan<T>,
) -> std::result::Result<(), seglog_segment::Error> {
    use seglog_segment::scan::{Scan, ScanEnd};
    match scan {
        Scan::Stopped(_) => Ok(()),
        Scan::Ended(ScanEnd::Clean { position }) if *position >= segment.size() => Ok(()),
        Scan::Ended(ScanEnd::Clean { position }) => Err(seglog_segment::Error::Io {
            path: segment.log_path(),
            op: "clean",
            source: std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!(
                    "the batch at byte {position} runs past the end of the segment ({} bytes \
                     left): the segment may be corrupt",
                    segment.size() - *position
                ),
            ),
        }),
        Scan::Ended(ScanEnd::Corrupt { position, error }) => Err(seglog_segment::Error::Corrupt {
            path: segment.log_path(),
            position: *position,
            source: error.clone(),
        }),
    }
}

fn corrupt<F: FileSystem>(segment: &LogSegment<F>, e: &rf::Error) -> seglog_segment::Error {
    seglog_segment::Error::Corrupt {
        path: segment.log_path(),
        position: e.position().unwrap_or(0),
        source: e.clone(),
    }
}

fn batch_first_offset(batch: &Batch<'_>) -> i64 {
    match batch {
        Batch::V2(b) => b.base_offset(),
        Batch::Legacy(b) => b.last_offset(),
    }
}

/// Calls `f(offset, key, value)` for every record of a batch.
fn for_each_record(
    batch: &Batch<'_>,
    scratch: &mut Vec<u8>,
    mut f: impl FnMut(i64, Option<&[u8]>, Option<&[u8]>),
) -> rf::Result<()> {
    match batch {
        Batch::V2(b) => {
            for r in b.records_with(scratch)? {
                let r = r?;
                f(r.offset(), r.key(), r.value());
            }
        }
        Batch::Legacy(b) => {
            for r in b.records_with(scratch)? {
                let r = r?;
                f(r.offset(), r.key(), r.value());
            }
        }
    }
    Ok(())
}

/// Kafka's `groupSegmentsBySize`: consecutive segments below `end` whose logs fit `segment.bytes`,
/// whose indexes fit `segment.index.bytes`, and whose offsets span at most `i32::MAX`.
fn group_segments<F: FileSystem>(
    inner: &Inner<F>,
    segments: &super::SegmentMap<F>,
    end: i64,
) -> Result<Vec<Vec<Arc<LogSegment<F>>>>> {
    let max_size = u64::try_from(inner.config.segment_bytes).unwrap_or(0);
    let max_index = u64::try_from(inner.config.segment_index_bytes).unwrap_or(0);
    let candidates: Vec<&Arc<LogSegment<F>>> = segments.range(..end).map(|(_, s)| s).collect();
    let mut groups = Vec::new();
    let mut i = 0;
    while let Some(first) = candidates.get(i) {
        let mut group = vec![Arc::clone(first)];
        let (o, t) = first.index_entries()?;
        let (mut size, mut offset_index, mut time_index) =
            (first.size(), o as u64 * 8, t as u64 * 12);
        i += 1;
        while let Some(next) = candidates.get(i) {
            let (o, t) = next.index_entries()?;
            let span = next.read_next_offset()? - 1 - first.base_offset();
            let fits = size + next.size() <= max_size
                && offset_index + o as u64 * 8 <= max_index
                && time_index + t as u64 * 12 <= max_index
                && span <= i64::from(i32::MAX);
            if !fits {
                break;
            }
            size += next.size();
            offset_index += o as u64 * 8;
            time_index += t as u64 * 12;
            group.push(Arc::clone(next));
            i += 1;
        }
        groups.push(group);
    }
    Ok(groups)
}

impl<F: FileSystem> Inner<F> {
    /// Writes one `.cleaned` segment holding what `map` keeps of `group`.
    fn clean_group(
        &self,
        group: &[Arc<LogSegment<F>>],
        map: &OffsetMap,
        now: i64,
        report: &mut CleanReport,
        throttle: &mut Throttle,
        work: &mut Work,
    ) -> Result<Arc<LogSegment<F>>> {
        let base = group.first().map_or(0, |s| s.base_offset());
        for path in [
            naming::log_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::offset_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::time_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
        ] {
            // A leftover of an earlier, interrupted cleaning.
            let _ = self.fs.remove_file(&path);
        }
        let cleaned = Arc::new(
            LogSegment::open(
                self.fs.clone(),
                &self.dir,
                base,
                self.segment_config(),
                false,
                naming::CLEANED_FILE_SUFFIX,
                now,
            )?
            .with_mapping_budget(self.mapping_budget.clone()),
        );
        // The last batch of the group, if cleaning emptied it: kept empty at the end, so that the
        // cleaned segment still ends at the group's last offset.
        let mut emptied_last: Option<(i64, Vec<u8>)> = None;
        for segment in group {
            let scan = segment.scan_batches(0, |_, framed| {
                let batch = framed.decode().map_err(|e| corrupt(segment, &e))?;
                report.bytes_read += framed.size_in_bytes() as u64;
                throttle.account(framed.size_in_bytes() as u64);
                work.out.clear();
                let kept = self
                    .filter_batch(&batch, framed.bytes(), map, now, work, report)
                    .map_err(|e| corrupt(segment, &e))?;
                if kept {
                    cleaned.append(batch.last_offset(), &work.out)?;
                    report.bytes_written += work.out.len() as u64;
                    throttle.account(work.out.len() as u64);
                    emptied_last = None;
                } else {
                    emptied_last = Some((batch.last_offset(), std::mem::take(&mut work.out)));
                }
                Ok(ControlFlow::<()>::Continue(()))
            })?;
            whole_segment_read(segment, &scan)?;
        }
        if let Some((last_offset, empty)) = emptied_last {
            cleaned.append(last_offset, &empty)?;
            report.bytes_written += empty.len() as u64;
        }
        cleaned.on_become_inactive()?;
        cleaned.flush()?;
        if let Some(last) = group.last() {
            cleaned.set_last_modified_ms(last.last_modified_ms()?)?;
        }
        Ok(cleaned)
    }

    /// Kafka's `filterTo` for one batch. Returns true with the batch as kept in `work.out`
    /// (verbatim or rebuilt), or false with `work.out` holding the batch emptied of records (header
    /// only), for the caller to keep if it is the group's last.
    fn filter_batch(
        &self,
        batch: &Batch<'_>,
        bytes: &[u8],
        map: &OffsetMap,
        now: i64,
        work: &mut Work,
        report: &mut CleanReport,
    ) -> rf::Result<bool> {
        let v2 = match batch {
            Batch::V2(b) if !b.is_control() => *b,
            // Control batches and legacy entries are kept as they are (see the module doc).
            _ => {
                work.out.extend_from_slice(bytes);
                return Ok(true);
            }
        };
        let latest = map.latest_offset();
        let horizon = v2.delete_horizon_ms();
        let retain_deletes = horizon.is_none_or(|h| now < h);
        work.keep.clear();
        let mut tombstones = false;
        // Views borrow the batch, or the scratch buffer a compressed batch decompresses into.
        let views: Vec<rf::RecordView<'_>> = v2
            .records_with(&mut work.scratch)?
            .collect::<rf::Result<_>>()?;
        let count = views.len();
        work.hashes.clear();
        work.hashes.extend(views.iter().map(|r| match r.key() {
            Some(key) if r.offset() <= latest => key_hash(key),
            _ => 0,
        }));
        map.touch(work.hashes.iter().copied().filter(|h| *h != 0));
        for (r, hash) in views.iter().zip(&work.hashes) {
            let keep = if r.offset() > latest {
                true
            } else if r.key().is_none() {
                false
            } else {
                let newest = map.get(*hash).is_none_or(|l| r.offset() >= l);
                if newest && r.value().is_none() && !retain_deletes {
                    report.tombstones_removed += 1;
                }
                newest && (r.value().is_some() || retain_deletes)
            };
            work.keep.push(keep);
            tombstones |= keep && r.value().is_none();
        }
        let kept = work.keep.iter().filter(|k| **k).count();
        report.records_read += count as u64;
        report.records_kept += kept as u64;
        let needs_horizon = tombstones && horizon.is_none();
        if kept == count && !needs_horizon {
            work.out.extend_from_slice(bytes);
            return Ok(true);
        }
        let log_append = v2.timestamp_type() == TimestampType::LogAppendTime;
        let options = BatchOptions {
            base_offset: v2.base_offset(),
            partition_leader_epoch: v2.partition_leader_epoch(),
            producer_id: v2.producer_id(),
            producer_epoch: v2.producer_epoch(),
            base_sequence: v2.base_sequence(),
            transactional: v2.is_transactional(),
            control: false,
            timestamp_type: v2.timestamp_type(),
            log_append_time: if log_append { v2.max_timestamp() } else { -1 },
            delete_horizon_ms: tombstones.then(|| {
                horizon.unwrap_or_else(|| now.saturating_add(self.config.delete_retention_ms))
            }),
            compression: v2.compression()?,
            last_offset_delta: Some(v2.last_offset_delta()),
        };
        if kept == 0 {
            write_empty_batch(
                &options,
                v2.last_offset_delta(),
                v2.max_timestamp(),
                &mut work.out,
            )?;
            // A producer's last batch stays, emptied, so that its epoch and last sequence survive
            // (Kafka's `testLogCleanerRetainsProducerLastSequence`).
            let producers_last = v2.producer_id() != rf::NO_PRODUCER_ID
                && work.last_batch_of_producer.get(&v2.producer_id()) == Some(&v2.last_offset());
            return Ok(producers_last);
        }
        // Rebuilt from borrowed slices; headers go into one flat list sliced per record.
        let mut headers: Vec<Header<'_>> = Vec::new();
        let mut spans = Vec::with_capacity(kept);
        for (view, keep) in views.iter().zip(&work.keep) {
            if *keep {
                let start = headers.len();
                headers.extend(view.headers());
                spans.push((view, start..headers.len()));
            }
        }
        let base = v2.base_offset();
        let records = spans.iter().map(|(r, range)| {
            let delta = i32::try_from(r.offset() - base).unwrap_or(i32::MAX);
            NewRecord::new(delta, r.timestamp(), r.key(), r.value())
                .with_headers(headers.get(range.clone()).unwrap_or_default())
        });
        work.builder.build(&options, records, &mut work.out)?;
        Ok(true)
    }

    /// Kafka's `replaceSegments`: `.cleaned` becomes `.swap`, the new segment replaces the old ones
    /// in the list, the old ones become `.deleted`, and `.swap` loses its suffix. Returns false,
    /// changing nothing, if an old segment is no longer in the list.
    fn swap_in(
        &self,
        group: &[Arc<LogSegment<F>>],
        cleaned: &Arc<LogSegment<F>>,
        stop: StopAfter,
    ) -> Result<bool> {
        let _writer = self.writer.lock();
        let current = self.segments.load();
        let intact = group.iter().all(|s| {
            current
                .get(&s.base_offset())
                .is_some_and(|c| Arc::ptr_eq(c, s))
        });
        if !intact {
            cleaned.delete()?;
            return Ok(false);
        }
        cleaned.change_file_suffixes(naming::CLEANED_FILE_SUFFIX, naming::SWAP_FILE_SUFFIX)?;
        self.sync_dir()?;
        if stop == StopAfter::Swapped {
            return Ok(true);
        }
        let base = cleaned.base_offset();
        self.segments.update(|s| {
            for old in group {
                s.remove(&old.base_offset());
            }
            s.insert(base, Arc::clone(cleaned));
        });
        for old in group {
            self.schedule_delete(Arc::clone(old))?;
        }
        if stop == StopAfter::OldDeleted {
            return Ok(true);
        }
        cleaned.change_file_suffixes(naming::SWAP_FILE_SUFFIX, "")?;
        self.sync_dir()?;
        let _ = self.log_end_offset.load(Ordering::Acquire);
        Ok(true)
    }
}
