//! The crate's one error type.
//!
//! Every corruption error says where (a [`Position`] relative to the buffer being parsed; callers
//! that parsed a slice of a file add the file offset with [`Error::offset_by`]), which [`Field`]
//! was bad, and what was wrong with it ([`CorruptKind`]). Checksum mismatches carry the stored
//! and the computed CRC. Nothing here holds a `String` built from untrusted bytes.

use std::fmt;

use crate::Compression;

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong while framing, validating, decoding or building batches.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A structural problem in the bytes: a length, count or field that cannot be right.
    #[error("corrupt {field} at {position}: {kind}")]
    Corrupt {
        /// Where the bad field starts.
        position: Position,
        /// Which field was bad.
        field: Field,
        /// What was wrong with it.
        kind: CorruptKind,
    },
    /// The stored checksum does not match the one computed over the bytes.
    #[error(
        "{algorithm} mismatch in the batch at {position}: stored {expected:#010x}, computed {actual:#010x}"
    )]
    ChecksumMismatch {
        /// The start of the batch (or legacy message) whose checksum failed.
        position: Position,
        /// CRC-32C for v2 batches, CRC-32 (IEEE) for legacy messages.
        algorithm: Checksum,
        /// The checksum stored in the batch.
        expected: u32,
        /// The checksum computed over the batch's bytes.
        actual: u32,
    },
    /// A compressed records section could not be decompressed.
    #[error("invalid {codec} data in the batch at {position}: {reason}")]
    Decompress {
        /// The start of the batch whose records section is bad.
        position: Position,
        /// The codec named by the batch attributes.
        codec: Compression,
        /// What the codec reported.
        reason: &'static str,
    },
    /// Decompressing would produce more bytes than the caller's limit allows.
    #[error("the records of the batch at {position} decompress to more than {limit} bytes")]
    DecompressLimit {
        /// The start of the batch.
        position: Position,
        /// The limit in force, in bytes.
        limit: usize,
    },
    /// A compressed batch to be built whose records, uncompressed, pass the limit every reader
    /// decompresses ([`crate::DEFAULT_MAX_DECOMPRESSED_BYTES`]): it could never be read back.
    #[error(
        "the batch's records take {size} bytes uncompressed, more than the {limit} bytes a reader decompresses"
    )]
    RecordsTooLarge {
        /// The records' size before compression.
        size: usize,
        /// The limit.
        limit: usize,
    },
    /// Borrowed records were asked of a compressed batch; use a scratch buffer instead.
    #[error("the batch at {position} is compressed with {codec}; decode it with a scratch buffer")]
    Compressed {
        /// The start of the batch.
        position: Position,
        /// Its codec.
        codec: Compression,
    },
    /// A batch is compressed with (or a batch to build asks for) a codec whose cargo feature of
    /// seglog-record-format is off in this build.
    #[error(
        "{}{codec} compression is not in this build (seglog-record-format's `{codec}` cargo feature is off)",
        at_batch(.position.as_ref())
    )]
    CodecDisabled {
        /// The codec.
        codec: Compression,
        /// The start of the batch being decoded; `None` when building a batch.
        position: Option<Position>,
    },
    /// A builder or mutator was given input that Kafka would refuse to write.
    #[error("invalid input: {reason}")]
    InvalidInput {
        /// What was wrong.
        reason: &'static str,
    },
}

/// "the batch at P: " before a disabled codec's message, when the batch is known.
fn at_batch(position: Option<&Position>) -> String {
    position.map_or_else(String::new, |p| format!("the batch at {p}: "))
}

impl Error {
    /// The position of the error in the buffer that was parsed (for an error inside decompressed
    /// records: the position of their batch).
    pub fn position(&self) -> Option<u64> {
        match self {
            Error::Corrupt { position, .. }
            | Error::ChecksumMismatch { position, .. }
            | Error::Decompress { position, .. }
            | Error::DecompressLimit { position, .. }
            | Error::Compressed { position, .. } => Some(position.buffer_position()),
            Error::CodecDisabled { position, .. } => position.map(Position::buffer_position),
            Error::InvalidInput { .. } | Error::RecordsTooLarge { .. } => None,
        }
    }

