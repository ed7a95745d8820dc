//! Iteration over a buffer of concatenated batches with Kafka's exact stop rules
//! (`FileLogInputStream.nextBatch`):
//!
//! ```text
//! if position >= end - 17: END                      (17 or fewer bytes left: clean end)
//! read 17 bytes; size = i32 at 8
//! if size < 14: corruption at position              (a zero-filled tail lands here)
//! if position > end - 12 - size: END                (partial trailing batch: clean end)
//! magic = byte 16: v2 if magic > 1, else legacy; position += 12 + size
//! ```
//!
//! Framing reads only those 17 bytes per batch and checks no CRC. Validation
//! ([`FramedBatch::validate`]) and decoding ([`FramedBatch::decode`]) are separate calls.

use crate::batch::RecordBatch;
use crate::error::{Checksum, CorruptKind, Error, Field, Position, Result};
use crate::header::{HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_RECORD_OVERHEAD};
use crate::legacy::LegacyBatch;
use crate::record::{Record, to_u64};

/// Iterates the batches of `buf` from its start.
pub fn batches(buf: &[u8]) -> Batches<'_> {
    Batches {
        buf,
        pos: 0,
        done: false,
    }
}

/// Iterates the batches of `buf` starting at byte `position` (e.g. from an index lookup).
pub fn batches_from(buf: &[u8], position: usize) -> Batches<'_> {
    Batches {
        buf,
        pos: position,
        done: false,
    }
}

/// Iterator over framed batches. Yields `Err` once (a size below 14) and then stops.
#[derive(Debug, Clone)]
pub struct Batches<'a> {
    buf: &'a [u8],
    pos: usize,
    done: bool,
}

impl Batches<'_> {
    /// The position of the next batch to frame; after the iterator ends cleanly, where the valid
    /// framing ended (any bytes after it are a partial batch or fewer than 18 bytes).
    pub fn position(&self) -> usize {
        self.pos
    }
}

impl<'a> Iterator for Batches<'a> {
    type Item = Result<FramedBatch<'a>>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let pos = self.pos;
        let end = self.buf.len();
        // Kafka: `if (position >= end - HEADER_SIZE_UP_TO_MAGIC) return null`.
        if end < HEADER_SIZE_UP_TO_MAGIC || pos >= end - HEADER_SIZE_UP_TO_MAGIC {
            self.done = true;
            return None;
        }
        let head = self.buf.get(pos..pos + HEADER_SIZE_UP_TO_MAGIC)?;
        let size = i32::from_be_bytes(<[u8; 4]>::try_from(head.get(8..12)?).ok()?);
        if size < MIN_RECORD_OVERHEAD {
            self.done = true;
            let kind = CorruptKind::TooSmall {
                size: i64::from(size),
                minimum: i64::from(MIN_RECORD_OVERHEAD),
            };
            return Some(Err(Error::corrupt(
                Position::Buffer(to_u64(pos)),
                Field::Size,
                kind,
            )));
        }
        // size >= 14 > 0 here, so the conversion cannot fail.
        let total = LOG_OVERHEAD + usize::try_from(size).ok()?;
        // Kafka: `if (position > end - LOG_OVERHEAD - size) return null` (partial trailing batch).
        if total > end - pos {
            self.done = true;
            return None;
        }
        let bytes = self.buf.get(pos..pos + total)?;
        self.pos = pos + total;
        Some(Ok(FramedBatch {
            bytes,
            position: pos,
        }))
    }
}

/// The format family of a framed batch, decided by the magic byte as Kafka does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BatchKind {
    /// Magic 0 or 1 (Kafka treats any magic below 2 as legacy).
    Legacy,
    /// Magic 2 (Kafka treats any magic above 1 as v2).
    V2,
}

/// A batch as framing found it: its position and bytes, nothing else checked yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FramedBatch<'a> {
    bytes: &'a [u8],
    position: usize,
}

