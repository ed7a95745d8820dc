//! `consume --format`: kcat's `-f` format strings, parsed and rendered as kcat's `format.c` does.
//!
//! Tokens: `%t` topic, `%p` partition, `%o` offset, `%k` key, `%s` value, `%K` / `%S` their
//! lengths (-1 for null), `%R` the value's length as 4 big-endian bytes (-1 for null), `%T` the
//! timestamp (-1 when the record has none), `%h` the headers (`name=value` joined by `,`, a null
//! value as `NULL`), `%%` a percent sign. Between tokens, kcat's escapes: `\n`, `\t`, `\r`, `\x`
//! then hex digits, a digit starting a C number (`\65`, `\0101` octal, `\0x41` hex), each one
//! byte; a backslash before anything else stands for that character. Like kcat, a literal stops
//! at its first NUL byte, and a header's name and value print up to their first NUL (kcat prints
//! them with `%s`); keys and values are written whole, binary-safe, and a null or empty one
//! prints nothing.

use std::io::Write;

use anyhow::Result;
use seglog_log::record::Record;

/// One piece of a parsed format string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    Literal(Vec<u8>),
    Topic,
    Partition,
    Offset,
    Key,
    KeyLen,
    Value,
    ValueLen,
    ValueLenBinary,
    Timestamp,
    Headers,
}

/// Parses a format string as kcat's `fmt_parse`: an unknown token or a `%` at the end is an
/// error naming it (clap's value parser).
pub(crate) fn parse(format: &str) -> Result<Vec<Token>, String> {
    let mut tokens = Vec::new();
    let mut rest = format;
    while let Some(at) = rest.find('%') {
        if at > 0 {
            tokens.push(Token::Literal(unescape(rest.get(..at).unwrap_or_default())));
        }
        let mut after = rest.get(at + 1..).unwrap_or_default().chars();
        let token = match after.next() {
            Some('t') => Token::Topic,
            Some('p') => Token::Partition,
            Some('o') => Token::Offset,
            Some('k') => Token::Key,
            Some('K') => Token::KeyLen,
            Some('s') => Token::Value,
            Some('S') => Token::ValueLen,
            Some('R') => Token::ValueLenBinary,
            Some('T') => Token::Timestamp,
            Some('h') => Token::Headers,
            Some('%') => Token::Literal(b"%".to_vec()),
            Some(other) => {
                return Err(format!(
                    "unsupported token %{other} (kcat's tokens: %t %p %o %k %K %s %S %R %T %h %%)"
                ));
            }
            None => return Err("empty token: a % at the end".to_owned()),
        };
        tokens.push(token);
        rest = after.as_str();
    }
    if !rest.is_empty() {
        tokens.push(Token::Literal(unescape(rest)));
    }
    Ok(tokens)
}

/// kcat's `fmt_add` conversion of `\` sequences, then its `strlen`: the bytes up to the first NUL.
fn unescape(literal: &str) -> Vec<u8> {
    let s = literal.as_bytes();
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        let Some(&next) = s.get(i + 1).filter(|_| c == b'\\') else {
            out.push(c);
            i += 1;
            continue;
        };
        i += 1;
        match next {
            b't' => out.push(b'\t'),
            b'n' => out.push(b'\n'),
            b'r' => out.push(b'\r'),
            _ => {
                // `\x` goes on to the number in base 16; otherwise a digit starts one in C's
                // base 0 (a leading 0x hex, a leading 0 octal, else decimal).
                let base = if next == b'x' {
                    i += 1;
                    16
                } else {
                    0
                };
                match s.get(i) {
                    Some(d) if d.is_ascii_digit() => {
                        let (value, used) = strtoul(s.get(i..).unwrap_or_default(), base);
                        out.push(value);
                        i += used.max(1) - 1;
                    }
                    Some(&other) => out.push(other),
                    None => {}
                }
            }
        }
        i += 1;
    }
    let end = out.iter().position(|&b| b == 0).unwrap_or(out.len());
    out.truncate(end);
    out
}

