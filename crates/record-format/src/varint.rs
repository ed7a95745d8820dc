//! Zig-zag varints and varlongs (protobuf encoding, as Kafka's `ByteUtils`).
//!
//! Limits match Kafka exactly: a varint is at most 5 bytes and a varlong at most 10. As in Java,
//! the bits of the last allowed byte that do not fit the type are dropped rather than rejected.

/// Why a varint could not be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VarintError {
    /// The buffer ended inside the varint.
    Truncated,
    /// The varint had more than 5 (varint) or 10 (varlong) bytes.
    TooLong,
}

/// Most bytes of an encoded varint.
pub const MAX_VARINT_SIZE: usize = 5;
/// Most bytes of an encoded varlong.
pub const MAX_VARLONG_SIZE: usize = 10;

/// Reads a zig-zag varint at `*pos` and advances `*pos` past it.
#[inline]
pub fn read_varint(buf: &[u8], pos: &mut usize) -> Result<i32, VarintError> {
    let mut raw: u32 = 0;
    let mut shift = 0u32;
    let mut at = *pos;
    loop {
        let Some(&b) = buf.get(at) else {
            return Err(VarintError::Truncated);
        };
        at += 1;
        // Java shifts an int, so bits beyond 32 fall off (wrapping_shl keeps the shift legal).
        raw |= u32::from(b & 0x7f).wrapping_shl(shift);
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 28 {
            return Err(VarintError::TooLong);
        }
    }
    *pos = at;
    Ok(unzigzag32(raw))
}

/// Reads a zig-zag varlong at `*pos` and advances `*pos` past it.
#[inline]
pub fn read_varlong(buf: &[u8], pos: &mut usize) -> Result<i64, VarintError> {
    let mut raw: u64 = 0;
    let mut shift = 0u32;
    let mut at = *pos;
    loop {
        let Some(&b) = buf.get(at) else {
            return Err(VarintError::Truncated);
        };
        at += 1;
        raw |= u64::from(b & 0x7f).wrapping_shl(shift);
        if b & 0x80 == 0 {
            break;
        }
        shift += 7;
        if shift > 63 {
            return Err(VarintError::TooLong);
        }
    }
    *pos = at;
    Ok(unzigzag64(raw))
}

#[inline]
fn unzigzag32(raw: u32) -> i32 {
    // (raw >>> 1) ^ -(raw & 1), reinterpreted as signed.
    ((raw >> 1) ^ (raw & 1).wrapping_neg()).cast_signed()
}

#[inline]
fn unzigzag64(raw: u64) -> i64 {
    ((raw >> 1) ^ (raw & 1).wrapping_neg()).cast_signed()
}

#[inline]
fn zigzag32(v: i32) -> u32 {
    ((v << 1) ^ (v >> 31)).cast_unsigned()
}

#[inline]
fn zigzag64(v: i64) -> u64 {
    ((v << 1) ^ (v >> 63)).cast_unsigned()
}

/// Appends `v` as a zig-zag varint.
#[inline]
pub fn write_varint(out: &mut Vec<u8>, v: i32) {
    write_unsigned(out, u64::from(zigzag32(v)));
}

/// Appends `v` as a zig-zag varlong.
#[inline]
pub fn write_varlong(out: &mut Vec<u8>, v: i64) {
    write_unsigned(out, zigzag64(v));
}

#[inline]
fn write_unsigned(out: &mut Vec<u8>, mut raw: u64) {
    // The first byte is by far the most common case (lengths < 64, deltas, -1).
    if raw < 0x80 {
        out.push(low_byte(raw));
        return;
    }
    let mut tmp = [0u8; MAX_VARLONG_SIZE];
    let mut n = 0;
    for slot in &mut tmp {
        n += 1;
        if raw < 0x80 {
            *slot = low_byte(raw);
            break;
        }
        *slot = low_byte(raw & 0x7f) | 0x80;
        raw >>= 7;
    }
    out.extend_from_slice(tmp.get(..n).unwrap_or(&tmp));
}

#[inline]
fn low_byte(v: u64) -> u8 {
    v.to_be_bytes()[7]
}

/// Encoded size of `v` as a zig-zag varint.
#[inline]
pub fn varint_size(v: i32) -> usize {
    unsigned_size(u64::from(zigzag32(v)))
}

/// Encoded size of `v` as a zig-zag varlong.
#[inline]
pub fn varlong_size(v: i64) -> usize {
    unsigned_size(zigzag64(v))
}

#[inline]
fn unsigned_size(raw: u64) -> usize {
    // One byte per started group of 7 bits; zero still takes one byte.
    let bits = 64 - (raw | 1).leading_zeros() as usize;
    bits.div_ceil(7)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc32(v: i32) -> Vec<u8> {
        let mut out = Vec::new();
        write_varint(&mut out, v);
        out
    }

    #[test]
    fn known_encodings() {
        assert_eq!(enc32(0), [0x00]);
        assert_eq!(enc32(-1), [0x01]);
        assert_eq!(enc32(1), [0x02]);
        assert_eq!(enc32(63), [0x7e]);
        assert_eq!(enc32(64), [0x80, 0x01]);
        assert_eq!(enc32(i32::MAX), [0xfe, 0xff, 0xff, 0xff, 0x0f]);
        assert_eq!(enc32(i32::MIN), [0xff, 0xff, 0xff, 0xff, 0x0f]);
        let mut out = Vec::new();
        write_varlong(&mut out, i64::MIN);
        assert_eq!(out.len(), 10);
        assert_eq!(varlong_size(i64::MIN), 10);
    }

    #[test]
    fn round_trip_edges() {
        for v in [0, 1, -1, 63, -64, 64, 8191, 8192, i32::MAX, i32::MIN] {
            let b = enc32(v);
            assert_eq!(b.len(), varint_size(v));
            let mut p = 0;
            assert_eq!(read_varint(&b, &mut p), Ok(v));
            assert_eq!(p, b.len());
        }
        for v in [0i64, -1, 1 << 40, i64::MAX, i64::MIN, -(1 << 50)] {
            let mut b = Vec::new();
            write_varlong(&mut b, v);
            assert_eq!(b.len(), varlong_size(v));
            let mut p = 0;
            assert_eq!(read_varlong(&b, &mut p), Ok(v));
        }
    }

    #[test]
    fn limits_match_kafka() {
        let mut p = 0;
        assert_eq!(
            read_varint(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01], &mut p),
            Err(VarintError::TooLong)
        );
        // A fifth byte without the continuation bit is accepted; its high bits fall off as in Java.
        let mut p = 0;
        assert!(read_varint(&[0x80, 0x80, 0x80, 0x80, 0x7f], &mut p).is_ok());
        let mut p = 0;
        assert_eq!(
            read_varint(&[0x80, 0x80], &mut p),
            Err(VarintError::Truncated)
        );
        assert_eq!(p, 0, "position is untouched on error");
        let mut p = 0;
        let eleven = [0x80u8; 11];
        assert_eq!(read_varlong(&eleven, &mut p), Err(VarintError::TooLong));
        let mut ten = [0x80u8; 10];
        ten[9] = 0x01;
        let mut p = 0;
        assert!(read_varlong(&ten, &mut p).is_ok());
    }
}
