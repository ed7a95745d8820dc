//! How one input record (a line, or what lies between two `--delimiter`s) becomes a record:
//! Kafka's console producer's `LineMessageReader` (`parse.headers`, `headers.delimiter`,
//! `headers.separator`, `headers.key.separator`, `null.marker`, `ignore.error`), with its
//! defaults and messages, on bytes rather than text so that any byte goes through unchanged.
//!
//! A record's fields, in order, each ended by its separator: `[<timestamp><timestamp
//! separator>][<headers><headers delimiter>][<key><key separator>]<value>`. Headers are
//! `<key><headers key separator><value>` pairs joined by the headers separator.

use anyhow::{Result, bail};

/// Headers as read: (key, value or `None` for null), in order.
pub(crate) type OwnedHeaders = Vec<(Vec<u8>, Option<Vec<u8>>)>;

/// One record read from the input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParsedRecord {
    /// The CreateTime the line gave; `None`: `--timestamp`, else the append time.
    pub(crate) timestamp: Option<i64>,
    pub(crate) key: Option<Vec<u8>>,
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) headers: OwnedHeaders,
}

/// The separators and rules of `produce`'s input format.
#[derive(Debug, Clone, Default)]
pub(crate) struct LineFormat {
    /// `--timestamp-field`: each record starts with its CreateTime in ms, ended by this.
    pub(crate) timestamp_separator: Option<Vec<u8>>,
    /// `--parse-headers`: the headers come first, ended by `headers_delimiter`.
    pub(crate) parse_headers: bool,
    pub(crate) headers_delimiter: Vec<u8>,
    pub(crate) headers_separator: Vec<u8>,
    pub(crate) headers_key_separator: Vec<u8>,
    /// `--key-separator`: split at its first occurrence; a record without it is all value.
    pub(crate) key_separator: Option<Vec<u8>>,
    /// `--null-marker`: a key, value or header value equal to it is null.
    pub(crate) null_marker: Option<Vec<u8>>,
    /// `--ignore-error`: a record without its headers delimiter has no headers, a pair without
    /// its key separator is a header with a null value.
    pub(crate) ignore_error: bool,
}

impl LineFormat {
    /// Kafka's `LineMessageReader.configure` checks: no two separators may be equal.
    pub(crate) fn check(&self) -> Result<()> {
        let (d, s, k) = (
            &self.headers_delimiter,
            &self.headers_separator,
            &self.headers_key_separator,
        );
        if self.parse_headers && (d.is_empty() || s.is_empty() || k.is_empty()) {
            bail!("the headers delimiter, separator and key separator may not be empty");
        }
        if d == s {
            bail!("headers.delimiter and headers.separator may not be equal");
        }
        if d == k {
            bail!("headers.delimiter and headers.key.separator may not be equal");
        }
        if s == k {
            bail!("headers.separator and headers.key.separator may not be equal");
        }
        if let Some(m) = &self.null_marker {
            for (sep, name) in [
                (self.key_separator.as_ref(), "key.separator"),
                (Some(s), "headers.separator"),
                (Some(d), "headers.delimiter"),
                (Some(k), "headers.key.separator"),
            ] {
                if sep == Some(m) {
                    bail!("null.marker and {name} may not be equal");
                }
            }
        }
        Ok(())
    }

    /// Parses record number `line_number` (from 1), `line`, delimiter already removed.
    pub(crate) fn parse(&self, line: &[u8], line_number: u64) -> Result<ParsedRecord> {
        let mut rest = line;
        let timestamp = match &self.timestamp_separator {
            None => None,
            Some(sep) => {
                let Some((field, after)) = split_once(rest, sep) else {
                    bail!(
                        "No timestamp separator found on line number {line_number}: '{}'",
                        String::from_utf8_lossy(line)
                    );
                };
                rest = after;
                Some(timestamp(field, line_number)?)
            }
        };
        let mut headers = Vec::new();
        if self.parse_headers {
            match split_once(rest, &self.headers_delimiter) {
                Some((list, after)) => {
                    rest = after;
                    if self.null_marker.as_deref() != Some(list) {
                        headers = self.headers(list, line_number)?;
                    }
                }
                None if self.ignore_error => {}
                None => bail!(
                    "No headers delimiter found on line number {line_number}: '{}'",
                    String::from_utf8_lossy(line)
                ),
            }
        }
        let (key, value) = match self.key_separator.as_deref() {
            Some(sep) if !sep.is_empty() => match split_once(rest, sep) {
                Some((key, value)) => (Some(key), value),
                None => (None, rest),
            },
            _ => (None, rest),
        };
        let nullable = |b: &[u8]| (self.null_marker.as_deref() != Some(b)).then(|| b.to_vec());
        Ok(ParsedRecord {
            timestamp,
            key: key.and_then(nullable),
            value: nullable(value),
            headers,
        })
    }

    /// Kafka's `splitHeaders`: the pairs, split as Java's `String.split` splits (trailing empty
    /// parts dropped, so `""` is one empty pair, an error, and `","` none).
    fn headers(&self, list: &[u8], line_number: u64) -> Result<OwnedHeaders> {
        let mut pairs = split_all(list, &self.headers_separator);
        if pairs.len() > 1 {
            while pairs.last().is_some_and(|p| p.is_empty()) {
                pairs.pop();
            }
        }
        pairs
            .into_iter()
            .map(|pair| {
                let Some((key, value)) = split_once(pair, &self.headers_key_separator) else {
                    if self.ignore_error {
                        return Ok((pair.to_vec(), None));
                    }
                    bail!(
                        "No header key separator found in pair '{}' on line number {line_number}",
                        String::from_utf8_lossy(pair)
                    );
                };
                if self.null_marker.as_deref() == Some(key) {
                    bail!(
                        "Header keys should not be equal to the null marker '{}' as they can't be null",
                        String::from_utf8_lossy(key)
                    );
                }
                let value = (self.null_marker.as_deref() != Some(value)).then(|| value.to_vec());
                Ok((key.to_vec(), value))
            })
            .collect()
    }
}

