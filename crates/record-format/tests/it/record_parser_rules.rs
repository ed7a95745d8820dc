//! Kafka's record parser rules (`DefaultRecord.readFrom`, `DefaultRecordBatch.RecordIterator`)
//! reproduced as structured errors: declared length vs bytes present and vs bytes used, negative
//! header counts, too many headers, leftover bytes after the last record, premature end, and
//! over-long varints. Each batch here has a correct CRC, so only the parser can object.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, Compression, CorruptKind, Error, Field, NewRecord, Position, RecordBatch,
    build_batch,
};

/// A v2 batch at base offset 0 with `records` as its raw (uncompressed) records section.
fn raw_batch(records: &[u8], count: i32) -> Vec<u8> {
    let mut b = Vec::new();
    build_batch(
        &BatchOptions::default(),
        [NewRecord::new(0, 100, None, None)],
        &mut b,
    )
    .unwrap();
    b.truncate(61);
    b.extend_from_slice(records);
    let len = i32::try_from(b.len() - 12).unwrap();
    b[8..12].copy_from_slice(&len.to_be_bytes());
    b[57..61].copy_from_slice(&count.to_be_bytes());
    // lastOffsetDelta spans the declared records, as a producer writes it.
    b[23..27].copy_from_slice(&(count - 1).max(0).to_be_bytes());
    let crc = seglog_record_format::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// One well-formed record: offset delta `d`, null key, value "v", no headers (8 bytes).
fn rec(d: u8) -> Vec<u8> {
    vec![0x0e, 0x00, 0x00, d * 2, 0x01, 0x02, b'v', 0x00]
}

fn errors(batch: &[u8]) -> Vec<Error> {
    let b = RecordBatch::parse(batch).unwrap();
    b.validate().unwrap();
    b.records().unwrap().filter_map(Result::err).collect()
}

fn only_error(batch: &[u8]) -> (Position, Field, CorruptKind) {
    let errs = errors(batch);
    assert_eq!(errs.len(), 1, "{errs:?}");
    match errs.into_iter().next().unwrap() {
        Error::Corrupt {
            position,
            field,
            kind,
        } => (position, field, kind),
        other => panic!("{other}"),
    }
}

#[test]
fn well_formed_records_decode() {
    let mut r = rec(0);
    r.extend(rec(1));
    assert!(errors(&raw_batch(&r, 2)).is_empty());
}

#[test]
fn declared_length_beyond_the_batch_is_an_error() {
    // Length 100 with 7 bytes left.
    let mut r = rec(0);
    r[0] = 200;
    r.insert(1, 0x01);
    let (pos, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!((pos, field), (Position::Buffer(61), Field::RecordLength));
    assert!(
        matches!(kind, CorruptKind::Truncated { needed: 100, .. }),
        "{kind:?}"
    );
}

#[test]
fn fields_that_do_not_fill_the_declared_length_are_an_error() {
    // Declared 8 bytes of body, fields use 7, then one spare byte.
    let mut r = rec(0);
    r[0] = 0x10;
    r.push(0xEE);
    let (_, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!(field, Field::RecordLength);
    assert_eq!(
        kind,
        CorruptKind::LengthMismatch {
            declared: 8,
            actual: 7
        }
    );
}

#[test]
fn fields_that_overrun_the_declared_length_are_an_error() {
    // Declared 5 bytes of body, but the value needs 6.
    let mut r = rec(0);
    r[0] = 0x0a;
    let (_, field, kind) = only_error(&raw_batch(&r, 1));
    assert!(
        matches!(
            field,
            Field::Value | Field::ValueLength | Field::HeaderCount
        ),
        "{field:?} {kind:?}"
    );
}

#[test]
fn a_header_count_past_the_declared_length_is_an_error() {
    // Declared 6 bytes of body: it ends just before the header count, whose byte (a count of 0)
    // follows in the batch. The count is read within the body only, so it is missing there.
    let mut r = rec(0);
    r[0] = 0x0c;
    let (pos, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!((pos, field), (Position::Buffer(61 + 7), Field::HeaderCount));
    assert_eq!(
        kind,
        CorruptKind::Truncated {
            needed: 1,
            available: 0
        }
    );
}

#[test]
fn headers_after_a_zero_header_record_are_decoded() {
    // A record without headers, then one with a header "k" -> "x": both decode, and the second's
    // header is read back.
    let mut r = rec(0);
    r.extend([
        0x16, 0x00, 0x00, 0x02, 0x01, 0x02, b'v', 0x02, 0x02, b'k', 0x02, b'x',
    ]);
    let batch = raw_batch(&r, 2);
    assert!(errors(&batch).is_empty());
    let b = RecordBatch::parse(&batch).unwrap();
    let records: Vec<_> = b.records().unwrap().map(Result::unwrap).collect();
    assert_eq!(records[0].header_count(), 0);
    assert_eq!(records[0].to_record().headers, vec![]);
    let owned = records[1].to_record();
    assert_eq!(owned.headers.len(), 1);
    assert_eq!(owned.headers[0].key, b"k");
    assert_eq!(owned.headers[0].value.as_deref(), Some(&b"x"[..]));
}

#[test]
fn a_negative_header_count_is_an_error() {
    let mut r = rec(0);
    *r.last_mut().unwrap() = 0x01; // header count -1
    let (pos, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!((pos, field), (Position::Buffer(61 + 7), Field::HeaderCount));
    assert_eq!(kind, CorruptKind::Negative { value: -1 });
}

#[test]
fn more_headers_than_bytes_is_an_error() {
    let mut r = rec(0);
    *r.last_mut().unwrap() = 0x14; // 10 headers, 0 bytes left
    let (_, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!(field, Field::HeaderCount);
    assert_eq!(
        kind,
        CorruptKind::TooManyHeaders {
            count: 10,
            remaining: 0
        }
    );
}

#[test]
fn a_negative_header_key_length_is_an_error() {
    let r = [
        0x0c, 0x00, 0x00, 0x00, 0x01, 0x01, 0x02, 0x01, 0x02, 0x02, 0x02, 0x02,
    ];
    let mut r = r.to_vec();
    r[0] = u8::try_from((r.len() - 1) * 2).unwrap();
    let (_, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!(field, Field::HeaderKeyLength);
    assert_eq!(kind, CorruptKind::Negative { value: -1 });
}

#[test]
fn bytes_after_the_last_record_are_an_error() {
    let mut r = rec(0);
    r.extend(rec(1));
    let batch = raw_batch(&r, 1);
    let b = RecordBatch::parse(&batch).unwrap();
    let all: Vec<_> = b.records().unwrap().collect();
    assert_eq!(all.len(), 1, "the leftover check replaces the last record");
    let Err(Error::Corrupt {
        position,
        field,
        kind,
    }) = &all[0]
    else {
        panic!("{all:?}")
    };
    assert_eq!(
        (*position, *field),
        (Position::Buffer(61 + 8), Field::Records)
    );
    assert_eq!(*kind, CorruptKind::RecordsRemaining { remaining: 8 });
}

#[test]
fn fewer_records_than_declared_is_a_premature_end() {
    let batch = raw_batch(&rec(0), 2);
    let b = RecordBatch::parse(&batch).unwrap();
    let all: Vec<_> = b.records().unwrap().collect();
    assert_eq!(all.len(), 2);
    assert!(all[0].is_ok());
    let Err(Error::Corrupt {
        position,
        field,
        kind,
    }) = &all[1]
    else {
        panic!()
    };
    assert_eq!(
        (*position, *field),
        (Position::Buffer(61 + 8), Field::RecordLength)
    );
    assert!(matches!(kind, CorruptKind::Truncated { available: 0, .. }));
}

#[test]
fn over_long_varints_are_errors() {
    let mut r = vec![0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
    r.extend(rec(0));
    let (_, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!(
        (field, kind),
        (Field::RecordLength, CorruptKind::VarintTooLong)
    );
    // An 11-byte timestamp varlong.
    let mut r = vec![0x1a, 0x00];
    r.extend([0x80; 10]);
    r.extend([0x01, 0x00, 0x01, 0x01, 0x00]);
    let (_, field, kind) = only_error(&raw_batch(&r, 1));
    assert_eq!(
        (field, kind),
        (Field::TimestampDelta, CorruptKind::VarintTooLong)
    );
}

#[test]
fn a_negative_record_count_is_an_error() {
    let batch = raw_batch(&rec(0), -1);
    let b = RecordBatch::parse(&batch).unwrap();
    let err = b.records().unwrap_err();
    assert_eq!(err.field(), Some(Field::RecordCount));
    assert_eq!(
        err.corrupt_kind(),
        Some(&CorruptKind::Negative { value: -1 })
    );
}

#[test]
fn negative_key_lengths_below_minus_one_read_as_null_like_java() {
    let mut r = rec(0);
    r[4] = 0x09; // key length -5
    let batch = raw_batch(&r, 1);
    let recs = RecordBatch::parse(&batch).unwrap().to_records().unwrap();
    assert_eq!(recs[0].key, None);
    assert_eq!(recs[0].value.as_deref(), Some(&b"v"[..]));
}

#[test]
fn leftovers_in_decompressed_records_are_an_error_too() {
    let mut raw = rec(0);
    raw.extend(rec(1));
    let mut z = Vec::new();
    seglog_record_format::compress(Compression::Gzip, &raw, &mut z).unwrap();
    let mut batch = raw_batch(&z, 1);
    batch[22] = 1; // attributes: gzip
    let crc = seglog_record_format::crc32c(&batch[21..]);
    batch[17..21].copy_from_slice(&crc.to_be_bytes());
    let b = RecordBatch::parse(&batch).unwrap();
    b.validate().unwrap();
    let mut scratch = Vec::new();
    let all: Vec<_> = b.records_with(&mut scratch).unwrap().collect();
    let Err(Error::Corrupt { position, kind, .. }) = &all[0] else {
        panic!("{all:?}")
    };
    assert_eq!(
        *position,
        Position::Decompressed {
            batch: 0,
            offset: 8
        }
    );
    assert_eq!(*kind, CorruptKind::RecordsRemaining { remaining: 8 });
    assert!(matches!(
        b.records(),
        Err(Error::Compressed {
            codec: Compression::Gzip,
            ..
        })
    ));
}
