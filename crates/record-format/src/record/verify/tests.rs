//! The fast walk against the record iterator: on valid batches, on records encoded with odd
//! but legal fields, and on thousands of damaged ones (CRC recomputed so the records decide),
//! the walk accepts exactly what the iterator accepts, with the same last offset, and
//! `verify_records` returns exactly the iterator's answer, errors included. On the same batches
//! `Records::try_for_each_view` hands over exactly the iterator's records, then its error.

use std::ops::ControlFlow;

use proptest::prelude::*;

use super::last_delta;
use crate::varint::{write_varint, write_varlong};
use crate::{
    BatchOptions, DEFAULT_MAX_DECOMPRESSED_BYTES, Header, NewRecord, RecordBatch, Result,
    build_batch,
};

/// What the iterator says: the last offset, or its first error (the old `verify_records`).
fn slow(batch: &RecordBatch<'_>) -> Result<Option<i64>> {
    let mut last = None;
    for r in batch.records()? {
        last = Some(r?.offset());
    }
    Ok(last)
}

/// `try_for_each_view` against the iterator: the same records (every field), then the same
/// error or none; and a break after the first record stops there.
fn same_as_iterator(batch: &RecordBatch<'_>) -> std::result::Result<(), TestCaseError> {
    let Ok(records) = batch.records() else {
        return Ok(());
    };
    let mut expected = Vec::new();
    let mut expected_err = None;
    for r in records.clone() {
        match r {
            Ok(v) => expected.push(v),
            Err(e) => expected_err = Some(e),
        }
    }
    let mut got = Vec::new();
    let mut fused = records.clone();
    let end = fused.try_for_each_view(|v| {
        got.push(*v);
        ControlFlow::<()>::Continue(())
    });
    prop_assert_eq!(&got, &expected);
    prop_assert_eq!(end.err(), expected_err);
    prop_assert!(
        fused.next().is_none(),
        "nothing after the end or the first error"
    );
    let mut seen = 0;
    let stopped = records.clone().try_for_each_view(|_| {
        seen += 1;
        ControlFlow::Break(7)
    });
    if let Some(first) = records.clone().next() {
        prop_assert_eq!(seen, usize::from(first.is_ok()));
        prop_assert_eq!(stopped, first.map(|_| Some(7)));
    } else {
        prop_assert_eq!(stopped, Ok(None));
    }
    Ok(())
}

/// Compares the walk and `verify_records` with the iterator on `buf`; returns whether the
/// records were accepted, or `None` when the walk does not apply (header refused, count 0).
fn agree(buf: &[u8]) -> std::result::Result<Option<bool>, TestCaseError> {
    let batch = RecordBatch::parse(buf).map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert!(batch.validate().is_ok(), "the CRC must not decide");
    let expected = slow(&batch);
    same_as_iterator(&batch)?;
    let got = batch.verify_records(&mut Vec::new(), DEFAULT_MAX_DECOMPRESSED_BYTES);
    prop_assert_eq!(&got, &expected);
    if batch.check_header().is_err() || batch.records_count() == 0 {
        return Ok(None);
    }
    let fast = last_delta(
        batch.records_bytes(),
        batch.records_count(),
        batch.last_offset_delta(),
    )
    .map(|d| batch.base_offset().wrapping_add(i64::from(d)));
    prop_assert_eq!(fast, expected.clone().ok().flatten(), "{:?}", expected);
    Ok(Some(fast.is_some()))
}

/// A v2 batch around a records section, uncompressed, CRC computed.
fn batch_around(section: &[u8], base_offset: i64, count: i32, lod: i32, attrs: i16) -> Vec<u8> {
    let mut b = vec![0u8; 61];
    b[0..8].copy_from_slice(&base_offset.to_be_bytes());
    let len = i32::try_from(49 + section.len()).unwrap();
    b[8..12].copy_from_slice(&len.to_be_bytes());
    b[12..16].copy_from_slice(&(-1i32).to_be_bytes());
    b[16] = 2;
    b[21..23].copy_from_slice(&attrs.to_be_bytes());
    b[23..27].copy_from_slice(&lod.to_be_bytes());
    b[27..35].copy_from_slice(&1_000i64.to_be_bytes());
    b[35..43].copy_from_slice(&1_000i64.to_be_bytes());
    b[43..53].fill(0xff);
    b[57..61].copy_from_slice(&count.to_be_bytes());
    b.extend_from_slice(section);
    let crc = crate::crc32c(&b[21..]);
    b[17..21].copy_from_slice(&crc.to_be_bytes());
    b
}

