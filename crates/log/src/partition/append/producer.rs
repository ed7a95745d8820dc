//! The producer state's side of appends: Kafka's `UnifiedLog.analyzeAndValidateProducerState` and
//! `updateProducers` (before anything is written), the producer-state steps after the write in
//! `append`, `maybeIncrementFirstUnstableOffset`, end-transaction markers appended by a
//! coordinator, producer expiry, and the producer state as `UnifiedLog` shows it.
//!
//! Kafka also refuses a client's transactional batch that starts a transaction the coordinator
//! did not verify (`transaction.partition.verification.enable`); seglog has no coordinator, so
//! it behaves as Kafka with verification disabled (what `UnifiedLogTest` runs with).

use std::collections::HashMap;
use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, RecordBatch};
use seglog_segment::LogSegment;
use seglog_segment::txn_index::AbortedTxn;

use super::{AppendInfo, InputBatch};
use crate::error::{Error, Result};
use crate::partition::{Inner, PartitionLog};
use crate::producer::{
    AppendOrigin, BatchMetadata, CompletedTxn, LogOffsetMetadata, NO_PRODUCER_ID,
    ProducerAppendInfo, ProducerError, ProducerStateEntry, ProducerStateManager, append_batch,
};

/// What the producer state says of an append, before anything is written.
pub(super) struct ProducerAnalysis {
    /// Per producer of the append, its validated state (Kafka's `updatedProducers`).
    pub(super) updated: Vec<ProducerAppendInfo>,
    /// The transactions the append's markers complete, in log order.
    pub(super) completed: Vec<CompletedTxn>,
    /// The kept batch that a client's batch retries: then nothing is appended.
    pub(super) duplicate: Option<BatchMetadata>,
}

impl<F: FileSystem> Inner<F> {
    /// Kafka's `analyzeAndValidateProducerState`: every batch with a producer id, its offsets
    /// assigned, validated against the producer state, in order; the append goes to the segment
    /// `segment_base` from byte `position` on. Changes nothing.
    pub(super) fn analyze_producer_state(
        &self,
        records: &[u8],
        batches: &[InputBatch],
        (segment_base, position): (i64, u64),
        origin: AppendOrigin,
        transaction_version: i16,
    ) -> Result<ProducerAnalysis> {
        let mut analysis = ProducerAnalysis {
            updated: Vec::new(),
            completed: Vec::new(),
            duplicate: None,
        };
        if batches.iter().all(|b| b.producer_id <= NO_PRODUCER_ID) {
            return Ok(analysis);
        }
        let state = self.producer_state.lock();
        let mut relative_position = position;
        for b in batches {
            let at = relative_position;
            relative_position += b.size as u64;
            if b.producer_id <= NO_PRODUCER_ID {
                continue;
            }
            let bytes = records.get(b.start..b.start + b.size).unwrap_or_default();
            let batch = RecordBatch::parse_at(bytes, b.start as u64)
                .map_err(|e| self.invalid(b.start, e.to_string()))?;
            let pid = batch.producer_id();
            let epoch = batch.producer_epoch();
            // A client retries up to five batches in flight: a retried one is answered with the
            // offsets it got the first time.
            if origin == AppendOrigin::Client
                && let Some(duplicate) = state.last_entry(pid).and_then(|e| {
                    e.find_duplicate_batch(epoch, batch.base_sequence(), batch.last_sequence())
                })
            {
                analysis.duplicate = Some(duplicate);
                return Ok(analysis);
            }
            if origin != AppendOrigin::Replication
                && batch.is_transactional()
                && !has_ongoing_transaction(&state, pid, epoch)
                && let Some(entry) = state.last_entry(pid)
                && epoch < entry.producer_epoch()
            {
                return Err(ProducerError::InvalidProducerEpoch {
                    message: format!(
                        "Epoch of producer {pid} is {epoch}, which is smaller than the last seen epoch {}",
                        entry.producer_epoch()
                    ),
                }
                .into());
            }
            // The first offset of each transaction is kept with its place in the log.
            let first_offset = batch.is_transactional().then(|| LogOffsetMetadata {
                message_offset: batch.base_offset(),
                segment_base_offset: segment_base,
                relative_position: i32::try_from(at).unwrap_or(i32::MAX),
            });
            if !analysis.updated.iter().any(|i| i.producer_id() == pid) {
                analysis.updated.push(state.prepare_update(pid, origin));
            }
            let Some(info) = analysis.updated.iter_mut().find(|i| i.producer_id() == pid) else {
                continue;
            };
            if let Some(txn) = append_batch(info, &batch, first_offset, transaction_version)? {
                analysis.completed.push(txn);
            }
        }
        Ok(analysis)
    }

