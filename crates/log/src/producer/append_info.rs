//! Kafka's `ProducerAppendInfo`: validates the batches and markers one producer appends, against
//! its state after the last successful append, and collects the new state and the transactions
//! started. Nothing changes in the manager until `ProducerStateManager::update` takes it.

use std::sync::Arc;

use super::entry::{NO_PRODUCER_EPOCH, NO_SEQUENCE, ProducerStateEntry};
use super::error::ProducerError;
use super::txn::{CompletedTxn, LogOffsetMetadata, TxnMetadata};

/// Where an append comes from, which decides how much is validated (Kafka's `AppendOrigin`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AppendOrigin {
    /// A leader append of a replica's follower fetch: epochs are not enforced (a warning in
    /// Kafka), sequences not checked; markers use the legacy epoch rule.
    Replication,
    /// A leader append from a coordinator (offset commits, markers): epochs checked, no sequences.
    Coordinator,
    /// A leader append from a client's produce request: epochs and sequences checked.
    Client,
}

impl AppendOrigin {
    fn kafka_name(self) -> &'static str {
        match self {
            Self::Replication => "REPLICATION",
            Self::Coordinator => "COORDINATOR",
            Self::Client => "CLIENT",
        }
    }
}

/// Kafka's `TransactionVersion.TV_UNKNOWN`: what data batches pass, and what a follower passes for
/// a marker (the version is not in the log).
pub const TV_UNKNOWN: i16 = -1;

/// A marker to append: COMMIT or ABORT, and the coordinator epoch that wrote it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EndTxnMarker {
    /// Whether it aborts (else it commits).
    pub is_abort: bool,
    /// The coordinator epoch in the marker.
    pub coordinator_epoch: i32,
}

/// The validation of one producer's appends (Kafka's `ProducerAppendInfo`).
#[derive(Debug, Clone)]
pub struct ProducerAppendInfo {
    /// Shared with the manager: an append info is made per batch replayed.
    partition: Arc<str>,
    producer_id: i64,
    /// The state's epoch before these appends (Kafka's `currentEntry.producerEpoch()`).
    current_epoch: i16,
    /// The state's last sequence before these appends (Kafka's `currentEntry.lastSeq()`).
    current_last_seq: i32,
    origin: AppendOrigin,
    transactions: Vec<TxnMetadata>,
    updated: ProducerStateEntry,
}

