//! Cross-checks against the kafka-protocol crate (an oracle nobody on this project wrote).
//!
//! Byte equality both ways where kafka-protocol matches Kafka's Java producer: uncompressed and
//! snappy batches, CreateTime, non-decreasing timestamps (it takes baseTimestamp as the minimum,
//! Java as the first) and unique header keys (it keeps headers in a map). Every codec is decoded
//! in both directions.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use kafka_protocol::indexmap::IndexMap;
use kafka_protocol::protocol::StrBytes;
use kafka_protocol::records::{
    Compression as KpCompression, Record as KpRecord, RecordBatchDecoder, RecordBatchEncoder,
    RecordEncodeOptions, TimestampType as KpTimestampType,
};
use seglog_record_format::{BatchOptions, Compression, Header, NewRecord, batches, build_batch};

/// offset delta, timestamp, key, value, headers.
type TestRecord = (
    i32,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(String, Option<Vec<u8>>)>,
);

/// The shape of one test batch.
struct Case {
    base_offset: i64,
    leader_epoch: i32,
    producer: Option<(i64, i16, i32)>,
    transactional: bool,
    records: Vec<TestRecord>,
}

fn kp_codec(c: Compression) -> KpCompression {
    match c {
        Compression::None => KpCompression::None,
        Compression::Gzip => KpCompression::Gzip,
        Compression::Snappy => KpCompression::Snappy,
        Compression::Lz4 => KpCompression::Lz4,
        Compression::Zstd => KpCompression::Zstd,
    }
}

fn cases() -> Vec<Case> {
    let json = |i: usize| {
        format!(
            r#"{{"id":{i},"name":"user-{i}","tags":["a","b"],"score":{}}}"#,
            i * 7
        )
        .into_bytes()
    };
    let mut big = Vec::new();
    for i in 0..120 {
        big.push((
            i,
            1_700_000_000_000 + i64::from(i / 3),
            Some(format!("key-{i}").into_bytes()),
            Some(json(usize::try_from(i).unwrap()).repeat(6)),
            vec![],
        ));
    }
    vec![
        Case {
            base_offset: 0,
            leader_epoch: -1,
            producer: None,
            transactional: false,
            records: vec![(0, 1000, Some(b"k".to_vec()), Some(b"v".to_vec()), vec![])],
        },
        Case {
            base_offset: 1234,
            leader_epoch: 7,
            producer: Some((99, 2, 40)),
            transactional: true,
            records: vec![
                (
                    0,
                    5000,
                    None,
                    Some(json(1)),
                    vec![
                        ("trace".into(), Some(b"abc".to_vec())),
                        ("nil".into(), None),
                    ],
                ),
                (1, 5000, Some(Vec::new()), None, vec![]),
                (
                    2,
                    5007,
                    Some(b"k2".to_vec()),
                    Some(Vec::new()),
                    vec![("e".into(), Some(Vec::new()))],
                ),
            ],
        },
        Case {
            base_offset: 1 << 40,
            leader_epoch: 3,
            producer: None,
            transactional: false,
            records: big,
        },
    ]
}

fn producer_sequence(case: &Case, delta: i32) -> i32 {
    match case.producer {
        Some((_, _, seq)) => seq.wrapping_add(delta),
        // kafka-protocol derives baseSequence from the first record's sequence; -1 + delta keeps
        // every record in one batch with baseSequence -1.
        None => delta - 1,
    }
}

fn kp_records(case: &Case) -> Vec<KpRecord> {
    case.records
        .iter()
        .map(|(d, ts, k, v, hs)| {
            let mut headers = IndexMap::new();
            for (hk, hv) in hs {
                headers.insert(
                    StrBytes::from_string(hk.clone()),
                    hv.clone().map(Into::into),
                );
            }
            KpRecord {
                transactional: case.transactional,
                control: false,
                delete_horizon: false,
                partition_leader_epoch: case.leader_epoch,
                producer_id: case.producer.map_or(-1, |p| p.0),
                producer_epoch: case.producer.map_or(-1, |p| p.1),
                timestamp_type: KpTimestampType::Creation,
                offset: case.base_offset + i64::from(*d),
                sequence: producer_sequence(case, *d),
                timestamp: *ts,
                key: k.clone().map(Into::into),
                value: v.clone().map(Into::into),
                headers,
            }
        })
        .collect()
}

