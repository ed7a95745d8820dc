//! # seglog-record-format
//!
//! What Kafka `.log` files hold, byte for byte: record batches v2 (read and write), legacy
//! message sets v0/v1 (read), CRC-32C, and the four codecs (gzip, snappy in xerial framing,
//! Kafka's LZ4 frame, zstd). The byte layouts are drawn in `docs/format.md`.
//!
//! ```
//! use seglog_record_format::{BatchOptions, Compression, NewRecord, batches, build_batch};
//!
//! let mut log = Vec::new();
//! let records = [
//!     NewRecord::new(0, 1_700_000_000_000, Some(b"k".as_slice()), Some(b"v1".as_slice())),
//!     NewRecord::new(1, 1_700_000_000_005, None, Some(b"v2".as_slice())),
//! ];
//! build_batch(&BatchOptions::new(42, Compression::Snappy), records, &mut log)?;
//!
//! let mut scratch = Vec::new();
//! for framed in batches(&log) {
//!     let framed = framed?; // framing only: 17 bytes read
//!     framed.validate()?; // CRC-32C over bytes 21..end
//!     let batch = framed.v2()?;
//!     for record in batch.records_with(&mut scratch)? {
//!         let record = record?;
//!         assert!(record.offset() >= 42);
//!     }
//! }
//! # Ok::<(), seglog_record_format::Error>(())
//! ```
//!
//! ## Features
//!
//! `gzip`, `snappy`, `lz4` and `zstd` (all on by default) each compile one codec in; with one
//! off, a batch in that codec, read or built, is [`Error::CodecDisabled`] (naming the codec and
//! the batch), and [`Compression::is_enabled`] says which are in. Unlike the crates above it,
//! this one is portable: it does no I/O.
//!
//! ## Boundary
//!
//! This crate does no file I/O. It works on byte slices and writes into caller-provided
//! `Vec<u8>`s; the segment crate maps or reads files and hands slices in. It is the bottom of the
//! workspace and depends on no other seglog crate.
//!
//! ## The pieces
//!
//! - Framing: [`batches`] / [`batches_from`] walk a buffer of concatenated batches with Kafka's
//!   exact stop rules (17 or fewer bytes left or a partial trailing batch end cleanly; a size
//!   below 14 is corruption). Framing reads 17 bytes per batch and checks nothing else.
//! - Validation is a separate call: [`FramedBatch::validate`], [`RecordBatch::validate`]
//!   (CRC-32C over bytes 21..end), [`LegacyBatch::validate`] (CRC-32 over magic..end).
//! - [`RecordBatch`] reads the 61-byte [`RecordBatchHeader`] in place (zerocopy) and iterates
//!   [`RecordView`]s borrowed from the batch, or from a scratch buffer for compressed batches.
//! - [`BatchBuilder`] writes batches as Kafka's Java producer does; in-place helpers
//!   ([`set_base_offset`], [`set_max_timestamp`], ...) edit a batch in place.
//! - [`parse_control`] / [`RecordView::control`] decode control records.
//! - [`find_batch_with_offset`] and [`search_for_timestamp`] are Kafka's `FileRecords` lookups
//!   (the batch holding an offset; the first record at or past a timestamp) over a buffer.
//! - The codecs ([`gzip`], [`snappy`], [`lz4`], [`zstd`], or [`compress`] / [`decompress`] by
//!   [`Compression`]) are usable on their own.
//!
//! ## Invariants
//!
//! - No input, however malformed, makes decoding panic; every failure is an [`Error`] that names
//!   the byte position (relative to the parsed buffer), the field, and for checksums both CRCs.
//! - A declared length is checked against the bytes present before anything is allocated, and
//!   decompression never produces more than a caller-chosen limit
//!   ([`DEFAULT_MAX_DECOMPRESSED_BYTES`] unless told otherwise).
//! - All integers are big-endian, except inside LZ4 frames (little-endian by the LZ4 spec).
//! - For uncompressed and snappy batches, built bytes equal what Kafka's Java producer writes.
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(
        clippy::unwrap_used,
        clippy::indexing_slicing,
        clippy::panic,
        reason = "tests fail by panicking, and index fixed test vectors"
    )
)]

mod batch;
mod builder;
mod codec;
mod control;
mod error;
mod flex;
mod framing;
mod header;
mod kraft_voters;
mod legacy;
mod mutate;
mod record;
mod section;
mod setters;
mod varint;

