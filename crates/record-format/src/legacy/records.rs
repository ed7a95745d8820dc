//! The records of a legacy entry: the message itself, or the inner messages of a compressed
//! wrapper with their absolute offsets and effective timestamps.

use super::{LegacyMessage, RECORD_OVERHEAD_V0, arr4, arr8};
use crate::error::{CorruptKind, Error, Field, Position, Result};
use crate::header::{LOG_OVERHEAD, TimestampType};
use crate::record::{Record, to_u64};

/// A record read from a legacy entry, with its absolute offset and effective timestamp.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LegacyRecordView<'a> {
    pub(super) offset: i64,
    pub(super) timestamp: i64,
    pub(super) timestamp_type: Option<TimestampType>,
    pub(super) message: LegacyMessage<'a>,
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
pub(super) struct InnerWalker<'s> {
    pub(super) buf: &'s [u8],
    pub(super) pos: usize,
    pub(super) batch: u64,
}

impl<'s> InnerWalker<'s> {
    pub(super) fn next_entry(&mut self) -> Option<Result<(i64, LegacyMessage<'s>)>> {
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
pub(super) enum Inner<'s> {
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
    pub(super) inner: Inner<'s>,
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
