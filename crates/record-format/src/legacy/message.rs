//! One legacy message (`LegacyRecord`): crc, magic, attributes, the v1 timestamp, key and value.

use super::{RECORD_OVERHEAD_V0, RECORD_OVERHEAD_V1, arr4, arr8, len_i64};
use crate::error::{CorruptKind, Error, Field, Position, Result};
use crate::header::TimestampType;
use crate::record::to_u64;

/// One message of a legacy message set, without its 12-byte log overhead: crc onwards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyMessage<'a> {
    bytes: &'a [u8],
    pub(super) magic: i8,
    attributes: u8,
    pub(super) timestamp: Option<i64>,
    pub(super) key: Option<&'a [u8]>,
    pub(super) value: Option<&'a [u8]>,
}

impl<'a> LegacyMessage<'a> {
    /// Parses a message; `bytes` starts at the CRC and ends with the value. `at` maps an index in
    /// `bytes` to an error position.
    pub(super) fn parse(bytes: &'a [u8], at: impl Fn(usize) -> Position) -> Result<Self> {
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