pub use batch::{MIN_RECORD_SIZE, RecordBatch};
pub use builder::{
    BatchBuilder, BatchOptions, BuiltBatch, NewRecord, build_batch, write_empty_batch,
};
#[cfg(feature = "gzip")]
pub use codec::gzip;
#[cfg(feature = "lz4")]
pub use codec::lz4;
#[cfg(feature = "snappy")]
pub use codec::snappy;
#[cfg(feature = "zstd")]
pub use codec::zstd;
pub use codec::{Compressor, DEFAULT_MAX_DECOMPRESSED_BYTES, compress, decompress};
pub use control::{
    ControlRecord, ControlRecordType, ControlValue, EndTransactionMarker, LeaderChange, VoterIds,
    parse_control, parse_control_key,
};
pub use error::{Checksum, CorruptKind, Error, Field, Position, Result};
pub use framing::{
    Batch, BatchKind, Batches, FramedBatch, TimestampAndOffset, batches, batches_from,
    find_batch_with_offset, search_for_timestamp,
};
pub use header::{
    ATTR_COMPRESSION_MASK, ATTR_CONTROL, ATTR_DELETE_HORIZON, ATTR_TIMESTAMP_TYPE,
    ATTR_TRANSACTIONAL, ATTRIBUTES_OFFSET, Attributes, BASE_TIMESTAMP_OFFSET, CRC_OFFSET,
    Compression, HEADER_SIZE_UP_TO_MAGIC, LAST_OFFSET_DELTA_OFFSET, LOG_OVERHEAD, MAGIC_OFFSET,
    MAX_TIMESTAMP_OFFSET, MIN_RECORD_OVERHEAD, NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP, PARTITION_LEADER_EPOCH_OFFSET, PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD, RECORDS_COUNT_OFFSET, RecordBatchHeader, TimestampType,
};
pub use kraft_voters::{KraftEndpoint, KraftVoter, kraft_voters};
pub use legacy::{
    LegacyBatch, LegacyMessage, LegacyRecordView, LegacyRecords, RECORD_OVERHEAD_V0,
    RECORD_OVERHEAD_V1, write_legacy_message,
};
pub use mutate::{
    set_base_offset, set_delete_horizon, set_last_offset, set_max_timestamp,
    set_partition_leader_epoch,
};
pub use record::{
    Header, HeaderIter, OwnedHeader, Record, RecordView, Records, increment_sequence,
};
pub use section::RecordsSection;
pub use varint::{
    MAX_VARINT_SIZE, MAX_VARLONG_SIZE, VarintError, read_varint, read_varlong, varint_size,
    varlong_size, write_varint, write_varlong,
};

/// CRC-32C (Castagnoli) of `data`, hardware accelerated where the CPU allows (carry-less
/// multiplication folding: AVX-512 VPCLMULQDQ, PCLMULQDQ, ARMv8 PMULL). Every batch CRC goes
/// through here.
#[inline]
pub fn crc32c(data: &[u8]) -> u32 {
    crc_fast::crc32_iscsi(data)
}

#[cfg(test)]
mod tests {
    fn send_sync<T: Send + Sync>() {}

    #[test]
    fn public_types_cross_threads() {
        send_sync::<crate::Error>();
        send_sync::<crate::BatchBuilder>();
        send_sync::<crate::Compressor>();
        send_sync::<crate::RecordBatch<'static>>();
        send_sync::<crate::Records<'static>>();
        send_sync::<crate::Batches<'static>>();
    }

    /// crc-fast against the crc32c crate's (a separate implementation, on the crc32 instruction):
    /// every length up to 2 KiB at every start within 64 bytes (the SIMD paths' heads and tails),
    /// and large buffers, plus the catalogue's check value.
    #[test]
    fn crc32c_matches_the_reference_implementation() {
        assert_eq!(super::crc32c(b"123456789"), 0xe306_9283);
        let data: Vec<u8> = (0..(1_u32 << 20) + 77)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13).to_be_bytes()[3])
            .collect();
        for start in 0..64 {
            for len in 0..2048 {
                let slice = data.get(start..start + len).unwrap_or_default();
                assert_eq!(
                    super::crc32c(slice),
                    ::crc32c::crc32c(slice),
                    "start {start}, length {len}"
                );
            }
        }
        for len in [4095, 4096, 17 * 1024 + 3, 65_536, data.len()] {
            let slice = data.get(..len).unwrap_or_default();
            assert_eq!(
                super::crc32c(slice),
                ::crc32c::crc32c(slice),
                "length {len}"
            );
        }
    }
}
