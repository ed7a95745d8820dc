//! The walk recovery trusts: every batch of a `.log` checked on its own (Kafka's `ensureValid`:
//! size and CRC; then its header and every record decoded), and against its neighbours and the
//! segment's offset range, with one batch of look-ahead, so that when two batches disagree the
//! one whose offsets are impossible is named, not the valid one after it.
//!
//! The rules, in the order they apply (docs/reliability.md, "Recovery that reasons"):
//! 1. A batch must pass the CRC, and its records must decode as a consumer decodes them
//!    ([`RecordBatch::verify_records`](seglog_record_format::RecordBatch::verify_records): a
//!    count within the offsets the batch spans, offset deltas increasing within
//!    `0..=lastOffsetDelta`, nothing left over), compressed batches decompressed for it.
//! 2. Its offsets must lie in the segment: first offset above the previous batch's last (or at
//!    least the base offset), last offset within `i32::MAX` of the base (Kafka's
//!    `ensureOffsetInRange`), and below the next segment's base offset, unless the batch starts
//!    right after its predecessor and its records reach that far (then the next segment's name
//!    is what is wrong, and the loader's overlap rule drops that segment).
//! 3. The base offset is the one field the CRC does not cover. When a batch `B` starts at or
//!    below the last offset of the batch `A` before it, while `B` still follows the batch before
//!    `A`, one of the two is damaged. `A` is, and the walk ends at `A` so that its false offsets
//!    never reach the log end, when its base offset is not pinned (it does not start right
//!    after its predecessor: a gap before it and an overlap after it, a raised base offset), or
//!    when `B` starts past `A`'s last record (`A`'s `lastOffsetDelta` claims offsets its records
//!    do not hold). Otherwise `B` is (its base offset was lowered into `A`'s range).

use std::ops::ControlFlow;
use std::path::Path;

use seglog_record_format::{self as rf, Batch, DEFAULT_MAX_DECOMPRESSED_BYTES, FramedBatch};

use crate::error::Result;
use crate::scan::{BatchHeader, ReadSource, Scan, ScanEnd, scan_batches};

/// The offsets a segment may hold: from its base offset up to (not including) the next
/// segment's base offset, if there is a next segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetBounds {
    /// The segment's base offset.
    pub base_offset: i64,
    /// The next segment's base offset; `None` for the last segment.
    pub next_base_offset: Option<i64>,
}

/// Where and why a walk stopped before the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryStop {
    /// The byte position of the first byte not kept.
    pub position: u64,
    /// Why.
    pub reason: StopReason,
}

/// Why recovery stopped before the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StopReason {
    /// A batch failed framing or validation: a size below 14, a v2 batch below 61 bytes, a CRC
    /// mismatch (Kafka's `CorruptRecordException`), or, with a valid CRC, a header or records
    /// that cannot be right (a record count above the offset range, records that do not decode,
    /// offset deltas outside the batch).
    Invalid(rf::Error),
    /// A batch whose offsets cannot follow the previous batch: at or below its last offset, or
    /// below the segment's base offset. The CRC does not cover the base offset, so this is how a
    /// damaged base offset shows. Kafka would truncate all of the segment; seglog keeps the valid
    /// prefix.
    OffsetsOutOfOrder {
        /// The batch's first offset (its base offset; for legacy entries, its offset).
        first_offset: i64,
        /// The batch's last offset.
        last_offset: i64,
        /// The previous batch's last offset, or the segment's base offset minus one.
        previous_last_offset: i64,
    },
    /// A batch that follows the previous one but whose last offset lies more than `i32::MAX`
    /// past the segment's base offset, so the indexes cannot store it (Kafka's
    /// `LogSegmentOffsetOverflowException`): a legacy segment written before KAFKA-6264. It ends
    /// a recovery's valid prefix; the loader splits the segment there instead, as Kafka's
    /// `LocalLog.splitOverflowedSegment` does ([`crate::split`]).
    OffsetOverflow {
        /// The batch's first offset.
        first_offset: i64,
        /// The batch's last offset.
        last_offset: i64,
        /// The segment's base offset.
        base_offset: i64,
    },
    /// A batch whose last offset reaches the next segment's base offset: those offsets belong to
    /// the next segment.
    PastNextSegment {
        /// The batch's first offset.
        first_offset: i64,
        /// The batch's last offset.
        last_offset: i64,
        /// The next segment's base offset.
        next_base_offset: i64,
    },
    /// A batch that follows a gap and overlaps the batch after it, while that batch follows the
    /// one before: its base offset (which the CRC does not cover) is the damaged one.
    ContradictedByNext {
        /// The batch's first offset.
        first_offset: i64,
        /// The batch's last offset.
        last_offset: i64,
        /// The last offset before it.
        previous_last_offset: i64,
        /// The next batch's first offset, which its range covers.
        next_first_offset: i64,
    },
    /// The file ends inside a batch, or with fewer than 18 bytes after the last batch: a torn
    /// write. Kafka stops silently here; the bytes are cut all the same.
    TornTail,
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
                "batch with offsets {first_offset}..={last_offset} cannot follow offset {previous_last_offset}"
            ),
            Self::OffsetOverflow {
                first_offset,
                last_offset,
                base_offset,
            } => write!(
                f,
                "batch with offsets {first_offset}..={last_offset} overflows the segment: its last offset is more than {} past the base offset {base_offset}",
                i32::MAX
            ),
            Self::PastNextSegment {
                first_offset,
                last_offset,
                next_base_offset,
            } => write!(
                f,
                "batch with offsets {first_offset}..={last_offset} reaches the next segment's base offset {next_base_offset}"
            ),
            Self::ContradictedByNext {
                first_offset,
                last_offset,
                previous_last_offset,
                next_first_offset,
            } => write!(
                f,
                "batch with offsets {first_offset}..={last_offset} follows a gap after offset {previous_last_offset} and overlaps the next batch at {next_first_offset}: its base offset is damaged"
            ),
            Self::TornTail => f.write_str("the file ends inside a batch (a torn write)"),
        }
    }
}

