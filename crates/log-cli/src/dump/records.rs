//! `seglog dump --deep-iteration` and `--print-data-log`: Kafka's `dumpBatchRecords`, one line
//! per record, with Kafka's decoding of keys and values as text.

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Result;
use seglog_log::record::{Batch, LegacyBatch, RecordBatch};

use super::{DumpOptions, Reports, timestamp_type_name};

/// Decodes bytes as Java's `new String(bytes, UTF_8)` does (Kafka's `StringDecoder`): like
/// `String::from_utf8_lossy`, except for an encoded surrogate (`ED A0..BF ..`), which Java
/// replaces as one malformed sequence of up to three bytes where Rust replaces each byte.
pub(crate) fn lossy(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                out.push_str(valid);
                return out;
            }
            Err(e) => {
                let (valid, bad) = rest.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                let skip = match bad {
                    // A surrogate encoded in three bytes: one malformed sequence for Java.
                    [0xED, 0xA0..=0xBF, b3, ..] if b3 & 0xC0 == 0x80 => 3,
                    // Its first two bytes before a non-continuation byte: also one.
                    [0xED, 0xA0..=0xBF, _, ..] => 2,
                    _ => e.error_len().unwrap_or(bad.len()),
                };
                rest = bad.get(skip..).unwrap_or_default();
            }
        }
    }
}

fn size_of(bytes: Option<&[u8]>) -> i64 {
    bytes.map_or(-1, |b| i64::try_from(b.len()).unwrap_or(i64::MAX))
}

/// Kafka's `dumpBatchRecords`: one line per record.
pub(super) fn print_records(
    batch: &Batch<'_>,
    o: &DumpOptions,
    last_offset: &mut i64,
    scratch: &mut Vec<u8>,
    out: &mut impl Write,
    reports: &mut Reports,
    abs: &str,
) -> Result<()> {
    let mut note = |offset: i64, last_offset: &mut i64| {
        if offset != last_offset.wrapping_add(1) {
            reports
                .non_consecutive
                .entry(abs.to_owned())
                .or_default()
                .insert(*last_offset, offset);
        }
        *last_offset = offset;
    };
    match batch {
        Batch::V2(b) => print_v2_records(b, o, last_offset, scratch, out, &mut note),
        Batch::Legacy(b) => print_legacy_records(b, o, last_offset, scratch, out, &mut note),
    }
}

fn contents(
    o: &DumpOptions,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Result<String> {
    let mut s = String::new();
    let mut prefix = if o.skip_record_metadata { "| " } else { " " };
    let decoder = super::decoders::Decoder::from_flags(
        o.offsets_decoder,
        o.transaction_log_decoder,
        o.cluster_metadata_decoder,
    );
    if let Some(d) = decoder {
        return super::decoders::contents(d, prefix, offset, key, value)
            .map_err(anyhow::Error::msg);
    }
    if let Some(k) = key {
        let _ = write!(s, "{prefix}key: {}", lossy(k));
        prefix = " ";
    }
    if let Some(v) = value {
        let _ = write!(s, "{prefix}payload: {}", lossy(v));
    }
    Ok(s)
}

fn print_v2_records(
    b: &RecordBatch<'_>,
    o: &DumpOptions,
    last_offset: &mut i64,
    scratch: &mut Vec<u8>,
    out: &mut impl Write,
    note: &mut impl FnMut(i64, &mut i64),
) -> Result<()> {
    let ts_type = timestamp_type_name(Some(b.timestamp_type()));
    for record in b.records_with(scratch)? {
        let r = record?;
        note(r.offset(), last_offset);
        let mut line = String::new();
        if !o.skip_record_metadata {
            let keys: Vec<String> = r.headers().map(|h| lossy(h.key)).collect();
            let _ = write!(
                line,
                "| offset: {} {ts_type}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [{}]",
                r.offset(),
                r.timestamp(),
                size_of(r.key()),
                size_of(r.value()),
                r.sequence(),
                keys.join(",")
            );
            if b.is_control() {
                line.push_str(&super::control::control_text(&r.control()?));
            }
        }
        if o.print_data_log && !b.is_control() {
            // Kafka has printed the record's metadata when a decoder throws.
            let c = contents(o, r.offset(), r.key(), r.value())
                .inspect_err(|_| drop(write!(out, "{line}")))?;
            line.push_str(&c);
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn print_legacy_records(
    b: &LegacyBatch<'_>,
    o: &DumpOptions,
    last_offset: &mut i64,
    scratch: &mut Vec<u8>,
    out: &mut impl Write,
    note: &mut impl FnMut(i64, &mut i64),
) -> Result<()> {
    let ts_type = timestamp_type_name(b.timestamp_type());
    for record in b.records_with(scratch)? {
        let r = record?;
        note(r.offset(), last_offset);
        let mut line = String::new();
        if !o.skip_record_metadata {
            let m = r.message();
            let _ = write!(
                line,
                "| offset: {} {ts_type}: {} keySize: {} valueSize: {} isValid: {} crc: {}",
                r.offset(),
                r.timestamp(),
                size_of(r.key()),
                size_of(r.value()),
                m.crc() == m.compute_crc(),
                m.crc()
            );
        }
        if o.print_data_log {
            // Kafka has printed the record's metadata when a decoder throws.
            let c = contents(o, r.offset(), r.key(), r.value())
                .inspect_err(|_| drop(write!(out, "{line}")))?;
            line.push_str(&c);
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::lossy;

    #[test]
    fn decodes_malformed_utf8_as_java_does() {
        assert_eq!(lossy(b"plain"), "plain");
        assert_eq!(lossy(&[0xED, 0xA0, 0x80]), "\u{FFFD}");
        assert_eq!(lossy(&[0xED, 0xA0, 0x41]), "\u{FFFD}A");
        assert_eq!(lossy(&[0xED, 0xA0, 0x80, 0x80]), "\u{FFFD}\u{FFFD}");
        // Everything else follows the maximal-subpart rule, as Rust does.
        assert_eq!(lossy(&[0xC0, 0x80, 0x41]), "\u{FFFD}\u{FFFD}A");
        assert_eq!(lossy(&[0xE2, 0x82]), "\u{FFFD}");
    }
}
