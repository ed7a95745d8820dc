//! The 61-byte v2 batch header as a zerocopy struct, the attribute bits, and format constants.

use std::fmt;

use zerocopy::byteorder::big_endian::{I16, I32, I64, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// Bytes before the size field ends: offset (8) + size (4). Batch size in bytes = 12 + size field.
pub const LOG_OVERHEAD: usize = 12;
/// Bytes up to and including the magic byte; framing reads only these (`HEADER_SIZE_UP_TO_MAGIC`).
pub const HEADER_SIZE_UP_TO_MAGIC: usize = 17;
/// The v2 batch header size (`RECORD_BATCH_OVERHEAD`).
pub const RECORD_BATCH_OVERHEAD: usize = 61;
/// The smallest size field framing accepts (`LegacyRecord.RECORD_OVERHEAD_V0`); below it is corruption.
pub const MIN_RECORD_OVERHEAD: i32 = 14;
/// Byte offset of the v2 CRC field.
pub const CRC_OFFSET: usize = 17;
/// Byte offset of the v2 attributes; the CRC-32C covers from here to the end of the batch.
pub const ATTRIBUTES_OFFSET: usize = 21;
/// Byte offset of the magic byte, in every format.
pub const MAGIC_OFFSET: usize = 16;
/// Byte offset of the v2 partition leader epoch (not covered by the CRC).
pub const PARTITION_LEADER_EPOCH_OFFSET: usize = 12;
/// Byte offset of the v2 `lastOffsetDelta`.
pub const LAST_OFFSET_DELTA_OFFSET: usize = 23;
/// Byte offset of the v2 `baseTimestamp`.
pub const BASE_TIMESTAMP_OFFSET: usize = 27;
/// Byte offset of the v2 `maxTimestamp`.
pub const MAX_TIMESTAMP_OFFSET: usize = 35;
/// Byte offset of the v2 `producerId`.
pub const PRODUCER_ID_OFFSET: usize = 43;
/// Byte offset of the v2 record count.
pub const RECORDS_COUNT_OFFSET: usize = 57;

/// `NO_TIMESTAMP`: -1.
pub const NO_TIMESTAMP: i64 = -1;
/// `NO_PRODUCER_ID`: -1.
pub const NO_PRODUCER_ID: i64 = -1;
/// `NO_PRODUCER_EPOCH`: -1.
pub const NO_PRODUCER_EPOCH: i16 = -1;
/// `NO_SEQUENCE`: -1.
pub const NO_SEQUENCE: i32 = -1;
/// `NO_PARTITION_LEADER_EPOCH`: -1.
pub const NO_PARTITION_LEADER_EPOCH: i32 = -1;

/// Attribute mask of the codec id (bits 0-2).
pub const ATTR_COMPRESSION_MASK: i16 = 0x07;
/// Attribute bit 3: LogAppendTime.
pub const ATTR_TIMESTAMP_TYPE: i16 = 0x08;
/// Attribute bit 4: transactional.
pub const ATTR_TRANSACTIONAL: i16 = 0x10;
/// Attribute bit 5: control batch.
pub const ATTR_CONTROL: i16 = 0x20;
/// Attribute bit 6: baseTimestamp holds the delete horizon (KIP-534).
pub const ATTR_DELETE_HORIZON: i16 = 0x40;

/// The v2 record batch header exactly as it lies on disk: 61 bytes, all big-endian.
///
/// Read it in place with [`RecordBatchHeader::ref_from_prefix`] (zerocopy); nothing is copied.
#[derive(FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned, Debug)]
#[repr(C)]
pub struct RecordBatchHeader {
    /// Offset of the first record (the batch may have gaps; see `last_offset_delta`).
    pub base_offset: I64,
    /// Bytes after this field: batch size in bytes minus 12.
    pub batch_length: I32,
    /// Leader epoch of the appending leader, -1 for none; not covered by the CRC.
    pub partition_leader_epoch: I32,
    /// 2.
    pub magic: i8,
    /// CRC-32C of bytes 21 to the end, stored as an unsigned int.
    pub crc: U32,
    /// Attribute bits; only the low byte is used.
    pub attributes: I16,
    /// `lastOffset - baseOffset`.
    pub last_offset_delta: I32,
    /// First record's timestamp, the delete horizon when attribute bit 6 is set, -1 when empty.
    pub base_timestamp: I64,
    /// Largest record timestamp, or the append time with LogAppendTime.
    pub max_timestamp: I64,
    /// Producer id, -1 for none.
    pub producer_id: I64,
    /// Producer epoch, -1 for none.
    pub producer_epoch: I16,
    /// Sequence of the first record, -1 for none.
    pub base_sequence: I32,
    /// Number of records (0 for an empty batch left by compaction).
    pub records_count: I32,
}

// The header size is part of the file format.
const _: () = assert!(size_of::<RecordBatchHeader>() == RECORD_BATCH_OVERHEAD);
const _: () = assert!(HEADER_SIZE_UP_TO_MAGIC == MAGIC_OFFSET + 1);
const _: () = assert!(ATTRIBUTES_OFFSET == CRC_OFFSET + 4);

/// A batch's compression codec (attribute bits 0-2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Compression {
    /// Id 0.
    #[default]
    None,
    /// Id 1: an RFC 1952 gzip stream.
    Gzip,
    /// Id 2: snappy in xerial's stream framing.
    Snappy,
    /// Id 3: Kafka's LZ4 frame subset.
    Lz4,
    /// Id 4: standard zstd frames.
    Zstd,
}

