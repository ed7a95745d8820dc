//! A validate-only walk over an uncompressed records section: it accepts exactly what the
//! [`Records`](super::Records) iterator accepts, without building a `RecordView` per record.
//!
//! It only answers yes or no. On no, the caller runs the iterator to get the exact error and
//! its position; recovery's records check (`RecordBatch::verify_records`) does this, so the
//! walk decides the cost of a good batch and the iterator still decides every error.

use crate::varint;

/// Walks `count` records of `buf` (a whole records section) under the iterator's rules and
/// returns the last record's offset delta, or `None` if the iterator would report an error
/// (and for a `count` below 1, which the iterator reads as no records: the caller's case).
///
/// The rules, in the iterator's terms: every length varint within the section and its body
/// within it, every field read within the body (attributes, timestamp delta, offset delta, key,
/// value, header count and headers with non-negative key lengths), a header count not negative,
/// the body used exactly, offset deltas in `0..=last_offset_delta` and increasing, and no bytes
/// after the last record.
#[inline]
pub(crate) fn last_delta(buf: &[u8], count: i32, last_offset_delta: i32) -> Option<i32> {
    let mut pos = 0usize;
    let mut previous: i64 = -1;
    for _ in 0..count {
        let body_len = usize::try_from(varint32(buf, &mut pos)?).ok()?;
        let body_end = pos.checked_add(body_len)?;
        let body = buf.get(..body_end)?;
        // attributes: one byte, any value
        let mut p = pos.checked_add(1)?;
        skip_varlong(body, &mut p)?;
        let delta = varint32(body, &mut p)?;
        skip_nullable(body, &mut p)?;
        skip_nullable(body, &mut p)?;
        skip_headers(body, &mut p)?;
        let d = i64::from(delta);
        if delta < 0 || delta > last_offset_delta || d <= previous || p != body_end {
            return None;
        }
        previous = d;
        pos = body_end;
    }
    if pos != buf.len() {
        return None;
    }
    i32::try_from(previous).ok().filter(|&d| d >= 0)
}

/// The header count and the headers. The iterator also refuses a count above the bytes left in
/// the section; no such count can pass here either, as every header takes at least two bytes of
/// the body, so the loop ends at the body's end after at most half its length.
#[inline]
fn skip_headers(body: &[u8], p: &mut usize) -> Option<()> {
    let count = varint32(body, p)?;
    if count == 0 {
        return Some(());
    }
    for _ in 0..u32::try_from(count).ok()? {
        let key_len = varint32(body, p)?;
        skip(body, p, usize::try_from(key_len).ok()?)?;
        skip_nullable(body, p)?;
    }
    Some(())
}

/// A nullable length-prefixed field: any negative length is null (no bytes).
#[inline]
fn skip_nullable(body: &[u8], p: &mut usize) -> Option<()> {
    let len = varint32(body, p)?;
    match usize::try_from(len) {
        Ok(n) => skip(body, p, n),
        Err(_) => Some(()),
    }
}

/// Moves `p` over `n` bytes that must lie within `body`.
#[inline]
fn skip(body: &[u8], p: &mut usize, n: usize) -> Option<()> {
    let end = p.checked_add(n)?;
    if end > body.len() {
        return None;
    }
    *p = end;
    Some(())
}

/// A zig-zag varint; one- and two-byte values (every length and delta of a record up to 8 KiB)
/// skip the general loop.
#[inline]
fn varint32(buf: &[u8], p: &mut usize) -> Option<i32> {
    let b0 = *buf.get(*p)?;
    if b0 < 0x80 {
        *p += 1;
        return Some(unzigzag(u32::from(b0)));
    }
    if let Some(&b1) = buf.get(*p + 1)
        && b1 < 0x80
    {
        *p += 2;
        return Some(unzigzag(u32::from(b0 & 0x7f) | (u32::from(b1) << 7)));
    }
    varint::read_varint(buf, p).ok()
}

#[inline]
fn unzigzag(raw: u32) -> i32 {
    ((raw >> 1) ^ (raw & 1).wrapping_neg()).cast_signed()
}

/// A varlong, value unused: only its length and well-formedness matter.
#[inline]
fn skip_varlong(buf: &[u8], p: &mut usize) -> Option<()> {
    let b = *buf.get(*p)?;
    if b < 0x80 {
        *p += 1;
        return Some(());
    }
    varint::read_varlong(buf, p).ok().map(|_| ())
}

#[cfg(test)]
mod tests;
