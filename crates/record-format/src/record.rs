//! v2 records: borrowed views, the record iterator with Kafka's parser rules, and owned records.
//!
//! A record is `length varint | attributes i8 | timestampDelta varlong | offsetDelta varint |
//! keyLength varint | key | valueLength varint | value | headerCount varint | headers`. The
//! iterator reproduces `DefaultRecord.readFrom` and `DefaultRecordBatch.RecordIterator`: a body
//! shorter than its declared length, a body whose fields do not use exactly the declared length,
//! a negative header count or key length, and bytes left after the last declared record are all
//! [`Error::Corrupt`]. As in Java, a negative key or value length other than -1 reads as null.

use crate::error::{CorruptKind, Error, Field, Position, Result};
use crate::varint::{self, VarintError};

mod each;
pub(crate) mod verify;

/// One record header: a key (UTF-8 in Kafka, kept as bytes here) and a nullable value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header<'a> {
    /// The key bytes; Kafka writes UTF-8 and never a null key.
    pub key: &'a [u8],
    /// The value, `None` for a null value.
    pub value: Option<&'a [u8]>,
}

impl<'a> Header<'a> {
    /// A header with a value.
    pub fn new(key: &'a [u8], value: &'a [u8]) -> Self {
        Header {
            key,
            value: Some(value),
        }
    }

    /// The key as UTF-8, if it is.
    pub fn key_str(&self) -> Option<&'a str> {
        std::str::from_utf8(self.key).ok()
    }

    /// An owned copy.
    pub fn to_owned_header(&self) -> OwnedHeader {
        OwnedHeader {
            key: self.key.to_vec(),
            value: self.value.map(<[u8]>::to_vec),
        }
    }
}

/// An owned record header.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct OwnedHeader {
    /// The key bytes.
    pub key: Vec<u8>,
    /// The value, `None` for null.
    pub value: Option<Vec<u8>>,
}

impl OwnedHeader {
    /// Borrows this header.
    pub fn as_header(&self) -> Header<'_> {
        Header {
            key: &self.key,
            value: self.value.as_deref(),
        }
    }
}

/// An owned, fully resolved record (absolute offset and timestamp), from any batch format.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Record {
    /// Absolute offset.
    pub offset: i64,
    /// Timestamp as Kafka reports it (the batch maxTimestamp under LogAppendTime; -1 for v0).
    pub timestamp: i64,
    /// Key, `None` for null.
    pub key: Option<Vec<u8>>,
    /// Value, `None` for null (a tombstone).
    pub value: Option<Vec<u8>>,
    /// Headers in order, duplicates kept.
    pub headers: Vec<OwnedHeader>,
}

/// A record decoded in place: every slice borrows the batch (or the decompression buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    offset: i64,
    timestamp: i64,
    sequence: i32,
    timestamp_delta: i64,
    offset_delta: i32,
    attributes: i8,
    size_in_bytes: u32,
    header_count: u32,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    headers: &'a [u8],
    position: Position,
}

impl<'a> RecordView<'a> {
    /// Where the record starts: in the parsed buffer, or inside its batch's decompressed records.
    pub fn position(&self) -> Position {
        self.position
    }
    /// Absolute offset: `baseOffset + offsetDelta`.
    pub fn offset(&self) -> i64 {
        self.offset
    }
    /// `baseTimestamp + timestampDelta`, or the batch maxTimestamp under LogAppendTime.
    pub fn timestamp(&self) -> i64 {
        self.timestamp
    }
    /// `baseSequence + offsetDelta` wrapping at `i32::MAX`, or -1 when the batch has none.
    pub fn sequence(&self) -> i32 {
        self.sequence
    }
    /// The raw timestamp delta.
    pub fn timestamp_delta(&self) -> i64 {
        self.timestamp_delta
    }
    /// The raw offset delta.
    pub fn offset_delta(&self) -> i32 {
        self.offset_delta
    }
    /// The record attributes byte (unused by Kafka, written 0).
    pub fn attributes(&self) -> i8 {
        self.attributes
    }
    /// Encoded size including the length varint.
    pub fn size_in_bytes(&self) -> u32 {
        self.size_in_bytes
    }
    /// The key, `None` for null.
    pub fn key(&self) -> Option<&'a [u8]> {
        self.key
    }
    /// The value, `None` for null.
    pub fn value(&self) -> Option<&'a [u8]> {
        self.value
    }
    /// Number of headers.
    pub fn header_count(&self) -> u32 {
        self.header_count
    }
    /// The encoded headers section (already validated).
    pub fn headers_bytes(&self) -> &'a [u8] {
        self.headers
    }
    /// The headers in order, duplicate keys kept.
    pub fn headers(&self) -> HeaderIter<'a> {
        HeaderIter {
            buf: self.headers,
            pos: 0,
            left: self.header_count,
        }
    }
    /// An owned copy.
    #[inline]
    pub fn to_record(&self) -> Record {
        Record {
            offset: self.offset,
            timestamp: self.timestamp,
            key: self.key.map(<[u8]>::to_vec),
            value: self.value.map(<[u8]>::to_vec),
            headers: self.owned_headers(),
        }
    }

    /// The headers, owned; no iterator is built for a record without any (most records).
    #[inline]
    fn owned_headers(&self) -> Vec<OwnedHeader> {
        if self.header_count == 0 {
            return Vec::new();
        }
        self.headers().map(|h| h.to_owned_header()).collect()
    }
}