impl Compression {
    /// Every codec, in id order.
    pub const ALL: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];

    /// Whether this build can compress and decompress the codec: `None` always; the others
    /// when their cargo feature (`gzip`, `snappy`, `lz4`, `zstd`, all on by default) is on.
    pub const fn is_enabled(self) -> bool {
        match self {
            Compression::None => true,
            Compression::Gzip => cfg!(feature = "gzip"),
            Compression::Snappy => cfg!(feature = "snappy"),
            Compression::Lz4 => cfg!(feature = "lz4"),
            Compression::Zstd => cfg!(feature = "zstd"),
        }
    }

    /// The codec with this id, or `None` for ids above 4.
    pub fn from_id(id: u8) -> Option<Self> {
        match id {
            0 => Some(Compression::None),
            1 => Some(Compression::Gzip),
            2 => Some(Compression::Snappy),
            3 => Some(Compression::Lz4),
            4 => Some(Compression::Zstd),
            _ => None,
        }
    }

    /// The id stored in the attribute bits.
    pub fn id(self) -> u8 {
        match self {
            Compression::None => 0,
            Compression::Gzip => 1,
            Compression::Snappy => 2,
            Compression::Lz4 => 3,
            Compression::Zstd => 4,
        }
    }

    /// Kafka's name (`none`, `gzip`, `snappy`, `lz4`, `zstd`), as `kafka-dump-log` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A batch's timestamp type (attribute bit 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum TimestampType {
    /// The producer's timestamps (bit clear).
    #[default]
    CreateTime,
    /// The broker's append time, stored as maxTimestamp (bit set).
    LogAppendTime,
}

impl TimestampType {
    /// Kafka's display name (`CreateTime` / `LogAppendTime`).
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

impl fmt::Display for TimestampType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Decoded v2 attribute bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Attributes(pub i16);

impl Attributes {
    /// The codec id (bits 0-2), which may be an unknown id 5..=7.
    pub fn codec_id(self) -> u8 {
        // The mask keeps three bits, so the value fits in a u8.
        u8::try_from(self.0 & ATTR_COMPRESSION_MASK).unwrap_or(u8::MAX)
    }
    /// The codec, or `None` for an unknown id.
    pub fn compression(self) -> Option<Compression> {
        Compression::from_id(self.codec_id())
    }
    /// Bit 3.
    pub fn timestamp_type(self) -> TimestampType {
        if self.0 & ATTR_TIMESTAMP_TYPE == 0 {
            TimestampType::CreateTime
        } else {
            TimestampType::LogAppendTime
        }
    }
    /// Bit 4.
    pub fn is_transactional(self) -> bool {
        self.0 & ATTR_TRANSACTIONAL != 0
    }
    /// Bit 5.
    pub fn is_control(self) -> bool {
        self.0 & ATTR_CONTROL != 0
    }
    /// Bit 6.
    pub fn has_delete_horizon(self) -> bool {
        self.0 & ATTR_DELETE_HORIZON != 0
    }

    /// Builds the attribute word the way `DefaultRecordBatch.computeAttributes` does.
    pub fn compute(
        compression: Compression,
        timestamp_type: TimestampType,
        transactional: bool,
        control: bool,
        delete_horizon: bool,
    ) -> Self {
        let mut a = i16::from(compression.id());
        if timestamp_type == TimestampType::LogAppendTime {
            a |= ATTR_TIMESTAMP_TYPE;
        }
        if transactional {
            a |= ATTR_TRANSACTIONAL;
        }
        if control {
            a |= ATTR_CONTROL;
        }
        if delete_horizon {
            a |= ATTR_DELETE_HORIZON;
        }
        Attributes(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attributes_round_trip_every_bit() {
        for c in Compression::ALL {
            let a = Attributes::compute(c, TimestampType::LogAppendTime, true, false, true);
            assert_eq!(a.compression(), Some(c));
            assert_eq!(a.timestamp_type(), TimestampType::LogAppendTime);
            assert!(a.is_transactional() && !a.is_control() && a.has_delete_horizon());
        }
        assert_eq!(Attributes(0x07).compression(), None);
        assert_eq!(
            Attributes::compute(
                Compression::Lz4,
                TimestampType::CreateTime,
                false,
                true,
                false
            )
            .0,
            0x23
        );
    }

    #[test]
    fn header_reads_in_place() {
        let mut bytes = [0u8; 70];
        bytes[16] = 2;
        bytes[57..61].copy_from_slice(&7i32.to_be_bytes());
        let (h, rest) = RecordBatchHeader::ref_from_prefix(&bytes)
            .map_err(|_| ())
            .unwrap_or_else(|()| panic!());
        assert_eq!(h.magic, 2);
        assert_eq!(h.records_count.get(), 7);
        assert_eq!(rest.len(), 9);
    }
}
