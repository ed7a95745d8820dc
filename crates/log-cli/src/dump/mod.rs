//! `seglog dump`: Kafka's `DumpLogSegments` (`kafka-dump-log.sh`), with its flags and its exact
//! line shapes, so scripts written for Kafka's tool work unchanged.
//!
//! Differences, all deliberate: a corrupt batch or an unreadable file is reported as one line on
//! stderr naming the file and byte position (Kafka prints a stack trace and stops), and the other
//! files are still dumped; a `.log`'s batches are judged by recovery's offset rules (against
//! each other and the next `.log` in the same directory), and a batch whose offsets are
//! impossible is reported the same way, its records not printed (Kafka prints them); an index entry pointing past the end of the log is reported as a
//! mismatch with log offset -1 (Kafka throws); an index entry whose batch is over
//! `--max-message-size` is checked against the whole batch, and the report says that Kafka's tool
//! throws there (`NoSuchElementException`) and stops; the end-of-run reports are sorted by file
//! (Kafka prints them in a `HashMap`'s order, which depends on the hash of the path strings).
//!
//! Kept as Kafka's: keys and values decode as Java's `new String(bytes, UTF_8)` (`java_utf8`),
//! paths print as `java.io.File` prints them (`java_path`), and a negative `--max-bytes` stops the
//! run at the first `.log` with Kafka's exception text, exit status 1.

mod control;
mod decoders;
mod index;
mod java_path;
mod java_utf8;
mod json;
mod records;
mod snapshot;
mod txn_index;

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use seglog_log::RealFs;
use seglog_log::inspect::{
    JudgedEnd, OffsetBounds, Scan, ScanEnd, SegmentLog, next_segment_base_offset,
};
use seglog_log::record::{self as rf, Batch, FramedBatch, TimestampType};

use crate::common::{Outcome, is_io_failure, lib, message};

/// The flags of `kafka-dump-log.sh`.
#[derive(Debug, Clone, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per kafka-dump-log.sh flag"
)]
pub(crate) struct DumpOptions {
    /// Comma-separated files to dump: .log, .index, .timeindex, .snapshot, .txnindex.
    #[arg(long, value_delimiter = ',', required = true, num_args = 1..)]
    files: Vec<PathBuf>,
    /// Print the records' keys and values (implies --deep-iteration).
    #[arg(long, default_value_ifs = DECODER_FLAGS)]
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
    /// Read only the first N bytes of each .log (whole batches only). A negative N stops the
    /// run at the first .log with Kafka's IllegalArgumentException text, exit status 1.
    #[arg(long, default_value_t = i32::MAX, allow_negative_numbers = true)]
    max_bytes: i32,
    /// Omit each record's metadata (offset, timestamp, sizes); a control record's line is then
    /// empty, as Kafka's.
    /// `--skip-batch-metadata` is KIP-631's name for it, which Kafka renamed before release.
    #[arg(long, alias = "skip-batch-metadata")]
    skip_record_metadata: bool,
    /// Print JSON Lines instead of Kafka's text: one object per batch, record (with
    /// --deep-iteration or --print-data-log), index entry, time index entry and problem.
    #[arg(long)]
    json: bool,
    /// Decode records as __consumer_offsets' (Kafka's JSON per key and value).
    #[arg(long)]
    offsets_decoder: bool,
    /// Decode records as __transaction_state's.
    #[arg(long)]
    transaction_log_decoder: bool,
    /// Decode records as __cluster_metadata's.
    #[arg(long)]
    cluster_metadata_decoder: bool,
}

/// Any decoder flag implies --print-data-log, as in Kafka.
const DECODER_FLAGS: [(&str, clap::builder::ArgPredicate, Option<&str>); 3] = [
    (
        "offsets_decoder",
        clap::builder::ArgPredicate::IsPresent,
        Some("true"),
    ),
    (
        "transaction_log_decoder",
        clap::builder::ArgPredicate::IsPresent,
        Some("true"),
    ),
    (
        "cluster_metadata_decoder",
        clap::builder::ArgPredicate::IsPresent,
        Some("true"),
    ),
];

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
            offsets_decoder: false,
            transaction_log_decoder: false,
            cluster_metadata_decoder: false,
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
    /// Per index file: the first entry whose batch is over --max-message-size, where Kafka's
    /// tool throws (`index::OverMaxMessageSize`).
    over_max_message_size: BTreeMap<String, index::OverMaxMessageSize>,
}

/// An error after which Kafka's tool stops the whole run: its exception's text, exit status 1.
#[derive(Debug)]
struct KafkaStops(String);

impl std::fmt::Display for KafkaStops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KafkaStops {}

