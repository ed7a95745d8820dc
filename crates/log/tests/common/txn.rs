//! Idempotent and transactional batches and end-transaction markers, built with their offsets
//! assigned (as a follower receives them, or as they lie in a segment).

use seglog_record_format::{
    BatchBuilder, BatchOptions, Compression, ControlRecordType, EndTransactionMarker, NewRecord,
};

/// The timestamp of every record built here.
pub(crate) const TS: i64 = 1_700_000_000_000;

/// A producer: its id and epoch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Producer {
    pub(crate) id: i64,
    pub(crate) epoch: i16,
}

/// Appends to `out` a data batch of `count` records at `base` with values `v<offset>`; with a
/// producer, its sequence starts at `seq`; `transactional` sets the transactional bit.
pub(crate) fn data(
    out: &mut Vec<u8>,
    base: i64,
    count: i32,
    producer: Option<(Producer, i32, bool)>,
    codec: Compression,
) {
    let mut options = BatchOptions::new(base, codec);
    if let Some((p, seq, transactional)) = producer {
        options.producer_id = p.id;
        options.producer_epoch = p.epoch;
        options.base_sequence = seq;
        options.transactional = transactional;
    }
    let values: Vec<String> = (0..count)
        .map(|i| format!("v{}", base + i64::from(i)))
        .collect();
    let records = values
        .iter()
        .enumerate()
        .map(|(i, v)| NewRecord::new(i as i32, TS, None, Some(v.as_bytes())));
    BatchBuilder::new().build(&options, records, out).unwrap();
}

/// Appends to `out` the end-transaction marker (`kind` COMMIT or ABORT) of `producer` at `offset`.
pub(crate) fn marker(
    out: &mut Vec<u8>,
    offset: i64,
    producer: Producer,
    coordinator_epoch: i32,
    kind: ControlRecordType,
) {
    let mut options = BatchOptions::new(offset, Compression::None);
    options.producer_id = producer.id;
    options.producer_epoch = producer.epoch;
    options.transactional = true;
    options.control = true;
    let key = kind.key_bytes();
    let value = EndTransactionMarker {
        version: 0,
        coordinator_epoch,
    }
    .value_bytes();
    let record = NewRecord::new(0, TS, Some(&key), Some(&value));
    BatchBuilder::new()
        .build(&options, std::iter::once(record), out)
        .unwrap();
}
