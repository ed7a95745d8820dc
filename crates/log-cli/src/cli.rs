//! Argument parsing (clap derive) and dispatch. Exit codes: 0 success, 1 a check found problems,
//! 2 bad usage or a failure; failures print one line saying what and where.

use std::io::Write;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use std::path::PathBuf;

use crate::common::{Outcome, Use};
use crate::consume::{ConsumeOptions, OffsetQuery, Start};
use crate::dump::{self, DumpOptions};
use crate::produce::ProduceArgs;
use seglog_log::IsolationLevel;

/// seglog: inspect, verify and repair Kafka-format log segments and directories.
#[derive(Debug, Parser)]
#[command(name = "seglog", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the contents of .log, .index and .timeindex files exactly as kafka-dump-log.sh does.
    #[command(after_help = DUMP_EXAMPLES)]
    Dump(DumpOptions),
    /// Verify a partition directory or a whole log directory; change nothing.
    #[command(after_help = CHECK_EXAMPLES)]
    Check {
        /// A partition directory (topic-N) or a log directory.
        dir: PathBuf,
        /// Print JSON Lines: {"type":"problem" or "note","severity","file","position","kind","count","detail"},
        /// then a summary.
        #[arg(long)]
        json: bool,
    },
    /// Recover now, as a broker's start-up would: plan, then cut damaged tails, set aside what
    /// follows them, rebuild indexes, finish interrupted swaps.
    #[command(after_help = RECOVER_EXAMPLES)]
    Recover(RecoverArgs),
    /// Append records read from stdin, one per line.
    #[command(after_help = PRODUCE_EXAMPLES)]
    Produce(ProduceArgs),
    /// Print records from an offset or a time; read-only and lock-free, so it can follow a writer.
    #[command(after_help = CONSUME_EXAMPLES)]
    Consume(ConsumeArgs),
    /// Look an offset up: earliest, latest, by timestamp, or the record with the largest timestamp.
    #[command(after_help = OFFSETS_EXAMPLES)]
    Offsets(OffsetsArgs),
    /// Per-segment figures, totals and index anomalies of a partition directory.
    #[command(after_help = STATS_EXAMPLES)]
    Stats {
        /// A partition directory (topic-N).
        dir: PathBuf,
        /// Print JSON Lines.
        #[arg(long)]
        json: bool,
    },
    /// Compact a partition now (keep the latest record per key), whatever its dirty ratio.
    #[command(after_help = COMPACT_EXAMPLES)]
    Compact {
        /// The partition directory (topic-N).
        dir: PathBuf,
        /// The key map's memory budget in bytes (log.cleaner.dedupe.buffer.size).
        #[arg(long, default_value_t = 128 * 1024 * 1024)]
        dedupe_buffer_bytes: usize,
        /// Print the summary as one JSON object.
        #[arg(long)]
        json: bool,
        /// Compact even a topic whose cleanup.policy has no `compact` (compaction keeps only the
        /// latest record of each key).
        #[arg(long)]
        force: bool,
    },
    /// Build a sample log of a million records and show lookups, stats and a dump excerpt.
    #[command(after_help = DEMO_EXAMPLES)]
    Demo {
        /// Where to build it (replaced if a previous demo made it).
        #[arg(default_value = "seglog-demo")]
        dir: PathBuf,
    },
}

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
struct RecoverArgs {
    /// A partition directory (topic-N) or a log directory.
    dir: PathBuf,
    /// Print one JSON object per partition.
    #[arg(long)]
    json: bool,
    /// Print the plan (per partition: bytes cut, segments and records dropped, files removed,
    /// indexes rebuilt) and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Delete what recovery drops instead of moving it to the partition's seglog-quarantine/.
    #[arg(long)]
    discard: bool,
    /// Scan every segment, whatever the clean-shutdown marker and the recovery points say.
    #[arg(long)]
    full: bool,
    /// A topic config for partitions without a seglog.properties, as key=value (repeatable),
    /// e.g. --config index.interval.bytes=4096 for a broker's directory.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    configs: Vec<String>,
}

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
struct ConsumeArgs {
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
    #[arg(long, value_name = "LEVEL", default_value = "read_uncommitted", value_parser = isolation_level)]
    isolation_level: IsolationLevel,
}

