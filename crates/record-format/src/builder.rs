//! Building v2 batches the way Kafka's Java producer does (`MemoryRecordsBuilder`,
//! `DefaultRecordBatch.writeHeader`, `DefaultRecord.writeTo`).
//!
//! baseTimestamp is the first record's timestamp (or the delete horizon when one is set),
//! timestamp deltas are relative to it, maxTimestamp is the largest record timestamp (or the
//! append time under LogAppendTime), and lastOffsetDelta is the last record's offset delta. The
//! batch is appended to a caller-provided `Vec<u8>`; a [`BatchBuilder`] keeps its scratch buffer
//! and codec state, so the hot path does not allocate per batch.

use zerocopy::FromBytes;

use crate::codec::{Compressor, DEFAULT_MAX_DECOMPRESSED_BYTES};
use crate::error::{Error, Result};
use crate::header::{
    ATTRIBUTES_OFFSET, Attributes, CRC_OFFSET, Compression, NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD,
    RecordBatchHeader, TimestampType,
};
use crate::record::Header;
use crate::setters::with_setters;
use crate::varint::{varint_size, varlong_size, write_varint, write_varlong};

/// Everything about a batch except its records: [`BatchOptions::new`] or `Default`, then the
/// `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct BatchOptions {
    /// Offset of the first record; record offsets are `base_offset + offset_delta`.
    pub base_offset: i64,
    /// Partition leader epoch (-1 for none).
    pub partition_leader_epoch: i32,
    /// Producer id (-1 for none).
    pub producer_id: i64,
    /// Producer epoch (-1 for none).
    pub producer_epoch: i16,
    /// First sequence (-1 for none).
    pub base_sequence: i32,
    /// Attribute bit 4.
    pub transactional: bool,
    /// Attribute bit 5.
    pub control: bool,
    /// Attribute bit 3.
    pub timestamp_type: TimestampType,
    /// The broker append time written as maxTimestamp under LogAppendTime.
    pub log_append_time: i64,
    /// Sets attribute bit 6 and stores this as baseTimestamp (deltas are relative to it).
    pub delete_horizon_ms: Option<i64>,
    /// The codec of the records section.
    pub compression: Compression,
    /// The codec's level (KIP-390, see [`Compressor::compress_at`]); `None` for its default.
    pub compression_level: Option<i32>,
    /// Overrides lastOffsetDelta (Kafka's `overrideLastOffset`, used by compaction).
    pub last_offset_delta: Option<i32>,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            base_offset: 0,
            partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
            producer_id: NO_PRODUCER_ID,
            producer_epoch: NO_PRODUCER_EPOCH,
            base_sequence: NO_SEQUENCE,
            transactional: false,
            control: false,
            timestamp_type: TimestampType::CreateTime,
            log_append_time: NO_TIMESTAMP,
            delete_horizon_ms: None,
            compression: Compression::None,
            compression_level: None,
            last_offset_delta: None,
        }
    }
}

impl BatchOptions {
    /// Defaults with this base offset and codec.
    pub fn new(base_offset: i64, compression: Compression) -> Self {
        BatchOptions {
            base_offset,
            compression,
            ..Self::default()
        }
    }

    /// An idempotent producer's batch: its id, epoch and first sequence.
    #[must_use]
    pub fn with_producer(
        mut self,
        producer_id: i64,
        producer_epoch: i16,
        base_sequence: i32,
    ) -> Self {
        self.producer_id = producer_id;
        self.producer_epoch = producer_epoch;
        self.base_sequence = base_sequence;
        self
    }

