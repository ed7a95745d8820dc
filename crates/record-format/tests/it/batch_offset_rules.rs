//! The rules that tie a batch's records to its header: a record count within the offsets the
//! batch spans, no records after a count of 0, offset deltas increasing within
//! `0..=lastOffsetDelta`. Every batch here has a correct CRC, so only these rules can object;
//! and the writer's half of the decompression limit (the builder refuses what no reader reads).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, Compression, CorruptKind, DEFAULT_MAX_DECOMPRESSED_BYTES, Error, Field,
    NewRecord, RecordBatch, build_batch, write_empty_batch,
};

/// A batch of `n` records (offset deltas 0..n) with `codec`.
fn batch(n: i32, codec: Compression) -> Vec<u8> {
    let mut b = Vec::new();
    let records = (0..n).map(|i| NewRecord::new(i, 1_000 + i64::from(i), None, Some(b"value")));
    build_batch(&BatchOptions::new(100, codec), records, &mut b).unwrap();
    b
}

fn recrc(b: &mut [u8]) {
    let crc = seglog_record_format::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
}

fn set_i32(b: &mut [u8], at: usize, v: i32) {
    b[at..at + 4].copy_from_slice(&v.to_be_bytes());
    recrc(b);
}

fn verify(b: &[u8]) -> Result<Option<i64>, Error> {
    let batch = RecordBatch::parse(b).unwrap();
    batch.validate().unwrap();
    batch.verify_records(&mut Vec::new(), DEFAULT_MAX_DECOMPRESSED_BYTES)
}

fn kind(e: &Error) -> (Option<Field>, Option<&CorruptKind>) {
    (e.field(), e.corrupt_kind())
}

#[test]
fn well_formed_batches_verify_with_every_codec() {
    for codec in Compression::ALL {
        verify(&batch(5, codec)).unwrap();
    }
    let mut empty = Vec::new();
    write_empty_batch(&BatchOptions::new(7, Compression::None), 3, 10, &mut empty).unwrap();
    verify(&empty).unwrap();
}

#[test]
fn a_count_above_the_offset_range_is_refused_before_any_record() {
    for codec in Compression::ALL {
        let mut b = batch(3, codec);
        set_i32(&mut b, 57, 4);
        let e = RecordBatch::parse(&b).unwrap().check_header().unwrap_err();
        assert_eq!(
            kind(&e),
            (
                Some(Field::RecordCount),
                Some(&CorruptKind::CountExceedsOffsets {
                    count: 4,
                    offsets: 3
                })
            ),
            "{codec}"
        );
        assert_eq!(e.position(), Some(57));
        assert_eq!(verify(&b).unwrap_err(), e);
    }
}

#[test]
fn a_count_below_the_records_present_leaves_bytes_over() {
    for codec in Compression::ALL {
        let mut b = batch(3, codec);
        set_i32(&mut b, 57, 2);
        let e = verify(&b).unwrap_err();
        assert!(
            matches!(e.corrupt_kind(), Some(CorruptKind::RecordsRemaining { .. })),
            "{codec}: {e}"
        );
    }
}

#[test]
fn a_count_of_zero_with_records_is_refused_not_skipped() {
    for codec in Compression::ALL {
        let mut b = batch(3, codec);
        set_i32(&mut b, 57, 0);
        let batch = RecordBatch::parse(&b).unwrap();
        let e = batch.check_header().unwrap_err();
        assert_eq!(e.field(), Some(Field::Records), "{codec}");
        assert_eq!(e.position(), Some(61));
        // Every reader of records refuses it, instead of returning no records.
        assert!(batch.records_with(&mut Vec::new()).is_err());
    }
}

#[test]
fn a_negative_last_offset_delta_is_refused() {
    let mut b = batch(1, Compression::None);
    set_i32(&mut b, 23, -1);
    let e = verify(&b).unwrap_err();
    assert_eq!(
        kind(&e),
        (
            Some(Field::LastOffsetDelta),
            Some(&CorruptKind::Negative { value: -1 })
        )
    );
}