/// A batch the walk kept: what recovery needs to index it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VerifiedBatch {
    /// Its byte position in the file.
    pub position: u64,
    /// Its size in bytes.
    pub size: u64,
    /// Its first offset (the base offset; a legacy entry's offset).
    pub first_offset: i64,
    /// Its last offset.
    pub last_offset: i64,
    /// Kafka's `maxTimestamp()`.
    pub max_timestamp: i64,
    /// Its records, as its header counts them (a legacy entry counts as one).
    pub records: u64,
    /// The last record's offset, when the records were decoded and there are any: the offsets
    /// the records themselves prove (the header's last offset may lie past it after compaction).
    pub last_record_offset: Option<i64>,
    /// The magic byte.
    pub magic: i8,
    /// The partition leader epoch of a v2 batch, -1 (`NO_PARTITION_LEADER_EPOCH`) for none and
    /// for legacy entries.
    pub partition_leader_epoch: i32,
    /// The producer id of a v2 batch, -1 (`NO_PRODUCER_ID`) for none and for legacy entries.
    pub producer_id: i64,
    /// The producer epoch of a v2 batch, -1 (`NO_PRODUCER_EPOCH`) for legacy entries.
    pub producer_epoch: i16,
    /// The base sequence of a v2 batch, -1 (`NO_SEQUENCE`) for none and for legacy entries.
    pub base_sequence: i32,
    /// Whether this is a v2 control batch (a transaction marker).
    pub is_control: bool,
    /// Whether this is a v2 batch of a transaction.
    pub is_transactional: bool,
}

impl VerifiedBatch {
    /// What a header walk reads of this batch.
    pub fn header(&self) -> BatchHeader {
        BatchHeader {
            position: self.position,
            size: self.size,
            magic: self.magic,
            partition_leader_epoch: self.partition_leader_epoch,
            offset_field: self.first_offset,
            last_offset: self.last_offset,
            max_timestamp: self.max_timestamp,
            producer_id: self.producer_id,
            producer_epoch: self.producer_epoch,
            base_sequence: self.base_sequence,
            is_control: self.is_control,
            is_transactional: self.is_transactional,
        }
    }
}

/// A batch that passed its own checks, waiting for the next one to confirm its offsets.
#[derive(Debug, Clone, Copy)]
struct Pending {
    batch: VerifiedBatch,
    /// The last offset before it.
    previous_last: i64,
    /// Whether it starts right after `previous_last` (or has no base offset of its own to
    /// doubt: a legacy entry).
    pinned: bool,
}

/// The offset reasoning of the walk, apart from any I/O: batches go in in file order; each is
/// kept, or named as the damage, once the batch after it (or the end) is known.
#[derive(Debug)]
pub struct OffsetJudge {
    bounds: OffsetBounds,
    /// The last offset of the batches kept so far (the base offset minus one before any).
    last_kept: i64,
    pending: Option<Pending>,
}

impl OffsetJudge {
    /// A judge for a segment with these bounds.
    pub fn new(bounds: OffsetBounds) -> Self {
        Self::continuing(bounds, bounds.base_offset.saturating_sub(1))
    }

    /// A judge for a piece of a segment being split (see [`crate::split`]): bounded by `bounds`,
    /// its batches following `last_kept`, the last offset of the pieces before it, so that a
    /// batch whose base offset is damaged is still named by the one after it.
    pub fn continuing(bounds: OffsetBounds, last_kept: i64) -> Self {
        Self {
            bounds,
            last_kept,
            pending: None,
        }
    }