pub(crate) fn run(
    options: &DumpOptions,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<Outcome> {
    if options.json {
        return json::run(
            &options.files,
            options.deep_iteration || options.print_data_log,
            options.max_message_size,
            out,
        );
    }
    let mut reports = Reports::default();
    let mut outcome = Outcome::Clean;
    for file in &options.files {
        // The file as Java's `File` holds it, so that `x.log/` opens as Kafka opens it.
        let file = &java_path::normalize(file);
        writeln!(out, "Dumping {}", java_path::file_string(file))?;
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let suffix = name.rfind('.').map_or("", |i| &name[i..]);
        let result = match suffix {
            ".log" | ".checkpoint" | ".index" | ".timeindex" => match readable(file, suffix) {
                Err(e) => Err(e),
                Ok(()) if suffix == ".index" => index::dump_index(file, options, &mut reports, out),
                Ok(()) if suffix == ".timeindex" => {
                    index::dump_time_index(file, options, &mut reports, out)
                }
                Ok(()) => dump_log(file, options, &mut reports, out),
            },
            ".snapshot" => snapshot::dump_snapshot(file, out, err),
            ".txnindex" => txn_index::dump_txn_index(file, out),
            _ => {
                writeln!(
                    err,
                    "Ignoring unknown file {}",
                    java_path::file_string(file)
                )?;
                Ok(Outcome::Clean)
            }
        };
        let this = match result {
            Ok(o) => o,
            Err(e) if e.is::<KafkaStops>() => {
                out.flush()?;
                writeln!(err, "Exception in thread \"main\" {e}")?;
                return Ok(Outcome::Problems);
            }
            Err(e) => {
                out.flush()?;
                writeln!(err, "seglog: {}", message(&e))?;
                if is_io_failure(&e) {
                    Outcome::Failed
                } else {
                    Outcome::Problems
                }
            }
        };
        outcome = outcome.max(this);
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
    for (file, over) in &r.over_max_message_size {
        writeln!(err, "{}", over.note(file))?;
    }
    Ok(())
}

/// Fails unless `file` can be opened and, for a segment file, its name starts with a base offset:
/// both an I/O failure or bad usage (exit 2), not corrupt bytes.
pub(crate) fn readable(file: &Path, suffix: &str) -> Result<()> {
    SegmentLog::open(&RealFs, file).with_context(|| format!("{}: cannot open", file.display()))?;
    if suffix != ".checkpoint" {
        base_offset_of(file).map_err(|e| {
            anyhow::Error::new(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                message(&e),
            ))
        })?;
    }
    Ok(())
}

/// The base offset a segment file's name starts with.
pub(crate) fn base_offset_of(file: &Path) -> Result<i64> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let prefix = name.split('.').next().unwrap_or_default();
    prefix.parse().map_err(|_| {
        anyhow::anyhow!(
            "{}: the file name does not start with a base offset (a segment's files are named <offset>.log, .index, .timeindex)",
            file.display()
        )
    })
}

/// Kafka's first line for a `.log` (its base offset) or a KRaft snapshot (its end offset and
/// epoch); whether the file is a snapshot.
fn print_start(file: &Path, name: &str, out: &mut impl Write) -> Result<bool> {
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
    Ok(name.ends_with(".checkpoint"))
}

