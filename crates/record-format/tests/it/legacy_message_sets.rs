//! Legacy message sets, magic 0 and 1, compressed and not: CRC-32 validation, 14/22-byte
//! overheads, wrapper offsets (v1 inner offsets relative, v0 absolute), v1 timestamps and
//! LogAppendTime wrappers, framed alongside each other.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    Batch, BatchKind, Compression, CorruptKind, Error, Field, LegacyBatch, Record, TimestampType,
    batches, lz4, write_legacy_message,
};

fn rec(offset: i64, timestamp: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Record {
    Record {
        offset,
        timestamp,
        key: key.map(<[u8]>::to_vec),
        value: value.map(<[u8]>::to_vec),
        headers: vec![],
    }
}

/// A compressed wrapper holding `n` inner messages whose absolute offsets start at `first`.
fn wrapper(
    magic: i8,
    codec: Compression,
    first: i64,
    n: i64,
    attrs_extra: u8,
    wrapper_ts: i64,
) -> Vec<u8> {
    let mut inner = Vec::new();
    for i in 0..n {
        let off = if magic == 1 { i } else { first + i };
        let ts = (magic == 1).then_some(1000 + i);
        write_legacy_message(
            &mut inner,
            off,
            magic,
            0,
            ts,
            Some(format!("k{i}").as_bytes()),
            Some(b"value"),
        );
    }
    let mut z = Vec::new();
    if codec == Compression::Lz4 {
        lz4::compress(&inner, &mut z, magic == 0).unwrap();
    } else {
        seglog_record_format::compress(codec, &inner, &mut z).unwrap();
    }
    let mut out = Vec::new();
    let ts = (magic == 1).then_some(wrapper_ts);
    write_legacy_message(
        &mut out,
        first + n - 1,
        magic,
        codec.id() | attrs_extra,
        ts,
        None,
        Some(&z),
    );
    out
}

#[test]
fn uncompressed_v0_and_v1_messages_frame_and_decode() {
    let mut buf = Vec::new();
    write_legacy_message(&mut buf, 0, 0, 0, None, None, Some(b"a"));
    write_legacy_message(&mut buf, 1, 0, 0, None, Some(b"k"), None);
    write_legacy_message(&mut buf, 2, 1, 0, Some(500), Some(b"k"), Some(b"b"));
    let framed: Vec<_> = batches(&buf).map(Result::unwrap).collect();
    assert_eq!(framed.len(), 3);
    assert_eq!(framed[0].size_in_bytes(), 12 + 14 + 1);
    assert_eq!(framed[2].size_in_bytes(), 12 + 22 + 2);
    let mut all = Vec::new();
    for f in &framed {
        assert_eq!(f.kind(), BatchKind::Legacy);
        f.validate().unwrap();
        all.extend(f.decode().unwrap().to_records().unwrap());
    }
    assert_eq!(
        all,
        vec![
            rec(0, -1, None, Some(b"a")),
            rec(1, -1, Some(b"k"), None),
            rec(2, 500, Some(b"k"), Some(b"b"))
        ]
    );
    let Batch::Legacy(b) = framed[2].decode().unwrap() else {
        panic!()
    };
    assert_eq!(
        (b.max_timestamp(), b.timestamp_type()),
        (500, Some(TimestampType::CreateTime))
    );
}

#[test]
fn compressed_v1_wrappers_use_relative_inner_offsets() {
    for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4] {
        let buf = wrapper(1, codec, 100, 4, 0, 1003);
        let f = batches(&buf).next().unwrap().unwrap();
        f.validate().unwrap();
        let b = f.decode().unwrap();
        assert_eq!((b.last_offset(), b.max_timestamp()), (103, 1003));
        let recs = b.to_records().unwrap();
        let offsets: Vec<_> = recs.iter().map(|r| r.offset).collect();
        assert_eq!(offsets, vec![100, 101, 102, 103], "{codec}");
        let ts: Vec<_> = recs.iter().map(|r| r.timestamp).collect();
        assert_eq!(ts, vec![1000, 1001, 1002, 1003], "{codec}");
        assert_eq!(recs[2].key.as_deref(), Some(&b"k2"[..]));
    }
}

#[test]
fn compressed_v0_wrappers_use_absolute_inner_offsets() {
    for codec in [Compression::Gzip, Compression::Snappy, Compression::Lz4] {
        let buf = wrapper(0, codec, 50, 3, 0, 0);
        let b = LegacyBatch::parse(&buf).unwrap();
        b.validate().unwrap();
        let recs = b.to_records().unwrap();
        assert_eq!(
            recs.iter().map(|r| r.offset).collect::<Vec<_>>(),
            vec![50, 51, 52],
            "{codec}"
        );
        assert!(recs.iter().all(|r| r.timestamp == -1));
    }
}

