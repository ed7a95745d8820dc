//! Recovery and truncation of a segment (Kafka's `LogSegment.recover` and `truncateTo`).

use std::ops::ControlFlow;

use seglog_fs::{File, FileSystem};
use seglog_mmap_index::TimestampOffset;
use seglog_record_format as rf;

use super::{BatchFacts, LogSegment, UNKNOWN, index_batch};
use crate::error::{Error, Result};
use crate::scan::{Scan, ScanEnd, scan_batches};

/// Recovery reads the `.log` in chunks of this size.
pub(super) const RECOVERY_CHUNK: usize = 4 * 1024 * 1024;

/// A batch that recovery keeps, as it judged it.
pub(super) struct Judged {
    pub(super) first_offset: i64,
    pub(super) last_offset: i64,
    pub(super) max_timestamp: i64,
    pub(super) size: u64,
    pub(super) records: u64,
}

/// Recovery's rules for one framed batch at `position`, after a batch whose last offset was
/// `previous_last_offset` (the base offset minus one for the first): it decodes and validates
/// (size, CRC), and its offsets must follow the previous batch's and stay in the range a
/// segment based at `base_offset` can index. `Err` is where and why the valid prefix ends.
pub(super) fn judge_batch(
    base_offset: i64,
    previous_last_offset: i64,
    position: u64,
    batch: &rf::FramedBatch<'_>,
) -> Result<Judged, RecoveryStop> {
    let decoded = batch
        .decode()
        .and_then(|d| d.validate().map(|()| d))
        .map_err(|e| RecoveryStop {
            position,
            reason: StopReason::Invalid(e.offset_by(position - batch.position() as u64)),
        })?;
    let last_offset = decoded.last_offset();
    let (first_offset, records) = match decoded {
        rf::Batch::V2(b) => (
            b.base_offset(),
            u64::try_from(b.records_count()).unwrap_or(0),
        ),
        rf::Batch::Legacy(_) => (last_offset, 1),
    };
    let in_range = last_offset
        .checked_sub(base_offset)
        .is_some_and(|rel| (0..=i64::from(i32::MAX)).contains(&rel));
    if first_offset <= previous_last_offset || last_offset < first_offset || !in_range {
        let reason = StopReason::OffsetsOutOfOrder {
            first_offset,
            last_offset,
            previous_last_offset,
        };
        return Err(RecoveryStop { position, reason });
    }
    Ok(Judged {
        first_offset,
        last_offset,
        max_timestamp: decoded.max_timestamp(),
        size: batch.size_in_bytes() as u64,
        records,
    })
}

/// What [`LogSegment::recover`] did.
#[derive(Debug)]
pub struct RecoveryReport {
    /// The bytes kept: every batch before them framed and validated.
    pub valid_bytes: u64,
    /// The bytes cut from the end of the `.log`.
    pub bytes_truncated: u64,
    /// The number of valid batches.
    pub batches: u64,
    /// The number of offset and time index entries rebuilt.
    pub index_entries: (usize, usize),
    /// Why recovery stopped before the end of the file, if it did.
    pub stop: Option<RecoveryStop>,
}

/// Where and why recovery stopped early.
#[derive(Debug)]
pub struct RecoveryStop {
    /// The byte position of the first byte not kept.
    pub position: u64,
    /// Why.
    pub reason: StopReason,
}

impl std::fmt::Display for RecoveryStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "at byte {}: {}", self.position, self.reason)
    }
}

impl std::fmt::Display for StopReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Invalid(e) => write!(f, "invalid batch: {e}"),
            Self::OffsetsOutOfOrder {
                first_offset,
                last_offset,
                previous_last_offset,
            } => write!(
                f,
                "batch offsets {first_offset}..={last_offset} cannot follow offset \
                 {previous_last_offset} in this segment"
            ),
            Self::TornTail => f.write_str("the file ends inside a batch (a torn write)"),
        }
    }
}

/// Why recovery stopped before the end of the file.
#[derive(Debug)]
pub enum StopReason {
    /// A batch failed framing or validation: a size below 14, a v2 batch below 61 bytes, a CRC
    /// mismatch (Kafka's `CorruptRecordException`).
    Invalid(rf::Error),
    /// A batch whose offsets cannot follow the previous batch: at or below its last offset, or
    /// outside the range this segment can index (below the base offset, or more than
    /// `i32::MAX` past it). The CRC does not cover the base offset, so this is how a damaged base
    /// offset shows. Kafka would split the segment or truncate all of it; seglog keeps the valid
    /// prefix.
    OffsetsOutOfOrder {
        /// The batch's first offset (its base offset; for legacy entries, its offset).
        first_offset: i64,
        /// The batch's last offset.
        last_offset: i64,
        /// The previous batch's last offset, or the segment's base offset minus one.
        previous_last_offset: i64,
    },
    /// The file ends inside a batch, or with fewer than 18 bytes after the last batch: a torn
    /// write. Kafka stops silently here; the bytes are cut all the same.
    TornTail,
}

