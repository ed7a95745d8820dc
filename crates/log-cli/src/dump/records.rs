//! `seglog dump --deep-iteration` and `--print-data-log`: Kafka's `dumpBatchRecords`, one line
//! per record, with Kafka's decoding of keys and values as text.

use std::fmt::Write as _;
use std::io::Write;

use anyhow::Result;
use seglog_log::record::{Batch, LegacyBatch, RecordBatch};

use super::java_utf8::decode;
use super::{DumpOptions, Reports, timestamp_type_name};

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
        let _ = write!(s, "{prefix}key: {}", decode(k));
        prefix = " ";
    }
    if let Some(v) = value {
        let _ = write!(s, "{prefix}payload: {}", decode(v));
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
            let keys: Vec<String> = r.headers().map(|h| decode(h.key)).collect();
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