/// A timestamp field: milliseconds since the epoch, never negative (Kafka's `ProducerRecord`
/// refuses a negative one).
fn timestamp(field: &[u8], line_number: u64) -> Result<i64> {
    let text = String::from_utf8_lossy(field);
    match text.trim().parse::<i64>() {
        Ok(t) if t >= 0 => Ok(t),
        Ok(t) => bail!(
            "Invalid timestamp: {t}. Timestamp should always be non-negative or null. (line number {line_number})"
        ),
        Err(_) => bail!(
            "line number {line_number}: the timestamp field '{text}' is not milliseconds since the epoch"
        ),
    }
}

/// `bytes` split at the first `sep`.
pub(crate) fn split_once<'b>(bytes: &'b [u8], sep: &[u8]) -> Option<(&'b [u8], &'b [u8])> {
    if sep.is_empty() {
        return None;
    }
    let at = bytes.windows(sep.len()).position(|w| w == sep)?;
    Some((bytes.get(..at)?, bytes.get(at + sep.len()..)?))
}

fn split_all<'b>(mut bytes: &'b [u8], sep: &[u8]) -> Vec<&'b [u8]> {
    let mut parts = Vec::new();
    while let Some((part, rest)) = split_once(bytes, sep) {
        parts.push(part);
        bytes = rest;
    }
    parts.push(bytes);
    parts
}

/// A separator given on the command line, with kcat's escapes: `\n`, `\r`, `\t`, `\0`, `\\` and
/// `\xHH` (any byte).
pub(crate) fn unescape(text: &str) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(b) = bytes.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match bytes.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b'r') => out.push(b'\r'),
            Some(b't') => out.push(b'\t'),
            Some(b'0') => out.push(0),
            Some(b'\\') => out.push(b'\\'),
            Some(b'x') => {
                let hex: Vec<u8> = bytes.by_ref().take(2).collect();
                let byte = std::str::from_utf8(&hex)
                    .ok()
                    .filter(|h| h.len() == 2)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match byte {
                    Some(v) => out.push(v),
                    None => bail!("{text:?}: \\x takes two hex digits"),
                }
            }
            Some(other) => bail!(
                "{text:?}: unknown escape \\{} (known: \\n \\r \\t \\0 \\\\ \\xHH)",
                char::from(other)
            ),
            None => bail!("{text:?}: a lone \\ at the end (write \\\\ for a backslash)"),
        }
    }
    Ok(out)
}

#[cfg(test)]
#[expect(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::{LineFormat, unescape};

    fn kafka_defaults() -> LineFormat {
        LineFormat {
            parse_headers: true,
            headers_delimiter: b"\t".to_vec(),
            headers_separator: b",".to_vec(),
            headers_key_separator: b":".to_vec(),
            key_separator: Some(b"\t".to_vec()),
            ..LineFormat::default()
        }
    }

    #[test]
    fn headers_key_and_value_as_kafka_s_console_producer_reads_them() {
        let f = kafka_defaults();
        let r = f.parse(b"h1:v1,h2:v2\tkey\tvalue", 1).unwrap();
        assert_eq!(r.key.as_deref(), Some(&b"key"[..]));
        assert_eq!(r.value.as_deref(), Some(&b"value"[..]));
        assert_eq!(
            r.headers,
            vec![
                (b"h1".to_vec(), Some(b"v1".to_vec())),
                (b"h2".to_vec(), Some(b"v2".to_vec()))
            ]
        );
        // Java's split drops trailing empty parts; "" alone is one (bad) pair.
        assert_eq!(f.parse(b"h:1,,\tk\tv", 1).unwrap().headers.len(), 1);
        assert_eq!(f.parse(b",\tk\tv", 1).unwrap().headers.len(), 0);
        let e = f.parse(b"\tk\tv", 3).unwrap_err().to_string();
        assert_eq!(
            e,
            "No header key separator found in pair '' on line number 3"
        );
        let e = f.parse(b"no delimiter", 2).unwrap_err().to_string();
        assert_eq!(
            e,
            "No headers delimiter found on line number 2: 'no delimiter'"
        );
    }

    #[test]
    fn null_marker_and_ignore_error() {
        let f = LineFormat {
            null_marker: Some(b"NULL".to_vec()),
            ignore_error: true,
            ..kafka_defaults()
        };
        let r = f.parse(b"a:NULL,b\tNULL\tNULL", 1).unwrap();
        assert_eq!((r.key, r.value), (None, None));
        assert_eq!(
            r.headers,
            vec![(b"a".to_vec(), None), (b"b".to_vec(), None)]
        );
        let r = f.parse(b"just a value", 1).unwrap();
        assert!(r.headers.is_empty());
        assert!(f.parse(b"NULL:x\tk\tv", 1).is_err());
    }

    #[test]
    fn escapes() {
        assert_eq!(unescape(r"\0").unwrap(), vec![0]);
        assert_eq!(
            unescape(r"--\n\t\r\\\xff").unwrap(),
            b"--\n\t\r\\\xff".to_vec()
        );
        assert!(unescape(r"\q").is_err());
        assert!(unescape(r"\x4").is_err());
        assert!(unescape("\\").is_err());
    }
}
