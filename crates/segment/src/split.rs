//! Planning the split of a segment whose offsets overflow its indexes (Kafka's
//! `LocalLog.splitOverflowedSegment`, KAFKA-6264): brokers before that fix could write a segment
//! holding offsets more than `i32::MAX` past its base offset, which no index entry can store.
//! Kafka copies such a segment's batches into new segments, each based at the base offset of its
//! first batch and ending before the first batch whose last offset it cannot store.
//!
//! The walk is recovery's (`crate::verify`), with one change: where a batch overflows the piece
//! it would go in, a new piece begins at it instead of the walk ending. Each piece's judge
//! carries on from the last offset kept, so a batch whose base offset is damaged (not covered
//! by the CRC) is still named by the batch after it and ends the walk like any other damage.
//! This module only reads; the log crate writes the pieces.

use std::ops::ControlFlow;
use std::path::Path;

use seglog_record_format::{Batch, Compression, FramedBatch};

use crate::error::Result;
use crate::scan::{ReadSource, scan_batches};
use crate::verify::{
    OffsetBounds, OffsetJudge, RecoveryStop, StopReason, VerifiedBatch, check_batch, recovery_stop,
};

/// One segment a split makes: a run of whole batches of the source `.log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitPiece {
    /// Its base offset: the base offset of its first batch (the first record's offset for a
    /// legacy entry), as Kafka names it.
    pub base_offset: i64,
    /// The byte position of its first batch in the source `.log`.
    pub position: u64,
    /// Its size in bytes.
    pub bytes: u64,
    /// The last offset of its last batch.
    pub last_offset: i64,
    /// Its batches.
    pub batches: u64,
    /// Its records (a legacy entry counts as one).
    pub records: u64,
}

/// The outcome of [`plan_split`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitScan {
    /// The pieces, in offset order. Empty when the walk found no valid batch.
    pub pieces: Vec<SplitPiece>,
    /// The end of the last batch kept: every byte before it goes into a piece.
    pub valid_bytes: u64,
    /// Where and why the walk ended before the end of the file (damage, never an overflow).
    pub stop: Option<RecoveryStop>,
}

impl SplitScan {
    /// Whether the walk makes a split at all: more than one piece, or one not based at the
    /// segment's `base_offset` (all of its batches overflowed). Otherwise the segment is at most
    /// cut, as recovery cuts it.
    pub fn splits(&self, base_offset: i64) -> bool {
        match self.pieces.as_slice() {
            [] => false,
            [only] => only.base_offset != base_offset,
            _ => true,
        }
    }

    /// The last offset kept, if any batch was.
    pub fn last_offset(&self) -> Option<i64> {
        self.pieces.last().map(|p| p.last_offset)
    }
}

/// The pieces being filled, and where the walk is.
struct Pieces {
    done: Vec<SplitPiece>,
    /// The base offset of the piece the next kept batch goes in.
    base_offset: i64,
    current: Option<SplitPiece>,
    /// The last offset kept.
    last_kept: Option<i64>,
}

impl Pieces {
    fn keep(&mut self, b: &VerifiedBatch) {
        let piece = self.current.get_or_insert(SplitPiece {
            base_offset: self.base_offset,
            position: b.position,
            bytes: 0,
            last_offset: b.last_offset,
            batches: 0,
            records: 0,
        });
        piece.bytes = b.position + b.size - piece.position;
        piece.last_offset = b.last_offset;
        piece.batches += 1;
        piece.records += b.records;
        self.last_kept = Some(b.last_offset);
    }

    fn start_piece(&mut self, base_offset: i64) {
        self.done.extend(self.current.take());
        self.base_offset = base_offset;
    }
}

/// Walks `[0, size)` of a segment's `.log` with recovery's rules (`crate::verify`), starting a
/// new piece at each batch that overflows the piece before it.
pub fn plan_split<F: ReadSource + ?Sized>(
    file: &F,
    path: &Path,
    size: u64,
    chunk: usize,
    bounds: OffsetBounds,
) -> Result<SplitScan> {
    let mut judge = OffsetJudge::new(bounds);
    let mut scratch = Vec::new();
    let mut pieces = Pieces {
        done: Vec::new(),
        base_offset: bounds.base_offset,
        current: None,
        last_kept: None,
    };
    let scan = scan_batches(file, path, 0, size, chunk, |position, framed| {
        let (batch, legacy) = match check_batch(&framed, position, &mut scratch) {
            Ok(checked) => checked,
            Err(stop) => return Ok(ControlFlow::Break(stop)),
        };
        let pushed = match judge.push(batch, legacy) {
            Err(RecoveryStop {
                reason: StopReason::OffsetOverflow { .. },
                ..
            }) => {
                // A new piece begins at this batch, after the one pending in the old.
                if let Some(good) = judge.finish() {
                    pieces.keep(&good);
                }
                let last = pieces
                    .last_kept
                    .unwrap_or_else(|| bounds.base_offset.saturating_sub(1));
                let base = Some(piece_base(&framed, &batch, &mut scratch))
                    .filter(|b| *b > last)
                    .unwrap_or(batch.first_offset);
                pieces.start_piece(base);
                let piece_bounds = OffsetBounds {
                    base_offset: base,
                    next_base_offset: bounds.next_base_offset,
                };
                judge = OffsetJudge::continuing(piece_bounds, last);
                judge.push(batch, legacy)
            }
            other => other,
        };
        match pushed {
            Ok(Some(good)) => pieces.keep(&good),
            Ok(None) => {}
            Err(stop) => return Ok(ControlFlow::Break(stop)),
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if let Some(good) = judge.finish() {
        pieces.keep(&good);
    }
    pieces.start_piece(0);
    let stop = recovery_stop(scan, size);
    let valid_bytes = pieces.done.last().map_or(0, |p| p.position + p.bytes);
    Ok(SplitScan {
        pieces: pieces.done,
        valid_bytes,
        stop,
    })
}

/// The base offset of a piece that begins with `batch`: its base offset, or for a compressed
/// legacy entry (whose offset field is its last record's) the offset of its first record, as
/// Kafka's `baseOffset()` reads it. Falls back to the entry's own offset if the records do not
/// decode or start after it.
fn piece_base(framed: &FramedBatch<'_>, batch: &VerifiedBatch, scratch: &mut Vec<u8>) -> i64 {
    let Ok(Batch::Legacy(legacy)) = framed.decode() else {
        return batch.first_offset;
    };
    if legacy.compression().is_ok_and(|c| c == Compression::None) {
        return batch.first_offset;
    }
    match legacy.records_with(scratch).ok().and_then(|mut r| r.next()) {
        Some(Ok(first)) if first.offset() <= batch.first_offset => first.offset(),
        _ => batch.first_offset,
    }
}