/// Iterator over a record's headers. The bytes were validated when the record was decoded.
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    buf: &'a [u8],
    pos: usize,
    left: u32,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = Header<'a>;

    fn next(&mut self) -> Option<Header<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let (h, pos) = read_header(self.buf, self.pos).ok()?;
        self.pos = pos;
        Some(h)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.left as usize;
        (n, Some(n))
    }
}

/// Reads one header at `pos`; returns it and the position after it.
fn read_header(buf: &[u8], pos: usize) -> Result<(Header<'_>, usize), (usize, Field, CorruptKind)> {
    let mut p = pos;
    let key_len = varint::read_varint(buf, &mut p)
        .map_err(|e| (pos, Field::HeaderKeyLength, vkind(e, buf, pos)))?;
    if key_len < 0 {
        let kind = CorruptKind::Negative {
            value: i64::from(key_len),
        };
        return Err((pos, Field::HeaderKeyLength, kind));
    }
    let key = take(buf, p, key_len).ok_or((p, Field::HeaderKey, truncated(buf, p, key_len)))?;
    p += key.len();
    let vpos = p;
    let val_len = varint::read_varint(buf, &mut p)
        .map_err(|e| (vpos, Field::HeaderValueLength, vkind(e, buf, vpos)))?;
    let value = if val_len < 0 {
        None
    } else {
        let v = take(buf, p, val_len).ok_or((p, Field::HeaderValue, truncated(buf, p, val_len)))?;
        p += v.len();
        Some(v)
    };
    Ok((Header { key, value }, p))
}

#[inline]
fn take(buf: &[u8], at: usize, len: i32) -> Option<&[u8]> {
    let len = usize::try_from(len).ok()?;
    buf.get(at..at.checked_add(len)?)
}

fn truncated(buf: &[u8], at: usize, len: i32) -> CorruptKind {
    CorruptKind::Truncated {
        needed: u64::try_from(len).unwrap_or(0),
        available: to_u64(buf.len().saturating_sub(at)),
    }
}

/// A varint error as a corruption kind; `at` is where the varint starts.
pub(crate) fn vkind(e: VarintError, buf: &[u8], at: usize) -> CorruptKind {
    match e {
        VarintError::TooLong => CorruptKind::VarintTooLong,
        VarintError::Truncated => {
            let available = to_u64(buf.len().saturating_sub(at));
            CorruptKind::Truncated {
                needed: available + 1,
                available,
            }
        }
    }
}

#[inline]
pub(crate) fn to_u64(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

/// What a record iterator needs from its batch header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct RecordContext {
    pub(crate) base_offset: i64,
    pub(crate) base_timestamp: i64,
    pub(crate) log_append_time: Option<i64>,
    pub(crate) base_sequence: i32,
    pub(crate) count: i32,
    /// The batch's `lastOffsetDelta`: no record's offset delta may pass it.
    pub(crate) last_offset_delta: i32,
    /// Where the records section starts, for error positions.
    pub(crate) origin: Origin,
}

/// How to turn a position inside the records section into an error [`Position`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin {
    /// The section lies in the parsed buffer starting at this byte.
    Buffer(u64),
    /// The section was decompressed from the batch at this byte.
    Decompressed(u64),
}

impl Origin {
    fn at(self, pos: usize) -> Position {
        match self {
            Origin::Buffer(b) => Position::Buffer(b.saturating_add(to_u64(pos))),
            Origin::Decompressed(batch) => Position::Decompressed {
                batch,
                offset: to_u64(pos),
            },
        }
    }
}