    /// `MemoryRecordsBuilder.validateProducerState`.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.transactional && self.producer_id == NO_PRODUCER_ID {
            return Err(Error::InvalidInput {
                reason: "transactional batches need a producer id",
            });
        }
        if self.producer_id != NO_PRODUCER_ID {
            if self.producer_epoch == NO_PRODUCER_EPOCH {
                return Err(Error::InvalidInput {
                    reason: "a producer id needs a producer epoch",
                });
            }
            if self.base_sequence < 0 && !self.control {
                return Err(Error::InvalidInput {
                    reason: "a producer id needs a base sequence",
                });
            }
        }
        if let Some(h) = self.delete_horizon_ms
            && h < 0
        {
            return Err(Error::InvalidInput {
                reason: "the delete horizon must not be negative",
            });
        }
        Ok(())
    }
}

with_setters!(BatchOptions {
    base_offset: i64 => with_base_offset,
    partition_leader_epoch: i32 => with_partition_leader_epoch,
    producer_id: i64 => with_producer_id,
    producer_epoch: i16 => with_producer_epoch,
    base_sequence: i32 => with_base_sequence,
    transactional: bool => with_transactional,
    control: bool => with_control,
    timestamp_type: TimestampType => with_timestamp_type,
    log_append_time: i64 => with_log_append_time,
    delete_horizon_ms: Option<i64> => with_delete_horizon_ms,
    compression: Compression => with_compression,
    compression_level: Option<i32> => with_compression_level,
    last_offset_delta: Option<i32> => with_last_offset_delta,
});

/// One record to write: [`NewRecord::new`], then the `with_*` setters. Key, value and header
/// bytes are borrowed (from a `Vec`, a `String`, a `bytes::Bytes`, anything that derefs to
/// `[u8]`) and copied once, into the batch being built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct NewRecord<'r> {
    /// Offset relative to the batch base offset; strictly increasing within a batch.
    pub offset_delta: i32,
    /// Timestamp in ms, or -1 for none.
    pub timestamp: i64,
    /// Key, `None` for null.
    pub key: Option<&'r [u8]>,
    /// Value, `None` for null.
    pub value: Option<&'r [u8]>,
    /// Headers in order (duplicate keys allowed).
    pub headers: &'r [Header<'r>],
}

with_setters!(NewRecord<'r> {
    offset_delta: i32 => with_offset_delta,
    timestamp: i64 => with_timestamp,
    key: Option<&'r [u8]> => with_key,
    value: Option<&'r [u8]> => with_value,
});

impl<'r> NewRecord<'r> {
    /// A record without headers.
    pub fn new(
        offset_delta: i32,
        timestamp: i64,
        key: Option<&'r [u8]>,
        value: Option<&'r [u8]>,
    ) -> Self {
        NewRecord {
            offset_delta,
            timestamp,
            key,
            value,
            headers: &[],
        }
    }

    /// This record with headers.
    #[must_use]
    pub fn with_headers(mut self, headers: &'r [Header<'r>]) -> Self {
        self.headers = headers;
        self
    }

    /// Encoded size of the record body (everything after the length varint).
    fn body_size(&self, timestamp_delta: i64) -> Result<usize> {
        let mut size = 1 + varlong_size(timestamp_delta) + varint_size(self.offset_delta);
        size += bytes_size(self.key)? + bytes_size(self.value)?;
        size += varint_size(len_i32(self.headers.len())?);
        for h in self.headers {
            size += varint_size(len_i32(h.key.len())?) + h.key.len() + bytes_size(h.value)?;
        }
        Ok(size)
    }
}

fn len_i32(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::InvalidInput {
        reason: "a length does not fit in an int32",
    })
}

fn bytes_size(b: Option<&[u8]>) -> Result<usize> {
    Ok(match b {
        None => 1,
        Some(b) => varint_size(len_i32(b.len())?) + b.len(),
    })
}

fn write_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) {
    match b {
        None => write_varint(out, -1),
        Some(b) => {
            // Lengths were checked by `body_size`.
            write_varint(out, i32::try_from(b.len()).unwrap_or(i32::MAX));
            out.extend_from_slice(b);
        }
    }
}