    /// The last offset of the batches kept so far, the pending one included.
    fn last_seen(&self) -> i64 {
        self.pending.map_or(self.last_kept, |p| p.batch.last_offset)
    }

    /// Rule 2 for a batch that follows what was kept (`pinned`: right after it).
    fn fits_segment(&self, b: &VerifiedBatch, pinned: bool) -> Option<StopReason> {
        let relative = b.last_offset.checked_sub(self.bounds.base_offset);
        if b.last_offset < b.first_offset || relative.is_none_or(|r| r < 0) {
            return Some(StopReason::OffsetsOutOfOrder {
                first_offset: b.first_offset,
                last_offset: b.last_offset,
                previous_last_offset: self.last_seen(),
            });
        }
        if relative.is_some_and(|r| r > i64::from(i32::MAX)) {
            // It follows what was kept (`push` checked): only its distance from the base is
            // wrong, which a split of the segment mends.
            return Some(StopReason::OffsetOverflow {
                first_offset: b.first_offset,
                last_offset: b.last_offset,
                base_offset: self.bounds.base_offset,
            });
        }
        let next = self.bounds.next_base_offset?;
        // A batch pinned to its predecessor whose records reach the next segment's base offset
        // proves that the next segment's name is the wrong one (a copied or misnamed file: the
        // loader's overlap rule drops that segment); one unpinned, or whose header claims
        // offsets past its records, is itself the damage.
        let records_reach = b.last_record_offset.is_none_or(|r| r >= next);
        (b.last_offset >= next && !(pinned && records_reach)).then_some(
            StopReason::PastNextSegment {
                first_offset: b.first_offset,
                last_offset: b.last_offset,
                next_base_offset: next,
            },
        )
    }

    /// Takes the next batch (it passed its own checks). Returns the batch now known to be good
    /// (the one before it), or the damage that ends the walk, at its position; after the damage,
    /// [`OffsetJudge::finish`] hands over the batch still pending, if it was not the damage.
    pub fn push(
        &mut self,
        batch: VerifiedBatch,
        legacy: bool,
    ) -> Result<Option<VerifiedBatch>, RecoveryStop> {
        if batch.first_offset <= self.last_seen() {
            if let Some(a) = self.pending
                && batch.first_offset > a.previous_last
                && (!a.pinned
                    || a.batch
                        .last_record_offset
                        .is_some_and(|r| batch.first_offset > r))
            {
                // Rule 3: the batch before is the damage (its base offset unpinned, or its
                // last offset past its records, where this batch starts); nothing more is kept.
                self.pending = None;
                return Err(RecoveryStop {
                    position: a.batch.position,
                    reason: StopReason::ContradictedByNext {
                        first_offset: a.batch.first_offset,
                        last_offset: a.batch.last_offset,
                        previous_last_offset: a.previous_last,
                        next_first_offset: batch.first_offset,
                    },
                });
            }
            return Err(RecoveryStop {
                position: batch.position,
                reason: StopReason::OffsetsOutOfOrder {
                    first_offset: batch.first_offset,
                    last_offset: batch.last_offset,
                    previous_last_offset: self.last_seen(),
                },
            });
        }
        let pinned = legacy || batch.first_offset == self.last_seen().saturating_add(1);
        if let Some(reason) = self.fits_segment(&batch, pinned) {
            return Err(RecoveryStop {
                position: batch.position,
                reason,
            });
        }
        let kept = self.pending.take().map(|a| {
            self.last_kept = a.batch.last_offset;
            a.batch
        });
        self.pending = Some(Pending {
            batch,
            previous_last: self.last_kept,
            pinned,
        });
        Ok(kept)
    }

    /// [`OffsetJudge::push`], where a batch that overflows the segment (`OffsetOverflow`) begins
    /// a new piece of it, as a split would (`crate::split`), instead of ending the walk: how
    /// the readers walk a legacy segment not yet split, which Kafka serves as it is. The batch
    /// pending before it is then the one known to be good. Damage the new piece's judge finds
    /// at the batch leaves this judge as it was.
    pub fn push_across_overflow(
        &mut self,
        batch: VerifiedBatch,
        legacy: bool,
    ) -> Result<Option<VerifiedBatch>, RecoveryStop> {
        match self.push(batch, legacy) {
            Err(RecoveryStop {
                reason: StopReason::OffsetOverflow { .. },
                ..
            }) => {
                let last = self.last_seen();
                let bounds = OffsetBounds {
                    base_offset: batch.first_offset,
                    next_base_offset: self.bounds.next_base_offset,
                };
                let mut piece = Self::continuing(bounds, last);
                piece.push(batch, legacy)?;
                let kept = self.finish();
                *self = piece;
                Ok(kept)
            }
            other => other,
        }
    }

