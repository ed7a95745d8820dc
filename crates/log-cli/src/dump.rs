//! `seglog dump`: Kafka's `DumpLogSegments` (`kafka-dump-log.sh`), with its flags and its exact
//! line shapes, so scripts written for Kafka's tool work unchanged.
//!
//! Differences, all deliberate: a corrupt batch or an unreadable file is reported as one line on
//! stderr naming the file and byte position (Kafka prints a stack trace and stops), and the other
//! files are still dumped; an index entry pointing past the end of the log is reported as a
//! mismatch with log offset -1 (Kafka throws); KRaft control records other than transaction
//! markers print as ` controlType: NAME(id)` (Kafka's Scala tool's form) rather than as JSON.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::ops::ControlFlow;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use seglog_log::{FileSystem, OpenMode, RealFs};
use seglog_mmap_index::{OffsetIndex, TimeIndex};
use seglog_record_format::{
    self as rf, Batch, ControlRecordType, ControlValue, LegacyBatch, RecordBatch, TimestampType,
};
use seglog_segment::scan::{Scan, ScanEnd, scan_batches};

use crate::cli::Outcome;

/// The flags of `kafka-dump-log.sh`.
#[derive(Debug, Clone, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per kafka-dump-log.sh flag"
)]
pub(crate) struct DumpOptions {
    /// Comma-separated files to dump: .log, .index, .timeindex.
    #[arg(long, value_delimiter = ',', required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// Print the records' keys and values (implies --deep-iteration).
    #[arg(long)]
    print_data_log: bool,
    /// Print every record inside each batch, not only the batch.
    #[arg(long)]
    deep_iteration: bool,
    /// For index files: check the entries against the log without printing them.
    #[arg(long, alias = "verify-index")]
    verify_index_only: bool,
    /// For index files: run Kafka's sanity check and print whether it passed.
    #[arg(long)]
    index_sanity_check: bool,
    /// How many bytes of the log to read when checking one offset index entry.
    #[arg(long, default_value_t = 5 * 1024 * 1024)]
    max_message_size: u32,
    /// Read only the first N bytes of each .log (whole batches only).
    #[arg(long, default_value_t = i32::MAX)]
    max_bytes: i32,
    /// Omit each record's metadata (offset, timestamp, sizes).
    #[arg(long)]
    skip_record_metadata: bool,
    /// Print JSON Lines instead of Kafka's text: one object per batch, record (with
    /// --deep-iteration or --print-data-log), index entry, time index entry and problem.
    #[arg(long)]
    json: bool,
}

impl DumpOptions {
    /// Plain dump options (no flags) for `files`.
    pub(crate) fn for_files(files: Vec<PathBuf>) -> Self {
        Self {
            files,
            print_data_log: false,
            deep_iteration: false,
            verify_index_only: false,
            index_sanity_check: false,
            max_message_size: 5 * 1024 * 1024,
            max_bytes: i32::MAX,
            skip_record_metadata: false,
            json: false,
        }
    }
}

/// What accumulates across files and is printed on stderr at the end, as Kafka does.
#[derive(Debug, Default)]
struct Reports {
    /// Per index file (absolute path): index offset -> first batch's last offset, newest first.
    index_mismatches: BTreeMap<String, BTreeMap<i64, i64>>,
    /// Per time index file: (index timestamp, log timestamp).
    time_mismatches: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per time index file: (index timestamp, previous indexed timestamp).
    out_of_order: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per time index file: (indexed offset, found log offset).
    shallow_not_found: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per log file: previous offset -> next offset, where they are not consecutive.
    non_consecutive: BTreeMap<String, BTreeMap<i64, i64>>,
}

