//! `seglog offsets`: look an offset up as a consumer's ListOffsets does: earliest, latest, by
//! timestamp, or the record with the largest timestamp.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use seglog_log::IsolationLevel;

use crate::common::{Outcome, json_line, lib, partition_view};
use crate::isolation::{last_fetchable, offset_for_timestamp};

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
#[command(group(clap::ArgGroup::new("query").required(true).args(["timestamp", "earliest", "latest", "max_timestamp"])))]
pub(crate) struct OffsetsArgs {
    /// The partition directory (topic-N).
    dir: PathBuf,
    /// The first offset whose record has a timestamp at least this.
    #[arg(long)]
    timestamp: Option<i64>,
    /// The log start offset.
    #[arg(long)]
    earliest: bool,
    /// The log end offset (with --isolation-level read_committed: the last stable offset).
    #[arg(long)]
    latest: bool,
    /// The record with the largest timestamp.
    #[arg(long)]
    max_timestamp: bool,
    /// Print {"offset": N or null, "timestamp": T or null}.
    #[arg(long)]
    json: bool,
    /// As a consumer's ListOffsets: read_committed answers --latest with the last stable offset
    /// (the first offset of the oldest open transaction, else the log end) and finds nothing at
    /// or past it by time; read_uncommitted (the default) goes to the log end offset.
    #[arg(long, value_name = "LEVEL", default_value = "read_uncommitted", value_parser = crate::isolation::parse)]
    isolation_level: IsolationLevel,
}

impl OffsetsArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        let query = match (self.timestamp, self.earliest, self.latest) {
            (Some(t), _, _) => OffsetQuery::Timestamp(t),
            (_, true, _) => OffsetQuery::Earliest,
            (_, _, true) => OffsetQuery::Latest,
            _ => OffsetQuery::MaxTimestamp,
        };
        offsets(&self.dir, query, self.isolation_level, self.json, out)
    }
}

/// What `offsets` looks up.
#[derive(Debug, Clone, Copy)]
enum OffsetQuery {
    Earliest,
    Latest,
    MaxTimestamp,
    Timestamp(i64),
}

fn offsets(
    dir: &Path,
    query: OffsetQuery,
    isolation: IsolationLevel,
    json: bool,
    out: &mut impl Write,
) -> Result<Outcome> {
    let view = partition_view(dir)?;
    let (offset, timestamp) = match query {
        OffsetQuery::Earliest => (Some(view.log_start_offset()), None),
        OffsetQuery::Latest => (Some(last_fetchable(&view, isolation)?), None),
        OffsetQuery::Timestamp(ts) => match offset_for_timestamp(&view, ts, isolation)? {
            Some((o, t)) => (Some(o), Some(t)),
            None => (None, None),
        },
        OffsetQuery::MaxTimestamp => {
            // Record level (KAFKA-16310): the first record carrying the largest timestamp.
            let best = view.max_timestamp().map_err(lib)?;
            let best = match (best, isolation) {
                (Some(b), IsolationLevel::ReadCommitted)
                    if b.offset >= last_fetchable(&view, isolation)? =>
                {
                    None
                }
                (best, _) => best,
            };
            (best.map(|b| b.offset), best.map(|b| b.timestamp))
        }
    };
    if json {
        json_line(
            out,
            &serde_json::json!({"offset": offset, "timestamp": timestamp}),
        )?;
    } else {
        match offset {
            Some(o) => writeln!(out, "{o}")?,
            None => writeln!(out, "none")?,
        }
    }
    Ok(Outcome::Clean)
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog offsets logs/events-0 --latest
  seglog offsets logs/events-0 --timestamp 1700000000000 --json
  seglog offsets logs/events-0 --latest --isolation-level read_committed   # the last stable offset

Exit status: 0 when the offset was looked up (`none` when no record matches), 1 when damage in
the data stopped the lookup (reported on stderr, naming the file and byte), 2 on bad usage, a
missing path or an I/O failure.";
