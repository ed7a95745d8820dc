//! `consume`'s command line.

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
use seglog_log::IsolationLevel;

use super::format::Token;
use super::json::JsonBytes;
use super::{ConsumeOptions, Printer, Start, consume};
use crate::common::Outcome;

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
pub(crate) struct ConsumeArgs {
    /// A partition directory (topic-N), or a log directory with --topic.
    path: PathBuf,
    /// With a log directory: read every partition of this topic, one after another in
    /// partition order (with --follow, each round reads every partition in that order).
    #[arg(long)]
    topic: Option<String>,
    /// Where to start in each partition: N >= 0 that offset (the log start if below it), -N the
    /// N-th record back from the end (kcat's -o -N: the end is the last fetchable offset at the
    /// isolation level; not before the log start), `beginning` or `end`.
    #[arg(long, visible_alias = "from-offset", value_name = "N", allow_hyphen_values = true,
          value_parser = parse_start, conflicts_with_all = ["from_time", "from_beginning"])]
    offset: Option<Start>,
    /// Start at the first record whose timestamp is at least this: milliseconds since the
    /// epoch, or an ISO-8601 time as Kafka's tools take it (2024-05-01T12:00:00.000, UTC
    /// without a zone; or with Z, +02, +0200, +02:00).
    #[arg(long, visible_alias = "from-timestamp", value_name = "TIME", allow_hyphen_values = true,
          value_parser = crate::when::parse, conflicts_with = "from_beginning")]
    from_time: Option<i64>,
    /// Start at the log start offset (the default).
    #[arg(long)]
    from_beginning: bool,
    /// Stop each partition before this offset (exclusive); with --follow too.
    #[arg(long, value_name = "OFFSET")]
    to_offset: Option<i64>,
    /// Stop after this many records in all.
    #[arg(long)]
    max_records: Option<u64>,
    /// Wait for new records instead of stopping at the end (until Ctrl-C, --timeout-ms,
    /// --max-records or --to-offset); woken by inotify when a partition's files change.
    #[arg(long)]
    follow: bool,
    /// With --follow: exit (status 0) once no new record has come for this many milliseconds,
    /// as kafka-console-consumer's --timeout-ms does.
    #[arg(long, requires = "follow", value_name = "MS")]
    timeout_ms: Option<u64>,
    /// With --follow: read again after this many milliseconds even when no file change was
    /// seen (a bound in case an event is missed; 100 where the directory cannot be watched).
    #[arg(long, requires = "follow", value_name = "MS", default_value_t = 1000)]
    poll_ms: u64,
    /// Print each record as kcat's -f format string says: %t topic, %p partition, %o offset,
    /// %k key, %s value, %K and %S their lengths (-1 for null), %R the value's length as 4
    /// big-endian bytes, %T timestamp (-1 if none), %h headers (k=v,k2=NULL), %% a percent;
    /// escapes \n \t \r \xHH \NNN. No newline is added.
    #[arg(long, value_name = "FORMAT", value_parser = parse_format, conflicts_with_all = ["json", "print_key"])]
    format: Option<Format>,
    /// Print one JSON object a line, as kcat -J: topic, partition, offset, tstype, ts, broker,
    /// headers, key, payload.
    #[arg(long, conflicts_with = "print_key")]
    json: bool,
    /// With --json: `text` writes key, payload and header values as strings when they are
    /// UTF-8 (base64 otherwise, marked by a "key_encoding"/"payload_encoding"/
    /// "headers_encoding" field); `base64` writes them all in base64.
    #[arg(long, requires = "json", value_name = "HOW", value_enum, default_value_t = JsonBytes::Text)]
    json_bytes: JsonBytes,
    /// Print the key and a tab before each value.
    #[arg(long)]
    print_key: bool,
    /// read_uncommitted (the default, as kafka-console-consumer's) prints every data record;
    /// read_committed stops at the last stable offset and skips aborted transactions. Neither
    /// prints a transaction marker or any other control record.
    #[arg(long, value_name = "LEVEL", default_value = "read_uncommitted", value_parser = crate::isolation::parse)]
    isolation_level: IsolationLevel,
    /// Read past the high watermark, to the log end: the records a broker appended but never
    /// exposed to a consumer (not yet replicated when it stopped) included. Without it, a
    /// partition with an entry in the log directory's replication-offset-checkpoint stops at
    /// its high watermark, as a Kafka consumer does.
    #[arg(long)]
    to_log_end: bool,
}