/// Appends one record (`DefaultRecord.writeTo`); returns its encoded size.
fn write_record(out: &mut Vec<u8>, r: &NewRecord<'_>, timestamp_delta: i64) -> Result<usize> {
    let body = r.body_size(timestamp_delta)?;
    let body_i32 = len_i32(body)?;
    out.reserve(body + 5);
    write_varint(out, body_i32);
    out.push(0); // record attributes, unused
    write_varlong(out, timestamp_delta);
    write_varint(out, r.offset_delta);
    write_bytes(out, r.key);
    write_bytes(out, r.value);
    write_varint(out, i32::try_from(r.headers.len()).unwrap_or(i32::MAX));
    for h in r.headers {
        write_bytes(out, Some(h.key));
        write_bytes(out, h.value);
    }
    Ok(varint_size(body_i32) + body)
}

/// What a build produced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuiltBatch {
    /// Where the batch starts in the output buffer.
    pub position: usize,
    /// Its size in bytes.
    pub size_in_bytes: usize,
    /// Number of records.
    pub record_count: i32,
    /// The stored lastOffsetDelta.
    pub last_offset_delta: i32,
    /// The stored baseTimestamp.
    pub base_timestamp: i64,
    /// The stored maxTimestamp.
    pub max_timestamp: i64,
    /// Size of the records before compression.
    pub uncompressed_records_size: usize,
}

/// Builds v2 batches into caller buffers, reusing its scratch buffer and codec state.
#[derive(Debug, Default)]
pub struct BatchBuilder {
    pub(crate) compressor: Compressor,
    scratch: Vec<u8>,
}

impl BatchBuilder {
    /// A builder with empty state.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends one batch holding `records` to `out`. At least one record is required (see
    /// [`write_empty_batch`] for the empty batches compaction leaves). A compressed batch whose
    /// records take more than [`DEFAULT_MAX_DECOMPRESSED_BYTES`] before compression is refused
    /// ([`Error::RecordsTooLarge`]), since no reader would decompress it. On error `out` is
    /// restored.
    pub fn build<'r, I>(
        &mut self,
        opts: &BatchOptions,
        records: I,
        out: &mut Vec<u8>,
    ) -> Result<BuiltBatch>
    where
        I: IntoIterator<Item = NewRecord<'r>>,
    {
        let start = out.len();
        let result = self.build_inner(opts, records, out, start);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn build_inner<'r, I>(
        &mut self,
        opts: &BatchOptions,
        records: I,
        out: &mut Vec<u8>,
        start: usize,
    ) -> Result<BuiltBatch>
    where
        I: IntoIterator<Item = NewRecord<'r>>,
    {
        opts.validate()?;
        out.resize(start + RECORD_BATCH_OVERHEAD, 0);
        let compressed = opts.compression != Compression::None;
        self.scratch.clear();
        let mut count: i32 = 0;
        let mut base_ts = None::<i64>;
        let mut max_ts = NO_TIMESTAMP;
        let mut last_delta: Option<i32> = None;
        let mut raw_size = 0usize;
        for r in records {
            if r.timestamp < 0 && r.timestamp != NO_TIMESTAMP {
                return Err(Error::InvalidInput {
                    reason: "invalid negative timestamp",
                });
            }
            if r.offset_delta < 0 || last_delta.is_some_and(|d| r.offset_delta <= d) {
                return Err(Error::InvalidInput {
                    reason: "offset deltas must be non-negative and increasing",
                });
            }
            let base = *base_ts.get_or_insert(opts.delete_horizon_ms.unwrap_or(r.timestamp));
            let delta = r.timestamp.wrapping_sub(base);
            let dst = if compressed {
                &mut self.scratch
            } else {
                &mut *out
            };
            raw_size += write_record(dst, &r, delta)?;
            count = count.checked_add(1).ok_or(Error::InvalidInput {
                reason: "too many records",
            })?;
            max_ts = max_ts.max(r.timestamp);
            last_delta = Some(r.offset_delta);
        }
        let (Some(base_ts), Some(last_delta)) = (base_ts, last_delta) else {
            return Err(Error::InvalidInput {
                reason: "a batch needs at least one record",
            });
        };
        // Never write what no reader can read back: readers decompress at most this much.
        if compressed && raw_size > DEFAULT_MAX_DECOMPRESSED_BYTES {
            return Err(Error::RecordsTooLarge {
                size: raw_size,
                limit: DEFAULT_MAX_DECOMPRESSED_BYTES,
            });
        }
        if compressed {
            self.compressor.compress_at(
                opts.compression,
                opts.compression_level,
                &self.scratch,
                out,
            )?;
        }
        let max_ts = match opts.timestamp_type {
            TimestampType::LogAppendTime => opts.log_append_time,
            TimestampType::CreateTime => max_ts,
        };
        let fields = HeaderFields {
            last_offset_delta: opts.last_offset_delta.unwrap_or(last_delta),
            base_timestamp: base_ts,
            max_timestamp: max_ts,
            count,
            attributes: Attributes::compute(
                opts.compression,
                opts.timestamp_type,
                opts.transactional,
                opts.control,
                opts.delete_horizon_ms.is_some(),
            ),
        };
        let size = finish_header(out, start, opts, &fields)?;
        Ok(BuiltBatch {
            position: start,
            size_in_bytes: size,
            record_count: count,
            last_offset_delta: fields.last_offset_delta,
            base_timestamp: base_ts,
            max_timestamp: max_ts,
            uncompressed_records_size: raw_size,
        })
    }
}