impl<F: FileSystem> LogSegment<F> {
    /// Kafka's `recover`: resets both indexes, walks the batches validating size and CRC, rebuilds
    /// the indexes with the same rule as `append`, truncates the `.log` at the first invalid byte,
    /// writes the final time index entry and trims both indexes. As in Kafka, a trimmed index
    /// is full: call [`LogSegment::resize_indexes`] before appending again (the loader does
    /// this for the active segment).
    ///
    /// A batch whose offsets go backwards or cannot be stored relative to the base ends the valid
    /// prefix like a CRC failure does ([`StopReason::OffsetsOutOfOrder`]), where Kafka would
    /// split the segment or truncate all of it.
    pub fn recover(&self) -> Result<RecoveryReport> {
        let path = self.log_path();
        let mut w = self.writer.lock();
        w.offset_index.get_mut()?.reset()?;
        w.time_index.get_mut()?.reset()?;
        let reset = w.time_index.get_mut()?.last_entry();
        w.set_max(reset);
        w.bytes_since_last_index_entry = 0;
        let interval = self.config.index_interval_bytes;
        let mut valid_bytes = 0_u64;
        let mut batches = 0_u64;
        let mut previous_last_offset = self.base_offset.saturating_sub(1);
        let size = self.size();
        let scan = scan_batches(
            &self.log,
            &path,
            0,
            size,
            RECOVERY_CHUNK,
            |position, batch| {
                let judged =
                    match judge_batch(self.base_offset, previous_last_offset, position, &batch) {
                        Ok(judged) => judged,
                        Err(stop) => return Ok(ControlFlow::Break(stop)),
                    };
                previous_last_offset = judged.last_offset;
                let facts = BatchFacts {
                    last_offset: judged.last_offset,
                    max_timestamp: judged.max_timestamp,
                    size: judged.size,
                };
                index_batch(&mut w, interval, &facts, position)?;
                valid_bytes = position + facts.size;
                batches += 1;
                Ok(ControlFlow::Continue(()))
            },
        )?;
        let stop = match scan {
            Scan::Stopped(stop) => Some(stop),
            Scan::Ended(ScanEnd::Corrupt { position, error }) => Some(RecoveryStop {
                position,
                reason: StopReason::Invalid(error),
            }),
            Scan::Ended(ScanEnd::Clean { position }) if position < size => Some(RecoveryStop {
                position,
                reason: StopReason::TornTail,
            }),
            Scan::Ended(ScanEnd::Clean { .. }) => None,
        };
        let bytes_truncated = size - valid_bytes;
        if bytes_truncated > 0 {
            self.shrink_mapping(valid_bytes);
            self.log
                .set_len(valid_bytes)
                .map_err(|e| Error::io(&path, "truncate", e))?;
            self.size.publish(valid_bytes);
        }
        w.offset_index.get_mut()?.trim_to_valid_size()?;
        let max = w.max_timestamp_and_offset;
        w.time_index
            .get_mut()?
            .maybe_append(max.timestamp, max.offset, true)?;
        w.time_index.get_mut()?.trim_to_valid_size()?;
        // Kafka's recover leaves the in-memory counter alone; on a freshly opened segment it is 0.
        w.bytes_since_last_index_entry = 0;
        let index_entries = (
            w.offset_index.get_mut()?.entries(),
            w.time_index.get_mut()?.entries(),
        );
        Ok(RecoveryReport {
            valid_bytes,
            bytes_truncated,
            batches,
            index_entries,
            stop,
        })
    }

    /// Kafka's `truncateTo`: removes every batch from the one holding `offset` on (so truncation is
    /// batch-granular, and an offset in a gap removes the next batch), truncates both indexes and
    /// resizes them back to full size so the segment can take appends again. Returns the bytes cut.
    pub fn truncate_to(&self, offset: i64, now_ms: i64) -> Result<u64> {
        let mapping = self.translate_offset(offset, 0)?;
        let path = self.log_path();
        let mut w = self.writer.lock();
        let max_index_size = self.config.max_index_size;
        w.offset_index.get_mut()?.truncate_to(offset)?;
        w.time_index.get_mut()?.truncate_to(offset)?;
        w.offset_index.get_mut()?.resize(max_index_size)?;
        w.time_index.get_mut()?.resize(max_index_size)?;
        let original = self.size();
        let bytes_truncated = match mapping {
            Some(m) if m.position < original => {
                self.shrink_mapping(m.position);
                self.log
                    .set_len(m.position)
                    .map_err(|e| Error::io(&path, "truncate", e))?;
                self.size.publish(m.position);
                original - m.position
            }
            _ => 0,
        };
        if self.size() == 0 {
            w.created_ms = now_ms;
            w.rolling_based_timestamp = None;
        }
        w.bytes_since_last_index_entry = 0;
        if w.max_timestamp_and_offset == UNKNOWN {
            let loaded = w.time_index.get_mut()?.last_entry();
            w.set_max(loaded);
        }
        if w.max_timestamp_and_offset.timestamp >= 0 {
            let last_entry = w.time_index.get_mut()?.last_entry();
            let position = w
                .offset_index
                .get_mut()?
                .lookup(last_entry.offset)?
                .position;
            drop(w);
            let after = self.largest_timestamp_after(u64::from(position))?;
            let largest = if last_entry.timestamp > after.timestamp {
                last_entry
            } else {
                after
            };
            let mut w = self.writer.lock();
            w.set_max(if largest.timestamp >= 0 {
                largest
            } else {
                TimestampOffset {
                    timestamp: -1,
                    offset: self.base_offset,
                }
            });
        }
        Ok(bytes_truncated)
    }
}