#[test]
fn a_record_past_the_last_offset_delta_is_refused() {
    for codec in Compression::ALL {
        let mut b = batch(3, codec);
        // lastOffsetDelta 1 while the records' deltas run 0, 1, 2: with count 2 the header
        // rules hold, and the second record is the last; with count 3 the count is refused.
        set_i32(&mut b, 23, 1);
        set_i32(&mut b, 57, 2);
        let e = verify(&b).unwrap_err();
        // The third record's bytes are left over after the declared two.
        assert!(
            matches!(e.corrupt_kind(), Some(CorruptKind::RecordsRemaining { .. })),
            "{codec}: {e}"
        );
    }
    // A record delta beyond the range, reached while the count still allows it.
    let mut records = Vec::new();
    build_batch(
        &BatchOptions::new(0, Compression::None),
        [
            NewRecord::new(0, 1, None, Some(b"a")),
            NewRecord::new(5, 1, None, Some(b"b")),
        ],
        &mut records,
    )
    .unwrap();
    set_i32(&mut records, 23, 3);
    let e = verify(&records).unwrap_err();
    assert_eq!(
        kind(&e),
        (
            Some(Field::OffsetDelta),
            Some(&CorruptKind::OffsetDeltaOutOfRange {
                delta: 5,
                last_offset_delta: 3
            })
        )
    );
}

#[test]
fn offset_deltas_going_backwards_are_refused() {
    // Two records with deltas 0 and 1; the second's delta byte rewritten to 0.
    let mut b = batch(2, Compression::None);
    // Record layout: length, attributes, timestampDelta, offsetDelta, ...: the first record is
    // 0x10-ish bytes long; find the second record's offset delta by decoding the first.
    let first_len = usize::from(b[61] / 2) + 1;
    let second = 61 + first_len;
    // length(1) attributes(1) timestampDelta(1: zigzag 1 = 2) offsetDelta(1)
    assert_eq!(b[second + 3], 2, "the second record's offset delta is 1");
    b[second + 3] = 0;
    recrc(&mut b);
    let e = verify(&b).unwrap_err();
    assert_eq!(
        kind(&e),
        (
            Some(Field::OffsetDelta),
            Some(&CorruptKind::OffsetDeltaNotIncreasing {
                delta: 0,
                previous: 0
            })
        )
    );
}

#[test]
fn compaction_gaps_are_not_damage() {
    // Kafka's cleaner keeps the original lastOffsetDelta and drops records: deltas 1 and 3
    // of a batch spanning 6 offsets.
    let mut b = Vec::new();
    let options = BatchOptions::new(10, Compression::Gzip).with_last_offset_delta(Some(5));
    build_batch(
        &options,
        [
            NewRecord::new(1, 1, None, Some(b"a")),
            NewRecord::new(3, 1, None, Some(b"b")),
        ],
        &mut b,
    )
    .unwrap();
    assert_eq!(verify(&b).unwrap(), Some(13), "the last record's offset");
    let offsets: Vec<i64> = RecordBatch::parse(&b)
        .unwrap()
        .to_records()
        .unwrap()
        .iter()
        .map(|r| r.offset)
        .collect();
    assert_eq!(offsets, [11, 13]);
}

#[test]
fn the_builder_refuses_a_compressed_batch_no_reader_could_decompress() {
    let big = vec![b'x'; DEFAULT_MAX_DECOMPRESSED_BYTES];
    let mut out = vec![1, 2, 3];
    let e = build_batch(
        &BatchOptions::new(0, Compression::Gzip),
        [NewRecord::new(0, 1, None, Some(&big[..]))],
        &mut out,
    )
    .unwrap_err();
    let Error::RecordsTooLarge { size, limit } = e else {
        panic!("{e}")
    };
    assert!(size > limit && limit == DEFAULT_MAX_DECOMPRESSED_BYTES);
    assert_eq!(out, [1, 2, 3], "the output is restored");
    // Uncompressed, nothing is decompressed on reading: the size limits are the broker's
    // (max.message.bytes), not this one.
    build_batch(
        &BatchOptions::new(0, Compression::None),
        [NewRecord::new(0, 1, None, Some(&big[..]))],
        &mut out,
    )
    .unwrap();
}

#[test]
fn a_compressed_batch_just_under_the_limit_round_trips() {
    // One record's encoding adds a few bytes of framing to its value.
    let value = vec![b'y'; DEFAULT_MAX_DECOMPRESSED_BYTES - 64];
    let mut out = Vec::new();
    build_batch(
        &BatchOptions::new(0, Compression::Lz4),
        [NewRecord::new(0, 1, None, Some(&value[..]))],
        &mut out,
    )
    .unwrap();
    let batch = RecordBatch::parse(&out).unwrap();
    let mut scratch = Vec::new();
    let records: Vec<_> = batch.records_with(&mut scratch).unwrap().collect();
    assert_eq!(records.len(), 1);
    assert_eq!(
        records[0].as_ref().unwrap().value().unwrap().len(),
        value.len()
    );
}