pub(crate) fn run(
    options: &DumpOptions,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<Outcome> {
    if options.json {
        return crate::dump_json::run(
            &options.files,
            options.deep_iteration || options.print_data_log,
            options.max_message_size,
            out,
        );
    }
    let mut reports = Reports::default();
    let mut outcome = Outcome::Clean;
    for file in &options.files {
        writeln!(out, "Dumping {}", file.display())?;
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let suffix = name.rfind('.').map_or("", |i| &name[i..]);
        let result = match suffix {
            ".log" | ".checkpoint" => dump_log(file, options, &mut reports, out),
            ".index" => dump_index(file, options, &mut reports, out),
            ".timeindex" => dump_time_index(file, options, &mut reports, out),
            _ => {
                writeln!(err, "Ignoring unknown file {}", file.display())?;
                Ok(Outcome::Clean)
            }
        };
        match result {
            Ok(Outcome::Clean) => {}
            Ok(Outcome::Problems) => outcome = Outcome::Problems,
            Err(e) => {
                out.flush()?;
                writeln!(err, "seglog: {e:#}")?;
                outcome = Outcome::Problems;
            }
        }
    }
    out.flush()?;
    print_reports(&reports, err)?;
    Ok(outcome)
}

fn print_reports(r: &Reports, err: &mut impl Write) -> Result<()> {
    for (file, mismatches) in &r.index_mismatches {
        writeln!(err, "Mismatches in :{file}")?;
        for (index_offset, log_offset) in mismatches.iter().rev() {
            writeln!(
                err,
                "  Index offset: {index_offset}, log offset: {log_offset}"
            )?;
        }
    }
    for (file, list) in &r.time_mismatches {
        writeln!(err, "Found timestamp mismatch in :{file}")?;
        for (index_ts, log_ts) in list {
            writeln!(
                err,
                "  Index timestamp: {index_ts}, log timestamp: {log_ts}"
            )?;
        }
    }
    for (file, list) in &r.out_of_order {
        writeln!(err, "Found out of order timestamp in :{file}")?;
        for (index_ts, prev) in list {
            writeln!(
                err,
                "  Index timestamp: {index_ts}, Previously indexed timestamp: {prev}"
            )?;
        }
    }
    for (file, list) in &r.shallow_not_found {
        // Kafka 4.4.0's wording (the reference's "in the log." is an older version's).
        writeln!(
            err,
            "The following indexed offsets are not found in :{file}"
        )?;
        for (indexed, found) in list {
            writeln!(err, "Indexed offset: {indexed}, found log offset: {found}")?;
        }
    }
    for (file, pairs) in &r.non_consecutive {
        writeln!(err, "Non-consecutive offsets in {file}")?;
        for (a, b) in pairs {
            writeln!(err, "  {a} is followed by {b}")?;
        }
    }
    Ok(())
}

fn absolute(path: &Path) -> String {
    std::path::absolute(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// The base offset a segment file's name starts with.
pub(crate) fn base_offset_of(file: &Path) -> Result<i64> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let prefix = name.split('.').next().unwrap_or_default();
    prefix.parse().with_context(|| {
        format!(
            "{}: the file name does not start with a base offset",
            file.display()
        )
    })
}

fn dump_log(
    file: &Path,
    o: &DumpOptions,
    reports: &mut Reports,
    out: &mut impl Write,
) -> Result<Outcome> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    if let Some(stem) = name.strip_suffix(".checkpoint") {
        let (offset, epoch) = stem.split_once('-').unwrap_or((stem, "0"));
        let offset: i64 = offset
            .parse()
            .with_context(|| format!("{}: not a snapshot name", file.display()))?;
        let epoch: i32 = epoch
            .parse()
            .with_context(|| format!("{}: not a snapshot name", file.display()))?;
        writeln!(out, "Snapshot end offset: {offset}, epoch: {epoch}")?;
    } else {
        writeln!(out, "Log starting offset: {}", base_offset_of(file)?)?;
    }
    let handle = RealFs
        .open(file, OpenMode::ReadOnly)
        .with_context(|| format!("{}: cannot open", file.display()))?;
    let len = fs::metadata(file)
        .with_context(|| format!("{}: cannot stat", file.display()))?
        .len();
    let max_bytes = u64::try_from(o.max_bytes).unwrap_or(0);
    let end = len.min(max_bytes);
    let deep = o.deep_iteration || o.print_data_log;
    let abs = absolute(file);
    let mut last_offset = -1_i64;
    let mut scratch = Vec::new();
    let mut valid_bytes = 0_u64;
    let mut outcome = Outcome::Clean;
    let scan = scan_batches(&handle, file, 0, end, 8 << 20, |position, framed| {
        let batch = match framed.decode() {
            Ok(b) => b,
            Err(e) => {
                return Ok(ControlFlow::Break(anyhow::anyhow!(
                    "{}: cannot decode the batch at byte {position}: {e}",
                    file.display()
                )));
            }
        };
        let line = batch_line(&batch, position);
        (|| -> std::io::Result<()> {
            writeln!(out, "{line}")?;
            Ok(())
        })()
        .map_err(|e| seglog_segment::Error::Io {
            path: file.to_path_buf(),
            op: "write stdout",
            source: e,
        })?;
        if deep {
            let printed = print_records(
                &batch,
                o,
                &mut last_offset,
                &mut scratch,
                out,
                reports,
                &abs,
            );
            if let Err(e) = printed {
                return Ok(ControlFlow::Break(anyhow::anyhow!(
                    "{}: cannot read the records of the batch at byte {position}: {e:#}",
                    file.display()
                )));
            }
        }
        valid_bytes = position + framed.size_in_bytes() as u64;
        Ok(ControlFlow::Continue(()))
    })
    .with_context(|| format!("{}: read failed", file.display()))?;
    match scan {
        Scan::Stopped(e) => return Err(e),
        Scan::Ended(ScanEnd::Corrupt { position, error }) => {
            bail!(
                "{}: corrupt batch at byte {position}: {error}",
                file.display()
            );
        }
        Scan::Ended(ScanEnd::Clean { .. }) => {}
    }
    let trailing = end - valid_bytes;
    if trailing > 0 && o.max_bytes == i32::MAX {
        writeln!(out, "Found {trailing} invalid bytes at the end of {name}")?;
        outcome = Outcome::Clean;
    }
    Ok(outcome)
}

pub(crate) fn timestamp_type_name(t: Option<TimestampType>) -> &'static str {
    match t {
        Some(TimestampType::CreateTime) => "CreateTime",
        Some(TimestampType::LogAppendTime) => "LogAppendTime",
        None => "NoTimestampType",
    }
}