impl<'a> FramedBatch<'a> {
    /// Where the batch starts in the iterated buffer.
    pub fn position(&self) -> usize {
        self.position
    }
    /// Every byte of the batch (`12 + size`).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// `12 + size`.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }
    /// The position just past this batch.
    pub fn next_position(&self) -> usize {
        self.position + self.bytes.len()
    }
    /// The magic byte.
    pub fn magic(&self) -> i8 {
        (self.bytes.get(16).copied().unwrap_or(0)).cast_signed()
    }
    /// Legacy or v2.
    pub fn kind(&self) -> BatchKind {
        if self.magic() > 1 {
            BatchKind::V2
        } else {
            BatchKind::Legacy
        }
    }
    /// The first 8 bytes: the base offset of a v2 batch, the (last) offset of a legacy entry.
    pub fn offset_field(&self) -> i64 {
        i64::from_be_bytes(
            self.bytes
                .get(..8)
                .and_then(|b| b.try_into().ok())
                .unwrap_or_default(),
        )
    }

    /// The batch as a v2 or legacy view (checks only what reading the header needs).
    pub fn decode(&self) -> Result<Batch<'a>> {
        let pos = to_u64(self.position);
        match self.kind() {
            BatchKind::V2 => RecordBatch::parse_at(self.bytes, pos).map(Batch::V2),
            BatchKind::Legacy => LegacyBatch::parse_at(self.bytes, pos).map(Batch::Legacy),
        }
    }

    /// The v2 view; a legacy entry is an error.
    pub fn v2(&self) -> Result<RecordBatch<'a>> {
        RecordBatch::parse_at(self.bytes, to_u64(self.position))
    }

    /// Kafka's `ensureValid`: minimum size and CRC (CRC-32C for v2, CRC-32 for legacy).
    ///
    /// For a legacy entry only the CRC is checked (as `LegacyRecord.ensureValid`), so a damaged
    /// key or value length shows as a checksum mismatch, not as a structural error.
    pub fn validate(&self) -> Result<()> {
        match self.kind() {
            BatchKind::V2 => self.v2()?.validate(),
            BatchKind::Legacy => {
                // Framing guarantees size >= 14, so the CRC and the magic are present.
                let stored = u32::from_be_bytes(
                    self.bytes
                        .get(12..16)
                        .and_then(|b| b.try_into().ok())
                        .unwrap_or_default(),
                );
                let actual = crc32fast::hash(self.bytes.get(16..).unwrap_or_default());
                if stored == actual {
                    return Ok(());
                }
                Err(Error::ChecksumMismatch {
                    position: Position::Buffer(to_u64(self.position)),
                    algorithm: Checksum::Crc32,
                    expected: stored,
                    actual,
                })
            }
        }
    }

    /// Kafka's `isValid`.
    pub fn is_valid(&self) -> bool {
        self.validate().is_ok()
    }

    /// Kafka's `lastOffset()`: v2 base + lastOffsetDelta, legacy the entry offset.
    pub fn last_offset(&self) -> Result<i64> {
        Ok(self.decode()?.last_offset())
    }
}

/// A decoded batch of either family.
#[derive(Debug, Clone, Copy)]
pub enum Batch<'a> {
    /// Magic 2.
    V2(RecordBatch<'a>),
    /// Magic 0 or 1.
    Legacy(LegacyBatch<'a>),
}

impl Batch<'_> {
    /// The magic byte.
    pub fn magic(&self) -> i8 {
        match self {
            Batch::V2(b) => b.magic(),
            Batch::Legacy(b) => b.magic(),
        }
    }
    /// Kafka's `lastOffset()`.
    pub fn last_offset(&self) -> i64 {
        match self {
            Batch::V2(b) => b.last_offset(),
            Batch::Legacy(b) => b.last_offset(),
        }
    }
    /// Kafka's `nextOffset()`: last offset + 1.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }
    /// Kafka's `maxTimestamp()` (-1 for v0).
    pub fn max_timestamp(&self) -> i64 {
        match self {
            Batch::V2(b) => b.max_timestamp(),
            Batch::Legacy(b) => b.max_timestamp(),
        }
    }
    /// Size in bytes, log overhead included.
    pub fn size_in_bytes(&self) -> usize {
        match self {
            Batch::V2(b) => b.size_in_bytes(),
            Batch::Legacy(b) => b.size_in_bytes(),
        }
    }
    /// CRC check.
    pub fn validate(&self) -> Result<()> {
        match self {
            Batch::V2(b) => b.validate(),
            Batch::Legacy(b) => b.validate(),
        }
    }
    /// Every record, owned.
    pub fn to_records(&self) -> Result<Vec<Record>> {
        match self {
            Batch::V2(b) => b.to_records(),
            Batch::Legacy(b) => b.to_records(),
        }
    }
}

