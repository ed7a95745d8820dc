//! [`RecordBatch`]: a borrowed view of one v2 batch, its header fields, CRC validation, and
//! record iteration (borrowed for uncompressed batches, through a scratch buffer otherwise).

use crate::codec::{self, DEFAULT_MAX_DECOMPRESSED_BYTES};
use crate::error::{Checksum, CorruptKind, Error, Field, Position, Result};
use crate::header::{
    ATTRIBUTES_OFFSET, Attributes, Compression, RECORD_BATCH_OVERHEAD, RecordBatchHeader,
    TimestampType,
};
use crate::record::verify as record_verify;
use crate::record::{Origin, Record, RecordContext, Records, increment_sequence, to_u64};

/// The smallest encoded v2 record: length, attributes, timestamp delta, offset delta, key
/// length, value length and header count, one byte each.
pub const MIN_RECORD_SIZE: usize = 7;

/// The smallest v2 batch, in bytes: the header alone.
const MIN_V2_BATCH_SIZE: i64 = 61;
#[expect(clippy::cast_possible_wrap, reason = "61 fits any integer type")]
const _: () = assert!(MIN_V2_BATCH_SIZE == RECORD_BATCH_OVERHEAD as i64);

/// A borrowed v2 record batch: the header is read in place, nothing is copied.
///
/// Constructing one checks only what is needed to read the header safely (61 bytes present,
/// magic 2, declared length within the buffer). CRC validation is a separate call
/// ([`RecordBatch::validate`]), as in Kafka, so a scan can frame first and validate where it must.
#[derive(Clone, Copy)]
pub struct RecordBatch<'a> {
    bytes: &'a [u8],
    header: &'a RecordBatchHeader,
    position: u64,
}

impl std::fmt::Debug for RecordBatch<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordBatch")
            .field("position", &self.position)
            .field("base_offset", &self.base_offset())
            .field("last_offset", &self.last_offset())
            .field("count", &self.records_count())
            .field("compression", &self.attributes().compression())
            .field("size_in_bytes", &self.size_in_bytes())
            .finish_non_exhaustive()
    }
}

impl<'a> RecordBatch<'a> {
    /// Views the v2 batch at the start of `buf` (trailing bytes after it are ignored).
    pub fn parse(buf: &'a [u8]) -> Result<Self> {
        Self::parse_at(buf, 0)
    }

    /// Like [`RecordBatch::parse`], for a batch found at byte `position` of a larger buffer:
    /// error positions and [`RecordBatch::position`] are reported relative to that buffer.
    pub fn parse_at(buf: &'a [u8], position: u64) -> Result<Self> {
        let at = |off: usize| Position::Buffer(position.saturating_add(to_u64(off)));
        let Some(size_field) = buf.get(8..12) else {
            let kind = CorruptKind::Truncated {
                needed: 12,
                available: to_u64(buf.len()),
            };
            return Err(Error::corrupt(at(0), Field::LogOverhead, kind));
        };
        let size = i32::from_be_bytes(<[u8; 4]>::try_from(size_field).unwrap_or_default());
        let total = i64::from(size) + 12;
        if total < MIN_V2_BATCH_SIZE {
            let kind = CorruptKind::TooSmall {
                size: total,
                minimum: MIN_V2_BATCH_SIZE,
            };
            return Err(Error::corrupt(at(8), Field::Size, kind));
        }
        let total = usize::try_from(total).unwrap_or(usize::MAX);
        let Some(bytes) = buf.get(..total) else {
            let kind = CorruptKind::Truncated {
                needed: to_u64(total),
                available: to_u64(buf.len()),
            };
            return Err(Error::corrupt(at(8), Field::Size, kind));
        };
        let Ok((header, _)) = zerocopy::FromBytes::ref_from_prefix(bytes) else {
            let kind = CorruptKind::Truncated {
                needed: 61,
                available: to_u64(bytes.len()),
            };
            return Err(Error::corrupt(at(0), Field::Header, kind));
        };
        let header: &RecordBatchHeader = header;
        // Kafka reads any magic above 1 as v2 (`FileLogInputStream.nextBatch`), and the CRC does
        // not cover the magic byte: its dump and its recovery keep such a batch, and so do we.
        if header.magic < 2 {
            let kind = CorruptKind::UnsupportedMagic {
                magic: header.magic,
            };
            return Err(Error::corrupt(at(16), Field::Magic, kind));
        }
        Ok(RecordBatch {
            bytes,
            header,
            position,
        })
    }

