//! Legacy message sets, magic 0 and 1 (read-only), as `LegacyRecord` and
//! `AbstractLegacyRecordBatch` read them.
//!
//! ```text
//! offset i64 | size i32 | crc u32 | magic i8 | attributes i8 | [timestamp i64 (v1)] |
//! keyLength i32 (-1 null) | key | valueLength i32 (-1 null) | value
//! ```
//!
//! The CRC is CRC-32 (IEEE) over magic..end. A compressed entry is a wrapper whose value is a
//! compressed inner message set; the wrapper's offset is the last inner offset. Inner offsets are
//! relative in v1 (absolute = wrapper offset - last inner relative + inner) and absolute in v0.

use crate::codec::{self, DEFAULT_MAX_DECOMPRESSED_BYTES};
use crate::error::{Checksum, CorruptKind, Error, Field, Position, Result};
use crate::header::{Compression, LOG_OVERHEAD, TimestampType};
use crate::record::{Record, to_u64};

/// Record overhead of a v0 message after the log overhead: crc, magic, attributes, key and value lengths.
pub const RECORD_OVERHEAD_V0: usize = 14;
/// Record overhead of a v1 message: v0 plus the timestamp.
pub const RECORD_OVERHEAD_V1: usize = 22;

/// One message of a legacy message set, without its 12-byte log overhead: crc onwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyMessage<'a> {
    bytes: &'a [u8],
    magic: i8,
    attributes: u8,
    timestamp: Option<i64>,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
}

impl<'a> LegacyMessage<'a> {
    /// Parses a message; `bytes` starts at the CRC and ends with the value. `at` maps an index in
    /// `bytes` to an error position.
    fn parse(bytes: &'a [u8], at: impl Fn(usize) -> Position) -> Result<Self> {
        if bytes.len() < RECORD_OVERHEAD_V0 {
            let kind = CorruptKind::TooSmall {
                size: len_i64(bytes.len()),
                minimum: 14,
            };
            return Err(Error::corrupt(at(0), Field::Size, kind));
        }
        let magic = (bytes.get(4).copied().unwrap_or(0)).cast_signed();
        let attributes = bytes.get(5).copied().unwrap_or(0);
        let (timestamp, key_at) = match magic {
            0 => (None, 6),
            1 => {
                if bytes.len() < RECORD_OVERHEAD_V1 {
                    let kind = CorruptKind::TooSmall {
                        size: len_i64(bytes.len()),
                        minimum: 22,
                    };
                    return Err(Error::corrupt(at(0), Field::Size, kind));
                }
                (Some(i64::from_be_bytes(arr8(bytes.get(6..14)))), 14)
            }
            _ => {
                return Err(Error::corrupt(
                    at(4),
                    Field::Magic,
                    CorruptKind::UnsupportedMagic { magic },
                ));
            }
        };
        let (key, value_at) = sized(bytes, key_at, Field::KeyLength, Field::Key, &at)?;
        let (value, _) = sized(bytes, value_at, Field::ValueLength, Field::Value, &at)?;
        Ok(LegacyMessage {
            bytes,
            magic,
            attributes,
            timestamp,
            key,
            value,
        })
    }

    /// The stored CRC-32.
    pub fn crc(&self) -> u32 {
        u32::from_be_bytes(arr4(self.bytes.get(..4)))
    }
    /// CRC-32 (IEEE) over magic..end.
    pub fn compute_crc(&self) -> u32 {
        crc32fast::hash(self.bytes.get(4..).unwrap_or_default())
    }
    /// 0 or 1.
    pub fn magic(&self) -> i8 {
        self.magic
    }
    /// The attribute byte.
    pub fn attributes(&self) -> u8 {
        self.attributes
    }
    /// The codec id in bits 0-2.
    pub fn codec_id(&self) -> u8 {
        self.attributes & 0x07
    }
    /// Attribute bit 3 (v1 only; v0 has no timestamps).
    pub fn timestamp_type(&self) -> Option<TimestampType> {
        match (self.magic, self.attributes & 0x08) {
            (0, _) => None,
            (_, 0) => Some(TimestampType::CreateTime),
            _ => Some(TimestampType::LogAppendTime),
        }
    }
    /// The stored timestamp (v1), `None` for v0.
    pub fn timestamp(&self) -> Option<i64> {
        self.timestamp
    }
    /// The key, `None` for null.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.key
    }
    /// The value, `None` for null.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }
    /// Bytes from the CRC to the end (the size field's value).
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }
}

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn arr8(b: Option<&[u8]>) -> [u8; 8] {
    b.and_then(|b| <[u8; 8]>::try_from(b).ok())
        .unwrap_or_default()
}