    /// Shifts every buffer position by `base`, e.g. the file offset of the slice that was parsed.
    #[must_use]
    pub fn offset_by(mut self, base: u64) -> Self {
        match &mut self {
            Error::Corrupt { position, .. }
            | Error::ChecksumMismatch { position, .. }
            | Error::Decompress { position, .. }
            | Error::DecompressLimit { position, .. }
            | Error::Compressed { position, .. } => *position = position.offset_by(base),
            Error::CodecDisabled { position, .. } => {
                *position = position.map(|p| p.offset_by(base));
            }
            Error::InvalidInput { .. } | Error::RecordsTooLarge { .. } => {}
        }
        self
    }

    /// The kind of corruption, when this is a [`Error::Corrupt`].
    pub fn corrupt_kind(&self) -> Option<&CorruptKind> {
        match self {
            Error::Corrupt { kind, .. } => Some(kind),
            _ => None,
        }
    }

    /// The field that was bad, when this is a [`Error::Corrupt`].
    pub fn field(&self) -> Option<Field> {
        match self {
            Error::Corrupt { field, .. } => Some(*field),
            _ => None,
        }
    }

    pub(crate) fn corrupt(position: Position, field: Field, kind: CorruptKind) -> Self {
        Error::Corrupt {
            position,
            field,
            kind,
        }
    }
}

/// Where an error was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Position {
    /// A byte position in the buffer that was parsed.
    Buffer(u64),
    /// A byte position inside the decompressed records section of the batch at `batch`.
    Decompressed {
        /// The buffer position of the compressed batch.
        batch: u64,
        /// The byte position inside its decompressed records.
        offset: u64,
    },
}

impl Position {
    /// The position in the parsed buffer: the byte itself, or the start of the compressed batch.
    pub fn buffer_position(self) -> u64 {
        match self {
            Position::Buffer(p) => p,
            Position::Decompressed { batch, .. } => batch,
        }
    }

    /// This position with `base` added to its buffer part.
    #[must_use]
    pub fn offset_by(self, base: u64) -> Self {
        match self {
            Position::Buffer(p) => Position::Buffer(p.saturating_add(base)),
            Position::Decompressed { batch, offset } => Position::Decompressed {
                batch: batch.saturating_add(base),
                offset,
            },
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Buffer(p) => write!(f, "byte {p}"),
            Position::Decompressed { batch, offset } => {
                write!(
                    f,
                    "byte {offset} of the decompressed records of the batch at byte {batch}"
                )
            }
        }
    }
}

/// The checksum algorithm of a failed check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Checksum {
    /// CRC-32C (Castagnoli), magic 2.
    Crc32c,
    /// CRC-32 (IEEE), magic 0 and 1.
    Crc32,
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Checksum::Crc32c => "CRC-32C",
            Checksum::Crc32 => "CRC-32",
        })
    }
}

