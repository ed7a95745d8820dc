//! What a Kafka consumer returns from fetched bytes (the client's `CompletedFetch`): never a
//! control record, no record below the fetch offset, and under read_committed no record of an
//! aborted transaction, judged by the aborted transactions the fetch returned.

use std::collections::{BTreeMap, HashSet};

use seglog_record_format::{
    Batch, Batches, ControlRecordType, Error, Record, RecordBatch, batches, parse_control_key,
};

/// A consumer's `isolation.level`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum IsolationLevel {
    /// Every record, committed or not (the consumer default).
    #[default]
    ReadUncommitted,
    /// Only records of committed transactions and non-transactional records, up to the last
    /// stable offset.
    ReadCommitted,
}

impl IsolationLevel {
    /// Kafka's name: `read_uncommitted` or `read_committed`.
    pub fn name(self) -> &'static str {
        match self {
            IsolationLevel::ReadUncommitted => "read_uncommitted",
            IsolationLevel::ReadCommitted => "read_committed",
        }
    }

    /// The level for a Kafka name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "read_uncommitted" => Some(IsolationLevel::ReadUncommitted),
            "read_committed" => Some(IsolationLevel::ReadCommitted),
            _ => None,
        }
    }
}

/// An aborted transaction overlapping a fetch (Kafka's `FetchResponseData.AbortedTransaction`):
/// its producer and the offset of its first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct AbortedTransaction {
    /// The producer id.
    pub producer_id: i64,
    /// The offset of the transaction's first record.
    pub first_offset: i64,
}

/// The records a consumer at `isolation` returns from `bytes` (whole batches; a partial batch at
/// the end ends the iteration), starting at `fetch_offset`. `aborted` is what the fetch returned
/// with the bytes (empty under read_uncommitted). A batch that fails to decode yields one error
/// and ends the iteration, as the consumer's `KafkaException` does.
pub fn consumer_records<'a>(
    bytes: &'a [u8],
    fetch_offset: i64,
    isolation: IsolationLevel,
    aborted: &[AbortedTransaction],
) -> ConsumerRecords<'a> {
    ConsumerRecords {
        batches: batches(bytes),
        filter: ConsumerFilter::new(fetch_offset, isolation, aborted),
        last_batch_next: None,
        pending: Vec::new().into_iter(),
        failed: false,
    }
}

/// The iterator [`consumer_records`] returns.
#[derive(Debug)]
pub struct ConsumerRecords<'a> {
    batches: Batches<'a>,
    filter: ConsumerFilter,
    /// The next offset of the last batch read.
    last_batch_next: Option<i64>,
    pending: std::vec::IntoIter<Record>,
    failed: bool,
}

impl ConsumerRecords<'_> {
    /// The offset the next fetch starts at (Kafka's `nextFetchOffset`): past every record and
    /// control record returned or skipped so far, and past the last batch once it is done.
    pub fn next_fetch_offset(&self) -> i64 {
        self.filter.next_offset
    }
}

/// The consumer's per-batch rules, batch after batch, for callers that hold the batches one at
/// a time rather than in one buffer (the read-only view's walk over segment files). Fed the
/// batches of one or more fetches in offset order with the union of their aborted
/// transactions, it returns what [`consumer_records`] returns for them.
#[derive(Debug, Clone)]
pub struct ConsumerFilter {
    next_offset: i64,
    isolation: IsolationLevel,
    /// Aborted transactions not yet reached, by first offset (the consumer's priority queue).
    aborted: BTreeMap<i64, Vec<i64>>,
    aborted_producers: HashSet<i64>,
}