/// Iterator over the records of one batch, yielding borrowed [`RecordView`]s.
///
/// It yields at most the declared count. After the last one it checks that no bytes remain
/// (Kafka's `ensureNoneRemaining`) and reports leftovers as the error in place of that record.
/// A record whose offset its batch cannot hold (an offset delta outside `0..=lastOffsetDelta`,
/// or not above the previous record's) is an error too: Kafka's reader returns such a record,
/// at an offset that belongs to another batch. After the first error it returns `None`.
#[derive(Debug, Clone)]
pub struct Records<'a> {
    buf: &'a [u8],
    pos: usize,
    read: i32,
    /// The previous record's offset delta, -1 before the first.
    previous_delta: i64,
    ctx: RecordContext,
    failed: bool,
}

impl<'a> Records<'a> {
    pub(crate) fn new(buf: &'a [u8], ctx: RecordContext) -> Self {
        Records {
            buf,
            pos: 0,
            read: 0,
            previous_delta: -1,
            ctx,
            failed: false,
        }
    }

    /// An iterator that yields nothing (a batch with count 0).
    pub(crate) fn empty(ctx: RecordContext) -> Self {
        Records {
            buf: &[],
            pos: 0,
            read: ctx.count,
            previous_delta: -1,
            ctx,
            failed: false,
        }
    }

    /// Records not yet yielded, by the declared count.
    pub fn remaining(&self) -> usize {
        usize::try_from(self.ctx.count.saturating_sub(self.read)).unwrap_or(0)
    }

    /// Marks the iterator failed and builds the error; cold, so the decode keeps it out of line.
    #[cold]
    fn err(&mut self, pos: usize, field: Field, kind: CorruptKind) -> Error {
        self.failed = true;
        Error::corrupt(self.ctx.origin.at(pos), field, kind)
    }