pub(crate) fn codec_name(batch: &Batch<'_>) -> String {
    let codec = match batch {
        Batch::V2(b) => b.compression().map(|c| c.name().to_owned()),
        Batch::Legacy(b) => b.compression().map(|c| c.name().to_owned()),
    };
    codec.unwrap_or_else(|_| "unknown".to_owned())
}

/// Kafka's `printBatchLevel`.
fn batch_line(batch: &Batch<'_>, position: u64) -> String {
    let common = |ts_type: &str, max_ts: i64, size: usize, magic: i8, crc: u32, valid: bool| {
        format!(
            " position: {position} {ts_type}: {max_ts} size: {size} magic: {magic} compresscodec: {} crc: {crc} isvalid: {valid}",
            codec_name(batch)
        )
    };
    match batch {
        Batch::V2(b) => {
            let horizon = b.delete_horizon_ms().map_or_else(
                || "OptionalLong.empty".to_owned(),
                |h| format!("OptionalLong[{h}]"),
            );
            format!(
                "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {horizon}{}",
                b.base_offset(),
                b.last_offset(),
                b.records_count(),
                b.base_sequence(),
                b.last_sequence(),
                b.producer_id(),
                b.producer_epoch(),
                b.partition_leader_epoch(),
                b.is_transactional(),
                b.is_control(),
                common(
                    timestamp_type_name(Some(b.timestamp_type())),
                    b.max_timestamp(),
                    b.size_in_bytes(),
                    b.magic(),
                    b.crc(),
                    b.is_valid()
                ),
            )
        }
        Batch::Legacy(b) => format!(
            "offset: {}{}",
            b.last_offset(),
            common(
                timestamp_type_name(b.timestamp_type()),
                b.max_timestamp(),
                b.size_in_bytes(),
                b.magic(),
                b.crc(),
                b.is_valid()
            ),
        ),
    }
}

