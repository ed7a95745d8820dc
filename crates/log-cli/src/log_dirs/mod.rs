//! `seglog log-dirs`: what `kafka-log-dirs.sh --describe` reports for one broker's log
//! directories (per partition its size and offset lag, future replicas marked), read offline,
//! as Kafka's JSON (`--json`) or as a table with sizes and times readable.

mod java_order;
mod table;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use seglog_log::inspect::{PartitionView, partition_dirs};
use seglog_log::{DirKind, File as _, FileSystem as _, OpenMode, RealFs, TopicPartition};

use crate::common::{Outcome, message, resolve};
use java_order::{LogDirJson, PartitionJson};

/// The class name Kafka's JSON gives a log directory it cannot read (an offline directory).
const STORAGE_ERROR: &str = "org.apache.kafka.common.errors.KafkaStorageException";

/// The KRaft metadata log's topic: its partition directory sits in a log directory, but the
/// broker's `describeLogDirs` does not list it (only `LogManager`'s logs).
const METADATA_TOPIC: &str = "__cluster_metadata";

/// Kafka's `DescribeLogDirsResponse.INVALID_OFFSET_LAG`: the lag is not known.
const INVALID_OFFSET_LAG: i64 = -1;

/// One partition directory Kafka would describe (a live log or a future one).
struct Replica {
    tp: TopicPartition,
    dir: PathBuf,
    future: bool,
    /// Bytes of its segments' `.log` files: Kafka's `UnifiedLog.size` (`LogSegments.sizeInBytes`,
    /// the sum of each segment's `FileRecords.sizeInBytes`); indexes and side files do not count.
    size: u64,
    segments: usize,
    log_start: i64,
    /// The log end offset, or why it could not be read.
    log_end: Result<i64, String>,
    /// The newest modification time of its segment files, in epoch milliseconds.
    modified: Option<i64>,
    offset_lag: i64,
}

/// One log directory as described.
struct Described {
    path: PathBuf,
    /// Why it could not be read: Kafka reports the directory with an error and no partitions.
    error: Option<String>,
    replicas: Vec<Replica>,
    /// Partition directories Kafka does not describe (`-delete`, `-stray`), with why.
    skipped: Vec<(PathBuf, &'static str)>,
}

/// The flags of `seglog log-dirs`.
#[derive(Debug, clap::Args)]
pub(crate) struct LogDirsArgs {
    /// The broker's log directories (its `log.dirs`): several paths, or one comma-separated list.
    #[arg(required = true, value_delimiter = ',', value_name = "DIR")]
    dirs: Vec<PathBuf>,
    /// Only these topics (repeatable, or comma-separated, as `--topic-list`).
    #[arg(
        long,
        alias = "topic-list",
        value_delimiter = ',',
        value_name = "TOPIC"
    )]
    topic: Vec<String>,
    /// Print `kafka-log-dirs.sh --describe`'s JSON line (raw numbers), without its two
    /// "Querying ..." and "Received ..." lines.
    #[arg(long)]
    json: bool,
}

impl LogDirsArgs {
    pub(crate) fn run(&self, out: &mut impl Write, err: &mut impl Write) -> Result<Outcome> {
        let mut described: Vec<Described> = Vec::new();
        for dir in &self.dirs {
            described.push(describe(dir, &self.topic)?);
        }
        let (broker, broker_source) = broker_id(&self.dirs)?;
        set_offset_lags(&mut described);
        let mut outcome = Outcome::Clean;
        for d in &described {
            if let Some(e) = &d.error {
                writeln!(err, "seglog: {}: {e}", d.path.display())?;
                outcome = outcome.max(Outcome::Failed);
            }
            for r in &d.replicas {
                if let Err(e) = &r.log_end {
                    writeln!(err, "seglog: {}: {e}", r.dir.display())?;
                    outcome = outcome.max(Outcome::Problems);
                }
            }
        }
        if self.json {
            let dirs = described
                .iter()
                .map(|d| LogDirJson {
                    log_dir: d.path.display().to_string(),
                    error: d.error.as_ref().map(|_| STORAGE_ERROR),
                    partitions: d
                        .replicas
                        .iter()
                        .map(|r| PartitionJson {
                            topic: &r.tp.topic,
                            partition: r.tp.partition,
                            size: r.size,
                            offset_lag: r.offset_lag,
                            is_future: r.future,
                        })
                        .collect(),
                })
                .collect();
            writeln!(out, "{}", java_order::render(broker, dirs))?;
        } else {
            table::write(out, broker, &broker_source, &described)?;
        }
        Ok(outcome)
    }
}

