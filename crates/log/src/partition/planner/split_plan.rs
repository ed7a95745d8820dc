//! Where the recovery walk of a segment ends at a batch that overflows the segment's indexes (a
//! legacy segment written before KAFKA-6264), the plan splits the segment, as Kafka's loader
//! does (`retryOnOffsetOverflow` and `LocalLog.splitOverflowedSegment`), instead of cutting it.

use seglog_fs::{File as _, FileSystem, OpenMode};
use seglog_segment::split::plan_split;
use seglog_segment::verify::{OffsetBounds, StopReason};
use seglog_segment::{SegmentScan, naming};

use super::{Planner, Segment};
use crate::error::{Error, Result};
use crate::listing::PartitionFile;
use crate::partition::recovery_plan::{Cut, Split};
use crate::partition::snapshot_plan;

/// The `.log` is read in chunks of this size by the split's walk.
const SPLIT_CHUNK: usize = 8 << 20;

/// What the plan does with a segment its scan found damaged or overflowed.
pub(super) struct Judged {
    /// The offset after the last batch kept.
    pub(super) end: i64,
    /// Whether bytes are cut (by a cut, or after a split's pieces).
    pub(super) cut: bool,
}

impl<F: FileSystem> Planner<'_, F> {
    /// The segment a completed split replaces though its base offset lies below the swaps'
    /// range: one whose first batch starts at or above the lowest swap's base offset (all of its
    /// batches overflowed, so the first piece is based past it; Kafka's
    /// `testDegenerateSegmentSplit`). A segment's offsets never reach the next one's base
    /// offset, so only the source of a split holds such a batch.
    pub(super) fn split_source_below(&self, live: &[PartitionFile], min_swap: i64) -> Option<i64> {
        let below = live
            .iter()
            .filter_map(PartitionFile::log_base_offset)
            .filter(|b| *b < min_swap)
            .max()?;
        let path = naming::log_file(self.dir, below, "");
        // The first batch's offset field: a v2 batch's base offset, a legacy entry's offset. A
        // file that cannot be read is no split's source (the recovery walk judges it later).
        let mut head = [0_u8; 8];
        let first = self
            .fs
            .open(&path, OpenMode::ReadOnly)
            .and_then(|file| file.read_exact_at(&mut head, 0))
            .ok()
            .map(|()| i64::from_be_bytes(head));
        first.filter(|o| *o >= min_swap).map(|_| below)
    }

    /// A segment scanned: cut where its valid prefix ends, or split where it ends at a batch
    /// that overflows it (the pieces' indexes rebuilt, and the bytes after the pieces cut if the
    /// split's walk ends at damage). A split's pieces replace the segment's scan in the plan.
    pub(super) fn cut_or_split(
        &mut self,
        base: i64,
        segment: Segment,
        scan: &SegmentScan,
        drops_later_segments: bool,
    ) -> Result<Judged> {
        let overflow = scan
            .stop
            .as_ref()
            .is_some_and(|s| matches!(s.reason, StopReason::OffsetOverflow { .. }));
        if !overflow {
            self.add_cut(base, scan, drops_later_segments, None)?;
            return Ok(judged(base, scan.last_offset, scan.stop.is_some()));
        }
        let next = if segment.suffix.is_empty() {
            self.plan.next_base_offsets.get(&base).copied().flatten()
        } else {
            None
        };
        let path = naming::log_file(self.dir, base, segment.suffix);
        let file = self
            .fs
            .open(&path, OpenMode::ReadOnly)
            .map_err(|e| Error::io(&path, e))?;
        let bounds = OffsetBounds {
            base_offset: base,
            next_base_offset: next,
        };
        let walk = plan_split(&file, &path, scan.size, SPLIT_CHUNK, bounds)?;
        if !walk.splits(base) {
            // The overflowing batch is the damage (the batch after it disproves its base
            // offset): cut there, as recovery does, naming why.
            let reason = walk.stop.map(|s| s.reason.to_string());
            self.add_cut(base, scan, drops_later_segments, reason)?;
            return Ok(judged(base, scan.last_offset, scan.stop.is_some()));
        }
        let end = walk.last_offset().map_or(base, |o| o + 1);
        let cut = match &walk.stop {
            Some(stop) => {
                let txn = naming::txn_index_file(self.dir, base, "");
                Some(Cut {
                    base_offset: base,
                    log: naming::log_file(self.dir, base, ""),
                    position: walk.valid_bytes,
                    bytes: scan.size - walk.valid_bytes,
                    next_offset: end,
                    reason: stop.reason.to_string(),
                    drops_later_segments,
                    txn_entries_dropped: snapshot_plan::txn_entries_from(self.fs, &txn, base, end)?,
                })
            }
            None => None,
        };
        // The pieces are new segments: their indexes are written, and the `.txnindex` rebuilt,
        // by the recovery that follows the split. The scan of the whole segment describes none
        // of them.
        self.verified.remove(&base);
        self.valid_to_end.remove(&base);
        self.plan.rebuilt_indexes.retain(|b| *b != base);
        let pieces = walk.pieces;
        for (i, piece) in pieces.iter().enumerate() {
            let piece_next = pieces.get(i + 1).map(|p| p.base_offset).or(next);
            self.plan
                .next_base_offsets
                .insert(piece.base_offset, piece_next);
            self.plan.rebuilt_indexes.push(piece.base_offset);
        }
        self.scan_ends.insert(base, end);
        let cut_here = cut.is_some();
        self.plan.splits.push(Split {
            base_offset: base,
            log: naming::log_file(self.dir, base, ""),
            bytes: scan.size,
            pieces,
            reason: scan
                .stop
                .as_ref()
                .map(|s| s.reason.to_string())
                .unwrap_or_default(),
            cut,
        });
        Ok(Judged { end, cut: cut_here })
    }

    /// A cut where `scan`'s valid prefix ends, for its stop's reason or `reason`.
    fn add_cut(
        &mut self,
        base: i64,
        scan: &SegmentScan,
        drops_later_segments: bool,
        reason: Option<String>,
    ) -> Result<()> {
        if let Some(stop) = &scan.stop {
            let next_offset = scan.last_offset.map_or(base, |o| o + 1);
            let txn = naming::txn_index_file(self.dir, base, "");
            let txn_entries_dropped =
                snapshot_plan::txn_entries_from(self.fs, &txn, base, next_offset)?;
            self.plan.cuts.push(Cut {
                base_offset: base,
                log: naming::log_file(self.dir, base, ""),
                position: scan.valid_bytes,
                bytes: scan.bytes_after_valid_prefix(),
                next_offset,
                reason: reason.unwrap_or_else(|| stop.reason.to_string()),
                drops_later_segments,
                txn_entries_dropped,
            });
        }
        Ok(())
    }
}

fn judged(base: i64, last_offset: Option<i64>, cut: bool) -> Judged {
    Judged {
        end: last_offset.map_or(base, |o| o + 1),
        cut,
    }
}