    /// Decodes the record at `self.pos` (the body of `DefaultRecord.readFrom`).
    #[expect(
        clippy::inline_always,
        reason = "one call site, the iterator's step, inlined into try_for_each_view's loop"
    )]
    #[inline(always)]
    fn decode(&mut self) -> Result<RecordView<'a>> {
        let buf = self.buf;
        let start = self.pos;
        let mut p = start;
        let body_len = match varint::read_varint(buf, &mut p) {
            Ok(n) => n,
            Err(e) => return Err(self.err(start, Field::RecordLength, vkind(e, buf, start))),
        };
        let remaining = buf.len() - p;
        let Some(body_len_u) = usize::try_from(body_len).ok().filter(|&n| n <= remaining) else {
            // Kafka: "Invalid record size: expected N bytes in record payload, but instead the
            // buffer has only M remaining bytes." (a negative length lands here too).
            let kind = if body_len < 0 {
                CorruptKind::Negative {
                    value: i64::from(body_len),
                }
            } else {
                CorruptKind::Truncated {
                    needed: u64::from(body_len.unsigned_abs()),
                    available: to_u64(remaining),
                }
            };
            return Err(self.err(start, Field::RecordLength, kind));
        };
        let body_start = p;
        let body_end = body_start + body_len_u;
        // Java reads the fields from the rest of the batch and compares the bytes used with the
        // declared length at the end; reading within the body rejects the same records (a field
        // that overruns the body is reported as truncated at that field) and never looks past it.
        let body = buf.get(..body_end).unwrap_or(buf);
        let Some(&attr) = body.get(p) else {
            return Err(self.err(
                p,
                Field::RecordAttributes,
                CorruptKind::Truncated {
                    needed: 1,
                    available: 0,
                },
            ));
        };
        p += 1;
        let ts_pos = p;
        let ts_delta = match varint::read_varlong(body, &mut p) {
            Ok(v) => v,
            Err(e) => return Err(self.err(ts_pos, Field::TimestampDelta, vkind(e, body, ts_pos))),
        };
        let off_pos = p;
        let off_delta = match varint::read_varint(body, &mut p) {
            Ok(v) => v,
            Err(e) => return Err(self.err(off_pos, Field::OffsetDelta, vkind(e, body, off_pos))),
        };
        let key = self.nullable(body, &mut p, Field::KeyLength, Field::Key)?;
        let value = self.nullable(body, &mut p, Field::ValueLength, Field::Value)?;
        // Most records have no headers: a count of zero is the single byte 0.
        let (header_count_u, headers_start) = if body.get(p) == Some(&0) {
            p += 1;
            (0, p)
        } else {
            self.headers(body, &mut p)?
        };
        self.check_delta(off_pos, off_delta)?;
        if p != body_end {
            let kind = CorruptKind::LengthMismatch {
                declared: u64::from(body_len.unsigned_abs()),
                actual: to_u64(p - body_start),
            };
            return Err(self.err(start, Field::RecordLength, kind));
        }
        self.pos = body_end;
        let ctx = &self.ctx;
        Ok(RecordView {
            offset: ctx.base_offset.wrapping_add(i64::from(off_delta)),
            timestamp: ctx
                .log_append_time
                .unwrap_or(ctx.base_timestamp.wrapping_add(ts_delta)),
            sequence: if ctx.base_sequence >= 0 {
                increment_sequence(ctx.base_sequence, off_delta)
            } else {
                -1
            },
            timestamp_delta: ts_delta,
            offset_delta: off_delta,
            attributes: (attr).cast_signed(),
            size_in_bytes: u32::try_from(body_end - start).unwrap_or(u32::MAX),
            header_count: header_count_u,
            key,
            value,
            headers: buf.get(headers_start..p).unwrap_or_default(),
            position: self.ctx.origin.at(start),
        })
    }

    /// The record's offset delta must lie in its batch and above the previous record's.
    #[inline]
    fn check_delta(&mut self, at: usize, delta: i32) -> Result<()> {
        let delta = i64::from(delta);
        let last_offset_delta = i64::from(self.ctx.last_offset_delta);
        if delta < 0 || delta > last_offset_delta {
            let kind = CorruptKind::OffsetDeltaOutOfRange {
                delta,
                last_offset_delta,
            };
            return Err(self.err(at, Field::OffsetDelta, kind));
        }
        if delta <= self.previous_delta {
            let kind = CorruptKind::OffsetDeltaNotIncreasing {
                delta,
                previous: self.previous_delta,
            };
            return Err(self.err(at, Field::OffsetDelta, kind));
        }
        self.previous_delta = delta;
        Ok(())
    }

    /// Reads the header count and walks the headers, validating them; returns the count and
    /// where the headers start.
    #[inline]
    fn headers(&mut self, body: &'a [u8], pos: &mut usize) -> Result<(u32, usize)> {
        let buf = self.buf;
        let mut p = *pos;
        let hc_pos = p;
        let header_count = match varint::read_varint(body, &mut p) {
            Ok(v) => v,
            Err(e) => return Err(self.err(hc_pos, Field::HeaderCount, vkind(e, body, hc_pos))),
        };
        if header_count < 0 {
            let kind = CorruptKind::Negative {
                value: i64::from(header_count),
            };
            return Err(self.err(hc_pos, Field::HeaderCount, kind));
        }
        let header_count_u = header_count.unsigned_abs();
        // Java compares with the rest of the whole buffer, not of the record body.
        let rest = to_u64(buf.len() - p);
        if u64::from(header_count_u) > rest {
            let kind = CorruptKind::TooManyHeaders {
                count: i64::from(header_count),
                remaining: rest,
            };
            return Err(self.err(hc_pos, Field::HeaderCount, kind));
        }
        let headers_start = p;
        for _ in 0..header_count_u {
            match read_header(body, p) {
                Ok((_, next)) => p = next,
                Err((at, field, kind)) => return Err(self.err(at, field, kind)),
            }
        }
        *pos = p;
        Ok((header_count_u, headers_start))
    }

    /// A nullable length-prefixed field (key or value), read within the record body.
    #[expect(
        clippy::inline_always,
        reason = "left out of line in the record decode, two calls per record (docs/perf/consume.md)"
    )]
    #[inline(always)]
    fn nullable(
        &mut self,
        body: &'a [u8],
        p: &mut usize,
        len_field: Field,
        field: Field,
    ) -> Result<Option<&'a [u8]>> {
        let at = *p;
        let len = match varint::read_varint(body, p) {
            Ok(v) => v,
            Err(e) => return Err(self.err(at, len_field, vkind(e, body, at))),
        };
        if len < 0 {
            return Ok(None);
        }
        if let Some(s) = take(body, *p, len) {
            *p += s.len();
            return Ok(Some(s));
        }
        let kind = truncated(body, *p, len);
        Err(self.err(*p, field, kind))
    }
}

/// `DefaultRecordBatch.incrementSequence`: wraps from `i32::MAX` to 0.
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    // Java int arithmetic, so wrapping everywhere (a corrupt negative delta must not panic).
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = Result<RecordView<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        self.step()
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        if self.failed {
            return (0, Some(0));
        }
        (0, Some(self.remaining()))
    }
}

#[cfg(test)]
mod tests;