    /// The end of the walk (the file's end, or damage found by the other rules): the pending
    /// batch, which nothing after it contradicts, is kept.
    pub fn finish(&mut self) -> Option<VerifiedBatch> {
        let a = self.pending.take()?;
        self.last_kept = a.batch.last_offset;
        Some(a.batch)
    }
}

/// How a verified walk ended.
#[derive(Debug)]
pub struct VerifiedScan {
    /// The number of batches kept.
    pub batches: u64,
    /// The end of the last batch kept: every byte before it is a verified batch.
    pub valid_bytes: u64,
    /// Why the walk stopped before the end, if it did.
    pub stop: Option<RecoveryStop>,
}

/// A batch's own checks (rule 1), as a stop at `position` when it fails; on success, what the
/// judge needs of it and whether it is a legacy entry.
pub fn check_batch(
    framed: &FramedBatch<'_>,
    position: u64,
    scratch: &mut Vec<u8>,
) -> Result<(VerifiedBatch, bool), RecoveryStop> {
    let shift = position - framed.position() as u64;
    let invalid = |e: rf::Error| RecoveryStop {
        position,
        reason: StopReason::Invalid(e.offset_by(shift)),
    };
    let decoded = framed.decode().map_err(invalid)?;
    decoded.validate().map_err(invalid)?;
    let no_producer = (
        rf::NO_PRODUCER_ID,
        rf::NO_PRODUCER_EPOCH,
        rf::NO_SEQUENCE,
        false,
        false,
    );
    let partition_leader_epoch = match &decoded {
        Batch::V2(b) => b.partition_leader_epoch(),
        Batch::Legacy(_) => rf::NO_PARTITION_LEADER_EPOCH,
    };
    let (first_offset, last_record_offset, legacy, records, producer) = match decoded {
        Batch::V2(b) => {
            let last = b
                .verify_records(scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                .map_err(invalid)?;
            let records = u64::try_from(b.records_count()).unwrap_or(0);
            let producer = (
                b.producer_id(),
                b.producer_epoch(),
                b.base_sequence(),
                b.is_control(),
                b.is_transactional(),
            );
            (b.base_offset(), last, false, records, producer)
        }
        Batch::Legacy(_) => (decoded.last_offset(), None, true, 1, no_producer),
    };
    let (producer_id, producer_epoch, base_sequence, is_control, is_transactional) = producer;
    Ok((
        VerifiedBatch {
            position,
            size: framed.size_in_bytes() as u64,
            first_offset,
            last_offset: decoded.last_offset(),
            max_timestamp: decoded.max_timestamp(),
            records,
            last_record_offset,
            magic: framed.magic(),
            partition_leader_epoch,
            producer_id,
            producer_epoch,
            base_sequence,
            is_control,
            is_transactional,
        },
        legacy,
    ))
}

/// Walks the batches of `[0, size)` of a segment's `.log` with Kafka's stop rules and the rules
/// of this module, calling `keep` for each batch kept, in order, before any later one; the walk
/// ends at the first damage.
pub fn scan_verified<F: ReadSource + ?Sized>(
    file: &F,
    path: &Path,
    size: u64,
    chunk: usize,
    bounds: OffsetBounds,
    mut keep: impl FnMut(&VerifiedBatch) -> Result<()>,
) -> Result<VerifiedScan> {
    let mut judge = OffsetJudge::new(bounds);
    let mut scratch = Vec::new();
    let mut batches = 0_u64;
    let mut valid_bytes = 0_u64;
    let mut kept = |b: &VerifiedBatch| -> Result<()> {
        keep(b)?;
        batches += 1;
        valid_bytes = b.position + b.size;
        Ok(())
    };
    let scan = scan_batches(file, path, 0, size, chunk, |position, framed| {
        let (batch, legacy) = match check_batch(&framed, position, &mut scratch) {
            Ok(checked) => checked,
            Err(stop) => return Ok(ControlFlow::Break(stop)),
        };
        match judge.push(batch, legacy) {
            Ok(Some(good)) => kept(&good)?,
            Ok(None) => {}
            Err(stop) => return Ok(ControlFlow::Break(stop)),
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if let Some(good) = judge.finish() {
        kept(&good)?;
    }
    let stop = recovery_stop(scan, size);
    Ok(VerifiedScan {
        batches,
        valid_bytes,
        stop,
    })
}

/// Where a recovery walk of a `.log` of `size` bytes stopped: where its callback stopped it, at
/// a batch that failed framing, at a partial trailing batch; `None` at the end of the file.
pub(crate) fn recovery_stop(scan: Scan<RecoveryStop>, size: u64) -> Option<RecoveryStop> {
    match scan {
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
    }
}
