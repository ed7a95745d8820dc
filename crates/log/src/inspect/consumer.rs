//! A partition directory read as a Kafka consumer reads it, read-only: never a control record,
//! and under read_committed nothing at or past the last stable offset and no record of an
//! aborted transaction.
//!
//! Offline there is no live producer state, so the last stable offset is computed as the loader
//! would: the latest usable producer snapshot (none written, none deleted) and the producer state
//! replayed over the batches after it give the first unstable offset; the high watermark is the
//! log end offset, as `PartitionLog::open` sets it. The aborted transactions come from the
//! segments' `.txnindex` files where Kafka's loader keeps them, else from the markers, as its
//! recovery rebuilds them ([`txn_source`](super::txn_source)), collected as a read_committed
//! fetch collects them; one replay gives both.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{Batch, Record};

use super::partition::{PartitionView, SegmentEntry};
use super::records::RecordsRead;
use super::txn_source::TxnState;
use crate::consumer_records::{AbortedTransaction, ConsumerFilter, IsolationLevel};
use crate::error::Result;

impl<F: FileSystem> PartitionView<F> {
    /// Calls `f` with every record a consumer at `isolation` fetching from `from` gets, in
    /// offset order with its batch, until it breaks: never a control record; under
    /// read_committed, only records below [`last_stable_offset`](Self::last_stable_offset) and
    /// none of an aborted transaction ([`consumer_records`](crate::consumer_records)'s rules).
    /// A batch that fails to decode or validate ends the walk with an error naming the file and
    /// byte position. [`RecordsRead::next_offset`] is where the next poll starts.
    pub fn for_each_record<T>(
        &self,
        from: i64,
        isolation: IsolationLevel,
        mut f: impl FnMut(&Record, &Batch<'_>) -> ControlFlow<T>,
    ) -> Result<RecordsRead<T>> {
        let (bound, aborted) = match isolation {
            IsolationLevel::ReadUncommitted => (i64::MAX, Vec::new()),
            IsolationLevel::ReadCommitted => self.read_committed_bounds(from)?,
        };
        let mut filter = ConsumerFilter::new(from, isolation, &aborted);
        let mut undecodable = None;
        let read = self.for_each_batch(from, bound, |batch, records, place| {
            let taken = match filter.take_batch(batch, || Ok(records)) {
                Ok(taken) => taken,
                Err(e) => {
                    undecodable = Some(place.corrupt(e));
                    return ControlFlow::Break(None);
                }
            };
            for record in &taken {
                filter.returned(record.offset);
                if let ControlFlow::Break(value) = f(record, batch) {
                    return ControlFlow::Break(Some(value));
                }
            }
            ControlFlow::Continue(())
        })?;
        if let Some(e) = undecodable {
            return Err(e);
        }
        Ok(RecordsRead {
            next_offset: read.next_offset,
            stopped: read.stopped.flatten(),
        })
    }

    /// The aborted transactions a read_committed fetch from `from` up to `upper_bound` returns
    /// (Kafka's `collectAbortedTransactions`): from the segment holding `from` on, the entries
    /// ending at or after `from` and beginning below `upper_bound`, until one whose last stable
    /// offset reaches `upper_bound`. Each segment's come from its `.txnindex` (opened read-only)
    /// where Kafka's loader would keep that file, else from the segment's markers, as Kafka's
    /// recovery rebuilds it (`inspect/txn_source.rs`).
    pub fn aborted_transactions(
        &self,
        from: i64,
        upper_bound: i64,
    ) -> Result<Vec<AbortedTransaction>> {
        let segments = self.segments();
        let txns = TxnState::read(
            self,
            &segments,
            self.log_start_offset(),
            self.log_end_offset()?,
        )?;
        collect(&txns, &segments, from, upper_bound)
    }

    /// The last stable offset, computed read-only: the first offset of the oldest transaction
    /// without a marker, or the log end offset (the high watermark offline) if there is none.
    /// The producer state comes from the latest snapshot above the log start offset that reads
    /// cleanly (a corrupt one is passed over, as the loader passes it over, but left in place),
    /// replayed over the batches after it; without a usable snapshot, over every batch from the
    /// log start offset (Kafka's loader skips that rebuild after a clean shutdown, trusting that
    /// an old broker wrote no transactions; a reader cannot know, and reads).
    pub fn last_stable_offset(&self) -> Result<i64> {
        self.last_stable_offset_at(self.log_end_offset()?)
    }

    /// [`last_stable_offset`](Self::last_stable_offset) with the high watermark at
    /// `high_watermark` (at most the log end offset): a transaction whose marker lies at or past
    /// it is not yet replicated and holds the offset back, as Kafka's `unreplicatedTxns` do (the
    /// state is replayed to the log end, and then told the high watermark).
    pub fn last_stable_offset_at(&self, high_watermark: i64) -> Result<i64> {
        let segments = self.segments();
        let log_end = self.log_end_offset()?;
        let mut txns = TxnState::read(self, &segments, self.log_start_offset(), log_end)?;
        Ok(stable_offset(&mut txns, high_watermark.min(log_end)))
    }

    /// The last stable offset and the aborted transactions from `from` below it, from one
    /// replay of the markers.
    fn read_committed_bounds(&self, from: i64) -> Result<(i64, Vec<AbortedTransaction>)> {
        let segments = self.segments();
        let log_end = self.log_end_offset()?;
        let mut txns = TxnState::read(self, &segments, self.log_start_offset(), log_end)?;
        let lso = stable_offset(&mut txns, log_end);
        let aborted = collect(&txns, &segments, from, lso)?;
        Ok((lso, aborted))
    }
}

/// The last stable offset the replayed state gives at `high_watermark` (the log end offline
/// without a checkpointed one: every completed transaction is replicated).
fn stable_offset<F: FileSystem>(txns: &mut TxnState<F>, high_watermark: i64) -> i64 {
    txns.state.on_high_watermark_updated(high_watermark);
    txns.state
        .first_unstable_offset()
        .map_or(high_watermark, |f| f.message_offset.min(high_watermark))
}

/// Kafka's `collectAbortedTransactions` over `segments` from the one holding `from` on.
fn collect<F: FileSystem>(
    txns: &TxnState<F>,
    segments: &[SegmentEntry],
    from: i64,
    upper_bound: i64,
) -> Result<Vec<AbortedTransaction>> {
    let first = segments
        .iter()
        .rposition(|s| s.base_offset <= from)
        .unwrap_or(0);
    let mut out = Vec::new();
    for segment in segments.iter().skip(first) {
        let found = txns.collect(segment.base_offset, from, upper_bound)?;
        out.extend(
            found
                .aborted_transactions
                .iter()
                .map(|t| AbortedTransaction {
                    producer_id: t.producer_id(),
                    first_offset: t.first_offset(),
                }),
        );
        if found.is_complete {
            break;
        }
    }
    Ok(out)
}
