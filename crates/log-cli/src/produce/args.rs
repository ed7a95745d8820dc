//! `produce`'s command line: its flags, their constraints (clap's usage errors) and the options
//! they give.

use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use seglog_log::FileSystem as _;
use seglog_log::record::Compression;

use super::line::{LineFormat, unescape};
use super::producer::{Producer, TxnEnd};
use super::{ProduceOptions, produce};
use crate::common::{Outcome, Use};

#[derive(Debug, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
#[command(group(clap::ArgGroup::new("txn_end").args(["commit", "abort"])))]
pub(crate) struct ProduceArgs {
    /// The partition directory (topic-N) inside a log directory.
    dir: PathBuf,
    /// Read the records from this file instead of stdin.
    #[arg(long, value_name = "PATH")]
    file: Option<PathBuf>,
    /// Where one record ends in the input (kcat's -D): any bytes, with the escapes \n \r \t \0
    /// \\ and \xHH. With the default newline a \r before it is dropped too (CRLF input); a
    /// record's bytes are otherwise kept exactly, invalid UTF-8 and NUL included.
    #[arg(long, short = 'D', value_name = "DELIM", default_value = "\\n")]
    delimiter: String,
    /// Split each record at the first occurrence of this string into key and value; a record
    /// without it is all value, with a null key. Takes the same escapes as --delimiter.
    #[arg(long)]
    key_separator: Option<String>,
    /// A header added to every record, as KEY=VALUE (KEY alone: a null value); repeatable
    /// (kcat's -H). They come before a record's own --parse-headers headers.
    #[arg(long = "header", short = 'H', value_name = "KEY=VALUE")]
    headers: Vec<String>,
    /// Each record starts with its headers, as Kafka's console producer reads them with
    /// parse.headers=true: `h1:v1,h2:v2<TAB>key<SEP>value`. A record without the headers
    /// delimiter is an error (Kafka's message) unless --ignore-error.
    #[arg(long)]
    parse_headers: bool,
    /// With --parse-headers: what ends the headers (Kafka's headers.delimiter).
    #[arg(
        long,
        value_name = "DELIM",
        default_value = "\\t",
        requires = "parse_headers"
    )]
    headers_delimiter: String,
    /// With --parse-headers: what separates two headers (Kafka's headers.separator; taken
    /// literally, where Kafka's is a Java regular expression).
    #[arg(
        long,
        value_name = "SEP",
        default_value = ",",
        requires = "parse_headers"
    )]
    headers_separator: String,
    /// With --parse-headers: what separates a header's key from its value (Kafka's
    /// headers.key.separator).
    #[arg(
        long,
        value_name = "SEP",
        default_value = ":",
        requires = "parse_headers"
    )]
    headers_key_separator: String,
    /// A key, value or header value equal to this is null (a value: a tombstone); a header key
    /// equal to it is an error (Kafka's null.marker).
    #[arg(long, value_name = "MARKER")]
    null_marker: Option<String>,
    /// With --parse-headers: a record without the headers delimiter has no headers, and a pair
    /// without its key separator is a header with a null value (Kafka's ignore.error).
    #[arg(long, requires = "parse_headers")]
    ignore_error: bool,
    /// Every record's CreateTime, in milliseconds since the epoch (default: the time of the
    /// append). A topic with message.timestamp.type=LogAppendTime stamps its own, as Kafka's.
    #[arg(long, value_name = "MS", conflicts_with = "timestamp_field",
          value_parser = clap::value_parser!(i64).range(0..))]
    timestamp: Option<i64>,
    /// Each record starts with its CreateTime in milliseconds, ended by --timestamp-separator:
    /// `1700000000000<TAB>value` (before the headers of --parse-headers and the key).
    #[arg(long)]
    timestamp_field: bool,
    /// With --timestamp-field: what ends the timestamp.
    #[arg(
        long,
        value_name = "SEP",
        default_value = "\\t",
        requires = "timestamp_field"
    )]
    timestamp_separator: String,
    /// The codec of the batches written. A compressed batch whose records take more than
    /// 67108864 bytes (64 MiB) before compression is refused, as is any batch over the topic's
    /// max.message.bytes: no reader could read it back. Nothing of a refused batch is
    /// acknowledged.
    #[arg(long, default_value = "none", value_parser = ["none", "gzip", "snappy", "lz4", "zstd"])]
    compression: String,
    /// Records per batch.
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    batch_records: u32,
    /// Create the partition if it does not exist.
    #[arg(long)]
    create: bool,
    /// A topic config for --create, as key=value (repeatable), e.g. --config segment.bytes=1048576.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    configs: Vec<String>,
    /// The partition's topic id (22 characters of URL-safe base64, as kafka-topics.sh
    /// --describe prints it), kept in its partition.metadata as a broker keeps it: written if
    /// the partition has none, refused (nothing appended) if it has another.
    #[arg(long, value_name = "ID", value_parser = parse_topic_id)]
    topic_id: Option<seglog_log::TopicId>,
    /// Acknowledge each batch only after fsync.
    #[arg(long)]
    sync: bool,
    /// Print `acked <last offset>` on stdout after each batch is appended (and fsynced with --sync);
    /// with --transactional, then `marker <offset> COMMIT` (or ABORT) for the end marker.
    #[arg(long)]
    print_acks: bool,
    /// Write as this idempotent producer (with --producer-epoch): each batch carries the id,
    /// the epoch and a base sequence continuing the producer's last sequence in the partition's
    /// producer state (0 for a producer the partition does not know, or under a new epoch), so
    /// sequences continue across runs. The partition validates each batch as a Kafka leader
    /// does: an epoch older than the producer's is refused with Kafka's
    /// InvalidProducerEpochException message, and nothing of the batch is appended.
    #[arg(long, value_name = "ID", requires = "producer_epoch",
          value_parser = clap::value_parser!(i64).range(0..))]
    producer_id: Option<i64>,
    /// The producer epoch of --producer-id.
    #[arg(long, value_name = "EPOCH", requires = "producer_id",
          value_parser = clap::value_parser!(i16).range(0..))]
    producer_epoch: Option<i16>,
    /// Write the records as one transaction of --producer-id (transactional batches), then end
    /// it with --commit or --abort: the end marker a transaction coordinator writes. Kafka 4.4's
    /// default is transaction.version 2 (KIP-890), under which the coordinator bumps the
    /// producer's epoch on every commit or abort: the marker carries --producer-epoch plus one,
    /// and the producer's next run must use that epoch (an older one is fenced). A run with no
    /// records writes no marker, unless the producer has a transaction open in the partition
    /// (one a killed run left): then the marker ends that one. If an append fails halfway, the
    /// run's transaction is aborted.
    #[arg(long, requires_all = ["producer_id", "txn_end"])]
    transactional: bool,
    /// With --transactional: commit the transaction (read_committed readers see its records).
    #[arg(long, requires = "transactional")]
    commit: bool,
    /// With --transactional: abort the transaction (read_committed readers skip its records).
    #[arg(long, requires = "transactional")]
    abort: bool,
    /// With --transactional: the coordinator epoch the marker carries. A marker with an older
    /// coordinator epoch than the producer's last one is refused (Kafka's
    /// TransactionCoordinatorFencedException).
    #[arg(long, value_name = "N", default_value_t = 0, requires = "transactional",
          value_parser = clap::value_parser!(i32).range(0..))]
    coordinator_epoch: i32,
}

