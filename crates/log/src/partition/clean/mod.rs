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
//! - batches keep their base and last offsets; an emptied batch is dropped, except the one ending
//!   at the high watermark, kept empty so the last offset stays (Kafka 4.4), and the last
//!   record of each producer (its last data batch, or the marker that gave it its epoch), kept
//!   empty so its epoch and last sequence survive (Kafka keeps those of active producers; seglog
//!   reads them from the log and never expires a producer);
//! - transactions (`txn`): the aborted ones are read from the segments' `.txnindex` files; their
//!   data is removed and never enters the key map, nor do control batches; a marker stays while
//!   data of its transaction remains, gets a delete horizon when the cleaning first finds its
//!   transaction empty, and goes at a later cleaning past that horizon; the cleaned segment's
//!   `.txnindex` holds the aborted transactions whose data remains;
//! - legacy (v0/v1) entries are kept as they are (Kafka compacts them too, with a tombstone
//!   horizon from segment modification times, and rewrites what it keeps as v2).

mod plan;
mod rewrite;
mod swap;
mod txn;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, Batch, BatchBuilder};
use seglog_segment::LogSegment;

use super::{PartitionLog, SegmentMap};
use crate::error::Result;

use plan::{build_offset_map, group_segments};
use rewrite::Round;
use txn::{CleanedTxns, LastRecord, last_records_of_producers};

/// How a cleaning runs: `Default`, then the `with_*` setters.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct CleanOptions {
    /// Where the dirty range starts (the cleaner checkpoint; raised to the log start offset).
    pub first_dirty_offset: i64,
    /// The key map's memory budget (`log.cleaner.dedupe.buffer.size` per thread).
    pub dedupe_buffer_bytes: usize,
    /// `log.cleaner.io.max.bytes.per.second`: reading and writing slow down to stay under it.
    pub io_max_bytes_per_second: Option<f64>,
    /// Where cleaning stops (Kafka's `LogToClean.uncleanableOffset`), kept at or below the
    /// active segment's base offset; `None`: [`PartitionLog::first_uncleanable_offset`], which
    /// also stops at the last stable offset and `min.compaction.lag.ms`.
    pub uncleanable_offset: Option<i64>,
}

impl Default for CleanOptions {
    fn default() -> Self {
        Self {
            first_dirty_offset: 0,
            dedupe_buffer_bytes: 128 * 1024 * 1024,
            io_max_bytes_per_second: None,
            uncleanable_offset: None,
        }
    }
}

crate::setters::with_setters!(CleanOptions {
    first_dirty_offset: i64 => with_first_dirty_offset,
    dedupe_buffer_bytes: usize => with_dedupe_buffer_bytes,
    io_max_bytes_per_second: Option<f64> => with_io_max_bytes_per_second,
    uncleanable_offset: Option<i64> => with_uncleanable_offset,
});

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
    /// Records of aborted transactions removed.
    pub aborted_records_removed: u64,
    /// Transaction markers (control batches) removed.
    pub markers_removed: u64,
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
    /// Kafka's `firstUncleanableDirtyOffset`: the active segment's base, the last stable offset
    /// (the high watermark, or the first offset of an undecided transaction below it), and the
    /// first non-active segment at or after `first_dirty` whose largest timestamp is younger than
    /// `min.compaction.lag.ms`, whichever is lowest (and never below `first_dirty`).
    pub fn first_uncleanable_offset(&self, first_dirty: i64) -> Result<i64> {
        let now = self.inner.time.now_ms();
        let segments = self.segments();
        let active = segments.keys().next_back().copied().unwrap_or(0);
        let mut bound = active.min(self.last_stable_offset());
        let lag = self.inner.config().min_compaction_lag_ms;
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
        let segments = self.segments();
        match self.clean_snapshot(&segments, options, stop) {
            // Retention or truncation removed a segment of the snapshot while the cleaning read
            // it (its file gone, its index closed): this cleaning is void, as when the swap finds
            // a segment gone, and the next one starts from the log as it is.
            Err(_) if !self.snapshot_is_current(&segments) => Ok(CleanReport {
                aborted: true,
                ..CleanReport::default()
            }),
            outcome => outcome,
        }
    }

    fn clean_snapshot(
        &self,
        segments: &SegmentMap<F>,
        options: &CleanOptions,
        stop: StopAfter,
    ) -> Result<CleanReport> {
        let inner = &self.inner;
        let now = inner.time.now_ms();
        let log_end = self.log_end_offset();
        let first_dirty = options
            .first_dirty_offset
            .clamp(self.log_start_offset(), log_end);
        let uncleanable = match options.uncleanable_offset {
            Some(offset) => {
                let active = segments.keys().next_back().copied().unwrap_or(0);
                offset.min(active).max(first_dirty)
            }
            None => self.first_uncleanable_offset(first_dirty)?,
        };
        let mut report = CleanReport {
            first_dirty_offset: first_dirty,
            end_offset: first_dirty,
            first_uncleanable_offset: uncleanable,
            ..CleanReport::default()
        };
        if first_dirty >= uncleanable {
            return Ok(report);
        }
        let mut throttle = Throttle::new(options.io_max_bytes_per_second);
        let map = build_offset_map(
            segments,
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
        let groups = group_segments(inner, segments, report.end_offset)?;
        let mut work = Work {
            last_records: last_records_of_producers(&inner.fs, segments)?,
            ..Work::default()
        };
        let round = Round {
            segments,
            map: &map,
            now,
        };
        for group in groups {
            let cleaned =
                inner.clean_group(&group, &round, &mut report, &mut throttle, &mut work)?;
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
    /// The last record of each producer in the log.
    last_records: HashMap<i64, LastRecord>,
    /// The transactions of the round, carried from group to group.
    txns: CleanedTxns,
    /// The high watermark when the segment being cleaned was started.
    high_watermark: i64,
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