/// Which field of a batch, record or message was bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Field {
    /// The 12-byte log overhead (offset and size) or the bytes up to the magic.
    LogOverhead,
    /// The size (batchLength / messageSize) field at byte 8.
    Size,
    /// The magic byte at byte 16.
    Magic,
    /// The batch attributes (codec bits).
    Attributes,
    /// The v2 header as a whole (fewer than 61 bytes).
    Header,
    /// The v2 record count.
    RecordCount,
    /// The v2 `lastOffsetDelta`.
    LastOffsetDelta,
    /// The base offset (v2) or the entry's offset (legacy), at byte 0.
    BaseOffset,
    /// The records section (leftover or missing bytes).
    Records,
    /// A record's length varint.
    RecordLength,
    /// A record's attributes byte.
    RecordAttributes,
    /// A record's timestamp delta varlong.
    TimestampDelta,
    /// A record's offset delta varint.
    OffsetDelta,
    /// A record's key length.
    KeyLength,
    /// A record's key bytes.
    Key,
    /// A record's value length.
    ValueLength,
    /// A record's value bytes.
    Value,
    /// A record's header count.
    HeaderCount,
    /// A header key length.
    HeaderKeyLength,
    /// A header key.
    HeaderKey,
    /// A header value length.
    HeaderValueLength,
    /// A header value.
    HeaderValue,
    /// A control record key.
    ControlKey,
    /// A control record value.
    ControlValue,
    /// A legacy message timestamp.
    Timestamp,
    /// An inner message of a legacy compressed wrapper.
    InnerMessage,
    /// A compressed stream's framing (xerial snappy header, LZ4 frame header or block).
    CompressionFrame,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = match self {
            Field::LogOverhead => "log overhead",
            Field::Size => "size",
            Field::Magic => "magic",
            Field::Attributes => "attributes",
            Field::Header => "batch header",
            Field::RecordCount => "record count",
            Field::LastOffsetDelta => "last offset delta",
            Field::BaseOffset => "base offset",
            Field::Records => "records section",
            Field::RecordLength => "record length",
            Field::RecordAttributes => "record attributes",
            Field::TimestampDelta => "timestamp delta",
            Field::OffsetDelta => "offset delta",
            Field::KeyLength => "key length",
            Field::Key => "key",
            Field::ValueLength => "value length",
            Field::Value => "value",
            Field::HeaderCount => "header count",
            Field::HeaderKeyLength => "header key length",
            Field::HeaderKey => "header key",
            Field::HeaderValueLength => "header value length",
            Field::HeaderValue => "header value",
            Field::ControlKey => "control record key",
            Field::ControlValue => "control record value",
            Field::Timestamp => "timestamp",
            Field::InnerMessage => "inner message",
            Field::CompressionFrame => "compression frame",
        };
        f.write_str(name)
    }
}

/// What was wrong with a field.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CorruptKind {
    /// A size below the format's minimum (Kafka: "smaller than minimum record overhead").
    TooSmall {
        /// The size found.
        size: i64,
        /// The smallest legal size.
        minimum: i64,
    },
    /// The field or its payload runs past the end of the bytes present (Kafka: "premature EOF").
    Truncated {
        /// Bytes the field needs.
        needed: u64,
        /// Bytes actually left.
        available: u64,
    },
    /// A varint longer than 5 bytes or a varlong longer than 10.
    VarintTooLong,
    /// A count or length that must not be negative.
    Negative {
        /// The value found.
        value: i64,
    },
    /// A record's declared length differs from the bytes its fields used.
    LengthMismatch {
        /// The declared length.
        declared: u64,
        /// The bytes read.
        actual: u64,
    },
    /// Bytes remain after the last declared record (Kafka: "records still remaining").
    RecordsRemaining {
        /// How many bytes were left over.
        remaining: u64,
    },
    /// More headers declared than bytes remain.
    TooManyHeaders {
        /// The declared header count.
        count: i64,
        /// The bytes remaining.
        remaining: u64,
    },
    /// A codec id other than 0..=4.
    UnknownCodec {
        /// The id found.
        id: u8,
    },
    /// A magic this crate cannot read in this place.
    UnsupportedMagic {
        /// The magic found.
        magic: i8,
    },
    /// A batch declaring more records than its offset range holds (`recordsCount` above
    /// `lastOffsetDelta + 1`).
    CountExceedsOffsets {
        /// The declared record count.
        count: i64,
        /// The offsets the batch spans (`lastOffsetDelta + 1`).
        offsets: i64,
    },
    /// A record whose offset delta lies outside its batch (`0..=lastOffsetDelta`).
    OffsetDeltaOutOfRange {
        /// The record's offset delta.
        delta: i64,
        /// The batch's `lastOffsetDelta`.
        last_offset_delta: i64,
    },
    /// A record whose offset delta is not above the one before it (offsets going backwards).
    OffsetDeltaNotIncreasing {
        /// The record's offset delta.
        delta: i64,
        /// The previous record's offset delta.
        previous: i64,
    },
    /// A batch whose offsets do not follow the batch before it in its file.
    OffsetsBackwards {
        /// The batch's first offset.
        first_offset: i64,
        /// The batch's last offset.
        last_offset: i64,
        /// The previous batch's last offset (the segment's base offset minus one for the first).
        previous_last_offset: i64,
    },
    /// A batch whose last offset reaches the next segment's base offset.
    OffsetsPastNextSegment {
        /// The batch's last offset.
        last_offset: i64,
        /// The next segment's base offset.
        next_base_offset: i64,
    },
    /// A batch that follows a gap and overlaps the batch after it, which follows the one
    /// before: its base offset (outside the CRC) is damaged.
    OffsetsContradictedByNext {
        /// The batch's first offset.
        first_offset: i64,
        /// The batch's last offset.
        last_offset: i64,
        /// The last offset before it.
        previous_last_offset: i64,
        /// The next batch's first offset.
        next_first_offset: i64,
    },
    /// Any other structural rule, named.
    Invalid {
        /// The rule that was broken.
        reason: &'static str,
    },
}

