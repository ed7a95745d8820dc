//! Kafka's `ProducerStateEntry`: the state of one producer id.

use super::batch_metadata::BatchMetadata;
use super::recent_batches::RecentBatches;

/// How many of a producer's latest batches are kept for duplicate detection (Kafka's
/// `NUM_BATCHES_TO_RETAIN`; a producer has at most five requests in flight).
pub const NUM_BATCHES_TO_RETAIN: usize = 5;

/// Kafka's `RecordBatch.NO_PRODUCER_EPOCH`.
pub const NO_PRODUCER_EPOCH: i16 = -1;
/// Kafka's `RecordBatch.NO_SEQUENCE`.
pub const NO_SEQUENCE: i32 = -1;
/// Kafka's `RecordBatch.NO_PRODUCER_ID`.
pub const NO_PRODUCER_ID: i64 = -1;
/// Kafka's `RecordBatch.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;

/// One producer id's state: its epoch, its last batches (oldest first, at most
/// [`NUM_BATCHES_TO_RETAIN`], all of the current epoch), the coordinator epoch of its last
/// marker, the first offset of its ongoing transaction and its last timestamp. It owns no heap
/// memory, so a clone is a copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerStateEntry {
    producer_id: i64,
    batches: RecentBatches<NUM_BATCHES_TO_RETAIN>,
    producer_epoch: i16,
    coordinator_epoch: i32,
    last_timestamp: i64,
    current_txn_first_offset: Option<i64>,
}

impl ProducerStateEntry {
    /// The state of a producer never seen (Kafka's `ProducerStateEntry.empty`).
    #[must_use]
    pub fn empty(producer_id: i64) -> Self {
        Self::new(producer_id, NO_PRODUCER_EPOCH, -1, NO_TIMESTAMP, None)
    }

    /// A state with no batches.
    #[must_use]
    pub fn new(
        producer_id: i64,
        producer_epoch: i16,
        coordinator_epoch: i32,
        last_timestamp: i64,
        current_txn_first_offset: Option<i64>,
    ) -> Self {
        Self {
            producer_id,
            batches: RecentBatches::new(),
            producer_epoch,
            coordinator_epoch,
            last_timestamp,
            current_txn_first_offset,
        }
    }