impl ConsumerFilter {
    /// A consumer at `isolation` reading from `fetch_offset`, with the fetches' aborted
    /// transactions (ignored under read_uncommitted).
    pub fn new(
        fetch_offset: i64,
        isolation: IsolationLevel,
        aborted: &[AbortedTransaction],
    ) -> Self {
        let mut queue: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
        if isolation == IsolationLevel::ReadCommitted {
            for a in aborted {
                queue.entry(a.first_offset).or_default().push(a.producer_id);
            }
        }
        Self {
            next_offset: fetch_offset,
            isolation,
            aborted: queue,
            aborted_producers: HashSet::new(),
        }
    }

    /// The offset after the last record or control record returned or skipped.
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// Moves every aborted transaction that begins at or before `offset` into the set of
    /// aborted producers (`consumeAbortedTransactionsUpTo`).
    fn consume_aborted_up_to(&mut self, offset: i64) {
        while let Some(entry) = self.aborted.first_entry() {
            if *entry.key() > offset {
                break;
            }
            self.aborted_producers.extend(entry.remove());
        }
    }

    /// The records of `batch` the consumer returns, in order; `decode` gives the batch's records
    /// and is not called for a batch the consumer skips whole (an aborted transaction's). The
    /// next offset moves past a skipped batch and past control records; past returned records
    /// it moves as [`returned`](Self::returned) reports them.
    pub fn take_batch(
        &mut self,
        batch: &Batch<'_>,
        decode: impl FnOnce() -> Result<Vec<Record>, Error>,
    ) -> Result<Vec<Record>, Error> {
        let v2 = match batch {
            Batch::V2(v2) => v2,
            Batch::Legacy(_) => return Ok(self.in_range(decode()?)),
        };
        if self.isolation == IsolationLevel::ReadCommitted && v2.producer_id() >= 0 {
            self.consume_aborted_up_to(v2.last_offset());
            if contains_abort_marker(v2)? {
                self.aborted_producers.remove(&v2.producer_id());
            } else if v2.is_transactional() && self.aborted_producers.contains(&v2.producer_id()) {
                self.next_offset = v2.next_offset();
                return Ok(Vec::new());
            }
        }
        let records = self.in_range(decode()?);
        if v2.is_control() {
            // Control records are never returned; the fetch offset moves past them.
            if let Some(last) = records.last() {
                self.next_offset = last.offset + 1;
            }
            return Ok(Vec::new());
        }
        Ok(records)
    }

    /// Notes that the record at `offset` (one [`take_batch`](Self::take_batch) returned) was
    /// handed to the application: the next fetch starts after it.
    pub fn returned(&mut self, offset: i64) {
        self.next_offset = offset + 1;
    }

    fn in_range(&self, mut records: Vec<Record>) -> Vec<Record> {
        records.retain(|r| r.offset >= self.next_offset);
        records
    }
}

/// Whether a control batch's first record is an ABORT marker (`containsAbortMarker`).
fn contains_abort_marker(batch: &RecordBatch<'_>) -> Result<bool, Error> {
    if !batch.is_control() || batch.records_count() == 0 {
        return Ok(false);
    }
    let mut scratch = Vec::new();
    let Some(first) = batch.records_with(&mut scratch)?.next() else {
        return Ok(false);
    };
    let (_, kind) = parse_control_key(first?.key())?;
    Ok(kind == ControlRecordType::Abort)
}

impl Iterator for ConsumerRecords<'_> {
    type Item = Result<Record, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(record) = self.pending.next() {
                self.filter.returned(record.offset);
                return Some(Ok(record));
            }
            if self.failed {
                return None;
            }
            let Some(framed) = self.batches.next() else {
                // As the consumer after its last batch: past that batch's last offset, even
                // where compaction removed its last records.
                if let Some(next) = self.last_batch_next.take() {
                    self.filter.next_offset = next;
                }
                return None;
            };
            let taken = framed.and_then(|f| f.decode()).and_then(|batch| {
                self.last_batch_next = Some(batch.next_offset());
                self.filter.take_batch(&batch, || batch.to_records())
            });
            match taken {
                Ok(records) => self.pending = records.into_iter(),
                Err(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}