fn ours(case: &Case, codec: Compression) -> Vec<u8> {
    let headers: Vec<Vec<Header<'_>>> = case
        .records
        .iter()
        .map(|r| {
            r.4.iter()
                .map(|(k, v)| Header {
                    key: k.as_bytes(),
                    value: v.as_deref(),
                })
                .collect()
        })
        .collect();
    let records = case
        .records
        .iter()
        .zip(&headers)
        .map(|((d, ts, k, v, _), hs)| {
            NewRecord::new(*d, *ts, k.as_deref(), v.as_deref()).with_headers(hs)
        });
    let opts = BatchOptions::default()
        .with_base_offset(case.base_offset)
        .with_partition_leader_epoch(case.leader_epoch)
        .with_producer_id(case.producer.map_or(-1, |p| p.0))
        .with_producer_epoch(case.producer.map_or(-1, |p| p.1))
        .with_base_sequence(case.producer.map_or(-1, |p| p.2))
        .with_transactional(case.transactional)
        .with_compression(codec);
    let mut out = Vec::new();
    build_batch(&opts, records, &mut out).unwrap();
    out
}

fn theirs(case: &Case, codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    let opts = RecordEncodeOptions {
        version: 2,
        compression: kp_codec(codec),
    };
    RecordBatchEncoder::encode(&mut out, &kp_records(case), &opts).unwrap();
    out
}

#[test]
fn uncompressed_and_snappy_bytes_are_equal() {
    for codec in [Compression::None, Compression::Snappy] {
        for (i, case) in cases().iter().enumerate() {
            assert_eq!(ours(case, codec), theirs(case, codec), "case {i}, {codec}");
        }
    }
}

#[test]
fn kafka_protocol_decodes_our_batches_with_every_codec() {
    for codec in Compression::ALL {
        for (i, case) in cases().iter().enumerate() {
            let bytes = ours(case, codec);
            let mut slice = &bytes[..];
            let sets = RecordBatchDecoder::decode_all(&mut slice).unwrap();
            assert_eq!(sets.len(), 1);
            assert_eq!(sets[0].compression, kp_codec(codec));
            let got = &sets[0].records;
            let want = kp_records(case);
            assert_eq!(got.len(), want.len(), "case {i}, {codec}");
            for (g, w) in got.iter().zip(&want) {
                assert_eq!(
                    (g.offset, g.timestamp, g.sequence),
                    (w.offset, w.timestamp, w.sequence),
                    "case {i}, {codec}"
                );
                assert_eq!(
                    (&g.key, &g.value, &g.headers),
                    (&w.key, &w.value, &w.headers),
                    "case {i}, {codec}"
                );
                assert_eq!(
                    (g.producer_id, g.producer_epoch, g.transactional),
                    (w.producer_id, w.producer_epoch, w.transactional)
                );
                assert_eq!(g.partition_leader_epoch, w.partition_leader_epoch);
            }
        }
    }
}

#[test]
fn we_decode_kafka_protocol_batches_with_every_codec() {
    for codec in Compression::ALL {
        for (i, case) in cases().iter().enumerate() {
            let bytes = theirs(case, codec);
            let framed: Vec<_> = batches(&bytes).map(Result::unwrap).collect();
            assert_eq!(framed.len(), 1);
            let b = framed[0].v2().unwrap();
            b.validate().unwrap();
            assert_eq!(b.compression().unwrap(), codec);
            assert_eq!(b.base_offset(), case.base_offset);
            assert_eq!(b.partition_leader_epoch(), case.leader_epoch);
            assert_eq!(b.base_sequence(), case.producer.map_or(-1, |p| p.2));
            let recs = b.to_records().unwrap();
            assert_eq!(recs.len(), case.records.len(), "case {i}, {codec}");
            for (r, (d, ts, k, v, hs)) in recs.iter().zip(&case.records) {
                assert_eq!(r.offset, case.base_offset + i64::from(*d));
                assert_eq!(r.timestamp, *ts);
                assert_eq!((&r.key, &r.value), (k, v), "case {i}, {codec}");
                let got: Vec<_> = r
                    .headers
                    .iter()
                    .map(|h| (h.key.clone(), h.value.clone()))
                    .collect();
                let want: Vec<_> = hs
                    .iter()
                    .map(|(k, v)| (k.clone().into_bytes(), v.clone()))
                    .collect();
                assert_eq!(got, want);
            }
        }
    }
}

#[test]
fn the_large_case_spans_several_snappy_blocks() {
    let case = &cases()[2];
    let raw = ours(case, Compression::None);
    assert!(
        raw.len() - 61 > 32 * 1024,
        "records section {} bytes",
        raw.len() - 61
    );
}
