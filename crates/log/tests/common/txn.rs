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

/// A data batch to build: `count` records at `base`, by default valued `v<offset>`, stamped
/// [`TS`], uncompressed and without a producer.
pub(crate) struct Data<'v> {
    base: i64,
    count: i32,
    producer: Option<(Producer, i32, bool)>,
    codec: Compression,
    value: Option<&'v [u8]>,
    timestamp: i64,
}

impl<'v> Data<'v> {
    pub(crate) fn new(base: i64, count: i32) -> Self {
        Self {
            base,
            count,
            producer: None,
            codec: Compression::None,
            value: None,
            timestamp: TS,
        }
    }

    /// The producer, its first sequence, and whether the batch is transactional.
    pub(crate) fn producer(mut self, producer: Producer, seq: i32, transactional: bool) -> Self {
        self.producer = Some((producer, seq, transactional));
        self
    }

    pub(crate) fn codec(mut self, codec: Compression) -> Self {
        self.codec = codec;
        self
    }

    /// Every record's value (instead of `v<offset>`).
    pub(crate) fn value(mut self, value: &'v [u8]) -> Self {
        self.value = Some(value);
        self
    }

    /// Every record's timestamp.
    pub(crate) fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// Appends the batch to `out`.
    pub(crate) fn write(self, out: &mut Vec<u8>) {
        let mut options = BatchOptions::new(self.base, self.codec);
        if let Some((p, seq, transactional)) = self.producer {
            options.producer_id = p.id;
            options.producer_epoch = p.epoch;
            options.base_sequence = seq;
            options.transactional = transactional;
        }
        let values: Vec<Vec<u8>> = (0..self.count)
            .map(|i| match self.value {
                Some(v) => v.to_vec(),
                None => format!("v{}", self.base + i64::from(i)).into_bytes(),
            })
            .collect();
        let records = values
            .iter()
            .enumerate()
            .map(|(i, v)| NewRecord::new(i as i32, self.timestamp, None, Some(v.as_slice())));
        BatchBuilder::new().build(&options, records, out).unwrap();
    }
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
    let mut batch = Data::new(base, count).codec(codec);
    if let Some((p, seq, transactional)) = producer {
        batch = batch.producer(p, seq, transactional);
    }
    batch.write(out);
}

/// Appends to `out` the end-transaction marker (`kind` COMMIT or ABORT) of `producer` at `offset`.
pub(crate) fn marker(
    out: &mut Vec<u8>,
    offset: i64,
    producer: Producer,
    coordinator_epoch: i32,
    kind: ControlRecordType,
) {
    marker_at(out, offset, producer, coordinator_epoch, kind, TS);
}

/// [`marker`] with its record stamped `timestamp`.
pub(crate) fn marker_at(
    out: &mut Vec<u8>,
    offset: i64,
    producer: Producer,
    coordinator_epoch: i32,
    kind: ControlRecordType,
    timestamp: i64,
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
    let record = NewRecord::new(0, timestamp, Some(&key), Some(&value));
    BatchBuilder::new()
        .build(&options, std::iter::once(record), out)
        .unwrap();
}
