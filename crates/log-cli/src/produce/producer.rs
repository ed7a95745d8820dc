//! The producer a run writes as: none (plain batches), an idempotent producer (its id, epoch and
//! sequences continuing the partition's producer state), or a transactional one, whose run ends
//! with the marker a transaction coordinator writes.

use seglog_log::record::{BatchOptions, Compression};
use seglog_log::{AppendInfo, PartitionLog, RealFs};

/// The transaction version the markers are written under: Kafka 4.4's default
/// `transaction.version` feature level, 2 (KIP-890), under which the coordinator writes each
/// marker with the producer's epoch bumped by one (`ProducerAppendInfo` then requires a marker
/// epoch above the producer's; version 1 takes the same epoch).
const TRANSACTION_VERSION: i16 = 2;

/// `--producer-id` and `--producer-epoch`, and with `--transactional` how the run ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Producer {
    pub(crate) id: i64,
    pub(crate) epoch: i16,
    pub(crate) txn: Option<TxnEnd>,
}

/// How a transactional run ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TxnEnd {
    pub(crate) commit: bool,
    pub(crate) coordinator_epoch: i32,
}

/// The batch header fields of a run's batches, the next one's base sequence among them.
pub(super) struct Sequencer {
    producer: Option<Producer>,
    next_sequence: i32,
    /// The producer had a transaction open in the partition when the run began.
    open_at_start: bool,
    /// Records this run appended.
    appended: u64,
}

impl Sequencer {
    /// Picks up where the partition's producer state leaves `producer`: the sequence after its
    /// last batch's under the same epoch, else 0 (Kafka wants 0 for a new epoch).
    pub(super) fn new(log: &PartitionLog<RealFs>, producer: Option<Producer>) -> Self {
        let entry = producer.and_then(|p| log.active_producers().remove(&p.id));
        let next_sequence = match (producer, &entry) {
            (Some(p), Some(e)) if e.producer_epoch() == p.epoch => increment(e.last_seq(), 1),
            _ => 0,
        };
        Sequencer {
            producer,
            next_sequence,
            open_at_start: entry.is_some_and(|e| e.current_txn_first_offset().is_some()),
            appended: 0,
        }
    }

    /// The options of the next batch.
    pub(super) fn options(&self, compression: Compression) -> BatchOptions {
        let mut options = BatchOptions::new(0, compression);
        if let Some(p) = self.producer {
            options.producer_id = p.id;
            options.producer_epoch = p.epoch;
            options.base_sequence = self.next_sequence;
            options.transactional = p.txn.is_some();
        }
        options
    }

    /// After a batch of `records` was appended.
    pub(super) fn appended(&mut self, records: usize) {
        self.appended += records as u64;
        let count = i32::try_from(records).unwrap_or(i32::MAX);
        self.next_sequence = increment(self.next_sequence, count);
    }

    /// Records this run appended.
    pub(super) fn appended_records(&self) -> u64 {
        self.appended
    }

    /// The run's sequences, for its summary: `None` without a producer or records.
    pub(super) fn sequences(&self) -> Option<(i32, i32)> {
        self.producer?;
        let count = i32::try_from(self.appended).ok().filter(|&c| c > 0)?;
        Some((
            decrement(self.next_sequence, count),
            decrement(self.next_sequence, 1),
        ))
    }

    /// Ends a transactional run: its marker (with `commit`, unless `abort_instead`), when the
    /// run appended records or the producer had a transaction open. `None` when nothing is
    /// written: no transaction, or no transaction to end.
    pub(super) fn end(
        &self,
        log: &PartitionLog<RealFs>,
        abort_instead: bool,
    ) -> Option<(Marker, seglog_log::Result<AppendInfo>)> {
        let p = self.producer?;
        let txn = p.txn?;
        if self.appended == 0 && !self.open_at_start {
            return None;
        }
        let marker = Marker {
            commit: txn.commit && !abort_instead,
            epoch: p.epoch.saturating_add(1),
        };
        let info = log.append_end_txn_marker(
            p.id,
            marker.epoch,
            txn.coordinator_epoch,
            marker.commit,
            TRANSACTION_VERSION,
        );
        Some((marker, info))
    }
}

/// The end marker a run wrote.
#[derive(Debug, Clone, Copy)]
pub(super) struct Marker {
    pub(super) commit: bool,
    /// The producer's epoch from the marker on.
    pub(super) epoch: i16,
}

impl Marker {
    /// COMMIT or ABORT, as dump prints the marker.
    pub(super) fn kind(self) -> &'static str {
        if self.commit { "COMMIT" } else { "ABORT" }
    }
}

/// An append's error as a client of Kafka would see it: a producer-state refusal as Kafka's
/// exception and message, anything else as it is.
pub(super) fn describe(e: &seglog_log::Error) -> String {
    match e {
        seglog_log::Error::Producer(p) => format!("{}: {p}", p.kafka_name()),
        other => other.to_string(),
    }
}

/// Kafka's `DefaultRecordBatch.incrementSequence`: sequences wrap from `i32::MAX` to 0.
fn increment(sequence: i32, by: i32) -> i32 {
    if sequence > i32::MAX - by {
        by - (i32::MAX - sequence) - 1
    } else {
        sequence + by
    }
}

/// Kafka's `DefaultRecordBatch.decrementSequence`.
fn decrement(sequence: i32, by: i32) -> i32 {
    if sequence < by {
        i32::MAX - (by - sequence) + 1
    } else {
        sequence - by
    }
}

#[cfg(test)]
mod tests {
    use super::{decrement, increment};

    #[test]
    fn sequences_wrap_as_kafka_s() {
        assert_eq!(increment(-1, 1), 0);
        assert_eq!(increment(5, 3), 8);
        assert_eq!(increment(i32::MAX, 1), 0);
        assert_eq!(increment(i32::MAX - 1, 3), 1);
        assert_eq!(decrement(1, 3), i32::MAX - 1);
        assert_eq!(decrement(8, 3), 5);
    }
}
