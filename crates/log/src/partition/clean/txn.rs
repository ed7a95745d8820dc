//! What a cleaning knows about transactions (Kafka's `CleanedTransactionMetadata`): the aborted
//! transactions read from the segments' `.txnindex` files, the transactions whose data the
//! cleaning is passing through, and so whether a batch is aborted data and whether a marker may
//! go. Also the last record of each producer that must survive (`lastRecordsOfActiveProducers`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::ControlFlow;

use seglog_fs::{FileSystem, OpenMode};
use seglog_record_format::{self as rf, ControlRecordType, RecordBatch, parse_control_key};
use seglog_segment::txn_index::AbortedTxn;

use crate::error::Result;
use crate::partition::SegmentMap;

/// Kafka's `UnifiedLog.collectAbortedTransactions(startOffset, upperBoundOffset)` over a snapshot
/// of the segments: from the segment holding `start` on, until a segment's search is complete.
pub(super) fn collect_aborted<F: FileSystem>(
    segments: &SegmentMap<F>,
    start: i64,
    upper: i64,
) -> Result<Vec<AbortedTxn>> {
    let floor = segments
        .range(..=start)
        .next_back()
        .map_or(i64::MIN, |(b, _)| *b);
    let mut all = Vec::new();
    for segment in segments.range(floor..).map(|(_, s)| s) {
        let found = segment.collect_aborted_txns(start, upper)?;
        all.extend(found.aborted_transactions);
        if found.is_complete {
            break;
        }
    }
    Ok(all)
}

/// An aborted transaction the cleaning has reached, and the last offset of its data seen so far.
struct Ongoing {
    txn: AbortedTxn,
    last_observed_batch: Option<i64>,
}

/// Kafka's `CleanedTransactionMetadata`, one per cleaning round (shared by its groups) and one
/// for building the key map.
#[derive(Default)]
pub(super) struct CleanedTxns {
    ongoing_committed: HashSet<i64>,
    ongoing_aborted: HashMap<i64, Ongoing>,
    /// Kafka's min-heap by first offset; the sequence number keeps equal first offsets in the
    /// order they were added.
    aborted: BTreeMap<(i64, u64), AbortedTxn>,
    added: u64,
}

/// What reading a control batch decided.
pub(super) struct ControlOutcome {
    /// Kafka's `canDiscardBatch` for a control batch: its transaction has no data left.
    pub discardable: bool,
    /// An ABORT marker kept for data that remains: its entry goes into the cleaned `.txnindex`.
    pub index_entry: Option<AbortedTxn>,
}

impl CleanedTxns {
    /// Kafka's `addAbortedTransactions`.
    pub(super) fn add_aborted(&mut self, txns: impl IntoIterator<Item = AbortedTxn>) {
        for txn in txns {
            self.aborted.insert((txn.first_offset(), self.added), txn);
            self.added += 1;
        }
    }

    fn consume_aborted_up_to(&mut self, offset: i64) {
        while let Some(entry) = self.aborted.first_entry() {
            if entry.key().0 > offset {
                break;
            }
            let txn = entry.remove();
            self.ongoing_aborted
                .entry(txn.producer_id())
                .or_insert(Ongoing {
                    txn,
                    last_observed_batch: None,
                });
        }
    }

    /// Kafka's `onBatchRead` for a data batch: true if it belongs to an aborted transaction.
    pub(super) fn on_batch_read(&mut self, batch: &RecordBatch<'_>) -> bool {
        self.consume_aborted_up_to(batch.last_offset());
        if !batch.is_transactional() {
            return false;
        }
        if let Some(ongoing) = self.ongoing_aborted.get_mut(&batch.producer_id()) {
            ongoing.last_observed_batch = Some(batch.last_offset());
            true
        } else {
            self.ongoing_committed.insert(batch.producer_id());
            false
        }
    }

    /// Kafka's `onControlBatchRead`. An ABORT whose transaction still has data is kept and
    /// indexed; a COMMIT is kept if the cleaning saw data of its transaction; an emptied control
    /// batch (cleaned before) may go; other control types stay. A bad key is reported at
    /// `position`, the batch's byte in its file.
    pub(super) fn on_control_batch_read(
        &mut self,
        batch: &RecordBatch<'_>,
        position: u64,
        scratch: &mut Vec<u8>,
    ) -> rf::Result<ControlOutcome> {
        self.consume_aborted_up_to(batch.last_offset());
        let Some(record) = batch.records_with(scratch)?.next() else {
            return Ok(ControlOutcome {
                discardable: true,
                index_entry: None,
            });
        };
        let record = record?;
        let producer = batch.producer_id();
        let kind = parse_control_key(record.key())
            .map_err(|e| e.offset_by(position))?
            .1;
        let (discardable, index_entry) = match kind {
            ControlRecordType::Abort => match self.ongoing_aborted.remove(&producer) {
                Some(Ongoing {
                    txn,
                    last_observed_batch: Some(_),
                }) => (false, Some(txn)),
                _ => (true, None),
            },
            ControlRecordType::Commit => (!self.ongoing_committed.remove(&producer), None),
            _ => (false, None),
        };
        Ok(ControlOutcome {
            discardable,
            index_entry,
        })
    }
}

/// The last record of a producer (Kafka's `LastRecord`): the last offset of its last data batch,
/// if its current epoch wrote one, and its epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct LastRecord {
    pub last_data_offset: Option<i64>,
    pub producer_epoch: i16,
}

impl LastRecord {
    /// Kafka's `isBatchLastRecordOfProducer`: the batch holding the last data offset, or, when the
    /// producer's epoch wrote no data (a marker bumped it), a control batch of that epoch.
    pub(super) fn is_batch(&self, batch: &RecordBatch<'_>) -> bool {
        match self.last_data_offset {
            Some(offset) => batch.last_offset() == offset,
            None => batch.is_control() && batch.producer_epoch() == self.producer_epoch,
        }
    }
}

/// The last record of every producer with a batch in `segments`, as Kafka's producer state
/// holds it (`ProducerStateEntry`: a new epoch, from a data batch or a marker, forgets the
/// earlier batches). seglog's cleaner reads it from the log (batch headers only), so producers
/// never expire here. The headers are read with positioned reads, not through the `.log`'s
/// mapping: touching one header per batch through a mapping makes the whole file resident in
/// the process (the kernel maps the cached pages around each fault).
pub(super) fn last_records_of_producers<F: FileSystem>(
    fs: &F,
    segments: &SegmentMap<F>,
) -> Result<HashMap<i64, LastRecord>> {
    let mut last: HashMap<i64, LastRecord> = HashMap::new();
    for segment in segments.values() {
        let path = segment.log_path();
        let file =
            fs.open(&path, OpenMode::ReadOnly)
                .map_err(|source| seglog_segment::Error::Io {
                    path: path.clone(),
                    op: "open",
                    source,
                })?;
        let window = seglog_segment::scan::MAX_HEADER_WINDOW;
        seglog_segment::scan::scan_headers(&file, &path, 0, segment.size(), window, |h| {
            if h.producer_id > rf::NO_PRODUCER_ID {
                let entry = last.entry(h.producer_id).or_insert(LastRecord {
                    last_data_offset: None,
                    producer_epoch: h.producer_epoch,
                });
                if entry.producer_epoch != h.producer_epoch {
                    entry.producer_epoch = h.producer_epoch;
                    entry.last_data_offset = None;
                }
                if !h.is_control {
                    entry.last_data_offset = Some(h.last_offset);
                }
            }
            Ok(ControlFlow::<()>::Continue(()))
        })?;
    }
    Ok(last)
}
