//! A compressed batch built around the records section of an uncompressed one, for a leader's
//! recompression (Kafka's `LogValidator` rebuilding a producer's batch in the topic's codec).
//!
//! Kafka's rebuild writes each record again with offset delta `i` (its index), the timestamp
//! delta from the first record's timestamp, record attributes 0 and every length and delta in
//! its shortest varint (null as -1). When an uncompressed batch's records section already is
//! byte for byte that ([`RecordsSection::of`] checks every varint and field, not the payloads),
//! the rebuilt batch's payload is the section compressed: no record is decoded into views and
//! written again. A section that is not (a producer's own attributes, a base timestamp other
//! than the first record's, a longer varint) takes [`BatchBuilder::build`] as before.

use crate::batch::RecordBatch;
use crate::builder::{BatchBuilder, BatchOptions, BuiltBatch, HeaderFields, finish_header};
use crate::codec::DEFAULT_MAX_DECOMPRESSED_BYTES;
use crate::error::{Error, Result};
use crate::header::{Attributes, Compression, NO_TIMESTAMP, RECORD_BATCH_OVERHEAD, TimestampType};
use crate::varint::{MAX_VARINT_SIZE, MAX_VARLONG_SIZE, read_varint, read_varlong};

/// The records section of an uncompressed batch that is exactly what [`BatchBuilder`] writes
/// for the same records, with what the rebuilt header needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsSection<'a> {
    bytes: &'a [u8],
    count: i32,
    base_timestamp: i64,
    max_timestamp: i64,
}

impl<'a> RecordsSection<'a> {
    /// The section of `batch` when it is uncompressed, of CreateTime, has no delete horizon and
    /// holds records byte for byte as the builder writes them, with offset deltas 0 to
    /// `count - 1` and base timestamp the first record's; otherwise `None`, also for anything
    /// the builder would refuse (a negative timestamp other than -1) or a reader would (a
    /// truncated record), which the caller's rebuild then reports.
    #[must_use]
    pub fn of(batch: &RecordBatch<'a>) -> Option<Self> {
        let plain = batch.attributes().compression()? == Compression::None
            && batch.timestamp_type() == TimestampType::CreateTime
            && !batch.has_delete_horizon();
        if !plain {
            return None;
        }
        let bytes = batch.records_bytes();
        let count = batch.records_count();
        let base = batch.base_timestamp();
        let mut max_timestamp = NO_TIMESTAMP;
        let mut pos = 0;
        for index in 0..count {
            let length = usize::try_from(shortest_varint(bytes, &mut pos)?).ok()?;
            let end = pos.checked_add(length)?;
            let record = bytes.get(..end)?;
            if *record.get(pos)? != 0 {
                return None;
            }
            pos += 1;
            let delta = shortest_varlong(record, &mut pos)?;
            let timestamp = base.wrapping_add(delta);
            let refused = timestamp < 0 && timestamp != NO_TIMESTAMP;
            if (index == 0 && delta != 0) || refused {
                return None;
            }
            max_timestamp = max_timestamp.max(timestamp);
            if shortest_varint(record, &mut pos)? != index {
                return None;
            }
            skip_bytes(record, &mut pos, true)?;
            skip_bytes(record, &mut pos, true)?;
            let headers = shortest_varint(record, &mut pos)?;
            for _ in 0..u32::try_from(headers).ok()? {
                skip_bytes(record, &mut pos, false)?;
                skip_bytes(record, &mut pos, true)?;
            }
            if pos != end {
                return None;
            }
        }
        (count > 0 && pos == bytes.len()).then_some(RecordsSection {
            bytes,
            count,
            base_timestamp: base,
            max_timestamp,
        })
    }

    /// The encoded records.
    #[must_use]
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The number of records.
    #[must_use]
    pub fn count(&self) -> i32 {
        self.count
    }
}

/// Reads a varint and returns it only if it is in its shortest form, as the builder writes it
/// (a longer one decodes to the same value, but its bytes differ).
fn shortest_varint(buf: &[u8], pos: &mut usize) -> Option<i32> {
    let start = *pos;
    let value = read_varint(buf, pos).ok()?;
    is_shortest(buf.get(start..*pos)?, MAX_VARINT_SIZE, 0x0f).then_some(value)
}