fn arr4(b: Option<&[u8]>) -> [u8; 4] {
    b.and_then(|b| <[u8; 4]>::try_from(b).ok())
        .unwrap_or_default()
}

/// An int32-length-prefixed nullable field at `p`; returns it and the position after it.
fn sized<'a>(
    bytes: &'a [u8],
    p: usize,
    len_field: Field,
    field: Field,
    at: &impl Fn(usize) -> Position,
) -> Result<(Option<&'a [u8]>, usize)> {
    let Some(len) = bytes.get(p..p + 4) else {
        let kind = CorruptKind::Truncated {
            needed: 4,
            available: to_u64(bytes.len().saturating_sub(p)),
        };
        return Err(Error::corrupt(at(p), len_field, kind));
    };
    let len = i32::from_be_bytes(arr4(Some(len)));
    let Ok(n) = usize::try_from(len) else {
        return Ok((None, p + 4));
    };
    if let Some(s) = bytes.get(p + 4..).and_then(|rest| rest.get(..n)) {
        return Ok((Some(s), p + 4 + n));
    }
    let available = to_u64(bytes.len().saturating_sub(p + 4));
    let kind = CorruptKind::Truncated {
        needed: to_u64(n),
        available,
    };
    Err(Error::corrupt(at(p + 4), field, kind))
}

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

/// A record read from a legacy entry, with its absolute offset and effective timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyRecordView<'a> {
    offset: i64,
    timestamp: i64,
    timestamp_type: Option<TimestampType>,
    message: LegacyMessage<'a>,
}

impl<'a> LegacyRecordView<'a> {
    /// Absolute offset.
    pub fn offset(&self) -> i64 {
        self.offset
    }
    /// Effective timestamp: the wrapper's under LogAppendTime, -1 for v0.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }
    /// Effective timestamp type (the wrapper's for inner messages), `None` for v0.
    pub fn timestamp_type(&self) -> Option<TimestampType> {
        self.timestamp_type
    }
    /// The message itself (its own CRC, magic, attributes).
    pub fn message(&self) -> &LegacyMessage<'a> {
        &self.message
    }
    /// The key, `None` for null.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.message.key
    }
    /// The value, `None` for null.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.message.value
    }
    /// An owned copy.
    pub fn to_record(&self) -> Record {
        Record {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key().map(<[u8]>::to_vec),
            value: self.value().map(<[u8]>::to_vec),
            headers: Vec::new(),
        }
    }
}

/// Walks the inner entries of a decompressed wrapper value, as Kafka's `DataLogInputStream`:
/// a partial trailing entry ends the set; a size below 14 is corruption.
#[derive(Debug, Clone)]
struct InnerWalker<'s> {
    buf: &'s [u8],
    pos: usize,
    batch: u64,
}

impl<'s> InnerWalker<'s> {
    fn next_entry(&mut self) -> Option<Result<(i64, LegacyMessage<'s>)>> {
        let start = self.pos;
        let head = self.buf.get(start..start + LOG_OVERHEAD)?;
        let offset = i64::from_be_bytes(arr8(head.get(..8)));
        let size = i32::from_be_bytes(arr4(head.get(8..12)));
        let batch = self.batch;
        let at = move |o: usize| Position::Decompressed {
            batch,
            offset: to_u64(start + o),
        };
        let Some(size) = usize::try_from(size)
            .ok()
            .filter(|&s| s >= RECORD_OVERHEAD_V0)
        else {
            self.pos = self.buf.len();
            let kind = CorruptKind::TooSmall {
                size: i64::from(size),
                minimum: 14,
            };
            return Some(Err(Error::corrupt(at(8), Field::InnerMessage, kind)));
        };
        let body = self
            .buf
            .get(start + LOG_OVERHEAD..start + LOG_OVERHEAD + size)?;
        self.pos = start + LOG_OVERHEAD + size;
        Some(
            LegacyMessage::parse(body, |o| at(o + 12))
                .map(|m| (offset, m))
                .inspect_err(|_| {
                    self.pos = self.buf.len();
                }),
        )
    }
}

#[derive(Debug, Clone)]
enum Inner<'s> {
    One(Option<LegacyRecordView<'s>>),
    Many {
        walker: InnerWalker<'s>,
        base: Option<i64>,
        wrapper_ts: Option<i64>,
        wrapper_ts_type: Option<TimestampType>,
        failed: bool,
    },
}

