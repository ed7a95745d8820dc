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

mod batch_line;
mod chunks;
mod control;
mod decoders;
mod epoch_checkpoint;
mod first_batch;
mod index;
mod java_path;
mod java_utf8;
mod json;
mod log;
mod options;
mod records;
mod reports;
mod snapshot;
mod text;
mod txn_index;

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use seglog_log::RealFs;
use seglog_log::inspect::SegmentLog;

pub(crate) use batch_line::{codec_name, timestamp_type_name};
pub(crate) use first_batch::{first_batch_at, max_record_timestamp};
pub(crate) use options::DumpOptions;
use reports::{Reports, print_reports};

use crate::common::{Outcome, is_io_failure, message};

/// An error after which Kafka's tool stops the whole run: its exception's text, exit status 1.
#[derive(Debug)]
pub(super) struct KafkaStops(String);

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
                Ok(()) => log::dump_log(file, options, &mut reports, out),
            },
            "" if epoch_checkpoint::is_epoch_checkpoint(file) => epoch_checkpoint::dump(file, out),
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
            // A closed pipe (`seglog dump ... | head`) ends the run quietly.
            Err(e) if is_broken_pipe(&e) => return Err(e),
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

fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain()
        .filter_map(|c| c.downcast_ref::<std::io::Error>())
        .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
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

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog dump --files 00000000000000000000.log
  seglog dump --deep-iteration --print-data-log --files 00000000000000000000.log
  seglog dump --verify-index-only --files 00000000000000000000.index,00000000000000000000.timeindex
  seglog dump --offsets-decoder --files __consumer_offsets-0/00000000000000000000.log
  seglog dump --share-group-state-decoder --files __share_group_state-0/00000000000000000000.log
  seglog dump --print-data-log --skip-record-metadata --files 00000000000000000000.log   # keys and values only
  seglog dump --files orders-0/leader-epoch-checkpoint   # the partition's leader epochs

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