/// [`shortest_varint`] for a varlong.
fn shortest_varlong(buf: &[u8], pos: &mut usize) -> Option<i64> {
    let start = *pos;
    let value = read_varlong(buf, pos).ok()?;
    is_shortest(buf.get(start..*pos)?, MAX_VARLONG_SIZE, 0x01).then_some(value)
}

/// Whether the varint bytes `read` are the shortest encoding of what they decode to: one byte,
/// or a last byte that is not zero (a zero one adds nothing) and, at the type's most bytes,
/// holds no bit the reader drops (`last_max`: 4 bits of an int's fifth byte, 1 of a long's
/// tenth).
fn is_shortest(read: &[u8], max_len: usize, last_max: u8) -> bool {
    match read.last() {
        Some(&last) => read.len() == 1 || (last != 0 && (read.len() < max_len || last <= last_max)),
        None => false,
    }
}

/// Skips a length-prefixed field (key, value, header key or value): a length in its shortest
/// form and that many bytes, or -1 (null) where `nullable`.
fn skip_bytes(record: &[u8], pos: &mut usize, nullable: bool) -> Option<()> {
    let len = shortest_varint(record, pos)?;
    if nullable && len == -1 {
        return Some(());
    }
    let len = usize::try_from(len).ok()?;
    *pos = pos.checked_add(len).filter(|end| *end <= record.len())?;
    Some(())
}

impl BatchBuilder {
    /// Appends to `out` the batch of `opts` whose records are `section` (compressed in
    /// `opts.compression` at its level): the batch [`BatchBuilder::build`] writes for the same
    /// records with offset deltas 0 to `count - 1`. On error `out` is restored.
    ///
    /// # Errors
    ///
    /// As `build`: invalid options, records over [`DEFAULT_MAX_DECOMPRESSED_BYTES`] for a
    /// codec, or the codec failing.
    pub fn build_from_section(
        &mut self,
        opts: &BatchOptions,
        section: &RecordsSection<'_>,
        out: &mut Vec<u8>,
    ) -> Result<BuiltBatch> {
        let start = out.len();
        let result = self.build_from_section_inner(opts, section, out, start);
        if result.is_err() {
            out.truncate(start);
        }
        result
    }

