//! `consume --json`: one object per record as kcat's `-J` writes it (`json.c`), in its order:
//! `topic`, `partition`, `offset`, `tstype` (`create` or `logappend`) and `ts` (both left out for
//! a v0 message, which has no timestamp), `broker` (-1: no broker served it), `headers` (left
//! out when the record has none; else a flat array, name then value, a null value as null),
//! `key`, `payload` (null for null), then a newline. Strings are escaped as yajl does
//! (`\"`, `\\`, `\b \f \n \r \t`, other control bytes as `\u00XX`, nothing else).
//!
//! kcat writes the bytes as they are, which is not JSON when they are not UTF-8. Here, with
//! `--json-bytes text` (the default), key, payload and header values are strings when they are
//! valid UTF-8; one that is not is written in base64 and marked by a field after it,
//! `"key_encoding":"base64"` or `"payload_encoding":"base64"` (`"headers_encoding":"base64"`
//! after the headers: then every header value is base64). `--json-bytes base64` writes all of
//! them in base64 and marks nothing.

use std::io::Write;

use anyhow::Result;
use base64::Engine as _;
use seglog_log::record::{Batch, Record, TimestampType};

use super::format::Place;

/// How `--json` writes bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum JsonBytes {
    /// A string when valid UTF-8, else base64 and marked.
    Text,
    /// Always base64.
    Base64,
}

/// Writes `record` of `batch` as one line of kcat's `-J`.
pub(crate) fn write_record(
    out: &mut impl Write,
    place: &Place<'_>,
    record: &Record,
    batch: &Batch<'_>,
    bytes: JsonBytes,
) -> Result<()> {
    let mut line = Vec::with_capacity(128);
    line.extend_from_slice(b"{\"topic\":");
    string(&mut line, place.topic);
    line.extend_from_slice(format!(",\"partition\":{}", place.partition).as_bytes());
    line.extend_from_slice(format!(",\"offset\":{}", record.offset).as_bytes());
    if let Some(tstype) = tstype(batch) {
        line.extend_from_slice(
            format!(",\"tstype\":\"{tstype}\",\"ts\":{}", record.timestamp).as_bytes(),
        );
    }
    line.extend_from_slice(b",\"broker\":-1");
    if !record.headers.is_empty() {
        let base64 = bytes == JsonBytes::Base64
            || record.headers.iter().any(|h| {
                h.value
                    .as_deref()
                    .is_some_and(|v| std::str::from_utf8(v).is_err())
            });
        line.extend_from_slice(b",\"headers\":[");
        for (i, h) in record.headers.iter().enumerate() {
            if i > 0 {
                line.push(b',');
            }
            string(&mut line, &String::from_utf8_lossy(&h.key));
            line.push(b',');
            match h.value.as_deref() {
                None => line.extend_from_slice(b"null"),
                Some(v) if base64 => string(&mut line, &b64(v)),
                Some(v) => string(&mut line, &String::from_utf8_lossy(v)),
            }
        }
        line.push(b']');
        if base64 && bytes == JsonBytes::Text {
            line.extend_from_slice(b",\"headers_encoding\":\"base64\"");
        }
    }
    field(&mut line, "key", record.key.as_deref(), bytes);
    field(&mut line, "payload", record.value.as_deref(), bytes);
    line.extend_from_slice(b"}\n");
    out.write_all(&line)?;
    Ok(())
}

/// kcat's `tstype`: none for a v0 message (librdkafka's `NOT_AVAILABLE`).
fn tstype(batch: &Batch<'_>) -> Option<&'static str> {
    let kind = match batch {
        Batch::V2(b) => b.timestamp_type(),
        Batch::Legacy(b) => b.timestamp_type()?,
    };
    Some(match kind {
        TimestampType::CreateTime => "create",
        TimestampType::LogAppendTime => "logappend",
    })
}

/// `,"name":value` for a key or payload, with its `_encoding` mark where one is due.
fn field(line: &mut Vec<u8>, name: &str, value: Option<&[u8]>, bytes: JsonBytes) {
    line.extend_from_slice(format!(",\"{name}\":").as_bytes());
    match value {
        None => line.extend_from_slice(b"null"),
        Some(v) => match (bytes, std::str::from_utf8(v)) {
            (JsonBytes::Text, Ok(text)) => string(line, text),
            (JsonBytes::Base64, _) => string(line, &b64(v)),
            (JsonBytes::Text, Err(_)) => {
                string(line, &b64(v));
                line.extend_from_slice(format!(",\"{name}_encoding\":\"base64\"").as_bytes());
            }
        },
    }
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A JSON string as yajl's `yajl_string_encode` escapes it (solidus not escaped).
fn string(line: &mut Vec<u8>, s: &str) {
    line.push(b'"');
    for &b in s.as_bytes() {
        match b {
            b'"' => line.extend_from_slice(b"\\\""),
            b'\\' => line.extend_from_slice(b"\\\\"),
            b'\n' => line.extend_from_slice(b"\\n"),
            b'\r' => line.extend_from_slice(b"\\r"),
            b'\t' => line.extend_from_slice(b"\\t"),
            0x08 => line.extend_from_slice(b"\\b"),
            0x0c => line.extend_from_slice(b"\\f"),
            0..0x20 => line.extend_from_slice(format!("\\u00{b:02X}").as_bytes()),
            _ => line.push(b),
        }
    }
    line.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::string;

    #[test]
    fn escapes_as_yajl() {
        let mut out = Vec::new();
        string(&mut out, "a\"b\\c/d\n\r\t\u{8}\u{c}\u{1}\u{1f}\u{7f}\u{e9}");
        assert_eq!(
            out,
            "\"a\\\"b\\\\c/d\\n\\r\\t\\b\\f\\u0001\\u001F\u{7f}\u{e9}\"".as_bytes()
        );
    }
}