/// Parses Kafka's `isolation.level` names.
fn isolation_level(name: &str) -> Result<IsolationLevel, String> {
    IsolationLevel::from_name(name)
        .ok_or_else(|| format!("expected read_uncommitted or read_committed, not {name:?}"))
}

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
#[command(group(clap::ArgGroup::new("query").required(true).args(["timestamp", "earliest", "latest", "max_timestamp"])))]
struct OffsetsArgs {
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
    #[arg(long, value_name = "LEVEL", default_value = "read_uncommitted", value_parser = isolation_level)]
    isolation_level: IsolationLevel,
}

const CHECK_EXAMPLES: &str = "\
Examples:
  seglog check /var/lib/kafka/orders-0
  seglog check --json /var/lib/kafka

Each problem is one line naming the file and byte. States Kafka itself accepts at start-up (the
.deleted files of a broker stopped before file.delete.delay.ms, an orphan index, a -delete
directory, ...) are listed as notes.

Exit status: 0 when no problem was found (notes do not count), 1 when problems were found, 2 on
bad usage or an I/O failure.";

const RECOVER_EXAMPLES: &str = "\
Examples:
  seglog recover --dry-run /var/lib/kafka/orders-0
  seglog recover /var/lib/kafka/orders-0
  seglog recover /var/lib/kafka --config index.interval.bytes=4096   # every partition
  seglog recover --full --discard logs/events-0

What is kept is Kafka's rule: the valid prefix of the first damaged segment from the recovery
point on; the segments after it are dropped. What is dropped (a cut tail, later segments, a
damaged .swap), and any stray entry named like a segment file that is not one (123.log, a
directory 00000000000000000000.log), is moved to <partition>/seglog-quarantine/<n>/ (a Kafka
broker ignores it), with a plan.txt saying what it is and how to put it back; --discard deletes
it instead. After a clean
shutdown nothing is rescanned but a damaged active segment; after an unclean one, the segments
from the recovery point on; a valid index is left alone. A killed recover, run again, ends as one
uninterrupted run would. Afterwards `seglog check` passes.

Exit status: 0 when the directory is healthy afterwards (nothing was needed, or it was
repaired; the summary lists every change); with --dry-run, 0 when nothing needs doing and 1 when
recovery would change something (listed); 2 on bad usage or a failure.";

const PRODUCE_EXAMPLES: &str = "\
Examples:
  seq 1 1000 | seglog produce logs/numbers-0 --create
  printf 'user-1:clicked\\n' | seglog produce logs/events-0 --key-separator : --sync --print-acks
  cat data.txt | seglog produce logs/t-0 --create --config segment.bytes=1048576 --compression zstd
  seq 1 10 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 0   # idempotent
  seq 11 20 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 0  # sequences 10..=19
  seq 21 30 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 0 --transactional --abort
  seq 31 40 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 1 --transactional --commit

A transaction's records are visible to `consume --isolation-level read_committed` once its COMMIT
marker is written; while it is open (a killed run), read_committed readers stop at its first
offset, which `offsets --latest --isolation-level read_committed` gives.";

const CONSUME_EXAMPLES: &str = "\
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

const OFFSETS_EXAMPLES: &str = "\
Examples:
  seglog offsets logs/events-0 --latest
  seglog offsets logs/events-0 --timestamp 1700000000000 --json
  seglog offsets logs/events-0 --latest --isolation-level read_committed   # the last stable offset

Exit status: 0 when the offset was looked up (`none` when no record matches), 1 when damage in
the data stopped the lookup (reported on stderr, naming the file and byte), 2 on bad usage, a
missing path or an I/O failure.";

const STATS_EXAMPLES: &str = "\
Examples:
  seglog stats logs/events-0
  seglog stats logs/events-0 --json