impl fmt::Display for CorruptKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorruptKind::TooSmall { size, minimum } => {
                write!(f, "size {size} is smaller than the minimum {minimum}")
            }
            CorruptKind::Truncated { needed, available } => {
                write!(
                    f,
                    "needs {needed} bytes but only {available} remain (premature end)"
                )
            }
            CorruptKind::VarintTooLong => f.write_str("varint is too long"),
            CorruptKind::Negative { value } => write!(f, "negative value {value}"),
            CorruptKind::LengthMismatch { declared, actual } => {
                write!(f, "declared {declared} bytes but read {actual}")
            }
            CorruptKind::RecordsRemaining { remaining } => write!(
                f,
                "incorrect declared batch size, {remaining} bytes remain after the last record"
            ),
            CorruptKind::TooManyHeaders { count, remaining } => {
                write!(
                    f,
                    "{count} headers declared but only {remaining} bytes remain"
                )
            }
            CorruptKind::UnknownCodec { id } => write!(f, "unknown compression type id {id}"),
            CorruptKind::UnsupportedMagic { magic } => write!(f, "unsupported magic {magic}"),
            CorruptKind::CountExceedsOffsets { count, offsets } => write!(
                f,
                "{count} records declared but the batch spans only {offsets} offsets"
            ),
            CorruptKind::OffsetDeltaOutOfRange {
                delta,
                last_offset_delta,
            } => write!(
                f,
                "offset delta {delta} is outside the batch's range 0..={last_offset_delta}"
            ),
            CorruptKind::OffsetDeltaNotIncreasing { delta, previous } => write!(
                f,
                "offset delta {delta} does not follow the previous record's {previous}"
            ),
            CorruptKind::OffsetsBackwards {
                first_offset,
                last_offset,
                previous_last_offset,
            } => write!(
                f,
                "the batch's offsets {first_offset}..={last_offset} do not follow offset {previous_last_offset}"
            ),
            CorruptKind::OffsetsPastNextSegment {
                last_offset,
                next_base_offset,
            } => write!(
                f,
                "the batch's last offset {last_offset} reaches the next segment's base offset {next_base_offset}"
            ),
            CorruptKind::OffsetsContradictedByNext {
                first_offset,
                last_offset,
                previous_last_offset,
                next_first_offset,
            } => write!(
                f,
                "the batch's offsets {first_offset}..={last_offset} follow a gap after offset {previous_last_offset} and overlap the next batch at {next_first_offset}: its base offset is damaged"
            ),
            CorruptKind::Invalid { reason } => f.write_str(reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_position_field_and_kind() {
        let e = Error::corrupt(
            Position::Buffer(40),
            Field::Size,
            CorruptKind::TooSmall {
                size: 13,
                minimum: 14,
            },
        );
        assert_eq!(
            e.to_string(),
            "corrupt size at byte 40: size 13 is smaller than the minimum 14"
        );
        assert_eq!(e.clone().offset_by(100).position(), Some(140));
        assert_eq!(e.field(), Some(Field::Size));
    }

    #[test]
    fn decompressed_positions_shift_only_the_batch() {
        let p = Position::Decompressed {
            batch: 10,
            offset: 5,
        }
        .offset_by(1);
        assert_eq!(
            p,
            Position::Decompressed {
                batch: 11,
                offset: 5
            }
        );
        assert_eq!(p.buffer_position(), 11);
    }
}