/// A key, value or header value: bytes, or a null written as this negative length.
#[derive(Debug, Clone)]
enum Nullable {
    Bytes(Vec<u8>),
    Null(i32),
}

impl Nullable {
    fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Nullable::Bytes(b) => {
                write_varint(out, i32::try_from(b.len()).unwrap());
                out.extend_from_slice(b);
            }
            Nullable::Null(n) => write_varint(out, *n),
        }
    }
}

/// One record's fields, encoded by hand so that odd but legal encodings occur (a null as any
/// negative length, a header count written in two bytes, attributes other than 0), and, rarely,
/// illegal ones (a declared length off by a little, offset deltas not increasing).
#[derive(Debug, Clone)]
struct RawRecord {
    attributes: u8,
    timestamp_delta: i64,
    /// Added to the previous offset delta (-1 before the first); 0 repeats it.
    gap: i32,
    key: Nullable,
    value: Nullable,
    headers: Vec<(Vec<u8>, Nullable)>,
    long_header_count: bool,
    length_error: i32,
}

impl RawRecord {
    fn encode(&self, delta: i32, out: &mut Vec<u8>) {
        let mut body = vec![self.attributes];
        write_varlong(&mut body, self.timestamp_delta);
        write_varint(&mut body, delta);
        self.key.encode(&mut body);
        self.value.encode(&mut body);
        let count = u8::try_from(self.headers.len()).unwrap();
        if self.long_header_count {
            // zig-zag 2 * count, as two bytes
            body.extend_from_slice(&[0x80 | (count << 1), 0x00]);
        } else {
            write_varint(&mut body, i32::from(count));
        }
        for (k, v) in &self.headers {
            write_varint(&mut body, i32::try_from(k.len()).unwrap());
            body.extend_from_slice(k);
            v.encode(&mut body);
        }
        write_varint(out, i32::try_from(body.len()).unwrap() + self.length_error);
        out.extend_from_slice(&body);
    }
}

/// `usual`, and when `rare` is set, one time in nine `odd` instead.
fn rarely<T: std::fmt::Debug + 'static>(
    rare: bool,
    usual: impl Strategy<Value = T> + 'static,
    odd: impl Strategy<Value = T> + 'static,
) -> BoxedStrategy<T> {
    if rare {
        prop_oneof![8 => usual, 1 => odd].boxed()
    } else {
        usual.boxed()
    }
}

fn nullable() -> impl Strategy<Value = Nullable> {
    prop_oneof![
        6 => prop::collection::vec(any::<u8>(), 0..12).prop_map(Nullable::Bytes),
        2 => Just(Nullable::Null(-1)),
        1 => (i32::MIN..0).prop_map(Nullable::Null),
    ]
}

fn raw_record(rare: bool) -> impl Strategy<Value = RawRecord> {
    (
        prop_oneof![8 => Just(0u8), 1 => any::<u8>()],
        prop_oneof![4 => -300i64..300, 1 => any::<i64>()],
        rarely(rare, 1..3, 0..4),
        nullable(),
        nullable(),
        prop::collection::vec((prop::collection::vec(any::<u8>(), 0..4), nullable()), 0..3),
        any::<bool>(),
        rarely(rare, Just(0), -2..=2),
    )
        .prop_map(
            |(attributes, timestamp_delta, gap, key, value, headers, long, length_error)| {
                RawRecord {
                    attributes,
                    timestamp_delta,
                    gap,
                    key,
                    value,
                    headers,
                    long_header_count: long,
                    length_error,
                }
            },
        )
}

/// A batch of hand-encoded records: (records, count error, lastOffsetDelta error, base offset,
/// LogAppendTime).
fn raw_batch(rare: bool) -> impl Strategy<Value = (Vec<RawRecord>, i32, i32, i64, bool)> {
    (
        prop::collection::vec(raw_record(rare), 1..24),
        rarely(rare, Just(0), -1..=1),
        rarely(rare, prop_oneof![2 => Just(0), 1 => 1..5], Just(-1)),
        prop_oneof![4 => 0i64..1_000_000, 1 => any::<i64>()],
        any::<bool>(),
    )
}

fn encode_section(records: &[RawRecord]) -> (Vec<u8>, i32) {
    let mut section = Vec::new();
    let mut delta = -1i32;
    for r in records {
        delta = delta.saturating_add(r.gap);
        r.encode(delta, &mut section);
    }
    (section, delta)
}

