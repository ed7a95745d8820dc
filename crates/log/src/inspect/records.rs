//! Reading a partition directory's records from an offset, and the lookups `ListOffsets`
//! answers (log end offset, first offset at or after a time, largest timestamp), read-only.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_mmap_index::OffsetPosition;
use seglog_record_format::{
    Batch, CorruptKind, Field, LAST_OFFSET_DELTA_OFFSET, MAGIC_OFFSET, Position, Record,
};
use seglog_segment::scan::{Scan, ScanEnd};
use seglog_segment::verify::{OffsetBounds, OffsetJudge, StopReason, VerifiedBatch};

use super::partition::{PartitionView, SegmentEntry};
use super::segment_log::SegmentLog;
use crate::error::{Error, Result};

/// How [`PartitionView::for_each_record`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsRead<T> {
    /// The offset after the last whole batch read, where a follower polls again.
    pub next_offset: i64,
    /// The value the callback stopped the walk with, if it did.
    pub stopped: Option<T>,
}

/// A record and the timestamp it has: what a time lookup finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoundRecord {
    /// The record's offset.
    pub offset: i64,
    /// Its timestamp.
    pub timestamp: i64,
}

fn corrupt(segment: &SegmentEntry, position: u64, source: seglog_record_format::Error) -> Error {
    seglog_segment::Error::Corrupt {
        path: segment.log.clone(),
        position,
        source,
    }
    .into()
}

/// The damage recovery's judge found, as a decoding error at the batch's byte.
fn offsets_error(reason: &StopReason) -> seglog_record_format::Error {
    let kind = match *reason {
        StopReason::OffsetsOutOfOrder {
            first_offset,
            last_offset,
            previous_last_offset,
        } => CorruptKind::OffsetsBackwards {
            first_offset,
            last_offset,
            previous_last_offset,
        },
        StopReason::PastNextSegment {
            last_offset,
            next_base_offset,
            ..
        } => CorruptKind::OffsetsPastNextSegment {
            last_offset,
            next_base_offset,
        },
        StopReason::ContradictedByNext {
            first_offset,
            last_offset,
            previous_last_offset,
            next_first_offset,
        } => CorruptKind::OffsetsContradictedByNext {
            first_offset,
            last_offset,
            previous_last_offset,
            next_first_offset,
        },
        _ => CorruptKind::Invalid {
            reason: "impossible batch offsets",
        },
    };
    seglog_record_format::Error::Corrupt {
        position: Position::Buffer(0),
        field: Field::BaseOffset,
        kind,
    }
}

/// Whether the batch at `entry`'s position in `file` ends at `entry`'s offset, as an index entry
/// says (a batch's last offset and position). The index is opened after the `.log`, without a
/// lock: a writer in another process may have replaced one and not yet the other (a compaction's
/// swap, a recovery), and positions of another file must not make a reader skip records.
fn entry_agrees<F: FileSystem>(file: &SegmentLog<F>, entry: &OffsetPosition) -> bool {
    let mut header = [0_u8; LAST_OFFSET_DELTA_OFFSET + 4];
    if file
        .read_exact_at(&mut header, u64::from(entry.position))
        .is_err()
    {
        return false;
    }
    let offset_field = header.first_chunk::<8>().map(|b| i64::from_be_bytes(*b));
    let delta = header
        .get(LAST_OFFSET_DELTA_OFFSET..)
        .and_then(<[u8]>::first_chunk::<4>)
        .map(|b| i32::from_be_bytes(*b));
    let magic = header.get(MAGIC_OFFSET).map(|&m| i8::from_be_bytes([m]));
    // A legacy entry's offset field is its (last) offset; a v2 batch's is its base offset.
    let last_offset = match (offset_field, magic, delta) {
        (Some(base), Some(2..), Some(delta)) => base.checked_add(i64::from(delta)),
        (Some(offset), Some(..2), _) => Some(offset),
        _ => None,
    };
    last_offset == Some(entry.offset)
}

/// A batch validated and decoded: its facts for the judge, whether it is a legacy entry, and its
/// records.
fn read_batch(
    framed: &seglog_record_format::FramedBatch<'_>,
    position: u64,
) -> Result<(VerifiedBatch, bool, Vec<Record>), seglog_record_format::Error> {
    let decoded = framed.decode()?;
    decoded.validate()?;
    let records = decoded.to_records()?;
    let (first_offset, legacy) = match decoded {
        Batch::V2(b) => (b.base_offset(), false),
        Batch::Legacy(_) => (decoded.last_offset(), true),
    };
    let facts = VerifiedBatch {
        position,
        size: framed.size_in_bytes() as u64,
        first_offset,
        last_offset: decoded.last_offset(),
        max_timestamp: decoded.max_timestamp(),
        records: records.len() as u64,
        last_record_offset: records.last().filter(|_| !legacy).map(|r| r.offset),
    };
    Ok((facts, legacy, records))
}

/// A batch read and decoded, held back until the batch after it confirms its offsets.
struct Held {
    bytes: Vec<u8>,
    records: Vec<Record>,
    last_offset: i64,
}

impl<F: FileSystem> PartitionView<F> {
    /// Where to start reading `target` in `segment`'s `file`: the offset index's floor entry when
    /// the index is there and sane and `file` agrees with it, else the start of the file.
    fn start_position(&self, segment: &SegmentEntry, file: &SegmentLog<F>, target: i64) -> u64 {
        self.offset_index(segment.base_offset)
            .ok()
            .filter(|i| i.sanity_check().is_ok() && i.verify().is_ok_and(|r| r.is_clean()))
            .and_then(|i| i.lookup(target).ok())
            .filter(|entry| entry.position == 0 || entry_agrees(file, entry))
            .map_or(0, |p| u64::from(p.position))
    }

