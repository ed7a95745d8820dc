//! Reading a partition directory's records from an offset, and the lookups `ListOffsets`
//! answers (log end offset, first offset at or after a time, largest timestamp), read-only.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{Batch, CorruptKind, Field, Position, Record};
use seglog_segment::SegmentReader;
use seglog_segment::scan::{Scan, ScanEnd};
use seglog_segment::verify::{OffsetBounds, OffsetJudge, StopReason, VerifiedBatch};

use super::partition::{PartitionView, SegmentEntry};
use super::txn_source::TxnTrust;
use crate::error::{Error, Result};
use crate::time_lookup::{ListOffset, lookup_by_time};

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

/// A batch validated and decoded: its facts for the judge, whether it is a legacy entry, and its
/// records.
fn read_batch(
    framed: &seglog_record_format::FramedBatch<'_>,
    position: u64,
) -> Result<(VerifiedBatch, bool, Vec<Record>), seglog_record_format::Error> {
    let decoded = framed.decode()?;
    decoded.validate()?;
    let records = decoded.to_records()?;
    let none = (
        seglog_record_format::NO_PRODUCER_ID,
        seglog_record_format::NO_PRODUCER_EPOCH,
        seglog_record_format::NO_SEQUENCE,
        false,
        false,
    );
    let partition_leader_epoch = match &decoded {
        Batch::V2(b) => b.partition_leader_epoch(),
        Batch::Legacy(_) => seglog_record_format::NO_PARTITION_LEADER_EPOCH,
    };
    let (first_offset, legacy, producer) = match decoded {
        Batch::V2(b) => (
            b.base_offset(),
            false,
            (
                b.producer_id(),
                b.producer_epoch(),
                b.base_sequence(),
                b.is_control(),
                b.is_transactional(),
            ),
        ),
        Batch::Legacy(_) => (decoded.last_offset(), true, none),
    };
    let (producer_id, producer_epoch, base_sequence, is_control, is_transactional) = producer;
    let facts = VerifiedBatch {
        position,
        size: framed.size_in_bytes() as u64,
        first_offset,
        last_offset: decoded.last_offset(),
        max_timestamp: decoded.max_timestamp(),
        records: records.len() as u64,
        last_record_offset: records.last().filter(|_| !legacy).map(|r| r.offset),
        magic: framed.magic(),
        partition_leader_epoch,
        producer_id,
        producer_epoch,
        base_sequence,
        is_control,
        is_transactional,
    };
    Ok((facts, legacy, records))
}

/// A batch read and decoded, held back until the batch after it confirms its offsets.
struct Held {
    bytes: Vec<u8>,
    records: Vec<Record>,
    last_offset: i64,
    position: u64,
}

/// Where a batch [`PartitionView::for_each_batch`] hands over is stored.
#[derive(Debug, Clone, Copy)]
pub(super) struct BatchPlace<'a> {
    /// The segment.
    pub(super) segment: &'a SegmentEntry,
    /// The batch's byte position in the segment's `.log`.
    pub(super) position: u64,
}

impl BatchPlace<'_> {
    /// An error about this batch's bytes, naming the file and the batch's position.
    pub(super) fn corrupt(&self, source: seglog_record_format::Error) -> Error {
        corrupt(self.segment, self.position, source)
    }
}

impl<F: FileSystem> PartitionView<F> {
    /// Where to start reading `target` in `segment`: the offset index's floor entry when the
    /// index is there and sound and the `.log` agrees with it, else the start of the file
    /// ([`SegmentReader::start_position`]).
    fn start_position(&self, segment: &SegmentEntry, target: i64) -> Result<u64> {
        let reader = SegmentReader::open(self.fs().clone(), self.dir(), segment.base_offset, true)?;
        Ok(reader.start_position(target))
    }

    /// Calls `f` with every whole batch that may hold offsets at or after `from` and ends below
    /// `bound` (in offset order, with its records, control records included) until it breaks.
    /// Batches are judged by recovery's offset rules first. A batch that fails to decode or
    /// validate ends the walk with an error naming the file and byte position.
    pub(super) fn for_each_batch<T>(
        &self,
        from: i64,
        bound: i64,
        mut f: impl FnMut(&Batch<'_>, Vec<Record>, BatchPlace<'_>) -> ControlFlow<T>,
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
                self.start_position(segment, from)?
            } else {
                0
            };
            let mut failed: Option<Error> = None;
            let mut stopped = None;
            let mut at_bound = false;
            // Hands a confirmed batch to `f`; true when the walk ends there (`f` stopped it, or
            // the batch reaches the bound).
            let mut emit = |h: Held, stopped: &mut Option<T>, next: &mut i64| -> bool {
                if h.last_offset >= bound {
                    at_bound = true;
                    return true;
                }
                let Some(Ok(framed)) = seglog_record_format::batches(&h.bytes).next() else {
                    return false;
                };
                let Ok(batch) = framed.decode() else {
                    return false;
                };
                let place = BatchPlace {
                    segment,
                    position: h.position,
                };
                if let ControlFlow::Break(value) = f(&batch, h.records, place) {
                    *stopped = Some(value);
                    return true;
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
                match judge.push_across_overflow(facts, legacy) {
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
                    position,
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
            if stopped.is_some() || at_bound {
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
        let start = self.start_position(last, i64::MAX)?;
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

    /// Opens `segments[i]` read-only for lookups by time: its indexes are used unless Kafka's
    /// loader would rebuild them (no clean shutdown and the segment at or past the recovery
    /// point, [`TxnTrust::recovered`]), or they fail their checks.
    fn time_reader(
        &self,
        segments: &[SegmentEntry],
        i: usize,
        trust: TxnTrust,
    ) -> Result<SegmentReader<F>> {
        let base = segments.get(i).map_or(0, |s| s.base_offset);
        let next = segments.get(i + 1).map(|s| s.base_offset);
        Ok(SegmentReader::open(
            self.fs().clone(),
            self.dir(),
            base,
            !trust.recovered(next),
        )?)
    }

    /// Kafka's `fetchOffsetByTimestamp` for `target` ([`ListOffset::Timestamp`] or
    /// [`ListOffset::MaxTimestamp`]; the others are the caller's, `None` here), through each
    /// segment's time index as the live log looks it up.
    fn lookup_by_time(&self, target: ListOffset) -> Result<Option<FoundRecord>> {
        let segments = self.segments();
        let trust = TxnTrust::of(self);
        let readers = (0..segments.len()).map(|i| self.time_reader(&segments, i, trust));
        let found = lookup_by_time(readers, target, self.log_start_offset())?;
        Ok(found.map(|t| FoundRecord {
            offset: t.offset,
            timestamp: t.timestamp,
        }))
    }

    /// The first record from the log start offset on whose timestamp is at least `timestamp`
    /// (Kafka's `ListOffsets` by time, which counts control records too), if any: the first
    /// segment whose largest timestamp reaches it, searched from its time index's floor entry.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<FoundRecord>> {
        self.lookup_by_time(ListOffset::Timestamp(timestamp))
    }

    /// The first record carrying the largest timestamp, record level (KAFKA-16310; control
    /// records count, as in Kafka), if any record has a timestamp.
    pub fn max_timestamp(&self) -> Result<Option<FoundRecord>> {
        self.lookup_by_time(ListOffset::MaxTimestamp)
    }
}
