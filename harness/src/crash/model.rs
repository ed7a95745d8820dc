//! What a workload knows about the log (every record it appended, which are durable), and what
//! a crash image must hold.

use std::collections::{BTreeMap, BTreeSet};

use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Rec {
    pub(super) key: Vec<u8>,
    pub(super) value: Vec<u8>,
    pub(super) timestamp: i64,
}

/// What the workload knows about the log.
#[derive(Default, Clone)]
pub(super) struct Model {
    /// Every version ever appended at each offset.
    pub(super) appended: BTreeMap<i64, Vec<Rec>>,
    /// The log's content now, as the workload made it.
    pub(super) current: BTreeMap<i64, Rec>,
    /// Offsets acknowledged durable (and still current).
    pub(super) durable: BTreeSet<i64>,
    /// Offsets a compaction may have removed (not the latest of their key when it ran).
    pub(super) cleanable: BTreeSet<i64>,
    /// Offsets below this may have been deleted by retention.
    pub(super) log_start: i64,
    /// The batches appended and still current: base offset to last offset.
    pub(super) batches: BTreeMap<i64, i64>,
    /// The transactions of a transactional workload (empty in the others).
    pub(super) txns: Txns,
    /// Every high watermark a checkpoint of the log directory begun so far may have written
    /// (`replication-offset-checkpoint`): a reopened image holds one of them, clamped to its
    /// log, or none.
    pub(super) hw_checkpointed: BTreeSet<i64>,
    /// A checkpoint holding a high watermark has completed: no image may lack one.
    pub(super) hw_durable: bool,
}

/// What a transactional workload knows about its transactions (`txn_workload`).
#[derive(Default, Clone)]
pub(super) struct Txns {
    /// The transaction of each transactional data record, by offset (an index into `list`).
    pub(super) txn_of: BTreeMap<i64, usize>,
    /// Every transaction begun: once appended, its marker.
    pub(super) list: Vec<Txn>,
    /// The offsets of the markers.
    pub(super) markers: BTreeSet<i64>,
}

#[derive(Clone, Debug)]
pub(super) struct Txn {
    /// The marker's offset and whether it commits.
    pub(super) marker: Option<(i64, bool)>,
}

impl Model {
    /// Before an operation that writes the log directory's checkpoints: the high watermark it
    /// writes (`None`: the log's is not set, and none is written).
    pub(super) fn checkpoints(&mut self, high_watermark: Option<i64>) {
        self.hw_checkpointed.extend(high_watermark);
    }

    /// After such an operation returned.
    pub(super) fn checkpointed(&mut self, high_watermark: Option<i64>) {
        self.hw_durable |= high_watermark.is_some();
    }

    pub(super) fn required(&self) -> BTreeMap<i64, Rec> {
        self.durable
            .iter()
            .filter(|o| **o >= self.log_start && !self.cleanable.contains(o))
            .filter_map(|o| self.current.get(o).map(|r| (*o, r.clone())))
            .collect()
    }
}

/// The expectations for images captured during one operation.
pub(super) struct Expect {
    pub(super) required: BTreeMap<i64, Rec>,
    pub(super) op: String,
    pub(super) partition: Presence,
}

/// Whether the partition log may, or must, be gone from an image.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(super) enum Presence {
    /// Present, unless it holds no durable record yet.
    Kept,
    /// Being deleted: whole, or gone.
    Deleting,
    /// Deleted.
    Deleted,
}

pub(super) fn batch(base: i64, recs: &[Rec], codec: Compression) -> Vec<u8> {
    producer_batch(&BatchOptions::new(base, codec), recs)
}

/// A batch of `recs` with `options` (producer id, epoch, sequence, transactional bit).
pub(super) fn producer_batch(options: &BatchOptions, recs: &[Rec]) -> Vec<u8> {
    let records = recs
        .iter()
        .enumerate()
        .map(|(i, r)| NewRecord::new(i as i32, r.timestamp, Some(&r.key[..]), Some(&r.value[..])));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(options, records, &mut out)
        .unwrap();
    out
}
