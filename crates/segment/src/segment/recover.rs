//! Recovery and truncation of a segment (Kafka's `LogSegment.recover` and `truncateTo`).

use seglog_fs::{File, FileSystem};
use seglog_mmap_index::TimestampOffset;

use std::ops::ControlFlow;

use seglog_record_format::FramedBatch;

use super::{BatchFacts, LogSegment, UNKNOWN, Writer, index_batch};
use crate::error::{Error, Result};
use crate::scan::{BatchHeader, Scan, ScanEnd, scan_selected};
use crate::verify::{OffsetBounds, scan_verified};
pub use crate::verify::{RecoveryStop, StopReason};

/// Recovery reads the `.log` in chunks of this size: small enough that a chunk copied out of the
/// page cache is still in the core's L2 cache when the CRC reads it (docs/perf/recovery.md).
pub(crate) const RECOVERY_CHUNK: usize = 256 * 1024;

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

impl<F: FileSystem> LogSegment<F> {
    /// Kafka's `recover`: resets both indexes and the `.txnindex`, walks the batches validating size and CRC, rebuilds
    /// the indexes with the same rule as `append`, truncates the `.log` at the first invalid byte,
    /// writes the final time index entry and trims both indexes. As in Kafka, a trimmed index
    /// is full: call [`LogSegment::resize_indexes`] before appending again (the loader does
    /// this for the active segment).
    ///
    /// A batch whose offsets go backwards ends the valid prefix like a CRC failure does
    /// ([`StopReason::OffsetsOutOfOrder`]), where Kafka would truncate all of the segment; so does
    /// one that cannot be stored relative to the base ([`StopReason::OffsetOverflow`]: the
    /// partition's loader splits such a segment before it recovers it, `crate::split`); so do
    /// a CRC-valid batch whose header or records
    /// cannot be right, and a batch whose offsets its neighbours disprove (`crate::verify`).
    pub fn recover(&self) -> Result<RecoveryReport> {
        self.recover_before(None)
    }

    /// [`LogSegment::recover`] knowing the next segment's base offset (`None` for the last
    /// segment): a batch reaching it is damage, as are the other offsets the batches disprove
    /// (the rules of `crate::verify`).
    ///
    /// Refused, changing nothing, when this thread holds a loan of the `.log`'s bytes (from
    /// inside a closure of [`with_region`](Self::with_region) on this segment): a cut would
    /// wait for it ([`Error::LoanHeld`]; checked first, since whether it cuts is known only
    /// after the indexes were reset).
    pub fn recover_before(&self, next_base_offset: Option<i64>) -> Result<RecoveryReport> {
        let path = self.log_path();
        let mut w = self.writer.lock();
        self.check_not_lent("recover")?;
        self.reset_indexes(&mut w)?;
        let interval = self.config.index_interval_bytes;
        let size = self.size();
        let bounds = OffsetBounds {
            base_offset: self.base_offset,
            next_base_offset,
        };
        let log = self.log()?;
        let scan = scan_verified(&*log, &path, size, RECOVERY_CHUNK, bounds, |b| {
            let facts = BatchFacts {
                last_offset: b.last_offset,
                max_timestamp: b.max_timestamp,
                size: b.size,
            };
            index_batch(&mut w, interval, &facts, b.position)
        })?;
        let (valid_bytes, batches, stop) = (scan.valid_bytes, scan.batches, scan.stop);
        let bytes_truncated = size - valid_bytes;
        if bytes_truncated > 0 {
            let log = self.log_for_write()?;
            self.shrink_mapping(&log, valid_bytes, "recover")?;
            log.set_len(valid_bytes)
                .map_err(|e| Error::io(&path, "truncate", e))?;
            self.size.publish(valid_bytes);
        }
        let index_entries = finish_indexes(&mut w)?;
        Ok(RecoveryReport {
            valid_bytes,
            bytes_truncated,
            batches,
            index_entries,
            stop,
        })
    }

    /// The indexes [`LogSegment::recover_before`] writes, rebuilt from the batch headers alone,
    /// for a segment whose every batch a scan with recovery's rules
    /// ([`scan_segment`](crate::scan_segment), with the same next base offset) has just found
    /// valid: recovery's index rule needs only each batch's position, size, last offset and
    /// largest timestamp, so the second read and CRC of every byte is saved. The `.log` is not
    /// changed. The report's `valid_bytes` is where the walk of whole batches ended: anything
    /// but the scan's valid prefix means the file changed since, and the caller must stop.
    pub fn rebuild_indexes(&self) -> Result<RecoveryReport> {
        self.rebuild_indexes_with(|_| false, |_, _| Ok(()))
    }

