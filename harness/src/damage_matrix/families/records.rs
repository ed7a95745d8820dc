//! Damage inside the records with the CRC recomputed, so only a decoder that reads every record
//! sees it: record lengths, varints made overlong or garbled, offset deltas, key and value
//! lengths, a value byte (undetectable: a reader must return the changed value), and bytes of a
//! compressed payload.

use crate::case::{Case, Expect, edit};
use crate::layout::{Batch, HEADER, Segment, fix_crc};
use crate::rng::Rng;

use super::{codec_name, one_per_codec};

/// A change to one record's bytes; false when it cannot be made in place.
type Change = fn(&mut [u8], RecordAt) -> bool;

/// Where a record's varint fields start, relative to the batch.
#[derive(Debug, Clone, Copy)]
struct RecordAt {
    length: usize,
    offset_delta: usize,
    key_length: usize,
    value_length: usize,
    value: usize,
}

pub(super) fn cases(segments: &[Segment], rng: &mut Rng, out: &mut Vec<Case>) {
    let (Some(middle), Some(last)) = (segments.get(1), segments.last()) else {
        return;
    };
    for segment in [middle, last] {
        let plain: Vec<Batch> = one_per_codec(segment, rng)
            .into_iter()
            .filter(|b| b.codec == 0)
            .collect();
        for batch in plain {
            record_cases(segment, batch, out);
        }
    }
    for batch in one_per_codec(middle, rng)
        .into_iter()
        .filter(|b| b.codec != 0)
    {
        let name = format!("{}.log", middle.stem);
        let payload = batch.size - HEADER;
        for (where_, at) in [("first", 0), ("middle", payload / 2), ("last", payload - 1)] {
            let name = name.clone();
            let pos = batch.position + HEADER + at;
            let (bpos, size) = (batch.position, batch.size);
            let mask = 1_u8 << rng.below(8);
            out.push(Case::new(
                "crc.payload",
                codec_name(batch.codec),
                format!("{name}: {where_} payload byte ^{mask:#04x}, CRC recomputed, batch at byte {bpos}"),
                Expect::Oracle,
                move |_, part| {
                    edit(part, &name, |b| {
                        if let Some(x) = b.get_mut(pos) {
                            *x ^= mask;
                        }
                        fix_crc(b, bpos, size);
                    })
                },
            ));
        }
    }
}

/// The record-level cases of one uncompressed batch, found by reading the template's bytes when
/// the case is applied (the positions are the template's, the same in every copy).
fn record_cases(segment: &Segment, batch: Batch, out: &mut Vec<Case>) {
    let name = format!("{}.log", segment.stem);
    // (family, record index, what, change)
    let changes: [(&'static str, usize, &str, Change); 12] = [
        ("crc.recordLength", 0, "first record's length +1", |b, r| {
            add_varint(b, r.length, 1)
        }),
        (
            "crc.recordLength",
            1,
            "second record's length -1",
            |b, r| add_varint(b, r.length, -1),
        ),
        ("crc.recordLength", 3, "last record's length +1", |b, r| {
            add_varint(b, r.length, 1)
        }),
        (
            "crc.varint",
            0,
            "first record's length varint overlong (0xff)",
            |b, r| set(b, r.length, 0xff),
        ),
        (
            "crc.varint",
            2,
            "third record's offset delta varint garbled (0x80)",
            |b, r| set(b, r.offset_delta, 0x80),
        ),
        (
            "crc.offsetDelta",
            1,
            "second record's offset delta = 0 (repeats the first)",
            |b, r| set(b, r.offset_delta, 0),
        ),
        (
            "crc.offsetDelta",
            3,
            "last record's offset delta +2 (past lastOffsetDelta)",
            |b, r| add_varint(b, r.offset_delta, 2),
        ),
        (
            "crc.offsetDelta",
            0,
            "first record's offset delta +1",
            |b, r| add_varint(b, r.offset_delta, 1),
        ),
        (
            "crc.keyValueLength",
            1,
            "second record's key length +1",
            |b, r| add_varint(b, r.key_length, 1),
        ),
        (
            "crc.keyValueLength",
            2,
            "third record's value length -1",
            |b, r| add_varint(b, r.value_length, -1),
        ),
        (
            "crc.value",
            0,
            "first record's first value byte changed (undetectable)",
            |b, r| xor(b, r.value, 0x20),
        ),
        (
            "crc.value",
            3,
            "last record's first value byte changed (undetectable)",
            |b, r| xor(b, r.value, 0x01),
        ),
    ];
    for (family, index, what, change) in changes {
        let name = name.clone();
        let (pos, size) = (batch.position, batch.size);
        out.push(Case::new(
            family,
            "none",
            format!("{name}: {what}, CRC recomputed, batch at byte {pos}"),
            Expect::Oracle,
            move |_, part| {
                edit(part, &name, |b| {
                    let Some(slice) = b.get_mut(pos..pos + size) else {
                        return;
                    };
                    if let Some(r) = record_at(slice, index)
                        && change(slice, r)
                    {
                        fix_crc(b, pos, size);
                    }
                })
            },
        ));
    }
}

/// Reads a zigzag varint at `at`: (value, width).
fn varint(b: &[u8], at: usize) -> Option<(i64, usize)> {
    let mut raw: u64 = 0;
    for i in 0..10 {
        let byte = *b.get(at + i)?;
        raw |= u64::from(byte & 0x7f) << (7 * i);
        if byte & 0x80 == 0 {
            let v = i64::try_from(raw >> 1).ok()? ^ -i64::try_from(raw & 1).ok()?;
            return Some((v, i + 1));
        }
    }
    None
}

fn encode(v: i64) -> Vec<u8> {
    let mut raw = ((v << 1) ^ (v >> 63)).cast_unsigned();
    let mut out = Vec::new();
    loop {
        let byte = u8::try_from(raw & 0x7f).unwrap_or(0);
        raw >>= 7;
        if raw == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

/// The varint fields of record `index` of a batch.
fn record_at(b: &[u8], index: usize) -> Option<RecordAt> {
    let mut at = HEADER;
    for i in 0.. {
        let (len, w) = varint(b, at)?;
        let body = at + w;
        let (_, ts_w) = varint(b, body + 1)?;
        let offset_delta = body + 1 + ts_w;
        let (_, od_w) = varint(b, offset_delta)?;
        let key_length = offset_delta + od_w;
        let (klen, kl_w) = varint(b, key_length)?;
        let value_length = key_length + kl_w + usize::try_from(klen.max(0)).ok()?;
        let (_, vl_w) = varint(b, value_length)?;
        if i == index {
            return Some(RecordAt {
                length: at,
                offset_delta,
                key_length,
                value_length,
                value: value_length + vl_w,
            });
        }
        at = body + usize::try_from(len).ok()?;
    }
    None
}

/// Adds `delta` to the varint at `at` when the encoding keeps its width (so nothing moves).
fn add_varint(b: &mut [u8], at: usize, delta: i64) -> bool {
    let Some((v, w)) = varint(b, at) else {
        return false;
    };
    let new = encode(v + delta);
    if new.len() != w {
        return false;
    }
    b.get_mut(at..at + w)
        .map(|s| s.copy_from_slice(&new))
        .is_some()
}

fn set(b: &mut [u8], at: usize, byte: u8) -> bool {
    b.get_mut(at).map(|x| *x = byte).is_some()
}

fn xor(b: &mut [u8], at: usize, mask: u8) -> bool {
    b.get_mut(at).map(|x| *x ^= mask).is_some()
}
