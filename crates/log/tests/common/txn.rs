//! Idempotent and transactional batches and end-transaction markers, built with their offsets
//! assigned (as a follower receives them, or as they lie in a segment): [`Data`] and [`Marker`],
//! and the short forms [`data`] and [`marker`].

use seglog_record_format::{
    BatchBuilder, BatchOptions, Compression, ControlRecordType, EndTransactionMarker, NewRecord,
};

/// The timestamp of every record built here unless a builder says otherwise.
pub(crate) const TS: i64 = 1_700_000_000_000;

/// A producer: its id and epoch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Producer {
    pub(crate) id: i64,
    pub(crate) epoch: i16,
}

/// A record's key and value.
pub(crate) type KeyValue = (Option<Vec<u8>>, Option<Vec<u8>>);

/// A data batch to build at `base`: by default uncompressed, without a producer, with no
/// partition leader epoch, every record stamped [`TS`].
pub(crate) struct Data {
    base: i64,
    records: Vec<KeyValue>,
    producer: Option<(Producer, i32, bool)>,
    codec: Compression,
    leader_epoch: Option<i32>,
    timestamp: i64,
}

impl Data {
    /// `count` records without a key, valued `v<offset>`.
    pub(crate) fn new(base: i64, count: i32) -> Self {
        let records = (0..count)
            .map(|i| (None, Some(format!("v{}", base + i64::from(i)).into_bytes())))
            .collect();
        Self::with_records(base, records)
    }

    /// These records, in order.
    pub(crate) fn with_records(base: i64, records: Vec<KeyValue>) -> Self {
        Self {
            base,
            records,
            producer: None,
            codec: Compression::None,
            leader_epoch: None,
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

    /// Every record's key.
    pub(crate) fn key(mut self, key: &[u8]) -> Self {
        for record in &mut self.records {
            record.0 = Some(key.to_vec());
        }
        self
    }

    /// Every record's value.
    pub(crate) fn value(mut self, value: &[u8]) -> Self {
        for record in &mut self.records {
            record.1 = Some(value.to_vec());
        }
        self
    }

    /// Every record's timestamp.
    pub(crate) fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The partition leader epoch in the header.
    pub(crate) fn leader_epoch(mut self, epoch: i32) -> Self {
        self.leader_epoch = Some(epoch);
        self
    }

    /// Appends the batch to `out`.
    pub(crate) fn write(self, out: &mut Vec<u8>) {
        let mut options = BatchOptions::new(self.base, self.codec);
        if let Some(epoch) = self.leader_epoch {
            options.partition_leader_epoch = epoch;
        }
        if let Some((p, seq, transactional)) = self.producer {
            options.producer_id = p.id;
            options.producer_epoch = p.epoch;
            options.base_sequence = seq;
            options.transactional = transactional;
        }
        let records = self.records.iter().enumerate().map(|(i, (k, v))| {
            NewRecord::new(i as i32, self.timestamp, k.as_deref(), v.as_deref())
        });
        BatchBuilder::new().build(&options, records, out).unwrap();
    }
}

/// An end-transaction marker to build: by default of coordinator epoch 0, stamped [`TS`], with
/// no partition leader epoch.
pub(crate) struct Marker {
    offset: i64,
    producer: Producer,
    kind: ControlRecordType,
    coordinator_epoch: i32,
    timestamp: i64,
    leader_epoch: Option<i32>,
}

impl Marker {
    /// The `kind` (COMMIT or ABORT) marker of `producer` at `offset`.
    pub(crate) fn new(offset: i64, producer: Producer, kind: ControlRecordType) -> Self {
        Self {
            offset,
            producer,
            kind,
            coordinator_epoch: 0,
            timestamp: TS,
            leader_epoch: None,
        }
    }

    pub(crate) fn coordinator_epoch(mut self, epoch: i32) -> Self {
        self.coordinator_epoch = epoch;
        self
    }

    pub(crate) fn timestamp(mut self, timestamp: i64) -> Self {
        self.timestamp = timestamp;
        self
    }

    /// The partition leader epoch in the header.
    pub(crate) fn leader_epoch(mut self, epoch: i32) -> Self {
        self.leader_epoch = Some(epoch);
        self
    }

    /// Appends the marker to `out`.
    pub(crate) fn write(self, out: &mut Vec<u8>) {
        let mut options = BatchOptions::new(self.offset, Compression::None);
        if let Some(epoch) = self.leader_epoch {
            options.partition_leader_epoch = epoch;
        }
        options.producer_id = self.producer.id;
        options.producer_epoch = self.producer.epoch;
        options.transactional = true;
        options.control = true;
        let key = self.kind.key_bytes();
        let value = EndTransactionMarker {
            version: 0,
            coordinator_epoch: self.coordinator_epoch,
        }
        .value_bytes();
        let record = NewRecord::new(0, self.timestamp, Some(&key), Some(&value));
        BatchBuilder::new()
            .build(&options, std::iter::once(record), out)
            .unwrap();
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
    Marker::new(offset, producer, kind)
        .coordinator_epoch(coordinator_epoch)
        .write(out);
}
