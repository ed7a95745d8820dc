//! The aborted transactions a read_committed fetch returns (Kafka's `LocalLog`
//! `addAbortedTransactions` and `collectAbortedTransactions`), read from the segments'
//! `.txnindex` files.

use crate::loom::sync::Arc;

use seglog_fs::FileSystem;
use seglog_segment::txn_index::AbortedTxn;
use seglog_segment::{FetchData, LogSegment};

use super::{PartitionLog, SegmentMap};
use crate::consumer_records::AbortedTransaction;
use crate::error::Result;

impl<F: FileSystem> PartitionLog<F> {
    /// Kafka's `UnifiedLog.collectAbortedTransactions(startOffset, upperBoundOffset)`: from the
    /// segment holding `start_offset` on, the aborted transactions whose data ends at or after
    /// the log start offset and begins below `upper_bound_offset`, up to the first entry whose
    /// last stable offset reaches the bound. (Kafka passes the log start offset, not
    /// `start_offset`, as the lower end of the range; so does this.)
    pub fn collect_aborted_transactions(
        &self,
        start_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<Vec<AbortedTxn>> {
        let segments = self.segments();
        let Some((_, first)) = segments.range(..=start_offset).next_back() else {
            return Ok(Vec::new());
        };
        collect(
            &segments,
            first,
            self.log_start_offset(),
            upper_bound_offset,
        )
    }
}

/// The aborted transactions a fetch of `fetch` from `segment` overlaps (`addAbortedTransactions`):
/// up to the offset index's first entry past the fetched bytes, or, without one, the next
/// segment's base offset or the log end.
pub(super) fn aborted_in_fetch<F: FileSystem>(
    segments: &SegmentMap<F>,
    segment: &Arc<LogSegment<F>>,
    start_offset: i64,
    fetch: &FetchData,
    log_end: i64,
) -> Result<Vec<AbortedTransaction>> {
    let start = fetch.offset_metadata;
    let upper_bound = match segment.fetch_upper_bound_offset(
        start.message_offset,
        start.relative_position,
        fetch.region.length,
    )? {
        Some(offset) => offset,
        None => segments
            .range(segment.base_offset() + 1..)
            .next()
            .map_or(log_end, |(base, _)| *base),
    };
    Ok(collect(segments, segment, start_offset, upper_bound)?
        .iter()
        .map(|txn| AbortedTransaction {
            producer_id: txn.producer_id(),
            first_offset: txn.first_offset(),
        })
        .collect())
}

/// `collectAbortedTransactions(startOffset, upperBoundOffset, startingSegment, accumulator)`:
/// each segment's overlapping entries from `starting` on, until a segment's search is complete.
fn collect<F: FileSystem>(
    segments: &SegmentMap<F>,
    starting: &Arc<LogSegment<F>>,
    fetch_offset: i64,
    upper_bound_offset: i64,
) -> Result<Vec<AbortedTxn>> {
    let mut out = Vec::new();
    for segment in segments.range(starting.base_offset()..).map(|(_, s)| s) {
        let found = segment.collect_aborted_txns(fetch_offset, upper_bound_offset)?;
        out.extend(found.aborted_transactions);
        if found.is_complete {
            break;
        }
    }
    Ok(out)
}
