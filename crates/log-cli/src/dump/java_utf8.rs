//! Java's decoding of UTF-8 with replacement, as Kafka's `StringDecoder` (`new String(bytes,
//! UTF_8)`) prints keys and values: each malformed sequence becomes one U+FFFD, where Java's
//! decoder (JDK 17's `String.decodeUTF8_UTF16`) draws its boundaries. It agrees with Rust's
//! `from_utf8_lossy` except for encoded surrogates (`ED A0..BF xx`, one U+FFFD for the three
//! bytes) and a sequence cut by the end of the input (one U+FFFD for all of it, `ED A0` included).
//! `testdata/java-utf8/cases.txt`, made by Java itself, pins the rule.

const REPLACEMENT: char = char::REPLACEMENT_CHARACTER;

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Decodes `bytes` as Java's `new String(bytes, StandardCharsets.UTF_8)` does.
pub(crate) fn decode(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut at = 0;
    while let Some(&b1) = bytes.get(at) {
        at += 1;
        let rest = bytes.get(at..).unwrap_or_default();
        match b1 {
            0x00..=0x7F => out.push(char::from(b1)),
            0xC2..=0xDF => match rest.first() {
                Some(&b2) if is_continuation(b2) => {
                    push_scalar(&mut out, (u32::from(b1 & 0x1F) << 6) | u32::from(b2 & 0x3F));
                    at += 1;
                }
                Some(_) => out.push(REPLACEMENT),
                // Cut by the end: one replacement, and the input ends.
                None => {
                    out.push(REPLACEMENT);
                    break;
                }
            },
            0xE0..=0xEF => {
                if let [b2, b3, ..] = *rest {
                    let overlong = b1 == 0xE0 && b2 & 0xE0 == 0x80;
                    if overlong || !is_continuation(b2) || !is_continuation(b3) {
                        out.push(REPLACEMENT);
                        // Java skips the lead alone, or the lead and a good second byte.
                        if !overlong && is_continuation(b2) {
                            at += 1;
                        }
                    } else {
                        // A surrogate (ED A0..BF xx) is one replacement for its three bytes.
                        let c = (u32::from(b1 & 0x0F) << 12)
                            | (u32::from(b2 & 0x3F) << 6)
                            | u32::from(b3 & 0x3F);
                        push_scalar(&mut out, c);
                        at += 2;
                    }
                    continue;
                }
                out.push(REPLACEMENT);
                match rest.first() {
                    Some(&b2) if (b1 == 0xE0 && b2 & 0xE0 == 0x80) || !is_continuation(b2) => {}
                    // Zero or one good byte before the end: all of it is one replacement.
                    _ => break,
                }
            }
            0xF0..=0xF7 => {
                if let [b2, b3, b4, ..] = *rest {
                    let c = (u32::from(b1 & 0x07) << 18)
                        | (u32::from(b2 & 0x3F) << 12)
                        | (u32::from(b3 & 0x3F) << 6)
                        | u32::from(b4 & 0x3F);
                    let supplementary = (0x1_0000..0x11_0000).contains(&c);
                    if is_continuation(b2)
                        && is_continuation(b3)
                        && is_continuation(b4)
                        && supplementary
                    {
                        push_scalar(&mut out, c);
                        at += 3;
                    } else {
                        out.push(REPLACEMENT);
                        at += malformed4(b1, b2, b3) - 1;
                    }
                    continue;
                }
                out.push(REPLACEMENT);
                let bad_second = rest.first().is_some_and(|&b2| bad_second_of_4(b1, b2));
                if b1 > 0xF4 || bad_second {
                    continue;
                }
                // The lead and its good second byte (if any) are one replacement; the input
                // ends there unless a third byte follows that is no continuation byte.
                at += 1;
                match bytes.get(at) {
                    Some(&b3) if !is_continuation(b3) => {}
                    _ => break,
                }
            }
            _ => out.push(REPLACEMENT),
        }
    }
    out
}

/// Java's `isMalformed4_2`: a second byte that cannot follow the 4-byte lead `b1`.
fn bad_second_of_4(b1: u8, b2: u8) -> bool {
    (b1 == 0xF0 && !(0x90..=0xBF).contains(&b2))
        || (b1 == 0xF4 && b2 & 0xF0 != 0x80)
        || !is_continuation(b2)
}

/// Java's `malformed4`: how many bytes one replacement covers for a bad 4-byte sequence.
fn malformed4(b1: u8, b2: u8, b3: u8) -> usize {
    if b1 > 0xF4 || bad_second_of_4(b1, b2) {
        1
    } else if !is_continuation(b3) {
        2
    } else {
        3
    }
}

fn push_scalar(out: &mut String, c: u32) {
    out.push(char::from_u32(c).unwrap_or(REPLACEMENT));
}

#[cfg(test)]
mod tests {
    use super::decode;

    #[test]
    fn decodes_as_java_does() {
        assert_eq!(decode(b"plain"), "plain");
        assert_eq!(decode(&[0x61, 0x62, 0xED, 0xA0]), "ab\u{FFFD}");
        assert_eq!(decode(&[0xED, 0xA0, 0x80]), "\u{FFFD}");
        assert_eq!(decode(&[0xED, 0xA0, 0x41]), "\u{FFFD}A");
        assert_eq!(decode(&[0xED, 0xA0, 0x80, 0x80]), "\u{FFFD}\u{FFFD}");
        assert_eq!(decode(&[0xC0, 0x80, 0x41]), "\u{FFFD}\u{FFFD}A");
        assert_eq!(decode(&[0xE2, 0x82]), "\u{FFFD}");
        assert_eq!(
            decode("\u{e9}\u{20ac}\u{1f600}".as_bytes()),
            "\u{e9}\u{20ac}\u{1f600}"
        );
    }
}
