//! Property: decode(encode(records)) == records, for arbitrary records (null and empty keys and
//! values, duplicate header keys, null header values, any timestamps and offset gaps), every
//! codec and arbitrary batch shapes (producer state, flags, timestamp type, delete horizon),
//! and for buffers of several batches framed back.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use proptest::prelude::*;
use seglog_record_format::{
    BatchBuilder, BatchOptions, Compression, Header, NewRecord, OwnedHeader, Record, RecordBatch,
    TimestampType, batches,
};

#[derive(Debug, Clone)]
struct Rec {
    gap: i32,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

fn bytes(max: usize) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(prop::collection::vec(any::<u8>(), 0..max))
}

fn rec() -> impl Strategy<Value = Rec> {
    let header = (
        prop::collection::vec(prop::sample::select(vec![b'a', b'b', b'c']), 0..3),
        bytes(8),
    );
    (
        1i32..4,
        prop_oneof![Just(-1i64), 0i64..10_000, 0i64..(1 << 50)],
        bytes(40),
        prop_oneof![bytes(300), Just(Some(vec![b'x'; 5000]))],
        prop::collection::vec(header, 0..4),
    )
        .prop_map(|(gap, timestamp, key, value, headers)| Rec {
            gap,
            timestamp,
            key,
            value,
            headers,
        })
}

fn codec() -> impl Strategy<Value = Compression> {
    prop::sample::select(Compression::ALL.to_vec())
}

fn options() -> impl Strategy<Value = BatchOptions> {
    (
        (0i64..(1 << 60), any::<i32>()),
        prop::option::of((0i64..1 << 40, 0i16..100, 0i32..i32::MAX)),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(0i64..(1 << 45)),
        prop::option::of(0i64..(1 << 45)),
        codec(),
    )
        .prop_map(
            |(
                (base_offset, epoch),
                producer,
                transactional,
                control,
                append_time,
                horizon,
                compression,
            )| {
                let (producer_id, producer_epoch, base_sequence) = producer.unwrap_or((-1, -1, -1));
                BatchOptions::default()
                    .with_base_offset(base_offset)
                    .with_partition_leader_epoch(epoch)
                    .with_producer_id(producer_id)
                    .with_producer_epoch(producer_epoch)
                    .with_base_sequence(base_sequence)
                    .with_transactional(transactional && producer.is_some())
                    .with_control(control)
                    .with_timestamp_type(if append_time.is_some() {
                        TimestampType::LogAppendTime
                    } else {
                        TimestampType::CreateTime
                    })
                    .with_log_append_time(append_time.unwrap_or(-1))
                    .with_delete_horizon_ms(horizon)
                    .with_compression(compression)
                    .with_last_offset_delta(None)
            },
        )
}

/// Builds one batch and returns the records it should decode to.
fn encode(
    builder: &mut BatchBuilder,
    opts: &BatchOptions,
    recs: &[Rec],
    out: &mut Vec<u8>,
) -> Vec<Record> {
    let headers: Vec<Vec<Header<'_>>> = recs
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .map(|(k, v)| Header {
                    key: k,
                    value: v.as_deref(),
                })
                .collect()
        })
        .collect();
    let mut delta = -1;
    let mut expected = Vec::new();
    let mut news = Vec::new();
    for (r, hs) in recs.iter().zip(&headers) {
        delta += r.gap;
        news.push(
            NewRecord::new(delta, r.timestamp, r.key.as_deref(), r.value.as_deref())
                .with_headers(hs),
        );
        expected.push(Record {
            offset: opts.base_offset + i64::from(delta),
            timestamp: match opts.timestamp_type {
                TimestampType::LogAppendTime => opts.log_append_time,
                TimestampType::CreateTime => r.timestamp,
            },
            key: r.key.clone(),
            value: r.value.clone(),
            headers: r
                .headers
                .iter()
                .map(|(k, v)| OwnedHeader {
                    key: k.clone(),
                    value: v.clone(),
                })
                .collect(),
        });
    }
    let built = builder.build(opts, news, out).unwrap();
    assert_eq!(built.record_count, i32::try_from(recs.len()).unwrap());
    expected
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 192, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn one_batch_round_trips(opts in options(), recs in prop::collection::vec(rec(), 1..20)) {
        let mut builder = BatchBuilder::new();
        let mut out = Vec::new();
        let expected = encode(&mut builder, &opts, &recs, &mut out);
        let b = RecordBatch::parse(&out).unwrap();
        prop_assert!(b.is_valid());
        prop_assert_eq!(b.size_in_bytes(), out.len());
        prop_assert_eq!(b.compression().unwrap(), opts.compression);
        prop_assert_eq!(b.base_offset(), opts.base_offset);
        prop_assert_eq!(b.last_offset(), expected.last().unwrap().offset);
        prop_assert_eq!(b.records_count(), i32::try_from(recs.len()).unwrap());
        prop_assert_eq!(b.is_control(), opts.control);
        prop_assert_eq!(b.is_transactional(), opts.transactional);
        prop_assert_eq!(b.delete_horizon_ms(), opts.delete_horizon_ms);
        prop_assert_eq!(b.timestamp_type(), opts.timestamp_type);
        let base_ts = opts.delete_horizon_ms.unwrap_or(recs[0].timestamp);
        prop_assert_eq!(b.base_timestamp(), base_ts);
        let max_ts = match opts.timestamp_type {
            TimestampType::LogAppendTime => opts.log_append_time,
            TimestampType::CreateTime => recs.iter().map(|r| r.timestamp).max().unwrap(),
        };
        prop_assert_eq!(b.max_timestamp(), max_ts);
        prop_assert_eq!(b.to_records().unwrap(), expected.clone());
        // Sequences follow the base sequence, wrapping past i32::MAX.
        let mut scratch = Vec::new();
        for (view, want) in b.records_with(&mut scratch).unwrap().zip(&expected) {
            let view = view.unwrap();
            let delta = i32::try_from(want.offset - opts.base_offset).unwrap();
            let seq = if opts.base_sequence < 0 { -1 } else { seglog_record_format::increment_sequence(opts.base_sequence, delta) };
            prop_assert_eq!(view.sequence(), seq);
        }
    }

    #[test]
    fn several_batches_frame_and_round_trip(
        shapes in prop::collection::vec((codec(), prop::collection::vec(rec(), 1..6)), 1..5),
        junk in prop::collection::vec(any::<u8>(), 0..17),
    ) {
        let mut builder = BatchBuilder::new();
        let mut out = Vec::new();
        let mut expected = Vec::new();
        let mut next = 0i64;
        for (codec, recs) in &shapes {
            let opts = BatchOptions::new(next, *codec);
            let want = encode(&mut builder, &opts, recs, &mut out);
            next = want.last().unwrap().offset + 1;
            expected.push(want);
        }
        let end = out.len();
        // Up to 17 trailing bytes are never a batch.
        out.extend_from_slice(&junk);
        let mut it = batches(&out);
        let mut got = Vec::new();
        for f in it.by_ref() {
            let f = f.unwrap();
            f.validate().unwrap();
            got.push(f.decode().unwrap().to_records().unwrap());
        }
        prop_assert_eq!(it.position(), end);
        prop_assert_eq!(got, expected);
    }
}