/// `--topic-id`, as Kafka's `Uuid.fromString` reads it; the zero id is no topic's.
fn parse_topic_id(value: &str) -> Result<seglog_log::TopicId, String> {
    match value.parse::<seglog_log::TopicId>() {
        Ok(id) if id.is_zero() => Err("the zero topic id is no topic's".to_owned()),
        Ok(id) => Ok(id),
        Err(e) => Err(e.to_string()),
    }
}

/// Runs `produce` with the process's stdin.
pub(crate) fn run(args: &ProduceArgs, out: &mut impl std::io::Write) -> Result<Outcome> {
    let create = args.create;
    crate::common::target(&args.dir, Use::Produce { create })?;
    let compression = match args.compression.as_str() {
        "gzip" => Compression::Gzip,
        "snappy" => Compression::Snappy,
        "lz4" => Compression::Lz4,
        "zstd" => Compression::Zstd,
        _ => Compression::None,
    };
    let create = if args.create {
        let pairs: Vec<(&str, &str)> = args
            .configs
            .iter()
            .map(|c| {
                c.split_once('=')
                    .ok_or_else(|| anyhow::anyhow!("--config {c}: expected key=value"))
            })
            .collect::<Result<_>>()?;
        Some(seglog_log::LogConfig::from_pairs(pairs).map_err(|e| anyhow::anyhow!("{e}"))?)
    } else {
        if !args.configs.is_empty() {
            bail!("--config applies only with --create");
        }
        None
    };
    let producer = match (args.producer_id, args.producer_epoch) {
        (Some(id), Some(epoch)) => {
            let txn = args.transactional.then_some(TxnEnd {
                commit: args.commit,
                coordinator_epoch: args.coordinator_epoch,
            });
            if txn.is_some() && epoch == i16::MAX {
                bail!(
                    "--transactional needs a --producer-epoch below {}: its marker carries the epoch plus one",
                    i16::MAX
                );
            }
            Some(Producer { id, epoch, txn })
        }
        _ => None,
    };
    let delimiter = unescape(&args.delimiter).context("--delimiter")?;
    if delimiter.is_empty() {
        bail!("--delimiter may not be empty");
    }
    let format = line_format(args)?;
    let headers = args
        .headers
        .iter()
        .map(|h| match h.split_once('=') {
            Some((key, value)) => (key.as_bytes().to_vec(), Some(value.as_bytes().to_vec())),
            None => (h.as_bytes().to_vec(), None),
        })
        .collect();
    let options = ProduceOptions {
        compression,
        batch_records: args.batch_records as usize,
        crlf: delimiter == b"\n",
        delimiter,
        format,
        timestamp: args.timestamp,
        headers,
        create,
        topic_id: args.topic_id,
        sync: args.sync,
        print_acks: args.print_acks,
        producer,
    };
    match &args.file {
        Some(path) => {
            let file = seglog_log::RealFs
                .open(path, seglog_log::OpenMode::ReadOnly)
                .with_context(|| format!("--file {}: cannot open", path.display()))?;
            let input = std::io::BufReader::new(super::input::FileInput::new(file));
            produce(&args.dir, &options, input, out)
        }
        None => produce(
            &args.dir,
            &options,
            std::io::BufReader::new(std::io::stdin()),
            out,
        ),
    }
}

