//! One legacy log entry ([`LegacyBatch`]): a plain message, or a compressed wrapper whose value
//! holds an inner message set.

use super::{
    Inner, InnerWalker, LegacyMessage, LegacyRecordView, LegacyRecords, RECORD_OVERHEAD_V0, arr4,
    arr8,
};
use crate::codec::{self, DEFAULT_MAX_DECOMPRESSED_BYTES};
use crate::error::{Checksum, CorruptKind, Error, Field, Position, Result};
use crate::header::{Compression, LOG_OVERHEAD, TimestampType};
use crate::record::{Record, to_u64};

/// One legacy log entry (a plain message or a compressed wrapper) at a known buffer position.
#[derive(Debug, Clone, Copy)]
pub struct LegacyBatch<'a> {
    bytes: &'a [u8],
    message: LegacyMessage<'a>,
    position: u64,
}

impl<'a> LegacyBatch<'a> {
    /// Views the legacy entry at the start of `buf`.
    pub fn parse(buf: &'a [u8]) -> Result<Self> {
        Self::parse_at(buf, 0)
    }

    /// Views the legacy entry at the start of `buf`, which lies at `position` of the parsed buffer.
    pub fn parse_at(buf: &'a [u8], position: u64) -> Result<Self> {
        let at = move |off: usize| Position::Buffer(position.saturating_add(to_u64(off)));
        let Some(size) = buf.get(8..12) else {
            let kind = CorruptKind::Truncated {
                needed: 12,
                available: to_u64(buf.len()),
            };
            return Err(Error::corrupt(at(0), Field::LogOverhead, kind));
        };
        let size = i32::from_be_bytes(arr4(Some(size)));
        let Some(size_u) = usize::try_from(size)
            .ok()
            .filter(|&s| s >= RECORD_OVERHEAD_V0)
        else {
            let kind = CorruptKind::TooSmall {
                size: i64::from(size),
                minimum: 14,
            };
            return Err(Error::corrupt(at(8), Field::Size, kind));
        };
        let Some(bytes) = buf.get(..LOG_OVERHEAD + size_u) else {
            let kind = CorruptKind::Truncated {
                needed: to_u64(size_u + 12),
                available: to_u64(buf.len()),
            };
            return Err(Error::corrupt(at(8), Field::Size, kind));
        };
        let message =
            LegacyMessage::parse(
                bytes.get(LOG_OVERHEAD..).unwrap_or_default(),
                |o| at(o + 12),
            )?;
        Ok(LegacyBatch {
            bytes,
            message,
            position,
        })
    }