pub(crate) struct HeaderFields {
    pub(crate) last_offset_delta: i32,
    pub(crate) base_timestamp: i64,
    pub(crate) max_timestamp: i64,
    pub(crate) count: i32,
    pub(crate) attributes: Attributes,
}

/// Fills the 61-byte header at `out[start..]` (`DefaultRecordBatch.writeHeader`) and the CRC.
pub(crate) fn finish_header(
    out: &mut [u8],
    start: usize,
    opts: &BatchOptions,
    f: &HeaderFields,
) -> Result<usize> {
    let batch = out.get_mut(start..).ok_or(Error::InvalidInput {
        reason: "header placeholder missing",
    })?;
    let size = batch.len();
    let length = i32::try_from(size - 12).map_err(|_| Error::InvalidInput {
        reason: "batch larger than 2 GiB",
    })?;
    let (h, _) = RecordBatchHeader::mut_from_prefix(batch).map_err(|_| Error::InvalidInput {
        reason: "header placeholder missing",
    })?;
    h.base_offset.set(opts.base_offset);
    h.batch_length.set(length);
    h.partition_leader_epoch.set(opts.partition_leader_epoch);
    h.magic = 2;
    h.attributes.set(f.attributes.0);
    h.last_offset_delta.set(f.last_offset_delta);
    h.base_timestamp.set(f.base_timestamp);
    h.max_timestamp.set(f.max_timestamp);
    h.producer_id.set(opts.producer_id);
    h.producer_epoch.set(opts.producer_epoch);
    h.base_sequence.set(opts.base_sequence);
    h.records_count.set(f.count);
    let crc = crate::crc32c(batch.get(ATTRIBUTES_OFFSET..).unwrap_or_default());
    if let Some(slot) = batch.get_mut(CRC_OFFSET..ATTRIBUTES_OFFSET) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
    Ok(size)
}

/// Appends a batch of `records` to `out` with a one-off [`BatchBuilder`].
pub fn build_batch<'r, I>(opts: &BatchOptions, records: I, out: &mut Vec<u8>) -> Result<BuiltBatch>
where
    I: IntoIterator<Item = NewRecord<'r>>,
{
    BatchBuilder::new().build(opts, records, out)
}

