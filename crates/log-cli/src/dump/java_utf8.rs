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
    let mut out = Vec::with_capacity(bytes.len());
    decode_into(bytes, &mut out);
    // `decode_into` appends only whole UTF-8 sequences, so this never takes the lossy branch.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// Appends the UTF-8 of Java's decoding of `bytes` to `out`. Valid UTF-8 (Rust's check refuses
/// surrogates and overlong forms, as Java's decoder does) is Java's text unchanged: copied whole.
pub(crate) fn decode_into(bytes: &[u8], out: &mut Vec<u8>) {
    if std::str::from_utf8(bytes).is_ok() {
        out.extend_from_slice(bytes);
        return;
    }
    decode_malformed(bytes, out);
}

/// `decode_into` of input that is not valid UTF-8, one code point at a time.
fn decode_malformed(bytes: &[u8], out: &mut Vec<u8>) {
    let mut at = 0;
    while let Some(&b1) = bytes.get(at) {
        at += 1;
        let rest = bytes.get(at..).unwrap_or_default();
        match b1 {
            0x00..=0x7F => out.push(b1),
            0xC2..=0xDF => match rest.first() {
                Some(&b2) if is_continuation(b2) => {
                    push_scalar(out, (u32::from(b1 & 0x1F) << 6) | u32::from(b2 & 0x3F));
                    at += 1;
                }
                Some(_) => push_char(out, REPLACEMENT),
                // Cut by the end: one replacement, and the input ends.
                None => {
                    push_char(out, REPLACEMENT);
                    break;
                }
            },
            0xE0..=0xEF => {
                if let [b2, b3, ..] = *rest {
                    let overlong = b1 == 0xE0 && b2 & 0xE0 == 0x80;
                    if overlong || !is_continuation(b2) || !is_continuation(b3) {
                        push_char(out, REPLACEMENT);
                        // Java skips the lead alone, or the lead and a good second byte.
                        if !overlong && is_continuation(b2) {
                            at += 1;
                        }
                    } else {
                        // A surrogate (ED A0..BF xx) is one replacement for its three bytes.
                        let c = (u32::from(b1 & 0x0F) << 12)
                            | (u32::from(b2 & 0x3F) << 6)
                            | u32::from(b3 & 0x3F);
                        push_scalar(out, c);
                        at += 2;
                    }
                    continue;
                }
                push_char(out, REPLACEMENT);
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
                        push_scalar(out, c);
                        at += 3;
                    } else {
                        push_char(out, REPLACEMENT);
                        at += malformed4(b1, b2, b3) - 1;
                    }
                    continue;
                }
                push_char(out, REPLACEMENT);
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
            _ => push_char(out, REPLACEMENT),
        }
    }
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

fn push_scalar(out: &mut Vec<u8>, c: u32) {
    push_char(out, char::from_u32(c).unwrap_or(REPLACEMENT));
}

fn push_char(out: &mut Vec<u8>, c: char) {
    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
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