Anomalies (large or untrimmed indexes, a missing index) are listed and do not change the exit
status; a batch that cannot be framed is listed as damage, naming the file and byte.

Exit status: 0 when every segment was read to its end, 1 when damage was found, 2 on bad usage,
a missing path or an I/O failure.";

const COMPACT_EXAMPLES: &str = "\
Examples:
  seglog compact logs/users-0
  seglog compact logs/users-0 --dedupe-buffer-bytes 1048576 --json

Only a topic whose cleanup.policy has compact (its seglog.properties, else Kafka's default,
delete) is compacted, unless --force. The partition keeps its offsets; tombstones stay until delete.retention.ms after the first
cleaning that saw them. The active segment is never cleaned.";

const DEMO_EXAMPLES: &str = "\
Examples:
  seglog demo
  seglog demo /tmp/my-demo";

const DUMP_EXAMPLES: &str = "\
Examples:
  seglog dump --files 00000000000000000000.log
  seglog dump --deep-iteration --print-data-log --files 00000000000000000000.log
  seglog dump --verify-index-only --files 00000000000000000000.index,00000000000000000000.timeindex

A .log's batches are judged as consume and recover judge them: a batch whose offsets go
backwards, or reach the next segment's base offset (the next .log by name in the same
directory), is reported on stderr naming the file and byte, and its records are not printed.

Exit status: 0 when every file was dumped (index mismatches are reported on stderr, as Kafka
does), 1 when a file could not be read to its end because its bytes are corrupt or its offsets
impossible, 2 on bad usage, a missing path or an I/O failure.";

/// Parses the process's command line and runs the command on stdout and stderr: the binary's
/// `main`. Bad usage prints clap's message and exits with status 2.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    crate::term::enable();
    let mut out = crate::term::stdout();
    let mut err = crate::term::stderr();
    let code = execute(cli, &mut out, &mut err);
    let _ = err.flush();
    ExitCode::from(code)
}

/// Runs the command line `args` (the first item is the program name, as in `std::env::args_os`)
/// in-process, writing to `out` and `err` instead of stdout and stderr, and returns the exit status
/// the binary would have: 0 success, 1 problems found, 2 bad usage or a failure. Commands that read
/// stdin (`produce`) still read the process's stdin.
pub fn run_with<I, T>(args: I, out: &mut impl Write, err: &mut impl Write) -> u8
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    match Cli::try_parse_from(args) {
        Ok(cli) => execute(cli, out, err),
        Err(e) => {
            let _ = write!(err, "{}", e.render());
            u8::try_from(e.exit_code()).unwrap_or(2)
        }
    }
}

