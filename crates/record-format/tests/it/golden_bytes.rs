//! A v2 batch whose every byte is written out by hand (header fields, varints and a CRC-32C
//! computed by a bitwise implementation in this file), compared with what the builder writes and
//! read back field by field.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, Compression, Header, NewRecord, RecordBatch, TimestampType, batches, build_batch,
};

/// Bitwise CRC-32C (reflected polynomial 0x82F63B78), independent of the crc32c crate.
fn crc32c_bitwise(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0x82F6_3B78
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

fn expected_batch() -> Vec<u8> {
    // Record 0: offset delta 0, timestamp 1000 (delta 0), key "k", value "v", header "h" -> "x".
    let record0: [u8; 13] = [
        0x18, // body length 12, zig-zag -> 24
        0x00, // attributes
        0x00, // timestamp delta 0
        0x00, // offset delta 0
        0x02, b'k', // key length 1
        0x02, b'v', // value length 1
        0x02, // 1 header
        0x02, b'h', 0x02, b'x',
    ];
    // Record 1: offset delta 1, timestamp 1003 (delta 3), null key, value "vv", no headers.
    let record1: [u8; 9] = [0x10, 0x00, 0x06, 0x02, 0x01, 0x04, b'v', b'v', 0x00];
    let mut b = Vec::new();
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 5]); // base offset 5
    b.extend_from_slice(&[0, 0, 0, 0x47]); // batch length 61 + 22 - 12 = 71
    b.extend_from_slice(&[0xff; 4]); // partition leader epoch -1
    b.push(2); // magic
    b.extend_from_slice(&[0; 4]); // crc, below
    b.extend_from_slice(&[0, 0]); // attributes: none, CreateTime
    b.extend_from_slice(&[0, 0, 0, 1]); // last offset delta
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x03, 0xe8]); // base timestamp 1000
    b.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0x03, 0xeb]); // max timestamp 1003
    b.extend_from_slice(&[0xff; 8]); // producer id -1
    b.extend_from_slice(&[0xff; 2]); // producer epoch -1
    b.extend_from_slice(&[0xff; 4]); // base sequence -1
    b.extend_from_slice(&[0, 0, 0, 2]); // record count
    assert_eq!(b.len(), 61);
    b.extend_from_slice(&record0);
    b.extend_from_slice(&record1);
    let crc = crc32c_bitwise(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

#[test]
fn bitwise_crc_matches_the_standard_check_value() {
    assert_eq!(crc32c_bitwise(b"123456789"), 0xE306_9283);
    assert_eq!(seglog_record_format::crc32c(b"123456789"), 0xE306_9283);
}

#[test]
fn builder_writes_the_hand_computed_bytes() {
    let headers = [Header::new(b"h", b"x")];
    let records = [
        NewRecord::new(0, 1000, Some(b"k"), Some(b"v")).with_headers(&headers),
        NewRecord::new(1, 1003, None, Some(b"vv")),
    ];
    let mut out = Vec::new();
    build_batch(&BatchOptions::new(5, Compression::None), records, &mut out).unwrap();
    assert_eq!(out, expected_batch());
}

#[test]
fn reader_sees_every_hand_written_field() {
    let bytes = expected_batch();
    let framed = batches(&bytes).next().unwrap().unwrap();
    assert_eq!(
        (framed.position(), framed.size_in_bytes(), framed.magic()),
        (0, 83, 2)
    );
    let b = RecordBatch::parse(&bytes).unwrap();
    b.validate().unwrap();
    assert_eq!(b.crc(), crc32c_bitwise(&bytes[21..]));
    assert_eq!(
        (b.base_offset(), b.last_offset(), b.next_offset()),
        (5, 6, 7)
    );
    assert_eq!((b.batch_length(), b.size_in_bytes()), (71, 83));
    assert_eq!((b.base_timestamp(), b.max_timestamp()), (1000, 1003));
    assert_eq!(
        (
            b.producer_id(),
            b.producer_epoch(),
            b.base_sequence(),
            b.last_sequence()
        ),
        (-1, -1, -1, -1)
    );
    assert_eq!((b.partition_leader_epoch(), b.records_count()), (-1, 2));
    assert_eq!(b.compression().unwrap(), Compression::None);
    assert_eq!(b.timestamp_type(), TimestampType::CreateTime);
    assert!(!b.is_transactional() && !b.is_control() && !b.has_delete_horizon());

    let recs: Vec<_> = b.records().unwrap().collect::<Result<_, _>>().unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(
        (
            recs[0].offset(),
            recs[0].timestamp(),
            recs[0].size_in_bytes()
        ),
        (5, 1000, 13)
    );
    assert_eq!(
        (recs[0].key(), recs[0].value()),
        (Some(&b"k"[..]), Some(&b"v"[..]))
    );
    assert_eq!(
        recs[0].headers().collect::<Vec<_>>(),
        vec![Header::new(b"h", b"x")]
    );
    assert_eq!(
        (
            recs[1].offset(),
            recs[1].timestamp(),
            recs[1].size_in_bytes()
        ),
        (6, 1003, 9)
    );
    assert_eq!((recs[1].key(), recs[1].value()), (None, Some(&b"vv"[..])));
    assert_eq!(recs[1].header_count(), 0);
}

#[test]
fn a_flipped_bit_fails_the_crc_with_both_values() {
    let mut bytes = expected_batch();
    bytes[70] ^= 0x01;
    let b = RecordBatch::parse(&bytes).unwrap();
    let err = b.validate().unwrap_err();
    let seglog_record_format::Error::ChecksumMismatch {
        expected, actual, ..
    } = err
    else {
        panic!("{err}")
    };
    assert_eq!(
        expected,
        u32::from_be_bytes(bytes[17..21].try_into().unwrap())
    );
    assert_eq!(actual, crc32c_bitwise(&bytes[21..]));
}
