//! A transactional partition for the producer-state load tests: idempotent and transactional
//! batches and COMMIT / ABORT markers, appended with `append_as_follower` (offsets assigned
//! here), and an oracle that replays the same batches into a fresh `ProducerStateManager`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::path::Path;

use seglog_fs::{FileSystem, RealFs};
use seglog_log::PartitionLog;
use seglog_log::producer::{ProducerStateManager, ProducerStateManagerConfig, recover_batch};
use seglog_log::record::{ControlRecordType, batches};
use seglog_segment::txn_index::AbortedTxn;

use crate::common::txn::{self, Data, Producer};

/// The records' timestamps (the shared builder's); a test clock at this time expires no producer.
pub(crate) use crate::common::txn::TS;

/// One batch to append: its bytes, built at its offset.
#[derive(Debug, Clone)]
pub(crate) struct Workload {
    pub batches: Vec<Vec<u8>>,
    next_offset: i64,
    sequences: BTreeMap<i64, i32>,
}

impl Workload {
    pub(crate) fn new() -> Self {
        Self::starting_at(0)
    }

    /// A workload whose first batch gets `offset`.
    pub(crate) fn starting_at(offset: i64) -> Self {
        Self {
            batches: Vec::new(),
            next_offset: offset,
            sequences: BTreeMap::new(),
        }
    }

    /// `count` records without a producer id.
    pub(crate) fn plain(&mut self, count: i32) -> &mut Self {
        let mut out = Vec::new();
        Data::new(self.next_offset, count)
            .key(b"k")
            .value(b"value")
            .write(&mut out);
        self.next_offset += i64::from(count);
        self.batches.push(out);
        self
    }

    /// `count` records of producer `pid`, transactional or only idempotent.
    pub(crate) fn data(&mut self, pid: i64, count: i32, transactional: bool) -> &mut Self {
        let seq = self.sequences.entry(pid).or_insert(0);
        let producer = Producer { id: pid, epoch: 0 };
        let mut out = Vec::new();
        Data::new(self.next_offset, count)
            .key(b"k")
            .value(b"value")
            .producer(producer, *seq, transactional)
            .write(&mut out);
        *seq += count;
        self.next_offset += i64::from(count);
        self.batches.push(out);
        self
    }

    /// A COMMIT or ABORT marker of `pid` with `coordinator_epoch`.
    pub(crate) fn marker(
        &mut self,
        pid: i64,
        kind: ControlRecordType,
        coordinator_epoch: i32,
    ) -> &mut Self {
        let mut out = Vec::new();
        let producer = Producer { id: pid, epoch: 0 };
        txn::marker(
            &mut out,
            self.next_offset,
            producer,
            coordinator_epoch,
            kind,
        );
        self.next_offset += 1;
        self.batches.push(out);
        self
    }

    /// `rounds` rounds of two interleaved transactions (producer 1 commits, producer 2 aborts),
    /// an idempotent producer 3 between them, a second transaction of 2 that aborts; producer 4
    /// opens a transaction in the last round and never ends it.
    pub(crate) fn standard(rounds: usize) -> Self {
        let mut w = Self::new();
        for round in 0..rounds {
            w.data(1, 3, true).data(2, 2, true).data(1, 2, true);
            w.marker(2, ControlRecordType::Abort, 1);
            w.data(3, 2, false);
            w.marker(1, ControlRecordType::Commit, 1);
            w.data(2, 1, true).data(3, 1, false);
            w.marker(2, ControlRecordType::Abort, 1);
            if round + 1 == rounds {
                w.data(4, 2, true);
            }
        }
        w
    }

    /// Appends every batch to `log` as a follower.
    pub(crate) fn append_to<F: FileSystem>(&self, log: &PartitionLog<F>) {
        for batch in &self.batches {
            log.append_as_follower(batch).unwrap();
        }
    }
}

/// What a fresh replay of batches gives: the aborted transactions (as recovery writes them, in
/// marker order, with the offset of their marker), the producers, the first unstable offset.
#[derive(Debug)]
pub(crate) struct Expected {
    pub aborted: Vec<(i64, AbortedTxn)>,
    pub producers: Vec<ProducerFacts>,
    pub first_unstable_offset: Option<i64>,
}

/// What a producer snapshot keeps of a producer.
pub(crate) type ProducerFacts = (i64, i16, i32, i64, i32, Option<i64>, i64);

pub(crate) fn facts(log: &PartitionLog<impl FileSystem>) -> Vec<ProducerFacts> {
    log.producer_entries()
        .iter()
        .map(|e| {
            (
                e.producer_id(),
                e.producer_epoch(),
                e.last_seq(),
                e.last_data_offset(),
                e.coordinator_epoch(),
                e.current_txn_first_offset(),
                e.last_timestamp(),
            )
        })
        .collect()
}

/// The oracle: `batches` replayed into a manager over an empty directory.
pub(crate) fn expected(batches_bytes: &[Vec<u8>]) -> Expected {
    let dir = tempfile::tempdir().unwrap();
    let mut m = ProducerStateManager::new(
        RealFs,
        dir.path(),
        "orders-0",
        60_000,
        ProducerStateManagerConfig::default(),
    )
    .unwrap();
    let mut aborted = Vec::new();
    for bytes in batches_bytes {
        for framed in batches(bytes) {
            let batch = framed.and_then(|f| f.v2()).unwrap();
            if let Some((txn, lso)) = recover_batch(&mut m, &batch).unwrap()
                && txn.is_aborted
            {
                aborted.push((
                    txn.last_offset,
                    AbortedTxn::new(txn.producer_id, txn.first_offset, txn.last_offset, lso),
                ));
            }
        }
    }
    // The log's high watermark is its end after a load: no completed transaction is unstable.
    m.on_high_watermark_updated(i64::MAX);
    let mut producers: Vec<ProducerFacts> = m
        .active_producers()
        .values()
        .map(|e| {
            (
                e.producer_id(),
                e.producer_epoch(),
                e.last_seq(),
                e.last_data_offset(),
                e.coordinator_epoch(),
                e.current_txn_first_offset(),
                e.last_timestamp(),
            )
        })
        .collect();
    producers.sort_unstable();
    Expected {
        aborted,
        producers,
        first_unstable_offset: m.first_unstable_offset().map(|o| o.message_offset),
    }
}

/// The `.txnindex` entries each segment of `log` holds, by base offset.
pub(crate) fn txn_entries<F: FileSystem>(log: &PartitionLog<F>) -> BTreeMap<i64, Vec<AbortedTxn>> {
    log.segments()
        .iter()
        .map(|(base, s)| (*base, s.all_aborted_txns().unwrap()))
        .collect()
}

/// The entries each segment of `log` should hold: each aborted transaction in the segment of its
/// marker.
pub(crate) fn expected_txn_entries<F: FileSystem>(
    log: &PartitionLog<F>,
    expected: &Expected,
) -> BTreeMap<i64, Vec<AbortedTxn>> {
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    let mut out: BTreeMap<i64, Vec<AbortedTxn>> = bases.iter().map(|b| (*b, Vec::new())).collect();
    for (marker, txn) in &expected.aborted {
        let base = bases.iter().rev().find(|b| *b <= marker).unwrap();
        out.get_mut(base).unwrap().push(*txn);
    }
    out
}

/// The `.snapshot` files in `dir`, by name.
pub(crate) fn snapshot_files(fs: &impl FileSystem, dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs
        .read_dir(dir)
        .unwrap()
        .iter()
        .filter_map(|p| p.file_name()?.to_str().map(str::to_owned))
        .filter(|n| n.ends_with(".snapshot"))
        .collect();
    names.sort();
    names
}