/// Iterator over the records of a legacy entry.
#[derive(Debug, Clone)]
pub struct LegacyRecords<'s> {
    inner: Inner<'s>,
}

impl<'s> Iterator for LegacyRecords<'s> {
    type Item = Result<LegacyRecordView<'s>>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.inner {
            Inner::One(r) => r.take().map(Ok),
            Inner::Many {
                walker,
                base,
                wrapper_ts,
                wrapper_ts_type,
                failed,
            } => {
                if *failed {
                    return None;
                }
                let batch = walker.batch;
                let at = walker.pos;
                let (off, message) = match walker.next_entry()? {
                    Ok(x) => x,
                    Err(e) => {
                        *failed = true;
                        return Some(Err(e));
                    }
                };
                if message.codec_id() != 0 {
                    *failed = true;
                    let kind = CorruptKind::Invalid {
                        reason: "inner message of a compressed wrapper is compressed",
                    };
                    let pos = Position::Decompressed {
                        batch,
                        offset: to_u64(at),
                    };
                    return Some(Err(Error::corrupt(pos, Field::InnerMessage, kind)));
                }
                let offset = base.map_or(off, |b| b.wrapping_add(off));
                let (timestamp, timestamp_type) = if message.magic == 0 {
                    (-1, None)
                } else {
                    (
                        wrapper_ts.or(message.timestamp).unwrap_or(-1),
                        wrapper_ts_type.or(message.timestamp_type()),
                    )
                };
                Some(Ok(LegacyRecordView {
                    offset,
                    timestamp,
                    timestamp_type,
                    message,
                }))
            }
        }
    }
}

/// Builds one legacy message entry (test and fixture support; Kafka no longer writes these).
///
/// `timestamp` must be `Some` exactly when `magic` is 1.
#[doc(hidden)]
pub fn write_legacy_message(
    out: &mut Vec<u8>,
    offset: i64,
    magic: i8,
    attributes: u8,
    timestamp: Option<i64>,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) {
    let start = out.len();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&[0; 8]); // size and crc, filled below
    out.extend_from_slice(&magic.to_be_bytes());
    out.push(attributes);
    if let Some(ts) = timestamp {
        out.extend_from_slice(&ts.to_be_bytes());
    }
    for field in [key, value] {
        match field {
            Some(b) => {
                out.extend_from_slice(&i32::try_from(b.len()).unwrap_or(i32::MAX).to_be_bytes());
                out.extend_from_slice(b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let size = i32::try_from(out.len() - start - LOG_OVERHEAD).unwrap_or(i32::MAX);
    let crc = crc32fast::hash(out.get(start + 16..).unwrap_or_default());
    if let Some(slot) = out.get_mut(start + 8..start + 16) {
        slot.get_mut(..4)
            .unwrap_or_default()
            .copy_from_slice(&size.to_be_bytes());
        slot.get_mut(4..)
            .unwrap_or_default()
            .copy_from_slice(&crc.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v0_and_v1_plain_messages() {
        let mut buf = Vec::new();
        write_legacy_message(&mut buf, 7, 0, 0, None, None, Some(b"v0"));
        let b = LegacyBatch::parse(&buf).unwrap();
        assert_eq!(b.size_in_bytes(), 12 + 14 + 2);
        b.validate().unwrap();
        let recs = b.to_records().unwrap();
        assert_eq!(
            recs,
            vec![Record {
                offset: 7,
                timestamp: -1,
                key: None,
                value: Some(b"v0".to_vec()),
                headers: vec![]
            }]
        );

        let mut buf = Vec::new();
        write_legacy_message(&mut buf, 9, 1, 0, Some(1234), Some(b"k"), None);
        let b = LegacyBatch::parse(&buf).unwrap();
        assert_eq!(b.size_in_bytes(), 12 + 22 + 1);
        assert_eq!(b.max_timestamp(), 1234);
        b.validate().unwrap();
        assert_eq!(b.to_records().unwrap()[0].timestamp, 1234);
    }

    #[test]
    fn crc_mismatch_is_reported_with_both_values() {
        let mut buf = Vec::new();
        write_legacy_message(&mut buf, 0, 1, 0, Some(1), None, Some(b"x"));
        let last = buf.len() - 1;
        buf[last] ^= 1;
        let b = LegacyBatch::parse(&buf).unwrap();
        let Err(Error::ChecksumMismatch {
            expected,
            actual,
            algorithm,
            ..
        }) = b.validate()
        else {
            panic!()
        };
        assert_eq!(algorithm, Checksum::Crc32);
        assert_ne!(expected, actual);
    }
}
