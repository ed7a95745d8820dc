//! seglog-record-format with its default features off: uncompressed batches work as ever; each
//! of the four codecs is reported as left out of the build, naming the codec and, when reading,
//! the batch's byte position.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_record_format::{
    ATTRIBUTES_OFFSET, BatchOptions, Compression, Error, NewRecord, batches, build_batch, compress,
    decompress,
};

const CODECS: [Compression; 4] = [
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

fn records() -> impl Iterator<Item = NewRecord<'static>> {
    (0..3).map(|i| {
        NewRecord::new(
            i,
            1_700_000_000_000,
            Some(b"k".as_slice()),
            Some(b"v".as_slice()),
        )
    })
}

#[test]
fn no_codec_is_compiled_in() {
    assert!(Compression::None.is_enabled());
    for codec in CODECS {
        assert!(!codec.is_enabled(), "{codec}");
    }
}

#[test]
fn uncompressed_batches_build_and_read() {
    let mut log = Vec::new();
    build_batch(
        &BatchOptions::new(7, Compression::None),
        records(),
        &mut log,
    )
    .unwrap();
    let batch = batches(&log).next().unwrap().unwrap();
    batch.validate().unwrap();
    let offsets: Vec<i64> = batch
        .decode()
        .unwrap()
        .to_records()
        .unwrap()
        .iter()
        .map(|r| r.offset)
        .collect();
    assert_eq!(offsets, [7, 8, 9]);
}

#[test]
fn building_in_a_left_out_codec_names_it() {
    for codec in CODECS {
        let mut out = Vec::new();
        let err = build_batch(&BatchOptions::new(0, codec), records(), &mut out).unwrap_err();
        assert_eq!(
            err,
            Error::CodecDisabled {
                codec,
                position: None
            }
        );
        let message = err.to_string();
        assert!(
            message.contains(&format!("`{codec}` cargo feature")),
            "{message}"
        );
        let err = compress(codec, b"abc", &mut out).unwrap_err();
        assert!(
            matches!(err, Error::CodecDisabled { codec: c, .. } if c == codec),
            "{err}"
        );
    }
}

#[test]
fn reading_a_batch_in_a_left_out_codec_names_it_and_its_position() {
    for codec in CODECS {
        // An uncompressed batch behind another, relabelled as compressed with `codec` (its CRC
        // fixed up): what a log written by a build with the codec holds, as this build sees it.
        let mut log = Vec::new();
        build_batch(
            &BatchOptions::new(0, Compression::None),
            records(),
            &mut log,
        )
        .unwrap();
        let second = log.len();
        build_batch(
            &BatchOptions::new(3, Compression::None),
            records(),
            &mut log,
        )
        .unwrap();
        let attributes = second + ATTRIBUTES_OFFSET;
        log[attributes + 1] |= codec.id();
        let crc = seglog_record_format::crc32c(&log[second + 21..]);
        log[second + 17..second + 21].copy_from_slice(&crc.to_be_bytes());

        let framed: Vec<_> = batches(&log).map(Result::unwrap).collect();
        framed[1].validate().unwrap(); // the checksum holds: only the codec is missing
        let err = framed[1].decode().unwrap().to_records().unwrap_err();
        assert_eq!(
            err.position(),
            Some(u64::try_from(second).unwrap()),
            "{err}"
        );
        assert!(
            matches!(err, Error::CodecDisabled { codec: c, .. } if c == codec),
            "{err}"
        );
        let message = err.to_string();
        assert!(
            message.contains(&format!("the batch at byte {second}")),
            "{message}"
        );
        assert!(
            message.contains(&format!("{codec} compression is not in this build")),
            "{message}"
        );

        let mut out = Vec::new();
        let err = decompress(codec, b"\0\0\0\0", 2, &mut out, 1 << 20).unwrap_err();
        assert!(
            matches!(err, Error::CodecDisabled { codec: c, .. } if c == codec),
            "{err}"
        );
    }
}