fn execute(cli: Cli, out: &mut impl Write, err: &mut impl Write) -> u8 {
    // The read-only commands end with status 1 on damage found in the data, as check does.
    let reads = matches!(
        cli.command,
        Command::Consume(_) | Command::Offsets(_) | Command::Stats { .. }
    );
    let result = match cli.command {
        Command::Dump(options) => dump::run(&options, out, err),
        Command::Check { dir, json } => crate::check::check(&dir, json, out),
        Command::Recover(args) => {
            let options = crate::recover::RecoverOptions {
                json: args.json,
                dry_run: args.dry_run,
                discard: args.discard,
                full: args.full,
                configs: args.configs,
            };
            crate::recover::recover(&args.dir, &options, out)
        }
        Command::Produce(args) => crate::produce::run(&args, out),
        Command::Consume(args) => {
            let start = match (args.from_offset, args.from_timestamp) {
                (Some(o), _) => Start::Offset(o),
                (_, Some(t)) => Start::Timestamp(t),
                _ => Start::Beginning,
            };
            let options = ConsumeOptions {
                start,
                max_records: args.max_records,
                follow: args.follow,
                idle_timeout: args.timeout_ms.map(std::time::Duration::from_millis),
                json: args.json,
                print_key: args.print_key,
                isolation: args.isolation_level,
            };
            crate::consume::consume(&args.dir, &options, out)
        }
        Command::Offsets(args) => {
            let query = match (args.timestamp, args.earliest, args.latest) {
                (Some(t), _, _) => OffsetQuery::Timestamp(t),
                (_, true, _) => OffsetQuery::Earliest,
                (_, _, true) => OffsetQuery::Latest,
                _ => OffsetQuery::MaxTimestamp,
            };
            crate::consume::offsets(&args.dir, query, args.isolation_level, args.json, out)
        }
        Command::Stats { dir, json } => crate::stats::stats(&dir, json, out),
        Command::Demo { dir } => crate::demo::demo(&dir, out),
        Command::Compact {
            dir,
            dedupe_buffer_bytes,
            json,
            force,
        } => compact(&dir, dedupe_buffer_bytes, json, force, out),
    };
    let flushed = out.flush();
    match (result, flushed) {
        (Ok(outcome), Ok(())) => outcome.exit_code(),
        (Err(e), _) => {
            // A closed pipe (`seglog dump ... | head`) is not a failure of ours.
            let broken_pipe = e
                .chain()
                .filter_map(|c| c.downcast_ref::<std::io::Error>())
                .any(|io| io.kind() == std::io::ErrorKind::BrokenPipe);
            if broken_pipe {
                return 0;
            }
            crate::term::clear();
            let _ = writeln!(err, "seglog: {}", crate::common::message(&e));
            if reads && crate::common::is_damage(&e) {
                Outcome::Problems.exit_code()
            } else {
                Outcome::Failed.exit_code()
            }
        }
        (Ok(_), Err(e)) => {
            // A closed pipe (`seglog dump ... | head`) is not a failure of ours.
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                return 0;
            }
            let _ = writeln!(err, "seglog: writing to stdout: {e}");
            2
        }
    }
}

fn compact(
    dir: &std::path::Path,
    dedupe_buffer_bytes: usize,
    json: bool,
    force: bool,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Outcome> {
    crate::common::target(dir, Use::Compact)?;
    // Read before the log directory is opened (which takes its lock), so a refusal writes nothing.
    let (config, source) = crate::common::partition_config(dir)?;
    if !config.cleanup_policy.compact && !force {
        anyhow::bail!(
            "{}: refusing to compact it: its cleanup.policy is delete ({source}), and compaction keeps only the latest record of each key; pass --force to compact it anyway",
            dir.display()
        );
    }
    let opened = crate::common::open_partition(dir, None)?;
    opened
        .dir
        .set_cleaner_settings(seglog_log::CleanerSettings {
            dedupe_buffer_bytes,
            io_max_bytes_per_second: None,
        });
    let bar = crate::common::progress(0, "compacting");
    let tp = opened.log.topic_partition().clone();
    let report = opened
        .dir
        .compact(&tp)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .ok_or_else(|| anyhow::anyhow!("{}: no such partition", dir.display()))?;
    bar.finish_and_clear();
    if json {
        crate::common::json_line(
            out,
            &serde_json::json!({
                "type": "compacted",
                "partition": tp.to_string(),
                "first_dirty_offset": report.first_dirty_offset,
                "end_offset": report.end_offset,
                "keys": report.keys,
                "segments_replaced": report.segments_replaced,
                "records_read": report.records_read,
                "records_kept": report.records_kept,
                "tombstones_removed": report.tombstones_removed,
                "bytes_read": report.bytes_read,
                "bytes_written": report.bytes_written,
            }),
        )?;
    } else {
        writeln!(
            out,
            "{tp}: cleaned offsets {}..{} ({} keys): {} segments replaced, kept {} of {} records, removed {} tombstones, {} -> {} bytes",
            report.first_dirty_offset,
            report.end_offset,
            report.keys,
            report.segments_replaced,
            report.records_kept,
            report.records_read,
            report.tombstones_removed,
            report.bytes_read,
            report.bytes_written
        )?;
    }
    drop(opened.log);
    opened.dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Outcome::Clean)
}