/// Kafka's `FileRecords.slice(0, maxBytes)` refuses a negative size, and the run stops there.
fn negative_max_bytes(file: &Path, max_bytes: i32, len: u64) -> Result<()> {
    if max_bytes >= 0 {
        return Ok(());
    }
    Err(KafkaStops(format!(
        "java.lang.IllegalArgumentException: Invalid size: {max_bytes} in read from FileRecords(size={len}, file={}, start=0, end={})",
        java_path::file_string(file),
        i32::MAX
    ))
    .into())
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
    let snapshot = print_start(file, name, out)?;
    let handle = SegmentLog::open(&RealFs, file)
        .with_context(|| format!("{}: cannot open", file.display()))?;
    let len = handle
        .len()
        .with_context(|| format!("{}: cannot stat", file.display()))?;
    negative_max_bytes(file, o.max_bytes, len)?;
    let max_bytes = u64::try_from(o.max_bytes).unwrap_or(0);
    let end = len.min(max_bytes);
    let deep = o.deep_iteration || o.print_data_log;
    let abs = java_path::absolute(file);
    let mut last_offset = -1_i64;
    let mut scratch = Vec::new();
    let mut valid_bytes = 0_u64;
    let mut outcome = Outcome::Clean;
    let each = |position: u64, framed: FramedBatch<'_>| {
        let batch = match framed.decode() {
            Ok(b) => b,
            Err(e) => {
                return ControlFlow::Break(anyhow::anyhow!(
                    "{}: cannot decode the batch at byte {position}: {e}",
                    file.display()
                ));
            }
        };
        let line = batch_line(&batch, position);
        if let Err(e) = writeln!(out, "{line}") {
            let what = format!("writing the dump of {} to stdout", file.display());
            return ControlFlow::Break(
                anyhow::Error::new(e)
                    .context(what)
                    .context(format!("{}: read failed", file.display())),
            );
        }
        if deep {
            let printed = records::print_records(
                &batch,
                o,
                &mut last_offset,
                &mut scratch,
                out,
                reports,
                &abs,
            );
            if let Err(e) = printed {
                return ControlFlow::Break(anyhow::anyhow!(
                    "{}: cannot read the records of the batch at byte {position}: {e:#}",
                    file.display()
                ));
            }
        }
        valid_bytes = position + framed.size_in_bytes() as u64;
        ControlFlow::Continue(())
    };
    // A segment's batches are judged as recovery and consume judge them, against each other and
    // the next segment in the same directory; a snapshot's offsets are not a segment's.
    let scan = if snapshot {
        match handle.batches(0, end, 8 << 20, each) {
            Ok(Scan::Stopped(e)) => Ok(JudgedEnd::Stopped(e)),
            Ok(Scan::Ended(e)) => Ok(JudgedEnd::Ended(e)),
            Err(e) => Err(e),
        }
    } else {
        let next_base_offset = next_segment_base_offset(&RealFs, file)
            .with_context(|| format!("{}: cannot list its directory", file.display()))?;
        let bounds = OffsetBounds {
            base_offset: base_offset_of(file)?,
            next_base_offset,
        };
        handle.judged_batches(end, 8 << 20, bounds, each)
    };
    match scan
        .map_err(lib)
        .with_context(|| format!("{}: read failed", file.display()))?
    {
        JudgedEnd::Stopped(e) => return Err(e),
        JudgedEnd::Damage(stop) => bail!("{}: {stop}", file.display()),
        JudgedEnd::Ended(ScanEnd::Corrupt { position, error }) => {
            bail!(
                "{}: corrupt batch at byte {position}: {error}",
                file.display()
            );
        }
        JudgedEnd::Ended(ScanEnd::Clean { .. }) => {}
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

/// The first batch at `position` in `log`, read whole however large it is (it must lie inside
/// the file): its bytes, `None` when no whole batch starts there. Kafka's tool reads only
/// `max_size` bytes and throws when the batch is larger; `FirstBatch::over` says so.
pub(crate) fn first_batch_at(
    log: &SegmentLog<RealFs>,
    position: u64,
    max_size: u64,
) -> Result<FirstBatch> {
    let len = log.len()?;
    if position >= len {
        return Ok(FirstBatch::default());
    }
    let available = len - position;
    let mut header = [0_u8; 12];
    let declared = if available >= 12 {
        log.read_exact_at(&mut header, position)?;
        let size = i32::from_be_bytes([header[8], header[9], header[10], header[11]]);
        u64::try_from(size).ok().map(|s| s + 12)
    } else {
        None
    };
    // The declared size only when it lies inside the file: a wild one reads no more than Kafka.
    let want = declared
        .filter(|&d| d <= available)
        .unwrap_or_else(|| available.min(max_size));
    let mut buf = vec![0; usize::try_from(want).unwrap_or(usize::MAX)];
    log.read_exact_at(&mut buf, position)?;
    let Some(framed) = rf::batches(&buf).next().transpose()? else {
        return Ok(FirstBatch::default());
    };
    let size = framed.size_in_bytes() as u64;
    Ok(FirstBatch {
        last_offset: Some(framed.last_offset().unwrap_or(-1)),
        over: (size > max_size).then_some(size),
    })
}

/// What `first_batch_at` found.
#[derive(Debug, Default)]
pub(crate) struct FirstBatch {
    /// The batch's last offset; `None` when no whole batch starts there.
    pub(crate) last_offset: Option<i64>,
    /// The batch's size when it is over the `max_size` Kafka's tool reads.
    pub(crate) over: Option<u64>,
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

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog dump --files 00000000000000000000.log
  seglog dump --deep-iteration --print-data-log --files 00000000000000000000.log
  seglog dump --verify-index-only --files 00000000000000000000.index,00000000000000000000.timeindex
  seglog dump --offsets-decoder --files __consumer_offsets-0/00000000000000000000.log
  seglog dump --print-data-log --skip-record-metadata --files 00000000000000000000.log   # keys and values only

Paths print as Kafka's tool prints them: `Dumping` the path as given, the reports on stderr
(index mismatches, non-consecutive offsets, ...) absolute, sorted by file. Keys and values print
as Java decodes them: each malformed UTF-8 sequence one U+FFFD. An index entry whose batch is
larger than --max-message-size is checked against the whole batch; the report notes that Kafka's
tool throws there and stops.

A .log's batches are judged as consume and recover judge them: a batch whose offsets go
backwards, or reach the next segment's base offset (the next .log by name in the same
directory), is reported on stderr naming the file and byte, and its records are not printed.

Exit status: 0 when every file was dumped (index mismatches are reported on stderr, as Kafka
does), 1 when a file could not be read to its end because its bytes are corrupt or its offsets
impossible, 2 on bad usage, a missing path or an I/O failure.";
