//! Kafka's LZ4 frame: Kafka's own header bytes, the magic-v0 "broken" header checksum (computed
//! over magic and descriptor), frames with content size and checksums from other writers, and
//! rejection of what Kafka's reader rejects.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]
#![expect(
    clippy::little_endian_bytes,
    reason = "LZ4 frame fields are little-endian by the LZ4 spec"
)]

use seglog_record_format::{
    BatchOptions, Compression, Error, LegacyBatch, NewRecord, RecordBatch, build_batch, lz4,
    write_legacy_message,
};
use twox_hash::XxHash32;

fn hc(bytes: &[u8]) -> u8 {
    (XxHash32::oneshot(0, bytes) >> 8).to_le_bytes()[0]
}

#[test]
fn v2_batches_carry_the_correct_header_checksum() {
    let mut out = Vec::new();
    let r = [NewRecord::new(0, 1, None, Some(b"lz4 lz4 lz4 lz4"))];
    build_batch(&BatchOptions::new(0, Compression::Lz4), r, &mut out).unwrap();
    let frame = &out[61..];
    assert_eq!(&frame[..6], &[0x04, 0x22, 0x4D, 0x18, 0x60, 0x40]);
    assert_eq!(frame[6], hc(&[0x60, 0x40]));
    assert_eq!(&frame[frame.len() - 4..], &[0, 0, 0, 0], "end mark");
}

#[test]
fn a_magic_v0_wrapper_with_the_broken_checksum_reads() {
    let mut inner = Vec::new();
    write_legacy_message(&mut inner, 0, 0, 0, None, None, Some(b"old client"));
    let mut z = Vec::new();
    lz4::compress(&inner, &mut z, true).unwrap();
    assert_eq!(z[6], hc(&z[..6]), "HC over magic + FLG + BD");
    assert_ne!(z[6], hc(&z[4..6]));
    let mut buf = Vec::new();
    write_legacy_message(&mut buf, 0, 0, Compression::Lz4.id(), None, None, Some(&z));
    let recs = LegacyBatch::parse(&buf).unwrap().to_records().unwrap();
    assert_eq!(recs[0].value.as_deref(), Some(&b"old client"[..]));
}

#[test]
fn the_broken_checksum_is_refused_for_magic_1_and_2() {
    let mut z = Vec::new();
    lz4::compress(b"data data data", &mut z, true).unwrap();
    let mut out = Vec::new();
    assert!(lz4::decompress(&z, &mut out, 100, false).is_err());
    assert!(seglog_record_format::decompress(Compression::Lz4, &z, 1, &mut out, 100).is_err());
    assert!(seglog_record_format::decompress(Compression::Lz4, &z, 2, &mut out, 100).is_err());
    seglog_record_format::decompress(Compression::Lz4, &z, 0, &mut out, 100).unwrap();
    assert_eq!(out, b"data data data");
}

/// A frame with content size, block checksums and a content checksum, as lz4 tools write.
fn full_flag_frame(payload: &[u8]) -> Vec<u8> {
    let flg = 0x60 | 0x10 | 0x08 | 0x04;
    let mut f = vec![0x04, 0x22, 0x4D, 0x18, flg, 0x40];
    f.extend_from_slice(&(payload.len() as u64).to_le_bytes());
    let h = hc(&f[4..]);
    f.push(h);
    f.extend_from_slice(&(u32::try_from(payload.len()).unwrap() | 0x8000_0000).to_le_bytes());
    f.extend_from_slice(payload);
    f.extend_from_slice(&XxHash32::oneshot(0, payload).to_le_bytes());
    f.extend_from_slice(&[0; 4]);
    f.extend_from_slice(&XxHash32::oneshot(0, payload).to_le_bytes());
    f
}

#[test]
fn content_size_and_checksums_are_accepted_and_verified() {
    let f = full_flag_frame(b"stored block");
    let mut out = Vec::new();
    lz4::decompress(&f, &mut out, 100, false).unwrap();
    assert_eq!(out, b"stored block");
    let mut bad = f.clone();
    let n = bad.len();
    bad[n - 1] ^= 1;
    assert!(
        lz4::decompress(&bad, &mut out, 100, false).is_err(),
        "content checksum"
    );
    let mut bad = f;
    bad[19 + 12] ^= 1;
    assert!(
        lz4::decompress(&bad, &mut out, 100, false).is_err(),
        "block checksum"
    );
}

#[test]
fn a_v2_batch_with_a_foreign_lz4_frame_decodes() {
    let mut raw = Vec::new();
    build_batch(
        &BatchOptions::default(),
        [NewRecord::new(0, 3, Some(b"k"), Some(b"v"))],
        &mut raw,
    )
    .unwrap();
    let records = raw[61..].to_vec();
    let mut b = raw[..61].to_vec();
    b.extend(full_flag_frame(&records));
    let len = i32::try_from(b.len() - 12).unwrap();
    b[8..12].copy_from_slice(&len.to_be_bytes());
    b[22] = 3;
    let crc = seglog_record_format::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    let recs = RecordBatch::parse(&b).unwrap().to_records().unwrap();
    assert_eq!(recs[0].key.as_deref(), Some(&b"k"[..]));
}

#[test]
fn dependent_blocks_and_unknown_versions_are_rejected() {
    let mut out = Vec::new();
    for flg in [0x40u8, 0x00, 0xA0, 0x61] {
        let z = [
            0x04,
            0x22,
            0x4D,
            0x18,
            flg,
            0x40,
            hc(&[flg, 0x40]),
            0,
            0,
            0,
            0,
        ];
        let err = lz4::decompress(&z, &mut out, 100, false).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Decompress {
                    codec: Compression::Lz4,
                    ..
                }
            ),
            "{flg:#x}: {err}"
        );
    }
}