/// The record format the flags give, checked as Kafka's `LineMessageReader.configure` checks.
fn line_format(args: &ProduceArgs) -> Result<LineFormat> {
    let format = LineFormat {
        timestamp_separator: if args.timestamp_field {
            Some(unescape(&args.timestamp_separator).context("--timestamp-separator")?)
                .filter(|s| !s.is_empty())
        } else {
            None
        },
        parse_headers: args.parse_headers,
        headers_delimiter: unescape(&args.headers_delimiter).context("--headers-delimiter")?,
        headers_separator: unescape(&args.headers_separator).context("--headers-separator")?,
        headers_key_separator: unescape(&args.headers_key_separator)
            .context("--headers-key-separator")?,
        key_separator: args
            .key_separator
            .as_deref()
            .map(unescape)
            .transpose()
            .context("--key-separator")?,
        null_marker: args.null_marker.as_ref().map(|m| m.as_bytes().to_vec()),
        ignore_error: args.ignore_error,
    };
    if args.timestamp_field && format.timestamp_separator.is_none() {
        bail!("--timestamp-separator may not be empty");
    }
    format.check()?;
    Ok(format)
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seq 1 1000 | seglog produce logs/numbers-0 --create
  printf 'user-1:clicked\\n' | seglog produce logs/events-0 --key-separator : --sync --print-acks
  cat data.txt | seglog produce logs/t-0 --create --config segment.bytes=1048576 --compression zstd
  seq 1 10 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 0   # idempotent
  seq 11 20 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 0  # sequences 10..=19
  seq 21 30 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 0 --transactional --abort
  seq 31 40 | seglog produce logs/t-0 --producer-id 7 --producer-epoch 1 --transactional --commit
  printf 'trace:ab12,src:web\\tuser-1\\tclicked\\n' | seglog produce logs/t-0 --parse-headers --key-separator '\\t'
  seq 1 5 | seglog produce logs/t-0 --header app=billing --header env=prod
  printf '1700000000000\\tfirst\\n' | seglog produce logs/t-0 --timestamp-field
  seglog produce logs/blobs-0 --create --file blobs.bin --delimiter '\\0'   # NUL-separated binary records
  seglog produce logs/t-0 --file tombstones.txt --key-separator : --null-marker NULL   # k:NULL deletes k

A record is read as Kafka's console producer reads a line: [timestamp SEP][headers DELIM][key
SEP]value, each part only with its flag. --parse-headers takes Kafka's parse.headers=true syntax
and defaults (headers.delimiter TAB, headers.separator ',', headers.key.separator ':') and its error
messages; a bad record ends the run after the records before it were appended.

A transaction's records are visible to `consume --isolation-level read_committed` once its COMMIT
marker is written; while it is open (a killed run), read_committed readers stop at its first
offset, which `offsets --latest --isolation-level read_committed` gives.";