/// Decodes bytes as Java's `new String(bytes, UTF_8)` does (Kafka's `StringDecoder`): like
/// `String::from_utf8_lossy`, except for an encoded surrogate (`ED A0..BF ..`), which Java
/// replaces as one malformed sequence of up to three bytes where Rust replaces each byte.
fn lossy(bytes: &[u8]) -> String {
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
fn print_records(
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

fn contents(o: &DumpOptions, key: Option<&[u8]>, value: Option<&[u8]>) -> String {
    let mut s = String::new();
    let mut prefix = if o.skip_record_metadata { "| " } else { " " };
    if let Some(k) = key {
        let _ = write!(s, "{prefix}key: {}", lossy(k));
        prefix = " ";
    }
    if let Some(v) = value {
        let _ = write!(s, "{prefix}payload: {}", lossy(v));
    }
    s
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
                line.push_str(&control_text(&r.control()?));
            }
        }
        if o.print_data_log && !b.is_control() {
            line.push_str(&contents(o, r.key(), r.value()));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

fn control_text(c: &rf::ControlRecord<'_>) -> String {
    match (&c.kind, &c.value) {
        (ControlRecordType::Abort | ControlRecordType::Commit, ControlValue::EndTransaction(m)) => {
            let name = if c.kind == ControlRecordType::Abort {
                "ABORT"
            } else {
                "COMMIT"
            };
            format!(
                " endTxnMarker: {name} coordinatorEpoch: {}",
                m.coordinator_epoch
            )
        }
        (t, _) => {
            let name = match t {
                ControlRecordType::Abort => "ABORT",
                ControlRecordType::Commit => "COMMIT",
                ControlRecordType::LeaderChange => "LEADER_CHANGE",
                ControlRecordType::SnapshotHeader => "SNAPSHOT_HEADER",
                ControlRecordType::SnapshotFooter => "SNAPSHOT_FOOTER",
                ControlRecordType::KraftVersion => "KRAFT_VERSION",
                ControlRecordType::KraftVoters => "KRAFT_VOTERS",
                ControlRecordType::Unknown(_) => "UNKNOWN",
            };
            format!(" controlType: {name}({})", t.id())
        }
    }
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
            line.push_str(&contents(o, r.key(), r.value()));
        }
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// The `.log` beside an index file: same directory, same base offset.
fn log_beside(file: &Path, base_offset: i64) -> PathBuf {
    file.with_file_name(format!(
        "{}.log",
        seglog_segment::naming::file_prefix(base_offset)
    ))
}

/// The first batch at `position` in `log` within `max_size` bytes, decoded: (last offset,
/// max record timestamp).
pub(crate) fn first_batch_at(
    log: &fs::File,
    position: u64,
    max_size: u64,
) -> Result<Option<Vec<u8>>> {
    let len = log.metadata()?.len();
    if position >= len {
        return Ok(None);
    }
    let want = usize::try_from((len - position).min(max_size)).unwrap_or(usize::MAX);
    let mut buf = vec![0; want];
    log.read_exact_at(&mut buf, position)?;
    let first = rf::batches(&buf)
        .next()
        .transpose()?
        .map(|b| b.bytes().to_vec());
    Ok(first)
}

fn dump_index(
    file: &Path,
    o: &DumpOptions,
    reports: &mut Reports,
    out: &mut impl Write,
) -> Result<Outcome> {
    let base = base_offset_of(file)?;
    let log_path = log_beside(file, base);
    let log = fs::File::open(&log_path)
        .with_context(|| format!("{}: cannot open", log_path.display()))?;
    let index = OffsetIndex::open_existing(file, base)?;
    if index.entries() == 0 {
        writeln!(out, "{} is empty.", file.display())?;
        return Ok(Outcome::Clean);
    }
    if o.index_sanity_check {
        index.sanity_check()?;
        writeln!(out, "{} passed sanity check.", file.display())?;
        return Ok(Outcome::Clean);
    }
    let abs = absolute(file);
    for i in 0..index.entries() {
        let entry = index.entry(i)?;
        // An untrimmed index left by a crash has a zero tail: stop at the first such entry.
        if entry.offset == base && i > 0 {
            break;
        }
        let first = first_batch_at(
            &log,
            u64::from(entry.position),
            u64::from(o.max_message_size),
        )?;
        let log_offset = match first {
            Some(bytes) => rf::batches(&bytes)
                .next()
                .transpose()?
                .map_or(-1, |b| b.last_offset().unwrap_or(-1)),
            None => -1,
        };
        if log_offset != entry.offset {
            reports
                .index_mismatches
                .entry(abs.clone())
                .or_default()
                .insert(entry.offset, log_offset);
        }
        if !o.verify_index_only {
            writeln!(out, "offset: {} position: {}", entry.offset, entry.position)?;
        }
    }
    Ok(Outcome::Clean)
}

fn dump_time_index(
    file: &Path,
    o: &DumpOptions,
    reports: &mut Reports,
    out: &mut impl Write,
) -> Result<Outcome> {
    let base = base_offset_of(file)?;
    let log_path = log_beside(file, base);
    let log = fs::File::open(&log_path)
        .with_context(|| format!("{}: cannot open", log_path.display()))?;
    let index_path = file.with_file_name(format!(
        "{}.index",
        seglog_segment::naming::file_prefix(base)
    ));
    let offset_index = OffsetIndex::open_existing(&index_path, base).ok();
    let time_index = TimeIndex::open_existing(file, base)?;
    if o.index_sanity_check {
        time_index.sanity_check()?;
        writeln!(out, "{} passed sanity check.", file.display())?;
        return Ok(Outcome::Clean);
    }
    let abs = absolute(file);
    let log_len = log.metadata()?.len();
    let handle = RealFs.open(&log_path, OpenMode::ReadOnly)?;
    let mut prev_timestamp = -1_i64;
    let mut scratch = Vec::new();
    for i in 0..time_index.entries() {
        let entry = time_index.entry(i)?;
        if entry.offset == base && i > 0 {
            break;
        }
        let position = match &offset_index {
            Some(index) => u64::from(index.lookup(entry.offset)?.position),
            None => 0,
        };
        // The first batch from there whose last offset reaches the entry's offset.
        let found = scan_batches(
            &handle,
            &log_path,
            position,
            log_len,
            1 << 20,
            |_, framed| {
                let Ok(last) = framed.last_offset() else {
                    return Ok(ControlFlow::Break((-1, Vec::new())));
                };
                if last >= entry.offset {
                    return Ok(ControlFlow::Break((last, framed.bytes().to_vec())));
                }
                Ok(ControlFlow::Continue(()))
            },
        )?;
        match found {
            Scan::Ended(_) => {
                reports
                    .shallow_not_found
                    .entry(abs.clone())
                    .or_default()
                    .push((entry.offset, -1));
            }
            Scan::Stopped((last, _)) if last != entry.offset => {
                reports
                    .shallow_not_found
                    .entry(abs.clone())
                    .or_default()
                    .push((entry.offset, last));
            }
            Scan::Stopped((_, bytes)) => {
                let max = max_record_timestamp(&bytes, &mut scratch)?;
                if max != entry.timestamp {
                    reports
                        .time_mismatches
                        .entry(abs.clone())
                        .or_default()
                        .push((entry.timestamp, max));
                }
                if prev_timestamp >= entry.timestamp {
                    reports
                        .out_of_order
                        .entry(abs.clone())
                        .or_default()
                        .push((entry.timestamp, prev_timestamp));
                }
            }
        }
        if !o.verify_index_only {
            writeln!(
                out,
                "timestamp: {} offset: {}",
                entry.timestamp, entry.offset
            )?;
        }
        prev_timestamp = entry.timestamp;
    }
    Ok(Outcome::Clean)
}

/// The largest record timestamp of one batch (decompressing if needed).
pub(crate) fn max_record_timestamp(bytes: &[u8], scratch: &mut Vec<u8>) -> Result<i64> {
    let Some(framed) = rf::batches(bytes).next().transpose()? else {
        return Ok(-1);
    };
    let mut max = -1_i64;
    match framed.decode()? {
        Batch::V2(b) => {
            for r in b.records_with(scratch)? {
                max = max.max(r?.timestamp());
            }
        }
        Batch::Legacy(b) => {
            for r in b.records_with(scratch)? {
                max = max.max(r?.timestamp());
            }
        }
    }
    Ok(max)
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