    /// Calls `f` with every record at or after `from` (in offset order, with its batch) until
    /// it breaks. A batch that fails to decode or validate ends the walk with an error naming
    /// the file and byte position.
    pub fn for_each_record<T>(
        &self,
        from: i64,
        mut f: impl FnMut(&Record, &Batch<'_>) -> ControlFlow<T>,
    ) -> Result<RecordsRead<T>> {
        let segments = self.segments();
        let first = segments
            .iter()
            .rposition(|s| s.base_offset <= from)
            .unwrap_or(0);
        let mut next = from;
        for (i, segment) in segments.iter().enumerate().skip(first) {
            let bounds = OffsetBounds {
                base_offset: segment.base_offset,
                next_base_offset: segments.get(i + 1).map(|s| s.base_offset),
            };
            let mut judge = OffsetJudge::new(bounds);
            let mut held: Option<Held> = None;
            let file = self.open_log(segment)?;
            let len = file.len().map_err(|e| Error::io(&segment.log, e))?;
            let start = if segment.base_offset <= from {
                self.start_position(segment, &file, from)
            } else {
                0
            };
            let mut failed: Option<Error> = None;
            let mut stopped = None;
            // Hands a confirmed batch's records to `f`; true when `f` stopped the walk.
            let mut emit = |h: Held, stopped: &mut Option<T>, next: &mut i64| -> bool {
                let Some(Ok(framed)) = seglog_record_format::batches(&h.bytes).next() else {
                    return false;
                };
                let Ok(batch) = framed.decode() else {
                    return false;
                };
                for record in h.records.iter().filter(|r| r.offset >= from) {
                    if let ControlFlow::Break(value) = f(record, &batch) {
                        *stopped = Some(value);
                        return true;
                    }
                }
                *next = (*next).max(h.last_offset + 1);
                false
            };
            let scan = file.batches(start, len, 4 << 20, |position, framed| {
                let (facts, legacy, records) = match read_batch(&framed, position) {
                    Ok(read) => read,
                    Err(e) => {
                        failed = Some(corrupt(segment, position, e));
                        return ControlFlow::Break(());
                    }
                };
                // Offsets this batch (or the one held before it) cannot hold are damage, never
                // records: recovery's rules, applied before recovery has run.
                match judge.push(facts, legacy) {
                    Ok(confirmed) => {
                        if confirmed.is_some()
                            && let Some(h) = held.take()
                            && emit(h, &mut stopped, &mut next)
                        {
                            return ControlFlow::Break(());
                        }
                    }
                    Err(stop) => {
                        let e = offsets_error(&stop.reason).offset_by(stop.position);
                        failed = Some(corrupt(segment, stop.position, e));
                        return ControlFlow::Break(());
                    }
                }
                held = Some(Held {
                    bytes: framed.bytes().to_vec(),
                    records,
                    last_offset: facts.last_offset,
                });
                ControlFlow::Continue(())
            })?;
            // What the judge still holds at the end (or before damage after it) is good.
            if stopped.is_none()
                && judge.finish().is_some()
                && let Some(h) = held.take()
            {
                emit(h, &mut stopped, &mut next);
            }
            if stopped.is_some() {
                return Ok(RecordsRead {
                    next_offset: next,
                    stopped,
                });
            }
            if let Some(e) = failed {
                return Err(e);
            }
            if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
                return Err(corrupt(segment, position, error));
            }
        }
        Ok(RecordsRead {
            next_offset: next,
            stopped: None,
        })
    }

    /// The log end offset: the offset after the last whole batch of the last segment.
    pub fn log_end_offset(&self) -> Result<i64> {
        let segments = self.segments();
        let Some(last) = segments.last() else {
            return Ok(0);
        };
        let file = self.open_log(last)?;
        let len = file.len().map_err(|e| Error::io(&last.log, e))?;
        let mut next = last.base_offset;
        let start = self.start_position(last, &file, i64::MAX);
        let scan = file.batches(start, len, 4 << 20, |_, framed| {
            if let Ok(last_offset) = framed.last_offset() {
                next = last_offset + 1;
            }
            ControlFlow::<()>::Continue(())
        })?;
        if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
            return Err(corrupt(last, position, error));
        }
        Ok(next)
    }

    /// The first record from the log start offset on whose timestamp is at least `timestamp`
    /// (Kafka's `ListOffsets` by time), if any.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<FoundRecord>> {
        let read = self.for_each_record(self.log_start_offset(), |r, _| {
            if r.timestamp >= timestamp {
                return ControlFlow::Break(FoundRecord {
                    offset: r.offset,
                    timestamp: r.timestamp,
                });
            }
            ControlFlow::Continue(())
        })?;
        Ok(read.stopped)
    }

    /// The first record carrying the largest timestamp, record level (KAFKA-16310), if any
    /// record has a timestamp.
    pub fn max_timestamp(&self) -> Result<Option<FoundRecord>> {
        let mut best: Option<FoundRecord> = None;
        self.for_each_record(self.log_start_offset(), |r, _| {
            if r.timestamp >= 0 && best.is_none_or(|b| r.timestamp > b.timestamp) {
                best = Some(FoundRecord {
                    offset: r.offset,
                    timestamp: r.timestamp,
                });
            }
            ControlFlow::<()>::Continue(())
        })?;
        Ok(best)
    }
}