impl ProducerAppendInfo {
    /// Starts validating appends of `producer_id` to `partition` (its name, as in Kafka's
    /// messages: `topic-N`) whose state is `current`.
    #[must_use]
    #[expect(
        clippy::needless_pass_by_value,
        reason = "Kafka's constructor takes the entry; the manager borrows it through from_state"
    )]
    pub fn new(
        partition: impl Into<String>,
        producer_id: i64,
        current: ProducerStateEntry,
        origin: AppendOrigin,
    ) -> Self {
        Self::from_state(
            Arc::from(partition.into()),
            producer_id,
            Some(&current),
            origin,
        )
    }

    /// [`ProducerAppendInfo::new`] with the partition name shared and the state borrowed (`None`
    /// for a producer never seen): what the manager makes per append, copying no batch of the
    /// state (the sequence check reads only its epoch and last sequence).
    pub(crate) fn from_state(
        partition: Arc<str>,
        producer_id: i64,
        current: Option<&ProducerStateEntry>,
        origin: AppendOrigin,
    ) -> Self {
        let (current_epoch, current_last_seq, updated) = match current {
            Some(c) => (
                c.producer_epoch(),
                c.last_seq(),
                c.with_producer_id(producer_id),
            ),
            None => (
                NO_PRODUCER_EPOCH,
                NO_SEQUENCE,
                ProducerStateEntry::empty(producer_id),
            ),
        };
        Self {
            partition,
            producer_id,
            current_epoch,
            current_last_seq,
            origin,
            transactions: Vec::new(),
            updated,
        }
    }

    /// The partition (`topic-N`), as Kafka's messages name it.
    #[must_use]
    pub fn partition(&self) -> &str {
        &self.partition
    }

    /// The producer id.
    #[must_use]
    pub fn producer_id(&self) -> i64 {
        self.producer_id
    }

    /// The producer's state with every append so far.
    #[must_use]
    pub fn to_entry(&self) -> &ProducerStateEntry {
        &self.updated
    }

    /// The transactions the appends so far started.
    #[must_use]
    pub fn started_transactions(&self) -> &[TxnMetadata] {
        &self.transactions
    }

    /// Validates and records a data batch (Kafka's `appendDataBatch`). On an error the info must
    /// be dropped: the batch is already half recorded, as in Kafka.
    ///
    /// # Errors
    ///
    /// [`ProducerError::InvalidProducerEpoch`], [`ProducerError::OutOfOrderSequence`] or
    /// [`ProducerError::InvalidTxnState`], with Kafka's messages.
    #[expect(
        clippy::too_many_arguments,
        reason = "Kafka's appendDataBatch, field for field"
    )]
    pub fn append_data_batch(
        &mut self,
        epoch: i16,
        first_seq: i32,
        last_seq: i32,
        last_timestamp: i64,
        first_offset: LogOffsetMetadata,
        last_offset: i64,
        is_transactional: bool,
    ) -> Result<(), ProducerError> {
        let first = first_offset.message_offset;
        self.check_producer_epoch(epoch, first, TV_UNKNOWN)?;
        if self.origin == AppendOrigin::Client {
            self.check_sequence(epoch, first_seq, first)?;
        }
        let delta = last_offset - first;
        #[expect(
            clippy::cast_possible_truncation,
            reason = "Kafka's (int) cast of the delta"
        )]
        let delta = delta as i32;
        self.updated
            .add_batch(epoch, last_seq, last_offset, delta, last_timestamp);
        match (self.updated.current_txn_first_offset(), is_transactional) {
            (Some(_), false) => Err(ProducerError::InvalidTxnState {
                message: format!(
                    "Expected transactional write from producer {} at offset {} in partition {}",
                    self.producer_id, first_offset, self.partition
                ),
            }),
            (None, true) => {
                self.updated.set_current_txn_first_offset(first);
                self.transactions.push(TxnMetadata {
                    producer_id: self.producer_id,
                    first_offset,
                    last_offset: None,
                });
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Validates and records a marker at `offset` (Kafka's `appendEndTxnMarker`); returns the
    /// transaction it completes, if the producer had one open (a marker of an empty transaction
    /// completes none). `transaction_version` is [`TV_UNKNOWN`] only for replication.
    ///
    /// # Errors
    ///
    /// [`ProducerError::InvalidProducerEpoch`], [`ProducerError::TransactionCoordinatorFenced`]
    /// or [`ProducerError::IllegalArgument`], with Kafka's messages.
    pub fn append_end_txn_marker(
        &mut self,
        marker: EndTxnMarker,
        producer_epoch: i16,
        offset: i64,
        timestamp: i64,
        transaction_version: i16,
    ) -> Result<Option<CompletedTxn>, ProducerError> {
        if transaction_version == TV_UNKNOWN && self.origin != AppendOrigin::Replication {
            return Err(ProducerError::IllegalArgument {
                message: format!(
                    "transactionVersion must be explicitly specified, cannot use default value TV_UNKNOWN for origin {}",
                    self.origin.kafka_name()
                ),
            });
        }
        let effective = if transaction_version == TV_UNKNOWN {
            0
        } else {
            transaction_version
        };
        self.check_producer_epoch(producer_epoch, offset, effective)?;
        self.check_coordinator_epoch(marker, offset)?;
        let completed = self
            .updated
            .current_txn_first_offset()
            .map(|first| CompletedTxn {
                producer_id: self.producer_id,
                first_offset: first,
                last_offset: offset,
                is_aborted: marker.is_abort,
            });
        self.updated
            .update_for_marker(producer_epoch, marker.coordinator_epoch, timestamp);
        Ok(completed)
    }

    /// Kafka's `checkProducerEpoch`: an older epoch is refused (for a transaction version 2
    /// marker, also the same epoch, unless it retries a marker of a finished transaction,
    /// KAFKA-19999); replication only warns.
    fn check_producer_epoch(
        &self,
        producer_epoch: i16,
        offset: i64,
        transaction_version: i16,
    ) -> Result<(), ProducerError> {
        let current = self.updated.producer_epoch();
        let tv2 = transaction_version >= 2;
        let invalid = if tv2 {
            producer_epoch <= current
        } else {
            producer_epoch < current
        };
        if !invalid {
            return Ok(());
        }
        if tv2 && producer_epoch == current && self.updated.current_txn_first_offset().is_none() {
            return Ok(());
        }
        if self.origin == AppendOrigin::Replication {
            return Ok(());
        }
        let comparison = if tv2 { "<=" } else { "<" };
        Err(ProducerError::InvalidProducerEpoch {
            message: format!(
                "Epoch of producer {} at offset {offset} in {} is {producer_epoch}, which is {comparison} the last seen epoch {current} (TV{transaction_version})",
                self.producer_id, self.partition
            ),
        })
    }

    /// Kafka's `checkSequence` (without the transaction-verification cases: seglog has no
    /// coordinator to verify against, so there is never a verification state).
    fn check_sequence(
        &self,
        producer_epoch: i16,
        append_first_seq: i32,
        offset: i64,
    ) -> Result<(), ProducerError> {
        let pid = self.producer_id;
        let tp = &self.partition;
        if producer_epoch != self.updated.producer_epoch() {
            if append_first_seq != 0 && self.updated.producer_epoch() != NO_PRODUCER_EPOCH {
                return Err(ProducerError::OutOfOrderSequence {
                    message: format!(
                        "Invalid sequence number for new epoch of producer {pid} at offset {offset} in partition {tp}: {producer_epoch} (request epoch), {append_first_seq} (seq. number), {} (current producer epoch)",
                        self.updated.producer_epoch()
                    ),
                });
            }
            return Ok(());
        }
        let current_last_seq = if !self.updated.is_empty() {
            self.updated.last_seq()
        } else if producer_epoch == self.current_epoch {
            self.current_last_seq
        } else {
            NO_SEQUENCE
        };
        // No epoch at all (every batch of the producer deleted by retention or DeleteRecords):
        // any sequence is accepted.
        if self.current_epoch == NO_PRODUCER_EPOCH
            || in_sequence(current_last_seq, append_first_seq)
        {
            return Ok(());
        }
        Err(ProducerError::OutOfOrderSequence {
            message: format!(
                "Out of order sequence number for producer {pid} at offset {offset} in partition {tp}: {append_first_seq} (incoming seq. number), {current_last_seq} (current end sequence number)"
            ),
        })
    }

    /// Kafka's `checkCoordinatorEpoch`: a marker of an older coordinator is a zombie's.
    fn check_coordinator_epoch(
        &self,
        marker: EndTxnMarker,
        offset: i64,
    ) -> Result<(), ProducerError> {
        let current = self.updated.coordinator_epoch();
        if current > marker.coordinator_epoch && self.origin != AppendOrigin::Replication {
            return Err(ProducerError::TransactionCoordinatorFenced {
                message: format!(
                    "Invalid coordinator epoch for producerId {} at offset {offset} in partition {}: {} (zombie), {current} (current)",
                    self.producer_id, self.partition, marker.coordinator_epoch
                ),
            });
        }
        Ok(())
    }
}

/// Kafka's `inSequence`: the next sequence, or 0 after `i32::MAX`.
fn in_sequence(last_seq: i32, next_seq: i32) -> bool {
    i64::from(next_seq) == i64::from(last_seq) + 1 || (next_seq == 0 && last_seq == i32::MAX)
}
