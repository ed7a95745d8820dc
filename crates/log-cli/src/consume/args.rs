//! `consume`'s command line.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Result;
use seglog_log::IsolationLevel;

use super::{ConsumeOptions, Start, consume};
use crate::common::Outcome;

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
pub(crate) struct ConsumeArgs {
    /// The partition directory (topic-N).
    dir: PathBuf,
    /// Start at this offset.
    #[arg(long, conflicts_with_all = ["from_timestamp", "from_beginning"])]
    from_offset: Option<i64>,
    /// Start at the first record whose timestamp is at least this (milliseconds).
    #[arg(long, conflicts_with = "from_beginning")]
    from_timestamp: Option<i64>,
    /// Start at the log start offset (the default).
    #[arg(long)]
    from_beginning: bool,
    /// Stop after this many records.
    #[arg(long)]
    max_records: Option<u64>,
    /// Wait for new records instead of stopping at the end (until Ctrl-C, or --timeout-ms).
    #[arg(long)]
    follow: bool,
    /// With --follow: exit (status 0) once no new record has come for this many milliseconds,
    /// as kafka-console-consumer's --timeout-ms does.
    #[arg(long, requires = "follow", value_name = "MS")]
    timeout_ms: Option<u64>,
    /// Print JSON Lines: {"offset","timestamp","timestamp_type","key","value","headers"}, bytes in base64.
    #[arg(long)]
    json: bool,
    /// Print the key and a tab before each value.
    #[arg(long)]
    print_key: bool,
    /// read_uncommitted (the default, as kafka-console-consumer's) prints every data record;
    /// read_committed stops at the last stable offset and skips aborted transactions. Neither
    /// prints a transaction marker or any other control record.
    #[arg(long, value_name = "LEVEL", default_value = "read_uncommitted", value_parser = crate::isolation::parse)]
    isolation_level: IsolationLevel,
}

impl ConsumeArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        let start = match (self.from_offset, self.from_timestamp) {
            (Some(o), _) => Start::Offset(o),
            (_, Some(t)) => Start::Timestamp(t),
            _ => Start::Beginning,
        };
        let options = ConsumeOptions {
            start,
            max_records: self.max_records,
            follow: self.follow,
            idle_timeout: self.timeout_ms.map(std::time::Duration::from_millis),
            json: self.json,
            print_key: self.print_key,
            isolation: self.isolation_level,
        };
        consume(&self.dir, &options, out)
    }
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog consume logs/events-0 --from-beginning
  seglog consume logs/events-0 --from-offset 100 --max-records 10 --print-key
  seglog consume logs/events-0 --from-timestamp 1700000000000 --json
  seglog consume logs/events-0 --follow
  seglog consume logs/events-0 --follow --timeout-ms 5000   # exit after 5 s without a record
  seglog consume logs/events-0 --isolation-level read_committed

As a Kafka consumer, consume never prints a control record (a transaction marker); with
--isolation-level read_committed it prints nothing of an aborted transaction and stops at the
last stable offset, computed from the producer snapshot and the batches after it, and the
.txnindex files (the high watermark of a directory read offline is its log end offset).

Records are printed up to the first damage (a corrupt batch, or a batch whose offsets its
neighbours or the next segment's base offset make impossible), which is reported on stderr
naming the file and byte.

Exit status: 0 when every record asked for was printed, 1 when damage in the data stopped it,
2 on bad usage, a missing path or an I/O failure.";