    fn build_from_section_inner(
        &mut self,
        opts: &BatchOptions,
        section: &RecordsSection<'_>,
        out: &mut Vec<u8>,
        start: usize,
    ) -> Result<BuiltBatch> {
        opts.validate()?;
        let raw_size = section.bytes.len();
        let compressed = opts.compression != Compression::None;
        if compressed && raw_size > DEFAULT_MAX_DECOMPRESSED_BYTES {
            return Err(Error::RecordsTooLarge {
                size: raw_size,
                limit: DEFAULT_MAX_DECOMPRESSED_BYTES,
            });
        }
        // The section's base timestamp is its first record's; a delete horizon would replace it.
        if opts.delete_horizon_ms.is_some() {
            return Err(Error::InvalidInput {
                reason: "a records section keeps its first record's base timestamp",
            });
        }
        out.resize(start + RECORD_BATCH_OVERHEAD, 0);
        if compressed {
            self.compressor.compress_at(
                opts.compression,
                opts.compression_level,
                section.bytes,
                out,
            )?;
        } else {
            out.extend_from_slice(section.bytes);
        }
        let base_timestamp = section.base_timestamp;
        let max_timestamp = match opts.timestamp_type {
            TimestampType::LogAppendTime => opts.log_append_time,
            TimestampType::CreateTime => section.max_timestamp,
        };
        let fields = HeaderFields {
            last_offset_delta: opts.last_offset_delta.unwrap_or(section.count - 1),
            base_timestamp,
            max_timestamp,
            count: section.count,
            attributes: Attributes::compute(
                opts.compression,
                opts.timestamp_type,
                opts.transactional,
                opts.control,
                false,
            ),
        };
        let size = finish_header(out, start, opts, &fields)?;
        Ok(BuiltBatch {
            position: start,
            size_in_bytes: size,
            record_count: section.count,
            last_offset_delta: fields.last_offset_delta,
            base_timestamp,
            max_timestamp,
            uncompressed_records_size: raw_size,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{NewRecord, build_batch};
    use crate::header::{ATTRIBUTES_OFFSET, BASE_TIMESTAMP_OFFSET, RECORDS_COUNT_OFFSET};
    use crate::record::Header;
    use proptest::prelude::*;

    /// `template`'s header (its count kept) around `section`, lengths fixed; the CRC is not
    /// fixed, since [`RecordsSection::of`] does not read it.
    fn with_section(template: &[u8], section: &[u8]) -> Vec<u8> {
        let mut out = template[..RECORD_BATCH_OVERHEAD].to_vec();
        out.extend_from_slice(section);
        let length = i32::try_from(out.len() - 12).unwrap();
        out[8..12].copy_from_slice(&length.to_be_bytes());
        out
    }

    fn plain(records: &[NewRecord<'_>]) -> Vec<u8> {
        let mut out = Vec::new();
        build_batch(
            &BatchOptions::new(0, Compression::None),
            records.iter().copied(),
            &mut out,
        )
        .unwrap();
        out
    }

    /// Records with every kind of field: nulls, empty and long payloads (two- and three-byte
    /// lengths), headers with null values, timestamps before the first (negative deltas) and
    /// far after it (a long varlong).
    fn varied<'a>(headers: &'a [Header<'a>], big: &'a [u8]) -> Vec<NewRecord<'a>> {
        vec![
            NewRecord::new(0, 1_700_000_000_000, Some(b"k"), Some(b"v")).with_headers(headers),
            NewRecord::new(1, 1_699_999_999_000, None, None),
            NewRecord::new(2, 1_700_000_000_001, Some(b""), Some(big)),
            NewRecord::new(3, 4_000_000_000_000, Some(big), Some(b"")).with_headers(headers),
            NewRecord::new(4, -1, None, Some(b"x")),
        ]
    }

    #[test]
    fn the_section_builds_what_the_builder_builds() {
        let headers = [
            Header::new(b"a", b"1"),
            Header {
                key: b"",
                value: None,
            },
        ];
        let big = vec![7u8; 20_000];
        let records = varied(&headers, &big);
        let source = plain(&records);
        let batch = RecordBatch::parse(&source).unwrap();
        let section = RecordsSection::of(&batch).expect("a builder's section");
        assert_eq!(section.count(), 5);
        let mut builder = BatchBuilder::new();
        for codec in Compression::ALL {
            let opts = BatchOptions::new(42, codec)
                .with_producer(7, 1, 3)
                .with_partition_leader_epoch(5);
            let (mut want, mut got) = (vec![1, 2], vec![1, 2]);
            let a = builder
                .build(&opts, records.iter().copied(), &mut want)
                .unwrap();
            let b = builder
                .build_from_section(&opts, &section, &mut got)
                .unwrap();
            assert_eq!((a, &want), (b, &got), "{codec:?}");
            let lat = opts
                .with_timestamp_type(TimestampType::LogAppendTime)
                .with_log_append_time(99);
            let (mut want, mut got) = (Vec::new(), Vec::new());
            builder
                .build(&lat, records.iter().copied(), &mut want)
                .unwrap();
            builder
                .build_from_section(&lat, &section, &mut got)
                .unwrap();
            assert_eq!(want, got, "{codec:?} under LogAppendTime");
        }
    }

    #[test]
    fn what_the_rebuild_would_change_is_refused() {
        let records = [
            NewRecord::new(0, 1000, Some(b"k"), Some(b"v")),
            NewRecord::new(1, 1001, None, Some(b"w")),
        ];
        let source = plain(&records);
        let batch = RecordBatch::parse(&source).unwrap();
        assert!(RecordsSection::of(&batch).is_some());
        let section = batch.records_bytes().to_vec();
        let refused = |bytes: &[u8], what: &str| {
            let batch = RecordBatch::parse(bytes).unwrap();
            assert_eq!(RecordsSection::of(&batch), None, "{what}");
        };
        // The first record: length, attributes, timestamp delta, offset delta, key length.
        let mut attrs = section.clone();
        attrs[1] = 1;
        refused(&with_section(&source, &attrs), "record attributes");
        let mut long_len = section.clone();
        // The key length 1 (zig-zag 2) as two bytes, the record one byte longer.
        long_len.splice(4..5, [0x82, 0x00]);
        long_len[0] += 2;
        refused(&with_section(&source, &long_len), "a two-byte key length");
        let mut null = section.clone();
        // The second record's null key (-1, 0x01) as -2 (0x03): read as null all the same.
        let second = 1 + usize::from(section[0] / 2);
        assert_eq!(null[second + 4], 0x01);
        null[second + 4] = 0x03;
        refused(&with_section(&source, &null), "a null written -2");
        let mut trailing = section.clone();
        trailing.push(0);
        refused(
            &with_section(&source, &trailing),
            "a byte after the records",
        );
        let gap = plain(&[
            NewRecord::new(0, 1000, None, None),
            NewRecord::new(2, 1000, None, None),
        ]);
        refused(&gap, "offset deltas 0, 2");
        let mut first = section.clone();
        // The first record's timestamp delta 0 as 1: the base is not the first timestamp.
        first[2] = 0x02;
        refused(
            &with_section(&source, &first),
            "a base timestamp before the first record's",
        );
        let mut lat = source.clone();
        lat[ATTRIBUTES_OFFSET + 1] |= 0x08;
        refused(&lat, "LogAppendTime");
        let mut negative = plain(&[NewRecord::new(0, 5, None, None)]);
        negative[BASE_TIMESTAMP_OFFSET..BASE_TIMESTAMP_OFFSET + 8]
            .copy_from_slice(&(-5_i64).to_be_bytes());
        refused(&negative, "a timestamp the builder refuses");
    }

    #[test]
    fn shortest_forms() {
        // 300 as a varint: zig-zag 600 = 0xd8 0x04; with a zero byte after, longer.
        assert_eq!(shortest_varint(&[0xd8, 0x04], &mut 0), Some(300));
        assert_eq!(shortest_varint(&[0xd8, 0x84, 0x00], &mut 0), None);
        // i32::MIN: zig-zag 0xffffffff, five bytes, the last 0x0f; 0x7f drops three bits.
        assert_eq!(
            shortest_varint(&[0xff, 0xff, 0xff, 0xff, 0x0f], &mut 0),
            Some(i32::MIN)
        );
        assert_eq!(
            shortest_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f], &mut 0),
            None
        );
        let mut long = vec![0xff; 9];
        long.push(0x01);
        assert_eq!(shortest_varlong(&long, &mut 0), Some(i64::MIN));
        long[9] = 0x03;
        assert_eq!(shortest_varlong(&long, &mut 0), None);
    }

    proptest! {
        /// Bytes of any kind as a section, under any record count: an answer, never a panic; and
        /// a section taken is one whose rebuild reads back.
        #[test]
        fn garbage_is_refused_without_a_panic(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            count in any::<i32>(),
        ) {
            let mut source = with_section(&plain(&[NewRecord::new(0, 1, None, None)]), &bytes);
            source[RECORDS_COUNT_OFFSET..RECORDS_COUNT_OFFSET + 4].copy_from_slice(&count.to_be_bytes());
            let batch = RecordBatch::parse(&source).unwrap();
            if let Some(section) = RecordsSection::of(&batch) {
                let mut out = Vec::new();
                let opts = BatchOptions::new(0, Compression::Zstd);
                BatchBuilder::new().build_from_section(&opts, &section, &mut out).unwrap();
                prop_assert_eq!(RecordBatch::parse(&out).unwrap().to_records().unwrap().len(),
                    usize::try_from(count).unwrap());
            }
        }

        /// Any records the builder writes give a section that rebuilds to the builder's batch.
        #[test]
        fn any_built_section_is_taken(
            payloads in proptest::collection::vec(
                (proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
                 proptest::option::of(proptest::collection::vec(any::<u8>(), 0..300)),
                 -1_000_000_i64..1_000_000),
                1..20,
            ),
        ) {
            let records: Vec<NewRecord<'_>> = payloads
                .iter()
                .enumerate()
                .map(|(i, (k, v, dt))| {
                    NewRecord::new(
                        i32::try_from(i).unwrap(),
                        1_700_000_000_000 + dt,
                        k.as_deref(),
                        v.as_deref(),
                    )
                })
                .collect();
            let source = plain(&records);
            let batch = RecordBatch::parse(&source).unwrap();
            let section = RecordsSection::of(&batch);
            prop_assert!(section.is_some());
            let mut builder = BatchBuilder::new();
            let opts = BatchOptions::new(0, Compression::Zstd);
            let (mut want, mut got) = (Vec::new(), Vec::new());
            builder.build(&opts, records.iter().copied(), &mut want).unwrap();
            builder.build_from_section(&opts, &section.unwrap(), &mut got).unwrap();
            prop_assert_eq!(want, got);
        }
    }
}
