//! Kafka's dump text appended to a reused byte buffer without `format!`: decimal integers written
//! digit by digit (as `itoa` does), so a record line costs no allocation and no formatter.

/// Appends `n` in decimal.
pub(super) fn push_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut digits = [0_u8; 20];
    let mut len = 0;
    for slot in digits.iter_mut().rev() {
        *slot = b'0' + u8::try_from(n % 10).unwrap_or(0);
        n /= 10;
        len += 1;
        if n == 0 {
            break;
        }
    }
    let start = digits.len() - len;
    out.extend_from_slice(digits.get(start..).unwrap_or_default());
}

/// Appends `n` in decimal, as Java's `Long.toString`.
pub(super) fn push_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    push_u64(out, n.unsigned_abs());
}

/// Appends `n` in decimal.
pub(super) fn push_usize(out: &mut Vec<u8>, n: usize) {
    push_u64(out, u64::try_from(n).unwrap_or(u64::MAX));
}

/// Appends Java's `String.valueOf(boolean)`.
pub(super) fn push_bool(out: &mut Vec<u8>, b: bool) {
    out.extend_from_slice(if b { b"true" } else { b"false" });
}

#[cfg(test)]
mod tests {
    use super::{push_i64, push_u64};

    #[test]
    fn integers_print_as_display_does() {
        for n in [
            0,
            1,
            -1,
            9,
            10,
            -10,
            99,
            100,
            1_700_000_000_015,
            i64::MIN,
            i64::MAX,
        ] {
            let mut out = Vec::new();
            push_i64(&mut out, n);
            assert_eq!(out, n.to_string().into_bytes());
        }
        let mut out = Vec::new();
        push_u64(&mut out, u64::MAX);
        assert_eq!(out, u64::MAX.to_string().into_bytes());
    }
}