    /// The header, read in place.
    pub fn header(&self) -> &'a RecordBatchHeader {
        self.header
    }
    /// Every byte of the batch (`12 + batchLength`).
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// Where the batch starts in the parsed buffer.
    pub fn position(&self) -> u64 {
        self.position
    }
    /// `12 + batchLength`.
    pub fn size_in_bytes(&self) -> usize {
        self.bytes.len()
    }
    /// The position just past this batch.
    pub fn next_position(&self) -> u64 {
        self.position.saturating_add(to_u64(self.bytes.len()))
    }
    /// The records section: raw records, or one compressed stream of them.
    pub fn records_bytes(&self) -> &'a [u8] {
        self.bytes.get(RECORD_BATCH_OVERHEAD..).unwrap_or_default()
    }

    /// The first offset of the batch.
    pub fn base_offset(&self) -> i64 {
        self.header.base_offset.get()
    }
    /// `batchLength`: bytes after the size field.
    pub fn batch_length(&self) -> i32 {
        self.header.batch_length.get()
    }
    /// The partition leader epoch, -1 for none.
    pub fn partition_leader_epoch(&self) -> i32 {
        self.header.partition_leader_epoch.get()
    }
    /// Always 2.
    pub fn magic(&self) -> i8 {
        self.header.magic
    }
    /// The stored CRC-32C.
    pub fn crc(&self) -> u32 {
        self.header.crc.get()
    }
    /// The raw attribute bits.
    pub fn attributes(&self) -> Attributes {
        Attributes(self.header.attributes.get())
    }
    /// The codec; an unknown id (5..=7) is corruption.
    pub fn compression(&self) -> Result<Compression> {
        let a = self.attributes();
        a.compression().ok_or_else(|| {
            let pos = Position::Buffer(self.position.saturating_add(to_u64(ATTRIBUTES_OFFSET)));
            Error::corrupt(
                pos,
                Field::Attributes,
                CorruptKind::UnknownCodec { id: a.codec_id() },
            )
        })
    }
    /// Whether the records section is compressed (codec id other than 0).
    pub fn is_compressed(&self) -> bool {
        self.attributes().codec_id() != 0
    }
    /// CreateTime or LogAppendTime.
    pub fn timestamp_type(&self) -> TimestampType {
        self.attributes().timestamp_type()
    }
    /// Attribute bit 4.
    pub fn is_transactional(&self) -> bool {
        self.attributes().is_transactional()
    }
    /// Attribute bit 5.
    pub fn is_control(&self) -> bool {
        self.attributes().is_control()
    }
    /// Attribute bit 6.
    pub fn has_delete_horizon(&self) -> bool {
        self.attributes().has_delete_horizon()
    }
    /// The delete horizon (baseTimestamp) when attribute bit 6 is set.
    pub fn delete_horizon_ms(&self) -> Option<i64> {
        self.has_delete_horizon().then(|| self.base_timestamp())
    }
    /// `lastOffset - baseOffset`.
    pub fn last_offset_delta(&self) -> i32 {
        self.header.last_offset_delta.get()
    }
    /// `baseOffset + lastOffsetDelta`.
    pub fn last_offset(&self) -> i64 {
        self.base_offset()
            .wrapping_add(i64::from(self.last_offset_delta()))
    }
    /// `lastOffset + 1`.
    pub fn next_offset(&self) -> i64 {
        self.last_offset().wrapping_add(1)
    }
    /// First record's timestamp (the delete horizon when bit 6 is set, -1 when empty).
    pub fn base_timestamp(&self) -> i64 {
        self.header.base_timestamp.get()
    }
    /// The batch's max timestamp (the append time under LogAppendTime).
    pub fn max_timestamp(&self) -> i64 {
        self.header.max_timestamp.get()
    }
    /// Producer id, -1 for none.
    pub fn producer_id(&self) -> i64 {
        self.header.producer_id.get()
    }
    /// Producer epoch, -1 for none.
    pub fn producer_epoch(&self) -> i16 {
        self.header.producer_epoch.get()
    }
    /// First sequence, -1 for none.
    pub fn base_sequence(&self) -> i32 {
        self.header.base_sequence.get()
    }
    /// Last sequence (`baseSequence + lastOffsetDelta`, wrapping), -1 for none.
    pub fn last_sequence(&self) -> i32 {
        let base = self.base_sequence();
        if base == -1 {
            -1
        } else {
            increment_sequence(base, self.last_offset_delta())
        }
    }
    /// The declared record count (may be negative in a corrupt batch).
    pub fn records_count(&self) -> i32 {
        self.header.records_count.get()
    }

    /// CRC-32C over bytes 21 to the end.
    pub fn compute_crc(&self) -> u32 {
        crate::crc32c(self.bytes.get(ATTRIBUTES_OFFSET..).unwrap_or_default())
    }
    /// Kafka's `isValid`: the stored CRC matches.
    pub fn is_valid(&self) -> bool {
        self.crc() == self.compute_crc()
    }
    /// Kafka's `ensureValid`: an error carrying both CRCs when they differ.
    pub fn validate(&self) -> Result<()> {
        let actual = self.compute_crc();
        if actual == self.crc() {
            return Ok(());
        }
        Err(Error::ChecksumMismatch {
            position: Position::Buffer(self.position),
            algorithm: Checksum::Crc32c,
            expected: self.crc(),
            actual,
        })
    }

    /// The header rules a batch's records depend on, checked without reading a record: a record
    /// count that is not negative and not above the offsets the batch spans
    /// (`lastOffsetDelta + 1`; compaction leaves fewer, never more), a `lastOffsetDelta` that is
    /// not negative, and no records section in a batch of count 0 (Kafka writes empty batches as
    /// the bare 61-byte header, and its reader skips whatever follows one). Kafka's broker checks
    /// the first two on a client's append (`LogValidator.validateBatch`); on disk it checks none,
    /// and its consumers then stop at such a batch or skip its records.
    pub fn check_header(&self) -> Result<()> {
        let count = self.records_count();
        let at = |off: usize| Position::Buffer(self.position.saturating_add(to_u64(off)));
        if count < 0 {
            let kind = CorruptKind::Negative {
                value: i64::from(count),
            };
            return Err(Error::corrupt(at(57), Field::RecordCount, kind));
        }
        let delta = self.last_offset_delta();
        if delta < 0 {
            let kind = CorruptKind::Negative {
                value: i64::from(delta),
            };
            return Err(Error::corrupt(at(23), Field::LastOffsetDelta, kind));
        }
        let offsets = i64::from(delta) + 1;
        if i64::from(count) > offsets {
            let kind = CorruptKind::CountExceedsOffsets {
                count: i64::from(count),
                offsets,
            };
            return Err(Error::corrupt(at(57), Field::RecordCount, kind));
        }
        let section = self.records_bytes().len();
        if count == 0 && section > 0 {
            let kind = CorruptKind::RecordsRemaining {
                remaining: to_u64(section),
            };
            return Err(Error::corrupt(at(61), Field::Records, kind));
        }
        Ok(())
    }

    /// Decodes every record as a consumer would (decompressing into `scratch`, at most `limit`
    /// bytes) and discards them: the header rules of [`RecordBatch::check_header`], every record
    /// well formed, exactly `recordsCount` of them, offset deltas increasing within
    /// `0..=lastOffsetDelta`, and no bytes left over. The CRC is a separate check. Returns the
    /// last record's offset (`None` for an empty batch): the offsets the records prove.
    ///
    /// An uncompressed batch is first checked by a walk that builds no record views
    /// (`record::verify`); only a batch it refuses is decoded record by record, for the error.
    pub fn verify_records(&self, scratch: &mut Vec<u8>, limit: usize) -> Result<Option<i64>> {
        if !self.is_compressed() && self.check_header().is_ok() {
            let count = self.records_count();
            if count == 0 {
                return Ok(None);
            }
            let (section, lod) = (self.records_bytes(), self.last_offset_delta());
            if let Some(delta) = record_verify::last_delta(section, count, lod) {
                return Ok(Some(self.base_offset().wrapping_add(i64::from(delta))));
            }
        }
        let mut last = None;
        for record in self.records_with_limit(scratch, limit)? {
            last = Some(record?.offset());
        }
        Ok(last)
    }

    fn context(&self, origin: Origin) -> Result<RecordContext> {
        self.check_header()?;
        let count = self.records_count();
        let log_append_time = match self.timestamp_type() {
            TimestampType::LogAppendTime => Some(self.max_timestamp()),
            TimestampType::CreateTime => None,
        };
        Ok(RecordContext {
            base_offset: self.base_offset(),
            base_timestamp: self.base_timestamp(),
            log_append_time,
            base_sequence: self.base_sequence(),
            count,
            last_offset_delta: self.last_offset_delta(),
            origin,
        })
    }

    /// Borrowed records of an uncompressed batch. A compressed batch gives [`Error::Compressed`];
    /// use [`RecordBatch::records_with`] for any batch.
    pub fn records(&self) -> Result<Records<'a>> {
        let origin = Origin::Buffer(self.position.saturating_add(61));
        let ctx = self.context(origin)?;
        if ctx.count == 0 {
            return Ok(Records::empty(ctx));
        }
        let codec = self.compression()?;
        if codec != Compression::None {
            return Err(Error::Compressed {
                position: Position::Buffer(self.position),
                codec,
            });
        }
        Ok(Records::new(self.records_bytes(), ctx))
    }

    /// Records of any batch: borrowed from the batch when uncompressed, otherwise decompressed
    /// into `scratch` (cleared first, at most [`DEFAULT_MAX_DECOMPRESSED_BYTES`]) and borrowed from it.
    pub fn records_with<'s>(&self, scratch: &'s mut Vec<u8>) -> Result<Records<'s>>
    where
        'a: 's,
    {
        self.records_with_limit(scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
    }

    /// [`RecordBatch::records_with`] with an explicit cap on the decompressed size.
    pub fn records_with_limit<'s>(
        &self,
        scratch: &'s mut Vec<u8>,
        limit: usize,
    ) -> Result<Records<'s>>
    where
        'a: 's,
    {
        if !self.is_compressed() {
            return self.records();
        }
        let ctx = self.context(Origin::Decompressed(self.position))?;
        if ctx.count == 0 {
            return Ok(Records::empty(ctx));
        }
        self.decompress_into(scratch, limit)?;
        Ok(Records::new(scratch.as_slice(), ctx))
    }

    /// Decompresses the records section into `out` (cleared first), producing at most `limit` bytes.
    pub fn decompress_into(&self, out: &mut Vec<u8>, limit: usize) -> Result<()> {
        out.clear();
        let codec = self.compression()?;
        // Each record takes at least MIN_RECORD_SIZE bytes, so a count that cannot fit the limit
        // is refused before any work.
        let count = usize::try_from(self.records_count()).unwrap_or(0);
        if count.saturating_mul(MIN_RECORD_SIZE) > limit {
            return Err(Error::DecompressLimit {
                position: Position::Buffer(self.position),
                limit,
            });
        }
        codec::decompress_raw(codec, self.records_bytes(), 2, out, limit)
            .map_err(|e| e.into_error(Position::Buffer(self.position), codec))
    }

    /// Every record, owned. Convenient, not fast: use [`RecordBatch::records_with`] on hot paths.
    pub fn to_records(&self) -> Result<Vec<Record>> {
        let mut scratch = Vec::new();
        let records = self.records_with(&mut scratch)?;
        let mut out = Vec::with_capacity(
            records
                .remaining()
                .min(self.size_in_bytes() / MIN_RECORD_SIZE),
        );
        for r in records {
            out.push(r?.to_record());
        }
        Ok(out)
    }
}