/// The broker id from the directories' `meta.properties` (`node.id`, else `broker.id`, as
/// Kafka's `MetaProperties` reads them), and where it came from; `-1` when none has one.
/// Directories that disagree are refused, as Kafka refuses to start on them.
fn broker_id(dirs: &[PathBuf]) -> Result<(i32, String)> {
    let mut found: Option<(i32, PathBuf)> = None;
    for dir in dirs {
        let path = dir.join("meta.properties");
        let Some(props) = read_properties(&path)? else {
            continue;
        };
        let value = props
            .iter()
            .find(|(k, _)| k == "node.id")
            .or_else(|| props.iter().find(|(k, _)| k == "broker.id"));
        let Some((key, value)) = value else { continue };
        let id: i32 = value
            .trim()
            .parse()
            .with_context(|| format!("{}: {key}={value} is not a broker id", path.display()))?;
        match &found {
            Some((other, at)) if *other != id => bail!(
                "{} says broker {id} but {} says {other}: these are not one broker's log directories",
                path.display(),
                at.display()
            ),
            Some(_) => {}
            None => found = Some((id, path)),
        }
    }
    Ok(match found {
        Some((id, path)) => (id, format!("from {}", path.display())),
        None => (-1, "unknown: no meta.properties names one".to_owned()),
    })
}

/// The key-value pairs of a properties file as Java's `Properties.load(InputStream)` reads it
/// (ISO-8859-1, escapes and continuations), or `None` if there is no such file.
fn read_properties(path: &Path) -> Result<Option<Vec<(String, String)>>> {
    let file = match RealFs.open(path, OpenMode::ReadOnly) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot open", path.display())),
    };
    let len = file
        .len()
        .with_context(|| format!("{}: cannot stat", path.display()))?;
    let mut buf = vec![0; usize::try_from(len.min(1 << 20)).unwrap_or(0)];
    file.read_exact_at(&mut buf, 0)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    let mut pairs = Vec::new();
    java_properties::PropertiesIter::new(buf.as_slice())
        .read_into(|k, v| pairs.push((k, v)))
        .with_context(|| format!("{}: not a properties file", path.display()))?;
    Ok(Some(pairs))
}

/// Lists one log directory and reads each partition Kafka would describe.
fn describe(dir: &Path, topics: &[String]) -> Result<Described> {
    let path = resolve(dir)?;
    if TopicPartition::parse_dir(&path).is_ok() {
        bail!(
            "{}: a partition directory, not a log directory: name the directory above it",
            dir.display()
        );
    }
    if !RealFs.exists(&path) {
        bail!("{}: no such directory", dir.display());
    }
    if !RealFs.is_dir(&path) {
        bail!("{}: a file, not a log directory", dir.display());
    }
    let mut described = Described {
        path: path.clone(),
        error: None,
        replicas: Vec::new(),
        skipped: Vec::new(),
    };
    // A directory that cannot be listed is what Kafka reports as an offline log directory; an
    // empty one is a log directory without partitions yet.
    let partitions = match partition_dirs(&RealFs, &path) {
        Ok(partitions) => partitions,
        Err(e) => {
            described.error = Some(message(&crate::common::lib(e)));
            return Ok(described);
        }
    };
    for part in &partitions {
        let Ok((tp, kind)) = TopicPartition::parse_dir(part) else {
            continue;
        };
        if !topics.is_empty() && !topics.contains(&tp.topic) {
            continue;
        }
        if tp.topic == METADATA_TOPIC {
            described.skipped.push((
                part.clone(),
                "the KRaft metadata log, not one of LogManager's logs",
            ));
            continue;
        }
        let future = match kind {
            DirKind::Live => false,
            DirKind::Future => true,
            DirKind::Delete => {
                described
                    .skipped
                    .push((part.clone(), "marked for deletion (-delete)"));
                continue;
            }
            DirKind::Stray => {
                described
                    .skipped
                    .push((part.clone(), "a stray partition (-stray)"));
                continue;
            }
        };
        described.replicas.push(replica(part, tp, future)?);
    }
    described.replicas.sort_by(|a, b| {
        (&a.tp.topic, a.tp.partition, a.future).cmp(&(&b.tp.topic, b.tp.partition, b.future))
    });
    Ok(described)
}