/// Finds the first batch at or after `start` whose last offset is at least `target`, as Kafka's
/// `FileRecords.searchForOffsetWithSize`. Returns `None` when no batch qualifies.
pub fn find_batch_with_offset(
    buf: &[u8],
    start: usize,
    target: i64,
) -> Result<Option<FramedBatch<'_>>> {
    for b in batches_from(buf, start) {
        let b = b?;
        if b.last_offset()? >= target {
            return Ok(Some(b));
        }
    }
    Ok(None)
}

/// A record found by timestamp (Kafka's `TimestampAndOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampAndOffset {
    /// The record's timestamp.
    pub timestamp: i64,
    /// The record's offset.
    pub offset: i64,
    /// The batch's partition leader epoch, `None` when it has none (-1, or a legacy entry).
    pub leader_epoch: Option<i32>,
}

/// Finds the first record at or after byte `start` with timestamp >= `target` and offset >=
/// `starting_offset`, as Kafka's `FileRecords.searchForTimestamp`: batches whose maxTimestamp is
/// below the target are skipped without decoding their records. `scratch` holds decompressed
/// records of compressed batches.
pub fn search_for_timestamp(
    buf: &[u8],
    start: usize,
    target: i64,
    starting_offset: i64,
    scratch: &mut Vec<u8>,
) -> Result<Option<TimestampAndOffset>> {
    for framed in batches_from(buf, start) {
        let batch = framed?.decode()?;
        if batch.max_timestamp() < target {
            continue;
        }
        let found = match batch {
            Batch::V2(b) => {
                let epoch = b.partition_leader_epoch();
                let mut hit = None;
                for r in b.records_with(scratch)? {
                    let r = r?;
                    if r.timestamp() >= target && r.offset() >= starting_offset {
                        hit = Some((r.timestamp(), r.offset(), (epoch != -1).then_some(epoch)));
                        break;
                    }
                }
                hit
            }
            Batch::Legacy(l) => {
                let mut hit = None;
                for r in l.records_with(scratch)? {
                    let r = r?;
                    if r.timestamp() >= target && r.offset() >= starting_offset {
                        hit = Some((r.timestamp(), r.offset(), None));
                        break;
                    }
                }
                hit
            }
        };
        if let Some((timestamp, offset, leader_epoch)) = found {
            return Ok(Some(TimestampAndOffset {
                timestamp,
                offset,
                leader_epoch,
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_few_bytes_is_a_clean_end() {
        assert!(batches(&[0u8; 17]).next().is_none());
        assert!(batches(&[]).next().is_none());
        // 18 zero bytes: size 0 < 14 is corruption.
        let e = batches(&[0u8; 18]).next().unwrap().unwrap_err();
        assert_eq!(e.position(), Some(0));
    }

    #[test]
    fn partial_tail_is_a_clean_end() {
        let mut buf = vec![0u8; 40];
        buf[8..12].copy_from_slice(&100i32.to_be_bytes());
        let mut it = batches(&buf);
        assert!(it.next().is_none());
        assert_eq!(it.position(), 0);
    }
}