/// A parsed `--format`.
#[derive(Debug, Clone)]
struct Format(Vec<Token>);

fn parse_format(value: &str) -> Result<Format, String> {
    super::format::parse(value).map(Format)
}

/// `--offset`: an offset, a count back from the end, `beginning` or `end`.
fn parse_start(value: &str) -> Result<Start, String> {
    match value {
        "beginning" => return Ok(Start::Beginning),
        "end" => return Ok(Start::End),
        _ => {}
    }
    let n: i64 = value.parse().map_err(|_| {
        "expected an offset, -N (N records back from the end), beginning or end".to_owned()
    })?;
    Ok(if n >= 0 {
        Start::Offset(n)
    } else {
        Start::FromEnd(n.unsigned_abs())
    })
}

impl ConsumeArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        let start = match (self.offset, self.from_time) {
            (Some(start), _) => start,
            (_, Some(t)) => Start::Time(t),
            _ => Start::Beginning,
        };
        let printer = match (&self.format, self.json) {
            (Some(Format(tokens)), _) => Printer::Format(tokens.clone()),
            (None, true) => Printer::Json(self.json_bytes),
            (None, false) => Printer::Plain {
                print_key: self.print_key,
            },
        };
        let options = ConsumeOptions {
            topic: self.topic.clone(),
            start,
            to_offset: self.to_offset,
            max_records: self.max_records,
            follow: self.follow,
            idle_timeout: self.timeout_ms.map(Duration::from_millis),
            poll: Duration::from_millis(self.poll_ms.max(1)),
            printer,
            isolation: self.isolation_level,
            to_log_end: self.to_log_end,
        };
        consume(&self.path, &options, out)
    }
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog consume logs/events-0 --from-beginning
  seglog consume logs/events-0 --offset -10                # the last 10 records
  seglog consume logs/events-0 --offset 100 --to-offset 110 --print-key
  seglog consume logs/events-0 --from-time 2024-05-01T12:00:00.000+02:00 --max-records 5
  seglog consume logs/events-0 --format '%t [%p] at %o: %k=%s (%S bytes, %T, %h)\\n'
  seglog consume logs/events-0 --json                      # kcat -J records
  seglog consume logs/events-0 --json --json-bytes base64
  seglog consume logs --topic events                       # events-0, events-1, ... in turn
  seglog consume logs/events-0 --follow
  seglog consume logs --topic events --follow --timeout-ms 5000   # exit after 5 s without a record
  seglog consume logs/events-0 --isolation-level read_committed

The topic and partition (%t, %p, JSON's topic and partition) are the directory's name, topic-N.
With a log directory and --topic, the partitions are read one after another in partition
order; --offset, --from-time and --to-offset apply to each, --max-records to all. With
--follow, each round reads every partition in that order, printing what came since the last
round; a round starts when a file of any of them changes (inotify), or after --poll-ms.

As a Kafka consumer, consume never prints a control record (a transaction marker); with
--isolation-level read_committed it prints nothing of an aborted transaction and stops at the
last stable offset, computed from the producer snapshot and the batches after it, and the
.txnindex files. A consumer never reads past the high watermark: a partition with an entry in
the log directory's replication-offset-checkpoint (a broker's, or seglog's) stops there, at the
records a SIGKILLed broker appended but had not replicated; --to-log-end reads them too.

Records are printed up to the first damage (a corrupt batch, or a batch whose offsets its
neighbours or the next segment's base offset make impossible), which is reported on stderr
naming the file and byte.

Exit status: 0 when every record asked for was printed, 1 when damage in the data stopped it,
2 on bad usage, a missing path or an I/O failure.";
