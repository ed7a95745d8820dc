//! A topic id (Kafka's `org.apache.kafka.common.Uuid`): 16 bytes, written as 22 characters of
//! URL-safe base64 without padding, and read as `Uuid.fromString` reads it (Java's URL-safe
//! decoder: padding optional, the unused bits of the last character ignored, 16 bytes exactly).

use std::fmt;
use std::str::FromStr;

/// The URL-safe base64 alphabet (RFC 4648, section 5), Java's `Base64.getUrlEncoder()`.
const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// The characters of an id written without padding: 128 bits in 6-bit characters.
const ENCODED_LEN: usize = 22;

/// A topic id: Kafka's 128-bit `Uuid`, compared and printed as Kafka does (URL-safe base64,
/// 22 characters, e.g. `vvO5N3IYR1ezBKXzHaP3xg`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicId([u8; 16]);

impl TopicId {
    /// Kafka's `Uuid.ZERO_UUID`, the null id: never a topic's (a `partition.metadata` holding
    /// it is refused).
    pub const ZERO: Self = Self([0; 16]);

    /// The id of these 16 bytes (the most significant 64 bits first, big-endian, as Kafka's
    /// `getMostSignificantBits` and `getLeastSignificantBits`).
    pub const fn from_bytes(bytes: [u8; 16]) -> Self {
        Self(bytes)
    }

    /// The id's 16 bytes.
    pub const fn to_bytes(self) -> [u8; 16] {
        self.0
    }

    /// Whether this is [`TopicId::ZERO`].
    pub fn is_zero(self) -> bool {
        self == Self::ZERO
    }
}

impl fmt::Display for TopicId {
    /// Kafka's `Uuid.toString`: URL-safe base64 without padding.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::with_capacity(ENCODED_LEN);
        let mut bits = 0_u32;
        let mut held = 0_u32;
        for byte in self.0 {
            bits = (bits << 8) | u32::from(byte);
            held += 8;
            while held >= 6 {
                held -= 6;
                out.push(sextet(bits >> held));
            }
        }
        // 128 = 21 * 6 + 2: the last character carries two bits, padded with zeros.
        out.push(sextet(bits << (6 - held)));
        debug_assert_eq!(out.len(), ENCODED_LEN);
        f.write_str(&out)
    }
}

/// The alphabet's character for the low 6 bits of `bits`.
fn sextet(bits: u32) -> char {
    let index = usize::try_from(bits & 0x3f).unwrap_or(0);
    char::from(ALPHABET.get(index).copied().unwrap_or(b'A'))
}

/// A string that is not a topic id, with why (Kafka's `Uuid.fromString` refuses it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{input:?} is not a topic id: {reason}")]
pub struct InvalidTopicId {
    /// The text given.
    pub input: String,
    /// Why it is refused.
    pub reason: &'static str,
}

impl FromStr for TopicId {
    type Err = InvalidTopicId;

    /// Kafka's `Uuid.fromString`: at most 24 characters, decoded by Java's URL-safe base64
    /// decoder (an optional `==` after the 22 characters; the 4 unused bits of the last one
    /// ignored), to exactly 16 bytes. The zero id parses (the callers that refuse it say so).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let refuse = |reason| InvalidTopicId {
            input: s.to_owned(),
            reason,
        };
        if s.len() > 24 {
            return Err(refuse("too long to be decoded as a base64 UUID"));
        }
        // Java's decoder: padding ends the input, and completes a 2-character unit with "==".
        let body = s.strip_suffix("==").unwrap_or(s);
        if body.len() != ENCODED_LEN || body.contains('=') {
            return Err(refuse(
                "does not decode to the 16 bytes of a base64-encoded UUID",
            ));
        }
        let mut bytes = [0_u8; 16];
        let mut bits = 0_u32;
        let mut held = 0_u32;
        let mut n = 0;
        for c in body.bytes() {
            let Some(value) = ALPHABET.iter().position(|&a| a == c) else {
                return Err(refuse("illegal base64 character"));
            };
            bits = (bits << 6) | u32::try_from(value).unwrap_or(0);
            held += 6;
            if held >= 8 {
                held -= 8;
                if let Some(slot) = bytes.get_mut(n) {
                    *slot = u8::try_from((bits >> held) & 0xff).unwrap_or(0);
                }
                n += 1;
            }
        }
        debug_assert_eq!(n, 16);
        Ok(Self(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_and_reads_as_kafka() -> Result<(), InvalidTopicId> {
        // Kafka's UuidTest: new Uuid(0L, 1L) prints "AAAAAAAAAAAAAAAAAAAAAQ".
        let one = TopicId::from_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(one.to_string(), "AAAAAAAAAAAAAAAAAAAAAQ");
        assert_eq!("AAAAAAAAAAAAAAAAAAAAAQ".parse::<TopicId>()?, one);
        assert_eq!(TopicId::ZERO.to_string(), "AAAAAAAAAAAAAAAAAAAAAA");
        let all = TopicId::from_bytes([0xff; 16]);
        assert_eq!(all.to_string(), "_____________________w");
        // Java's decoder ignores the unused bits of the last character and takes padding.
        assert_eq!("_____________________w==".parse::<TopicId>()?, all);
        assert_eq!("______________________".parse::<TopicId>()?, all);
        for id in [one, all, TopicId::from_bytes(*b"0123456789abcdef")] {
            assert_eq!(id.to_string().parse::<TopicId>()?, id);
        }
        Ok(())
    }

    #[test]
    fn refuses_what_kafka_refuses() {
        for bad in [
            "",
            "AAAAAAAAAAAAAAAAAAAAA", // 21 characters: 15 bytes and a stray one
            "AAAAAAAAAAAAAAAAAAAAAAA", // 23: 17 bytes
            "AAAAAAAAAAAAAAAAAAAAAA=", // a unit of two characters needs "=="
            "AAAAAAAAAAAAAAAAAAAAAAAA", // 24 without padding: 18 bytes
            "AAAAAAAAAAAAAAAAAAAAAA===", // too long
            "AAAAAAAAAAAAAAAAAAAA+A", // '+' is the standard alphabet's, not the URL one's
            "AAAAAAAAAAAAAAAAAAAA/A",
            "AAAAAAAAAAAAAAAAAAAA A",
            "AAAAAAAAAAAAAAAAAAA=AA",
        ] {
            assert!(bad.parse::<TopicId>().is_err(), "{bad:?} parsed");
        }
    }
}
