//! `seglog dump --deep-iteration` and `--print-data-log`: Kafka's `dumpBatchRecords`, one line
//! per record, with Kafka's decoding of keys and values as text, appended to the caller's buffer.

use anyhow::Result;
use seglog_log::record::Batch;

use super::java_utf8::decode_into;
use super::text::{push_bool, push_i64, push_u64};
use super::{DumpOptions, timestamp_type_name};

/// The record offsets one run of batches went through: its first, its last, and the places
/// where one offset is not followed by the next (Kafka's "Non-consecutive offsets" report). A
/// run formatted apart from the ones before it is joined to them by [`Gaps::first`].
#[derive(Debug)]
pub(super) struct Gaps {
    /// The first record's offset, `None` before any record.
    pub(super) first: Option<i64>,
    /// The last record's offset.
    pub(super) last: i64,
    /// (offset, the offset after it) where they are not consecutive, in file order.
    pub(super) pairs: Vec<(i64, i64)>,
}

impl Default for Gaps {
    fn default() -> Self {
        Self {
            first: None,
            last: -1,
            pairs: Vec::new(),
        }
    }
}

impl Gaps {
    fn note(&mut self, offset: i64) {
        if self.first.is_none() {
            self.first = Some(offset);
        } else if offset != self.last.wrapping_add(1) {
            self.pairs.push((self.last, offset));
        }
        self.last = offset;
    }

    pub(super) fn clear(&mut self) {
        self.first = None;
        self.last = -1;
        self.pairs.clear();
    }
}

fn push_size(out: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        Some(b) => super::text::push_usize(out, b.len()),
        None => out.extend_from_slice(b"-1"),
    }
}

/// The start of a record's metadata, the same for every batch format.
fn push_head(
    out: &mut Vec<u8>,
    offset: i64,
    ts_type: &str,
    timestamp: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) {
    out.extend_from_slice(b"| offset: ");
    push_i64(out, offset);
    out.push(b' ');
    out.extend_from_slice(ts_type.as_bytes());
    out.extend_from_slice(b": ");
    push_i64(out, timestamp);
    out.extend_from_slice(b" keySize: ");
    push_size(out, key);
    out.extend_from_slice(b" valueSize: ");
    push_size(out, value);
}

/// Kafka's `dumpBatchRecords`: one line per record. On an error, the lines before the failing
/// record are in `out`, and of that record what Kafka has printed when it throws.
pub(super) fn print_records(
    batch: &Batch<'_>,
    o: &DumpOptions,
    gaps: &mut Gaps,
    scratch: &mut Vec<u8>,
    out: &mut Vec<u8>,
) -> Result<()> {
    match batch {
        Batch::V2(b) => {
            let ts_type = timestamp_type_name(Some(b.timestamp_type()));
            for record in b.records_with(scratch)? {
                let r = record?;
                gaps.note(r.offset());
                if !o.skip_record_metadata {
                    let start = out.len();
                    push_head(out, r.offset(), ts_type, r.timestamp(), r.key(), r.value());
                    out.extend_from_slice(b" sequence: ");
                    push_i64(out, i64::from(r.sequence()));
                    out.extend_from_slice(b" headerKeys: [");
                    for (i, h) in r.headers().enumerate() {
                        if i > 0 {
                            out.push(b',');
                        }
                        decode_into(h.key, out);
                    }
                    out.push(b']');
                    if b.is_control() {
                        match r.control() {
                            Ok(c) => {
                                out.extend_from_slice(super::control::control_text(&c).as_bytes());
                            }
                            Err(e) => {
                                // Kafka has printed nothing of this record's line.
                                out.truncate(start);
                                return Err(e.into());
                            }
                        }
                    }
                }
                // A control record's contents are not printed.
                let data = o.print_data_log && !b.is_control();
                end_line(o, data, r.offset(), r.key(), r.value(), out)?;
            }
        }
        Batch::Legacy(b) => {
            let ts_type = timestamp_type_name(b.timestamp_type());
            for record in b.records_with(scratch)? {
                let r = record?;
                gaps.note(r.offset());
                if !o.skip_record_metadata {
                    let m = r.message();
                    push_head(out, r.offset(), ts_type, r.timestamp(), r.key(), r.value());
                    out.extend_from_slice(b" isValid: ");
                    push_bool(out, m.crc() == m.compute_crc());
                    out.extend_from_slice(b" crc: ");
                    push_u64(out, u64::from(m.crc()));
                }
                end_line(o, o.print_data_log, r.offset(), r.key(), r.value(), out)?;
            }
        }
    }
    Ok(())
}

/// The record's contents (when `data`) and its line end. On a decoder's error Kafka has printed
/// the record's metadata, no line end.
fn end_line(
    o: &DumpOptions,
    data: bool,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> Result<()> {
    if data {
        contents(o, offset, key, value, out)?;
    }
    out.push(b'\n');
    Ok(())
}

fn contents(
    o: &DumpOptions,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    out: &mut Vec<u8>,
) -> Result<()> {
    let mut prefix = if o.skip_record_metadata { "| " } else { " " };
    if let Some(d) = o.decoder() {
        let text =
            super::decoders::contents(d, prefix, offset, key, value).map_err(anyhow::Error::msg)?;
        out.extend_from_slice(text.as_bytes());
        return Ok(());
    }
    if let Some(k) = key {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(b"key: ");
        decode_into(k, out);
        prefix = " ";
    }
    if let Some(v) = value {
        out.extend_from_slice(prefix.as_bytes());
        out.extend_from_slice(b"payload: ");
        decode_into(v, out);
    }
    Ok(())
}