    /// Every byte of the entry.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// Where the entry starts in the parsed buffer.
    pub fn position(&self) -> u64 {
        self.position
    }
    /// `12 + size`.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }
    /// The entry's offset: the message offset, or for a wrapper the last inner offset.
    pub fn offset(&self) -> i64 {
        i64::from_be_bytes(arr8(self.bytes.get(..8)))
    }
    /// Kafka's `lastOffset()` for a legacy entry: its offset.
    pub fn last_offset(&self) -> i64 {
        self.offset()
    }
    /// The outer message.
    pub fn message(&self) -> &LegacyMessage<'a> {
        &self.message
    }
    /// 0 or 1.
    pub fn magic(&self) -> i8 {
        self.message.magic
    }
    /// The outer message's codec.
    pub fn compression(&self) -> Result<Compression> {
        let id = self.message.codec_id();
        Compression::from_id(id).ok_or_else(|| {
            let pos = Position::Buffer(self.position.saturating_add(17));
            Error::corrupt(pos, Field::Attributes, CorruptKind::UnknownCodec { id })
        })
    }
    /// Kafka's `maxTimestamp()` for a legacy entry: the outer timestamp, -1 for v0.
    pub fn max_timestamp(&self) -> i64 {
        self.message.timestamp.unwrap_or(-1)
    }
    /// The outer timestamp type (`None` for v0).
    pub fn timestamp_type(&self) -> Option<TimestampType> {
        self.message.timestamp_type()
    }
    /// The stored CRC-32.
    pub fn crc(&self) -> u32 {
        self.message.crc()
    }
    /// CRC-32 over magic..end.
    pub fn compute_crc(&self) -> u32 {
        self.message.compute_crc()
    }
    /// The stored CRC matches.
    pub fn is_valid(&self) -> bool {
        self.crc() == self.compute_crc()
    }
    /// An error carrying both CRCs when they differ.
    pub fn validate(&self) -> Result<()> {
        let actual = self.compute_crc();
        if actual == self.crc() {
            return Ok(());
        }
        Err(Error::ChecksumMismatch {
            position: Position::Buffer(self.position),
            algorithm: Checksum::Crc32,
            expected: self.crc(),
            actual,
        })
    }

    /// The records: the message itself, or a compressed wrapper's inner messages decompressed
    /// into `scratch` (at most [`DEFAULT_MAX_DECOMPRESSED_BYTES`]).
    pub fn records_with<'s>(&self, scratch: &'s mut Vec<u8>) -> Result<LegacyRecords<'s>>
    where
        'a: 's,
    {
        self.records_with_limit(scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
    }

    /// [`LegacyBatch::records_with`] with an explicit decompression cap.
    pub fn records_with_limit<'s>(
        &self,
        scratch: &'s mut Vec<u8>,
        limit: usize,
    ) -> Result<LegacyRecords<'s>>
    where
        'a: 's,
    {
        let codec = self.compression()?;
        let outer_ts_type = self.message.timestamp_type();
        if codec == Compression::None {
            let rec = LegacyRecordView {
                offset: self.offset(),
                timestamp: self.message.timestamp.unwrap_or(-1),
                timestamp_type: outer_ts_type,
                message: self.message,
            };
            return Ok(LegacyRecords {
                inner: Inner::One(Some(rec)),
            });
        }
        let Some(value) = self.message.value else {
            let kind = CorruptKind::Invalid {
                reason: "compressed wrapper message with a null value",
            };
            return Err(Error::corrupt(
                Position::Buffer(self.position),
                Field::Value,
                kind,
            ));
        };
        scratch.clear();
        codec::decompress_raw(codec, value, self.magic(), scratch, limit)
            .map_err(|e| e.into_error(Position::Buffer(self.position), codec))?;
        let buf: &'s [u8] = scratch.as_slice();
        // First pass: find the last inner offset (needed to make v1 relative offsets absolute).
        let mut last_inner = None;
        let mut walker = InnerWalker {
            buf,
            pos: 0,
            batch: self.position,
        };
        while let Some(item) = walker.next_entry() {
            let (off, _) = item?;
            last_inner = Some(off);
        }
        let Some(last_inner) = last_inner else {
            let kind = CorruptKind::Invalid {
                reason: "compressed wrapper message with no inner messages",
            };
            return Err(Error::corrupt(
                Position::Buffer(self.position),
                Field::InnerMessage,
                kind,
            ));
        };
        let base = if self.magic() > 0 {
            Some(self.offset().wrapping_sub(last_inner))
        } else {
            None
        };
        let wrapper_ts = (self.message.timestamp_type() == Some(TimestampType::LogAppendTime))
            .then_some(self.message.timestamp)
            .flatten();
        Ok(LegacyRecords {
            inner: Inner::Many {
                walker: InnerWalker {
                    buf,
                    pos: 0,
                    batch: self.position,
                },
                base,
                wrapper_ts,
                wrapper_ts_type: outer_ts_type,
                failed: false,
            },
        })
    }

    /// Every record, owned (legacy records have no headers).
    pub fn to_records(&self) -> Result<Vec<Record>> {
        let mut scratch = Vec::new();
        let mut out = Vec::new();
        for r in self.records_with(&mut scratch)? {
            out.push(r?.to_record());
        }
        Ok(out)
    }
}
