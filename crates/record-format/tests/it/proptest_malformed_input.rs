//! Property: no input, however malformed, makes framing, validation, record decoding, control
//! record parsing, in-place edits or any codec panic; each gives a value or an error. Inputs are
//! arbitrary bytes and mutated valid batches (with the CRC fixed up afterwards, so the record
//! parser sees the damage rather than the checksum).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use proptest::prelude::*;
use seglog_record_format::{
    Batch, BatchOptions, Compression, Header, LegacyBatch, NewRecord, RecordBatch, TimestampType,
    batches, build_batch, write_legacy_message,
};

const LIMIT: usize = 1 << 20;

/// Runs every reader over `buf`; only panics can fail.
fn exercise(buf: &[u8]) {
    for f in batches(buf) {
        let Ok(f) = f else { continue };
        let _ = f.validate();
        let _ = f.last_offset();
        match f.decode() {
            Ok(Batch::V2(b)) => v2(&b),
            Ok(Batch::Legacy(l)) => legacy(&l),
            Err(_) => {}
        }
    }
    if let Ok(b) = RecordBatch::parse(buf) {
        v2(&b);
    }
    if let Ok(l) = LegacyBatch::parse(buf) {
        legacy(&l);
    }
    let mut copy = buf.to_vec();
    let _ = seglog_record_format::set_base_offset(&mut copy, 1);
    let _ = seglog_record_format::set_max_timestamp(&mut copy, TimestampType::LogAppendTime, 5);
    let _ = seglog_record_format::set_delete_horizon(&mut copy, 5);
}

fn v2(b: &RecordBatch<'_>) {
    let _ = b.validate();
    let _ = (b.last_sequence(), b.next_offset(), b.compression());
    let mut scratch = Vec::new();
    if let Ok(records) = b.records_with_limit(&mut scratch, LIMIT) {
        for r in records.flatten() {
            let _ = r.headers().count();
            let _ = r.to_record();
            let _ = r.control();
        }
    }
}

fn legacy(l: &LegacyBatch<'_>) {
    let _ = l.validate();
    let mut scratch = Vec::new();
    if let Ok(records) = l.records_with_limit(&mut scratch, LIMIT) {
        for r in records.flatten() {
            let _ = r.to_record();
        }
    }
}

fn valid_batches(codec: Compression) -> Vec<u8> {
    let hs = [
        Header::new(b"h", b"v"),
        Header {
            key: b"h",
            value: None,
        },
    ];
    let recs = [
        NewRecord::new(0, 1_000, Some(b"key"), Some(b"value value value")).with_headers(&hs),
        NewRecord::new(2, 990, None, None),
        NewRecord::new(3, 1_500, Some(b""), Some(&[7; 40])),
    ];
    let mut out = Vec::new();
    build_batch(&BatchOptions::new(10, codec), recs, &mut out).unwrap();
    if codec != Compression::Zstd {
        let mut inner = Vec::new();
        write_legacy_message(&mut inner, 0, 1, 0, Some(5), Some(b"k"), Some(b"v"));
        write_legacy_message(&mut inner, 1, 1, 0, Some(6), None, Some(b"w"));
        let mut z = Vec::new();
        seglog_record_format::compress(codec, &inner, &mut z).unwrap();
        write_legacy_message(&mut out, 20, 1, codec.id(), Some(6), None, Some(&z));
    }
    out
}

fn fix_crcs(buf: &mut [u8]) {
    let mut pos = 0;
    while pos + 17 <= buf.len() {
        let size = i32::from_be_bytes(buf[pos + 8..pos + 12].try_into().unwrap());
        let Ok(size) = usize::try_from(size) else {
            return;
        };
        let end = pos + 12 + size;
        if size < 14 || end > buf.len() {
            return;
        }
        if buf[pos + 16] == 2 && size >= 49 {
            let crc = seglog_record_format::crc32c(&buf[pos + 21..end]);
            buf[pos + 17..pos + 21].copy_from_slice(&crc.to_be_bytes());
        } else if buf[pos + 16] < 2 {
            let crc = crc32fast::hash(&buf[pos + 16..end]);
            buf[pos + 12..pos + 16].copy_from_slice(&crc.to_be_bytes());
        }
        pos = end;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(buf in prop::collection::vec(any::<u8>(), 0..600)) {
        exercise(&buf);
    }

    #[test]
    fn arbitrary_bytes_behind_a_plausible_header_never_panic(
        magic in 0u8..4,
        attrs in any::<u8>(),
        count in any::<i32>(),
        body in prop::collection::vec(any::<u8>(), 0..400),
    ) {
        let mut buf = vec![0u8; 61];
        let len = i32::try_from(49 + body.len()).unwrap();
        buf[8..12].copy_from_slice(&len.to_be_bytes());
        buf[16] = magic;
        buf[22] = attrs;
        buf[57..61].copy_from_slice(&count.to_be_bytes());
        buf.extend_from_slice(&body);
        fix_crcs(&mut buf);
        exercise(&buf);
    }

    #[test]
    fn mutated_valid_batches_never_panic(
        codec in prop::sample::select(Compression::ALL.to_vec()),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8),
        cut in any::<prop::sample::Index>(),
        fix in any::<bool>(),
        truncate in any::<bool>(),
    ) {
        let mut buf = valid_batches(codec);
        for (i, b) in &edits {
            let at = i.index(buf.len());
            buf[at] = *b;
        }
        if truncate {
            let n = cut.index(buf.len() + 1);
            buf.truncate(n);
        }
        if fix {
            fix_crcs(&mut buf);
        }
        exercise(&buf);
    }

    #[test]
    fn every_codec_survives_arbitrary_and_mutated_input(
        codec in prop::sample::select(Compression::ALL.to_vec()),
        magic in 0i8..3,
        noise in prop::collection::vec(any::<u8>(), 0..300),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..4),
    ) {
        let mut out = Vec::new();
        let _ = seglog_record_format::decompress(codec, &noise, magic, &mut out, LIMIT);
        let mut z = Vec::new();
        seglog_record_format::compress(codec, &noise.repeat(3), &mut z).unwrap();
        if !z.is_empty() {
            for (i, b) in &edits {
                let at = i.index(z.len());
                z[at] = *b;
            }
        }
        out.clear();
        if seglog_record_format::decompress(codec, &z, magic, &mut out, LIMIT).is_ok() && (edits.is_empty() || z.is_empty()) {
            prop_assert_eq!(&out, &noise.repeat(3));
        }
        prop_assert!(out.len() <= LIMIT);
    }
}

#[test]
fn bombs_stop_at_the_limit() {
    let zeros = vec![0u8; 8 << 20];
    for codec in Compression::ALL {
        let mut z = Vec::new();
        seglog_record_format::compress(codec, &zeros, &mut z).unwrap();
        let mut out = Vec::new();
        let err = seglog_record_format::decompress(codec, &z, 2, &mut out, 1 << 20).unwrap_err();
        assert!(
            matches!(err, seglog_record_format::Error::DecompressLimit { limit, .. } if limit == 1 << 20),
            "{codec}: {err}"
        );
        assert!(
            out.capacity() <= (2 << 20) + (4 << 20),
            "{codec}: capacity {}",
            out.capacity()
        );
    }
}
