//! snappy: xerial framing as Kafka writes it (16-byte header, 32 KiB input blocks, int32 BE
//! block lengths), and raw unframed snappy blocks accepted on read, inside a v2 batch and a
//! legacy wrapper.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, Compression, LegacyBatch, NewRecord, RecordBatch, build_batch, snappy,
    write_legacy_message,
};

#[test]
fn xerial_framing_splits_input_into_32_kib_blocks() {
    let input: Vec<u8> = (0..100_000u32).map(|i| (i % 97).to_be_bytes()[3]).collect();
    let mut z = Vec::new();
    snappy::compress(&input, &mut z).unwrap();
    assert_eq!(&z[..16], b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01");
    let mut p = 16;
    let mut blocks = Vec::new();
    while p < z.len() {
        let len = usize::try_from(u32::from_be_bytes(z[p..p + 4].try_into().unwrap())).unwrap();
        let mut dec = Vec::new();
        snappy::decompress(&z[p + 4..p + 4 + len], &mut dec, usize::MAX).unwrap();
        blocks.push(dec.len());
        p += 4 + len;
    }
    assert_eq!(blocks, vec![32768, 32768, 32768, 100_000 - 3 * 32768]);
}

#[test]
fn a_v2_batch_with_a_raw_snappy_block_decodes() {
    let mut raw = Vec::new();
    let r = [
        NewRecord::new(0, 3, Some(b"k"), Some(b"raw")),
        NewRecord::new(1, 4, None, None),
    ];
    build_batch(&BatchOptions::default(), r, &mut raw).unwrap();
    let mut b = raw[..61].to_vec();
    snappy::compress_raw(&raw[61..], &mut b).unwrap();
    let len = i32::try_from(b.len() - 12).unwrap();
    b[8..12].copy_from_slice(&len.to_be_bytes());
    b[22] = Compression::Snappy.id();
    let crc = seglog_record_format::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    let batch = RecordBatch::parse(&b).unwrap();
    batch.validate().unwrap();
    let recs = batch.to_records().unwrap();
    assert_eq!(recs.len(), 2);
    assert_eq!(recs[0].value.as_deref(), Some(&b"raw"[..]));
}

#[test]
fn a_legacy_wrapper_with_a_raw_snappy_block_decodes() {
    let mut inner = Vec::new();
    write_legacy_message(&mut inner, 0, 1, 0, Some(9), None, Some(b"x"));
    let mut z = Vec::new();
    snappy::compress_raw(&inner, &mut z).unwrap();
    let mut buf = Vec::new();
    write_legacy_message(
        &mut buf,
        5,
        1,
        Compression::Snappy.id(),
        Some(9),
        None,
        Some(&z),
    );
    let recs = LegacyBatch::parse(&buf).unwrap().to_records().unwrap();
    assert_eq!((recs[0].offset, recs[0].timestamp), (5, 9));
}

#[test]
fn corrupt_and_bomb_inputs_are_errors() {
    let mut out = Vec::new();
    assert!(snappy::decompress(&[], &mut out, 10).is_err());
    let mut z = Vec::new();
    snappy::compress(&vec![0u8; 1 << 20], &mut z).unwrap();
    let err = snappy::decompress(&z, &mut out, 1000).unwrap_err();
    assert!(matches!(
        err,
        seglog_record_format::Error::DecompressLimit { limit: 1000, .. }
    ));
    // A chunk length beyond the input.
    let mut bad = z[..20].to_vec();
    bad[16..20].copy_from_slice(&1_000_000i32.to_be_bytes());
    assert!(snappy::decompress(&bad, &mut out, usize::MAX).is_err());
}