/// C's `strtoul(s, &end, base)` for base 0 or 16 on bytes starting with a digit, cast to a byte
/// as kcat's `(char)` cast does (saturated at `ULONG_MAX` as strtoul is): the value and how many
/// bytes it used.
fn strtoul(s: &[u8], base: u32) -> (u8, usize) {
    let hex_prefix = matches!(s, [b'0', b'x' | b'X', d, ..] if d.is_ascii_hexdigit());
    let (radix, skip) = match base {
        16 if hex_prefix => (16, 2),
        16 => (16, 0),
        _ if hex_prefix => (16, 2),
        _ if s.first() == Some(&b'0') => (8, 0),
        _ => (10, 0),
    };
    let mut value: u64 = 0;
    let mut used = skip;
    while let Some(digit) = s.get(used).and_then(|&b| char::from(b).to_digit(radix)) {
        value = value
            .saturating_mul(u64::from(radix))
            .saturating_add(u64::from(digit));
        used += 1;
    }
    (value.to_be_bytes()[7], used)
}

/// Where a record comes from, for `%t` and `%p`.
pub(crate) struct Place<'a> {
    pub(crate) topic: &'a str,
    pub(crate) partition: i32,
}

/// Writes `record` as `tokens` say.
pub(crate) fn render(
    tokens: &[Token],
    place: &Place<'_>,
    record: &Record,
    out: &mut impl Write,
) -> Result<()> {
    let len = |b: Option<&[u8]>| b.map_or(-1, |b| i64::try_from(b.len()).unwrap_or(i64::MAX));
    let key = record.key.as_deref();
    let value = record.value.as_deref();
    for token in tokens {
        match token {
            Token::Literal(bytes) => out.write_all(bytes)?,
            Token::Topic => out.write_all(place.topic.as_bytes())?,
            Token::Partition => write!(out, "{}", place.partition)?,
            Token::Offset => write!(out, "{}", record.offset)?,
            Token::Key => out.write_all(key.unwrap_or_default())?,
            Token::KeyLen => write!(out, "{}", len(key))?,
            Token::Value => out.write_all(value.unwrap_or_default())?,
            Token::ValueLen => write!(out, "{}", len(value))?,
            // kcat: htobe32((uint32_t)len), so -1 is ff ff ff ff.
            #[expect(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "kcat's (uint32_t) cast, -1 as 0xffffffff"
            )]
            Token::ValueLenBinary => out.write_all(&(len(value) as u32).to_be_bytes())?,
            Token::Timestamp => write!(out, "{}", record.timestamp)?,
            Token::Headers => {
                for (i, h) in record.headers.iter().enumerate() {
                    if i > 0 {
                        out.write_all(b",")?;
                    }
                    out.write_all(up_to_nul(&h.key))?;
                    out.write_all(b"=")?;
                    match h.value.as_deref() {
                        Some(v) => out.write_all(up_to_nul(v))?,
                        None => out.write_all(b"NULL")?,
                    }
                }
            }
        }
    }
    Ok(())
}

/// The bytes before the first NUL: what C's `%s` and `%.*s` print.
fn up_to_nul(bytes: &[u8]) -> &[u8] {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    bytes.get(..end).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::{Token, parse, unescape};

    #[test]
    fn escapes_as_kcat_converts_them() {
        assert_eq!(unescape(r"a\tb\nc\rd"), b"a\tb\nc\rd");
        assert_eq!(unescape(r"\x41\65\0101\0x42"), b"AAAB");
        // kcat tests for a decimal digit even after \x: \xff is "ff".
        assert_eq!(unescape(r"\xff"), b"ff");
        assert_eq!(unescape(r"\\ \q \"), b"\\ q \\");
        assert_eq!(unescape(r"ab\0cd"), b"ab");
        // Decimal unless a 0 leads (then octal), cast to a byte: 300 is 44.
        assert_eq!(unescape(r"\300"), [44]);
        assert_eq!(unescape(r"\0300"), [0xc0]);
        assert_eq!(unescape(r"\999999999999999999999999"), [0xff]);
    }

    #[test]
    fn tokens_and_refusals() {
        assert_eq!(
            parse("%t/%p@%o %% %k=%s\\n").unwrap(),
            vec![
                Token::Topic,
                Token::Literal(b"/".to_vec()),
                Token::Partition,
                Token::Literal(b"@".to_vec()),
                Token::Offset,
                Token::Literal(b" ".to_vec()),
                Token::Literal(b"%".to_vec()),
                Token::Literal(b" ".to_vec()),
                Token::Key,
                Token::Literal(b"=".to_vec()),
                Token::Value,
                Token::Literal(b"\n".to_vec()),
            ]
        );
        assert!(parse("%x").unwrap_err().contains("%x"));
        assert!(parse("abc%").unwrap_err().contains("empty"));
    }
}