#[test]
fn log_append_time_wrappers_override_inner_timestamps() {
    let buf = wrapper(1, Compression::Gzip, 0, 3, 0x08, 99_999);
    let b = LegacyBatch::parse(&buf).unwrap();
    assert_eq!(b.timestamp_type(), Some(TimestampType::LogAppendTime));
    let mut scratch = Vec::new();
    for r in b.records_with(&mut scratch).unwrap() {
        let r = r.unwrap();
        assert_eq!(r.timestamp(), 99_999);
        assert_eq!(r.timestamp_type(), Some(TimestampType::LogAppendTime));
        assert_eq!(
            r.message().timestamp(),
            Some(1000 + r.offset()),
            "the stored inner timestamp is kept"
        );
    }
}

#[test]
fn crc32_covers_magic_to_end() {
    let mut buf = wrapper(1, Compression::Gzip, 0, 2, 0, 1);
    let stored = u32::from_be_bytes(buf[12..16].try_into().unwrap());
    assert_eq!(stored, crc32fast_hash(&buf[16..]));
    let last = buf.len() - 1;
    buf[last] ^= 0xff;
    let err = LegacyBatch::parse(&buf).unwrap().validate().unwrap_err();
    assert!(matches!(err, Error::ChecksumMismatch { expected, .. } if expected == stored));
}

/// Bitwise CRC-32 (IEEE, reflected 0xEDB88320), independent of crc32fast.
fn crc32fast_hash(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[test]
fn malformed_wrappers_are_errors() {
    // Null wrapper value.
    let mut buf = Vec::new();
    write_legacy_message(&mut buf, 0, 1, Compression::Gzip.id(), Some(0), None, None);
    let err = LegacyBatch::parse(&buf).unwrap().to_records().unwrap_err();
    assert_eq!(err.field(), Some(Field::Value));
    // A compressed inner message.
    let inner = wrapper(1, Compression::Gzip, 0, 1, 0, 0);
    let mut z = Vec::new();
    seglog_record_format::compress(Compression::Gzip, &inner, &mut z).unwrap();
    let mut buf = Vec::new();
    write_legacy_message(
        &mut buf,
        0,
        1,
        Compression::Gzip.id(),
        Some(0),
        None,
        Some(&z),
    );
    let err = LegacyBatch::parse(&buf).unwrap().to_records().unwrap_err();
    assert_eq!(err.field(), Some(Field::InnerMessage));
    // A v1 message shorter than the v1 overhead.
    let mut buf = Vec::new();
    write_legacy_message(&mut buf, 0, 0, 0, None, None, None);
    buf[16] = 1;
    let err = LegacyBatch::parse(&buf).unwrap_err();
    assert_eq!(
        err.corrupt_kind(),
        Some(&CorruptKind::TooSmall {
            size: 14,
            minimum: 22
        })
    );
}

#[test]
fn legacy_and_v2_batches_frame_in_one_buffer() {
    let mut buf = wrapper(1, Compression::Snappy, 0, 2, 0, 5);
    seglog_record_format::build_batch(
        &seglog_record_format::BatchOptions::new(2, Compression::None),
        [seglog_record_format::NewRecord::new(
            0,
            7,
            None,
            Some(b"v2"),
        )],
        &mut buf,
    )
    .unwrap();
    let kinds: Vec<_> = batches(&buf).map(|b| b.unwrap().kind()).collect();
    assert_eq!(kinds, vec![BatchKind::Legacy, BatchKind::V2]);
    let offsets: Vec<i64> = batches(&buf)
        .map(|b| b.unwrap().last_offset().unwrap())
        .collect();
    assert_eq!(offsets, vec![1, 2]);
}

#[test]
fn a_damaged_key_length_is_a_checksum_mismatch_when_validating() {
    let mut buf = Vec::new();
    write_legacy_message(&mut buf, 0, 1, 0, Some(1), Some(b"key"), Some(b"value"));
    buf[26..30].copy_from_slice(&1000i32.to_be_bytes());
    let f = batches(&buf).next().unwrap().unwrap();
    assert!(matches!(f.validate(), Err(Error::ChecksumMismatch { .. })));
    assert_eq!(f.decode().unwrap_err().field(), Some(Field::Key));
}
