//! `seglog offsets`: look offsets up as `kafka-get-offsets.sh` (`GetOffsetShell`) does, through
//! a consumer's ListOffsets: earliest, latest, by time, or the record with the largest
//! timestamp; for one partition directory, or every partition of a log directory (of one topic
//! with --topic).

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Result;
use seglog_log::IsolationLevel;

use crate::common::{Outcome, json_line, lib, partition_view};
use crate::consume::partitions::{self, Partition};
use crate::isolation::Reach;

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
#[command(group(clap::ArgGroup::new("query").required(true).args(["time", "earliest", "latest", "max_timestamp"])))]
pub(crate) struct OffsetsArgs {
    /// A partition directory (topic-N), or a log directory: every partition in it, or with
    /// --topic every partition of that topic.
    path: PathBuf,
    /// With a log directory: the topic whose partitions are looked up.
    #[arg(long)]
    topic: Option<String>,
    /// As kafka-get-offsets.sh --time: -1 or latest, -2 or earliest, -3 or max-timestamp, -4 or
    /// earliest-local (the log start offset: a local log is all there is), or a time (the first
    /// offset whose record has a timestamp at least it): milliseconds since the epoch, or an
    /// ISO-8601 time (2024-05-01T12:00:00.000, UTC without a zone; or with Z, +02, +02:00).
    #[arg(long, visible_alias = "timestamp", value_name = "TIME", allow_hyphen_values = true,
          value_parser = parse_time)]
    time: Option<OffsetQuery>,
    /// The log start offset (--time -2).
    #[arg(long)]
    earliest: bool,
    /// The high watermark: the partition's entry in the log directory's
    /// replication-offset-checkpoint, else the log end offset (with --isolation-level
    /// read_committed: the last stable offset below it; --time -1).
    #[arg(long)]
    latest: bool,
    /// The record with the largest timestamp (--time -3).
    #[arg(long)]
    max_timestamp: bool,
    /// Print one object a partition: {"topic","partition","offset","timestamp"}, offset and
    /// timestamp null where nothing matches.
    #[arg(long)]
    json: bool,
    /// As a consumer's ListOffsets: read_committed answers --latest with the last stable offset
    /// (the first offset of the oldest open transaction, else the high watermark) and finds
    /// nothing at or past it by time; read_uncommitted (the default) goes to the high watermark.
    #[arg(long, value_name = "LEVEL", default_value = "read_uncommitted", value_parser = crate::isolation::parse)]
    isolation_level: IsolationLevel,
    /// Answer as if the high watermark were the log end: without it, a partition with an entry
    /// in the log directory's replication-offset-checkpoint answers --latest (and finds by
    /// time) only below its high watermark, as a broker answers a consumer.
    #[arg(long)]
    to_log_end: bool,
}

impl OffsetsArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        let query = match (self.time, self.earliest, self.latest) {
            (Some(q), _, _) => q,
            (_, true, _) => OffsetQuery::Earliest,
            (_, _, true) => OffsetQuery::Latest,
            _ => OffsetQuery::MaxTimestamp,
        };
        offsets(
            &self.path,
            self.topic.as_deref(),
            query,
            Reach {
                isolation: self.isolation_level,
                to_log_end: self.to_log_end,
            },
            self.json,
            out,
        )
    }
}

/// What `offsets` looks up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OffsetQuery {
    Earliest,
    Latest,
    MaxTimestamp,
    Timestamp(i64),
}

/// `--time`, as `GetOffsetShell.parseOffsetSpec` reads it, plus ISO-8601 times.
fn parse_time(value: &str) -> Result<OffsetQuery, String> {
    match value {
        "latest" | "-1" => Ok(OffsetQuery::Latest),
        "earliest" | "earliest-local" | "-2" | "-4" => Ok(OffsetQuery::Earliest),
        "max-timestamp" | "-3" => Ok(OffsetQuery::MaxTimestamp),
        "latest-tiered" | "earliest-pending-upload" | "-5" | "-6" => Err(format!(
            "{value} asks about tiered storage, and a log directory holds the local log only"
        )),
        _ => match crate::when::parse(value)? {
            t if t < 0 => Err(
                "a negative time other than -1 (latest), -2 (earliest), -3 (max-timestamp) or -4 (earliest-local)"
                    .to_owned(),
            ),
            t => Ok(OffsetQuery::Timestamp(t)),
        },
    }
}

/// One partition's answer: an offset and, for a lookup by time, the record's timestamp.
fn lookup(
    part: &Partition,
    query: OffsetQuery,
    reach: Reach,
) -> Result<(Option<i64>, Option<i64>)> {
    let view = partition_view(&part.dir)?;
    Ok(match query {
        OffsetQuery::Earliest => (Some(view.log_start_offset()), None),
        OffsetQuery::Latest => (Some(reach.last_fetchable(&view)?), None),
        OffsetQuery::Timestamp(ts) => match reach.offset_for_timestamp(&view, ts)? {
            Some((o, t)) => (Some(o), Some(t)),
            None => (None, None),
        },
        OffsetQuery::MaxTimestamp => {
            // Record level (KAFKA-16310): the first record carrying the largest timestamp.
            let best = view.max_timestamp().map_err(lib)?;
            let best = match best {
                Some(b) if !reach.fetchable(&view, b.offset)? => None,
                best => best,
            };
            (best.map(|b| b.offset), best.map(|b| b.timestamp))
        }
    })
}

/// Prints each partition's answer in GetOffsetShell's order (by `topic-N` as a string, its
/// `TreeMap`'s) as `topic:partition:offset`; a partition where nothing matches prints no line,
/// as there (its offset is Kafka's UNKNOWN_OFFSET). With `json`, one object per partition.
fn offsets(
    path: &Path,
    topic: Option<&str>,
    query: OffsetQuery,
    reach: Reach,
    json: bool,
    out: &mut impl Write,
) -> Result<Outcome> {
    let mut selected = partitions::select(path, topic, false)?;
    selected.sort_by_key(|p| p.tp.to_string());
    for part in &selected {
        let (offset, timestamp) = lookup(part, query, reach)?;
        let (topic, partition) = (&part.tp.topic, part.tp.partition);
        if json {
            json_line(
                out,
                &serde_json::json!({"topic": topic, "partition": partition, "offset": offset, "timestamp": timestamp}),
            )?;
        } else if let Some(offset) = offset {
            writeln!(out, "{topic}:{partition}:{offset}")?;
        }
    }
    Ok(Outcome::Clean)
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog offsets logs/events-0 --latest                    # events:0:1200
  seglog offsets logs/events-0 --time -2                   # earliest, as kafka-get-offsets.sh
  seglog offsets logs --topic events --time 2024-05-01T12:00:00.000 --json
  seglog offsets logs --time max-timestamp                 # every partition of every topic
  seglog offsets logs/events-0 --latest --isolation-level read_committed   # the last stable offset

Each partition prints topic:partition:offset, in kafka-get-offsets.sh's order (by topic-N as
text: events-10 before events-2); as there, a partition where no record matches a time prints
nothing (with --json: offset null).

Exit status: 0 when the offsets were looked up, 1 when damage in the data stopped a lookup
(reported on stderr, naming the file and byte), 2 on bad usage, a missing path or an I/O
failure.";