    /// [`LogSegment::rebuild_indexes`] handing each batch to `f` in the same walk, read whole
    /// when `whole` asks for it (as [`crate::scan::scan_selected`] does): Kafka's `recover`
    /// replays producer state in its index walk, and so can the caller, without a second walk.
    /// An error of `f` stops the walk and is returned, the indexes left reset.
    pub fn rebuild_indexes_with(
        &self,
        whole: impl FnMut(&BatchHeader) -> bool,
        mut f: impl FnMut(&BatchHeader, Option<FramedBatch<'_>>) -> Result<()>,
    ) -> Result<RecoveryReport> {
        let path = self.log_path();
        let mut w = self.writer.lock();
        self.reset_indexes(&mut w)?;
        let interval = self.config.index_interval_bytes;
        let size = self.size();
        let mut batches = 0_u64;
        let mut valid_bytes = 0_u64;
        let scan = scan_selected(&*self.log()?, &path, 0, size, whole, |h, framed| {
            let facts = BatchFacts {
                last_offset: h.last_offset,
                max_timestamp: h.max_timestamp,
                size: h.size,
            };
            index_batch(&mut w, interval, &facts, h.position)?;
            f(h, framed)?;
            batches += 1;
            valid_bytes = h.position + h.size;
            Ok(ControlFlow::<()>::Continue(()))
        })?;
        let stop = match scan {
            Scan::Ended(ScanEnd::Clean { position }) if position == size => None,
            Scan::Ended(ScanEnd::Corrupt { position, error }) => Some(RecoveryStop {
                position,
                reason: StopReason::Invalid(error),
            }),
            _ => Some(RecoveryStop {
                position: valid_bytes,
                reason: StopReason::TornTail,
            }),
        };
        let index_entries = finish_indexes(&mut w)?;
        Ok(RecoveryReport {
            valid_bytes,
            bytes_truncated: 0,
            batches,
            index_entries,
            stop,
        })
    }

    /// Recovery's start: both indexes and the `.txnindex` emptied, the largest timestamp and the
    /// index counter reset.
    pub(super) fn reset_indexes(&self, w: &mut Writer) -> Result<()> {
        w.offset_index.get_mut()?.reset()?;
        w.time_index.get_mut()?.reset()?;
        // The entries come back only with producer state: see `LogSegment::append_aborted_txn`.
        self.txn_index.lock().reset()?;
        let reset = w.time_index.get_mut()?.last_entry();
        w.set_max(reset);
        w.bytes_since_last_index_entry = 0;
        Ok(())
    }

    /// Kafka's `truncateTo`: removes every batch from the one holding `offset` on (so truncation is
    /// batch-granular, and an offset in a gap removes the next batch), truncates both indexes
    /// and the `.txnindex` (from its first entry whose last offset is at least `offset`), and
    /// resizes the two indexes back to full size so the segment can take appends again.
    /// Returns the bytes cut.
    ///
    /// A truncation that cuts the `.log` is refused, changing nothing, when this thread holds a
    /// loan of its bytes (from inside a closure of [`with_region`](Self::with_region) on this
    /// segment): the cut would wait for it ([`Error::LoanHeld`]).
    pub fn truncate_to(&self, offset: i64, now_ms: i64) -> Result<u64> {
        let mapping = self.translate_offset(offset, 0)?;
        let path = self.log_path();
        let mut w = self.writer.lock();
        // Under the writer's lock the size cannot change: checked before the indexes are cut.
        if mapping.is_some_and(|m| m.position < self.size()) {
            self.check_not_lent("truncate")?;
        }
        let max_index_size = self.config.max_index_size;
        w.offset_index.get_mut()?.truncate_to(offset)?;
        w.time_index.get_mut()?.truncate_to(offset)?;
        self.txn_index.lock().truncate_to(offset)?;
        w.offset_index.get_mut()?.resize(max_index_size)?;
        w.time_index.get_mut()?.resize(max_index_size)?;
        let original = self.size();
        let bytes_truncated = match mapping {
            Some(m) if m.position < original => {
                let log = self.log_for_write()?;
                self.shrink_mapping(&log, m.position, "truncate")?;
                log.set_len(m.position)
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

/// Recovery's end: the offset index trimmed, the final time index entry written and the time
/// index trimmed. Returns the entries of each.
pub(super) fn finish_indexes(w: &mut Writer) -> Result<(usize, usize)> {
    w.offset_index.get_mut()?.trim_to_valid_size()?;
    let max = w.max_timestamp_and_offset;
    w.time_index
        .get_mut()?
        .maybe_append(max.timestamp, max.offset, true)?;
    w.time_index.get_mut()?.trim_to_valid_size()?;
    // Kafka's recover leaves the in-memory counter alone; on a freshly opened segment it is 0.
    w.bytes_since_last_index_entry = 0;
    Ok((
        w.offset_index.get_mut()?.entries(),
        w.time_index.get_mut()?.entries(),
    ))
}