    /// The producer id.
    #[must_use]
    pub fn producer_id(&self) -> i64 {
        self.producer_id
    }
    /// The producer's current epoch.
    #[must_use]
    pub fn producer_epoch(&self) -> i16 {
        self.producer_epoch
    }
    /// The coordinator epoch of the last marker seen (-1 for none).
    #[must_use]
    pub fn coordinator_epoch(&self) -> i32 {
        self.coordinator_epoch
    }
    /// The timestamp of the last batch or marker.
    #[must_use]
    pub fn last_timestamp(&self) -> i64 {
        self.last_timestamp
    }
    /// The first offset of the producer's ongoing transaction, if one is open.
    #[must_use]
    pub fn current_txn_first_offset(&self) -> Option<i64> {
        self.current_txn_first_offset
    }
    /// The kept batches, oldest first.
    pub fn batch_metadata(&self) -> impl ExactSizeIterator<Item = &BatchMetadata> {
        self.batches.as_slice().iter()
    }
    /// Whether no batch is kept.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.batches.as_slice().is_empty()
    }
    /// The base sequence of the oldest kept batch, or -1.
    #[must_use]
    pub fn first_seq(&self) -> i32 {
        self.batches
            .as_slice()
            .first()
            .map_or(NO_SEQUENCE, BatchMetadata::first_seq)
    }
    /// The last sequence of the newest kept batch, or -1.
    #[must_use]
    pub fn last_seq(&self) -> i32 {
        self.batches
            .as_slice()
            .last()
            .map_or(NO_SEQUENCE, |b| b.last_seq)
    }
    /// The base offset of the oldest kept batch, or -1.
    #[must_use]
    pub fn first_data_offset(&self) -> i64 {
        self.batches
            .as_slice()
            .first()
            .map_or(-1, BatchMetadata::first_offset)
    }
    /// The last offset of the newest kept batch, or -1.
    #[must_use]
    pub fn last_data_offset(&self) -> i64 {
        self.batches.as_slice().last().map_or(-1, |b| b.last_offset)
    }
    /// The offset delta of the newest kept batch, or 0.
    #[must_use]
    pub fn last_offset_delta(&self) -> i32 {
        self.batches.as_slice().last().map_or(0, |b| b.offset_delta)
    }

    /// This state under another producer id and without its batches (Kafka's `withProducerId`):
    /// what an append starts from; `update` appends its batches after the kept ones.
    #[must_use]
    pub(crate) fn with_producer_id(&self, producer_id: i64) -> Self {
        Self::new(
            producer_id,
            self.producer_epoch,
            self.coordinator_epoch,
            self.last_timestamp,
            self.current_txn_first_offset,
        )
    }

    /// Records a batch: a new epoch drops the batches of the old one; past five the oldest goes.
    pub(crate) fn add_batch(
        &mut self,
        producer_epoch: i16,
        last_seq: i32,
        last_offset: i64,
        offset_delta: i32,
        timestamp: i64,
    ) {
        self.maybe_update_producer_epoch(producer_epoch);
        self.batches.push(BatchMetadata {
            last_seq,
            last_offset,
            offset_delta,
            timestamp,
        });
        self.last_timestamp = timestamp;
    }

    fn maybe_update_producer_epoch(&mut self, producer_epoch: i16) {
        if self.producer_epoch != producer_epoch {
            self.batches.clear();
            self.producer_epoch = producer_epoch;
        }
    }

    /// Takes over `next`'s state (Kafka's `update(ProducerStateEntry)`): its epoch, its batches
    /// appended after ours, its coordinator epoch, transaction and timestamp.
    pub(crate) fn update(&mut self, next: &Self) {
        self.maybe_update_producer_epoch(next.producer_epoch);
        for b in next.batches.as_slice() {
            self.batches.push(*b);
        }
        self.coordinator_epoch = next.coordinator_epoch;
        self.current_txn_first_offset = next.current_txn_first_offset;
        self.last_timestamp = next.last_timestamp;
    }

    /// A marker's update (Kafka's `update(short, int, long)`): epoch, coordinator epoch,
    /// timestamp; the transaction is over.
    pub(crate) fn update_for_marker(
        &mut self,
        producer_epoch: i16,
        coordinator_epoch: i32,
        last_timestamp: i64,
    ) {
        self.maybe_update_producer_epoch(producer_epoch);
        self.coordinator_epoch = coordinator_epoch;
        self.current_txn_first_offset = None;
        self.last_timestamp = last_timestamp;
    }

    pub(crate) fn set_current_txn_first_offset(&mut self, first_offset: i64) {
        self.current_txn_first_offset = Some(first_offset);
    }

    /// The kept batch a retried batch duplicates: same epoch, same sequence range
    /// (Kafka's `findDuplicateBatch`). The partition answers a duplicate with its offsets.
    #[must_use]
    pub fn find_duplicate_batch(
        &self,
        producer_epoch: i16,
        base_sequence: i32,
        last_sequence: i32,
    ) -> Option<BatchMetadata> {
        if producer_epoch != self.producer_epoch {
            return None;
        }
        self.batches
            .as_slice()
            .iter()
            .find(|b| b.first_seq() == base_sequence && b.last_seq == last_sequence)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_last_five_batches_of_the_current_epoch() {
        let mut e = ProducerStateEntry::empty(7);
        for i in 0..7 {
            e.add_batch(0, i * 10 + 9, i64::from(i) * 10 + 9, 9, 100);
        }
        assert_eq!(e.batch_metadata().len(), 5);
        assert_eq!((e.first_seq(), e.last_seq()), (20, 69));
        assert_eq!(
            e.find_duplicate_batch(0, 60, 69).map(|b| b.first_offset()),
            Some(60)
        );
        assert_eq!(e.find_duplicate_batch(0, 10, 19), None, "evicted");
        assert_eq!(e.find_duplicate_batch(1, 60, 69), None, "other epoch");
        e.add_batch(1, 0, 100, 0, 200);
        assert_eq!(
            e.batch_metadata().len(),
            1,
            "a new epoch drops the old batches"
        );
    }
}
