//! A partition directory read as a Kafka consumer reads it, read-only: never a control record,
//! and under read_committed nothing at or past the last stable offset and no record of an
//! aborted transaction.
//!
//! Offline there is no live producer state, so the last stable offset is computed as the loader
//! would: the latest usable producer snapshot (none written, none deleted) and the producer state
//! replayed over the batches after it give the first unstable offset; the high watermark is the
//! log end offset, as `PartitionLog::open` sets it. The aborted transactions come from the
//! segments' `.txnindex` files, collected as a read_committed fetch collects them.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{Batch, Record};
use seglog_segment::naming;
use seglog_segment::txn_index::TransactionIndex;

use super::partition::PartitionView;
use super::records::RecordsRead;
use crate::consumer_records::{AbortedTransaction, ConsumerFilter, IsolationLevel};
use crate::error::Result;
use crate::producer::{ProducerStateManager, list_snapshot_files, producer_state_at, replay_batch};

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
            IsolationLevel::ReadCommitted => {
                let lso = self.last_stable_offset()?;
                (lso, self.aborted_transactions(from, lso)?)
            }
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
    /// (Kafka's `collectAbortedTransactions`): from the `.txnindex` of the segment holding
    /// `from` on, the entries ending at or after `from` and beginning below `upper_bound`, until
    /// one whose last stable offset reaches `upper_bound`. Each `.txnindex` is opened read-only;
    /// a missing one has no entries.
    pub fn aborted_transactions(
        &self,
        from: i64,
        upper_bound: i64,
    ) -> Result<Vec<AbortedTransaction>> {
        let segments = self.segments();
        let first = segments
            .iter()
            .rposition(|s| s.base_offset <= from)
            .unwrap_or(0);
        let mut out = Vec::new();
        for segment in segments.iter().skip(first) {
            let path = naming::txn_index_file(self.dir(), segment.base_offset, "");
            let index =
                TransactionIndex::open_read_only(self.fs().clone(), path, segment.base_offset)?;
            let found = index.collect_aborted_txns(from, upper_bound)?;
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

    /// The last stable offset, computed read-only: the first offset of the oldest transaction
    /// without a marker, or the log end offset (the high watermark offline) if there is none.
    /// The producer state comes from the latest snapshot above the log start offset and at most
    /// the log end offset that reads cleanly (a corrupt one is passed over, as the loader passes
    /// it over, but left in place), replayed over the batches after it batch by batch; without a usable snapshot, over every batch from the log
    /// start offset (Kafka's loader skips that rebuild after a clean shutdown, trusting that an
    /// old broker wrote no transactions; a reader cannot know, and reads).
    pub fn last_stable_offset(&self) -> Result<i64> {
        self.last_stable_offset_at(self.log_end_offset()?)
    }

    /// [`last_stable_offset`](Self::last_stable_offset) with the high watermark at
    /// `high_watermark` (at most the log end offset): a transaction whose marker lies at or past
    /// it is not yet replicated and holds the offset back, as Kafka's `unreplicatedTxns` do (the
    /// state is replayed to the log end, and then told the high watermark).
    pub fn last_stable_offset_at(&self, high_watermark: i64) -> Result<i64> {
        let log_start = self.log_start_offset();
        let log_end = high_watermark;
        let snapshots = list_snapshot_files(self.fs(), self.dir())?;
        let (mut state, replay_from) = producer_state_at(
            self.fs(),
            self.dir(),
            self.topic_partition().to_string(),
            snapshots.iter().map(|s| (s.offset, s.path.as_path())),
            log_start,
            log_end,
            log_start,
        )?;
        if replay_from < log_end {
            replay(self, &mut state, replay_from)?;
        }
        // Offline the high watermark is the log end: every completed transaction is replicated.
        state.on_high_watermark_updated(log_end);
        Ok(state
            .first_unstable_offset()
            .map_or(log_end, |f| f.message_offset.min(log_end)))
    }
}

/// The producer state replayed over the batches from `from` on, batch by batch as recovery
/// replays a segment (Kafka's `LogSegment.updateProducerState`); for the open transactions it
/// leaves, the same as the loader's `loadProducersFromRecords`, without holding every batch.
fn replay<F: FileSystem>(
    view: &PartitionView<F>,
    state: &mut ProducerStateManager<F>,
    from: i64,
) -> Result<()> {
    let mut failed = None;
    // The aborted transactions are not wanted here (the `.txnindex` files give a fetch's).
    let mut aborted = Vec::new();
    view.for_each_batch(from, i64::MAX, |batch, _, _| {
        if let Batch::V2(batch) = batch
            && let Err(e) = replay_batch(state, batch, &mut aborted)
        {
            failed = Some(e);
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    })?;
    failed.map_or(Ok(()), Err)
}