    /// The producer-state steps of Kafka's `append` once the records are written and the log end
    /// offset moved: each producer updated; each completed transaction's last stable offset
    /// taken, an aborted one's entry appended to the `.txnindex` of `segment` (which holds the
    /// marker), the transaction completed; the state's end moved to `log_end`; the first unstable
    /// offset refreshed. The caller holds the producer state's lock, so no high watermark update
    /// comes between the new log end and the new first unstable offset.
    pub(super) fn apply_producer_state(
        &self,
        state: &mut ProducerStateManager<F>,
        segment: &LogSegment<F>,
        analysis: &ProducerAnalysis,
        log_end: i64,
    ) -> Result<()> {
        for info in &analysis.updated {
            state.update(info);
        }
        for txn in &analysis.completed {
            let last_stable_offset = state.last_stable_offset(txn);
            if txn.is_aborted {
                segment.append_aborted_txn(AbortedTxn::new(
                    txn.producer_id,
                    txn.first_offset,
                    txn.last_offset,
                    last_stable_offset,
                ))?;
            }
            state.complete_txn(txn)?;
        }
        state.update_map_end_offset(log_end);
        self.refresh_first_unstable_offset(state);
        Ok(())
    }

    /// Kafka's `maybeIncrementFirstUnstableOffset`: the state's first unstable offset, never
    /// below the log start offset, or none (`i64::MAX`). The caller holds the state's lock.
    pub(in crate::partition) fn refresh_first_unstable_offset(
        &self,
        state: &ProducerStateManager<F>,
    ) {
        let log_start = self.log_start_offset.load(Ordering::Acquire);
        let first_unstable = state
            .first_unstable_offset()
            .map_or(i64::MAX, |o| o.message_offset.max(log_start));
        self.stable.set_first_unstable_offset(first_unstable);
    }

    /// The producer state after the log start offset moved up to `log_start` (Kafka's
    /// `onLogStartOffsetIncremented` and `maybeIncrementFirstUnstableOffset` in
    /// `maybeIncrementLogStartOffset`).
    pub(in crate::partition) fn on_log_start_offset_incremented(
        &self,
        log_start: i64,
    ) -> crate::error::Result<()> {
        {
            let mut state = self.producer_state.lock();
            state.on_log_start_offset_incremented(log_start);
            self.refresh_first_unstable_offset(&state);
        }
        // Kafka's maybeIncrementLogStartOffset: the epoch cache truncated from the start.
        self.truncate_epochs_from_start(log_start)
    }
}

/// Kafka's `hasOngoingTransaction`: the producer has a transaction open under this epoch.
fn has_ongoing_transaction<F: FileSystem>(
    state: &ProducerStateManager<F>,
    producer_id: i64,
    producer_epoch: i16,
) -> bool {
    state.last_entry(producer_id).is_some_and(|e| {
        e.current_txn_first_offset().is_some() && e.producer_epoch() == producer_epoch
    })
}