fn replica(dir: &Path, tp: TopicPartition, future: bool) -> Result<Replica> {
    let partition = PartitionView::open(RealFs, dir).map_err(crate::common::lib)?;
    let segments = partition.segments();
    let mut size = 0;
    let mut modified: Option<i64> = None;
    for segment in &segments {
        let file = partition.open_log(segment).map_err(crate::common::lib)?;
        size += file
            .len()
            .with_context(|| format!("{}: cannot stat", segment.log.display()))?;
        if let Ok(ms) = RealFs.modified_ms(&segment.log) {
            modified = Some(modified.map_or(ms, |m| m.max(ms)));
        }
    }
    let log_end = partition
        .log_end_offset()
        .map_err(|e| message(&crate::common::lib(e)));
    Ok(Replica {
        tp,
        dir: dir.to_path_buf(),
        future,
        size,
        segments: segments.len(),
        log_start: partition.log_start_offset(),
        log_end,
        modified,
        offset_lag: 0,
    })
}

/// Kafka's `ReplicaManager.getLogEndOffsetLag`: a current log's lag is its high watermark less
/// its log end offset, floored at 0; a high watermark is never past the log end (the one in
/// `replication-offset-checkpoint` is clamped to it when a log opens), so 0; a future log's lag is the current log's
/// end offset less its own, or -1 when the current log is not in the directories given (Kafka's
/// answer for a replica it does not have) or either end offset cannot be read.
fn set_offset_lags(described: &mut [Described]) {
    let current: Vec<(TopicPartition, Option<i64>)> = described
        .iter()
        .flat_map(|d| &d.replicas)
        .filter(|r| !r.future)
        .map(|r| (r.tp.clone(), r.log_end.as_ref().ok().copied()))
        .collect();
    for r in described.iter_mut().flat_map(|d| &mut d.replicas) {
        if r.future {
            let leo = current.iter().find(|(tp, _)| *tp == r.tp).and_then(|c| c.1);
            r.offset_lag = match (leo, &r.log_end) {
                (Some(current), Ok(own)) => current - own,
                _ => INVALID_OFFSET_LAG,
            };
        }
    }
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog log-dirs /var/lib/kafka/data
  seglog log-dirs /data/1,/data/2 --topic orders
  seglog log-dirs /var/lib/kafka/data --json | jq '.brokers[0].logDirs[0].partitions'

--json prints the JSON line of kafka-log-dirs.sh --describe (Kafka 4.4), keys and entries in the
order Kafka prints them, sizes in bytes: each partition's size is the bytes of its segments' .log
files, as Kafka counts it; offsetLag is 0 for a current log, and for a future replica (-future)
the current log's end offset less its own (-1 when the current log is not in the directories
given). Directories marked for deletion (-delete), stray ones (-stray) and the KRaft metadata log
(__cluster_metadata-0) are left out, as Kafka leaves them out; the table lists them. The broker id is meta.properties' node.id (or broker.id),
-1 when there is none.

Exit status: 0 when every partition was read, 1 when a partition's log end could not be read
(damage), 2 on bad usage, a missing directory or an unreadable one.";