fn assemble(section: &[u8], last: i32, parts: &(Vec<RawRecord>, i32, i32, i64, bool)) -> Vec<u8> {
    let (records, count_error, lod_error, base, append_time) = parts;
    let count = i32::try_from(records.len()).unwrap() + count_error;
    let attrs = if *append_time { 0x08 } else { 0 };
    batch_around(section, *base, count, last + lod_error, attrs)
}

/// A damage to the records section: overwrite, flip bits, insert or delete a byte.
#[derive(Debug, Clone)]
enum Edit {
    Set(prop::sample::Index, u8),
    Xor(prop::sample::Index, u8),
    Insert(prop::sample::Index, u8),
    Delete(prop::sample::Index),
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Set(i, b)),
        (any::<prop::sample::Index>(), 1u8..=255).prop_map(|(i, b)| Edit::Xor(i, b)),
        (any::<prop::sample::Index>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<prop::sample::Index>().prop_map(Edit::Delete),
    ]
}

fn apply(section: &mut Vec<u8>, e: &Edit) {
    if section.is_empty() {
        return;
    }
    let n = section.len();
    match e {
        Edit::Set(i, b) => section[i.index(n)] = *b,
        Edit::Xor(i, b) => section[i.index(n)] ^= *b,
        Edit::Insert(i, b) => section.insert(i.index(n + 1), *b),
        Edit::Delete(i) => {
            section.remove(i.index(n));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2048, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn hand_encoded_batches_agree(parts in raw_batch(true)) {
        let (section, last) = encode_section(&parts.0);
        agree(&assemble(&section, last, &parts))?;
    }

    #[test]
    fn valid_hand_encoded_batches_are_accepted(parts in raw_batch(false)) {
        let (section, last) = encode_section(&parts.0);
        prop_assert_eq!(agree(&assemble(&section, last, &parts))?, Some(true));
    }

    #[test]
    fn damaged_batches_agree(
        parts in raw_batch(false),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        let (mut section, last) = encode_section(&parts.0);
        for e in &edits {
            apply(&mut section, e);
        }
        agree(&assemble(&section, last, &parts))?;
    }
}

/// A builder-made batch: keys, null values, headers with null values, offset gaps.
fn built() -> Vec<u8> {
    let hs = [
        Header::new(b"trace", b"abc"),
        Header {
            key: b"h",
            value: None,
        },
    ];
    let values: Vec<Vec<u8>> = (0u8..8).map(|i| vec![i; 70 + usize::from(i)]).collect();
    let recs = (0..8).map(|i| {
        let r = NewRecord::new(
            i * 3,
            1_000 + i64::from(i),
            Some(b"k".as_slice()),
            (i % 3 != 1).then_some(values[usize::try_from(i).unwrap()].as_slice()),
        );
        if i % 2 == 0 { r.with_headers(&hs) } else { r }
    });
    let mut out = Vec::new();
    build_batch(
        &BatchOptions::new(500, crate::Compression::None),
        recs,
        &mut out,
    )
    .unwrap();
    out
}

/// Every single-byte damage of a real batch's records, at every position: the walk and the
/// iterator agree, and both outcomes occur (a damaged value byte is still a good record).
#[test]
fn every_single_byte_damage_agrees() {
    let good = built();
    let batch = RecordBatch::parse(&good).unwrap();
    let (base, count, lod) = (
        batch.base_offset(),
        batch.records_count(),
        batch.last_offset_delta(),
    );
    let section = batch.records_bytes().to_vec();
    let mut outcomes = [0usize; 2];
    let mut check = |s: &[u8]| {
        let accepted = agree(&batch_around(s, base, count, lod, 0))
            .unwrap()
            .unwrap();
        outcomes[usize::from(accepted)] += 1;
    };
    check(&section);
    for at in 0..section.len() {
        let byte = section[at];
        for b in [0x00, 0x01, 0x02, 0x7f, 0x80, 0xff, byte ^ 0x01, byte ^ 0x80] {
            let mut s = section.clone();
            s[at] = b;
            check(&s);
        }
        for b in [0x00, 0x80] {
            let mut s = section.clone();
            s.insert(at, b);
            check(&s);
        }
        let mut s = section.clone();
        s.remove(at);
        check(&s);
    }
    assert!(outcomes[0] > 1_000 && outcomes[1] > 1_000, "{outcomes:?}");
}