impl<F: FileSystem> PartitionLog<F> {
    /// Appends an end-transaction marker as the transaction coordinator does (Kafka's
    /// `appendAsLeader` with origin COORDINATOR of `MemoryRecords.withEndTransactionMarker`): a
    /// transactional control batch of producer `producer_id` holding one COMMIT (`commit`) or
    /// ABORT record with `coordinator_epoch`, timestamped now. It completes the producer's open
    /// transaction, if any; an ABORT adds an entry to the `.txnindex`.
    /// `transaction_version` (1 or 2) decides the epoch rule: version 2 markers must bump it.
    ///
    /// # Errors
    ///
    /// [`Error::Producer`] with Kafka's message: an older producer epoch, an older coordinator
    /// epoch (a zombie coordinator), or an unknown transaction version; nothing is appended.
    pub fn append_end_txn_marker(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        coordinator_epoch: i32,
        commit: bool,
        transaction_version: i16,
    ) -> Result<AppendInfo> {
        let kind = if commit {
            rf::ControlRecordType::Commit
        } else {
            rf::ControlRecordType::Abort
        };
        let key = kind.key_bytes();
        let value = rf::EndTransactionMarker {
            version: 0,
            coordinator_epoch,
        }
        .value_bytes();
        let mut options = rf::BatchOptions::new(0, rf::Compression::None);
        options.producer_id = producer_id;
        options.producer_epoch = producer_epoch;
        options.transactional = true;
        options.control = true;
        let now = self.inner.time.now_ms();
        let record = rf::NewRecord::new(0, now, Some(&key), Some(&value));
        let mut bytes = Vec::new();
        rf::BatchBuilder::new()
            .build(&options, std::iter::once(record), &mut bytes)
            .map_err(|e| Error::InvalidRequest {
                partition: self.inner.partition(),
                reason: format!("cannot build the end transaction marker: {e}"),
            })?;
        self.inner
            .append_as_leader(&mut bytes, AppendOrigin::Coordinator, transaction_version)
    }

    /// Drops the producers idle for `producer.id.expiration.ms` with no open transaction
    /// (Kafka's `removeExpiredProducers`, which its `producer.id.expiration.check.interval.ms`
    /// task runs; [`crate::LogDir`]'s scheduler runs it).
    pub fn remove_expired_producers(&self, now_ms: i64) {
        let _writer = self.inner.writer.lock();
        self.inner
            .producer_state
            .lock()
            .remove_expired_producers(now_ms);
    }

    /// The first offset of the oldest transaction not yet decided, or decided by a marker above
    /// the high watermark (Kafka's `firstUnstableOffset`).
    pub fn first_unstable_offset(&self) -> Option<i64> {
        let offset = self.inner.stable.first_unstable_offset();
        (offset != i64::MAX).then_some(offset)
    }

    /// Every producer's state, by producer id (Kafka's `activeProducers`).
    pub fn active_producers(&self) -> HashMap<i64, ProducerStateEntry> {
        self.inner.producer_state.lock().active_producers().clone()
    }

    /// Writes a producer snapshot, synced, at the offset the state covers, unless one is there
    /// (Kafka's `takeProducerSnapshot`). Returns the file written.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the file.
    pub fn take_producer_snapshot(&self) -> Result<Option<std::path::PathBuf>> {
        let _writer = self.inner.writer.lock();
        self.inner.producer_state.lock().take_snapshot(true)
    }

    /// The offset of the latest producer snapshot (Kafka's `latestProducerSnapshotOffset`).
    pub fn latest_producer_snapshot_offset(&self) -> Option<i64> {
        self.inner.producer_state.lock().latest_snapshot_offset()
    }

    /// The offset of the oldest producer snapshot (Kafka's `oldestProducerSnapshotOffset`).
    pub fn oldest_producer_snapshot_offset(&self) -> Option<i64> {
        self.inner.producer_state.lock().oldest_snapshot_offset()
    }

    /// The offset up to which the producer state covers the log (Kafka's
    /// `latestProducerStateEndOffset`).
    pub fn latest_producer_state_end_offset(&self) -> i64 {
        self.inner.producer_state.lock().map_end_offset()
    }
}