/// Appends an empty batch (`DefaultRecordBatch.writeEmptyHeader`): count 0, no records,
/// baseTimestamp -1, codec none, the given lastOffsetDelta and maxTimestamp. Compaction leaves
/// these to keep a producer's last sequence and epoch.
pub fn write_empty_batch(
    opts: &BatchOptions,
    last_offset_delta: i32,
    max_timestamp: i64,
    out: &mut Vec<u8>,
) -> Result<BuiltBatch> {
    let start = out.len();
    out.resize(start + RECORD_BATCH_OVERHEAD, 0);
    let fields = HeaderFields {
        last_offset_delta,
        base_timestamp: NO_TIMESTAMP,
        max_timestamp,
        count: 0,
        attributes: Attributes::compute(
            Compression::None,
            opts.timestamp_type,
            opts.transactional,
            opts.control,
            false,
        ),
    };
    let size = finish_header(out, start, opts, &fields)?;
    Ok(BuiltBatch {
        position: start,
        size_in_bytes: size,
        record_count: 0,
        last_offset_delta,
        base_timestamp: NO_TIMESTAMP,
        max_timestamp,
        uncompressed_records_size: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RecordBatch;

    #[test]
    fn builds_and_reads_back() {
        let hs = [
            Header::new(b"h", b"1"),
            Header {
                key: b"h",
                value: None,
            },
        ];
        let recs = [
            NewRecord::new(0, 1000, Some(b"k"), Some(b"v")).with_headers(&hs),
            NewRecord::new(1, 999, None, None),
            NewRecord::new(5, 1010, None, Some(b"x")),
        ];
        for codec in Compression::ALL {
            let mut out = vec![0xAA; 3];
            let built = build_batch(&BatchOptions::new(100, codec), recs, &mut out).unwrap();
            assert_eq!(built.position, 3);
            let b = RecordBatch::parse(&out[3..]).unwrap();
            b.validate().unwrap();
            assert_eq!(
                (b.base_timestamp(), b.max_timestamp(), b.last_offset_delta()),
                (1000, 1010, 5)
            );
            let got = b.to_records().unwrap();
            assert_eq!(got.len(), 3);
            assert_eq!(got[2].offset, 105);
            assert_eq!(got[1].timestamp, 999);
            assert_eq!(got[0].headers.len(), 2);
        }
    }

    #[test]
    fn rejects_what_kafka_rejects_and_restores_the_buffer() {
        let mut out = vec![1, 2, 3];
        let bad_ts = [NewRecord::new(0, -5, None, None)];
        assert!(build_batch(&BatchOptions::default(), bad_ts, &mut out).is_err());
        let bad_offsets = [
            NewRecord::new(1, 0, None, None),
            NewRecord::new(1, 0, None, None),
        ];
        assert!(build_batch(&BatchOptions::default(), bad_offsets, &mut out).is_err());
        assert!(build_batch(&BatchOptions::default(), [], &mut out).is_err());
        let txn = BatchOptions {
            transactional: true,
            ..BatchOptions::default()
        };
        assert!(build_batch(&txn, [NewRecord::new(0, 0, None, None)], &mut out).is_err());
        assert_eq!(out, [1, 2, 3]);
    }

    #[test]
    fn empty_batch_matches_write_empty_header() {
        let mut out = Vec::new();
        let opts = BatchOptions {
            base_offset: 10,
            producer_id: 5,
            producer_epoch: 1,
            base_sequence: 3,
            ..BatchOptions::default()
        };
        write_empty_batch(&opts, 4, 1234, &mut out).unwrap();
        let b = RecordBatch::parse(&out).unwrap();
        b.validate().unwrap();
        assert_eq!(out.len(), 61);
        assert_eq!(
            (
                b.records_count(),
                b.base_timestamp(),
                b.max_timestamp(),
                b.last_offset()
            ),
            (0, -1, 1234, 14)
        );
        assert_eq!(b.to_records().unwrap(), vec![]);
    }
}
