//! The seglog side of `cargo xtask kafka-interop`: writes Kafka-format partitions with the library and
//! prints, as JSON Lines, exactly the records it wrote, so Kafka's own tools can be compared with them.
//!
//! ```text
//! seglog-kafka-interop-writer build <log-dir> <expected.jsonl>
//!     Two partitions in a fresh log directory: `interop-0` (every codec, rolled segments, out-of-order
//!     timestamps, headers, null keys and values) and `interop_compacted-0` (keyed records and
//!     tombstones, then compacted by the log cleaner). The expected file lists the records a reader
//!     must find, the compacted partition's worked out from the writes, not read back.
//! seglog-kafka-interop-writer append <partition-dir> <records> <expected.jsonl> [<config>=<value>...]
//!     Appends records to a partition directory a stopped Kafka broker created, in the broker's
//!     current leader epoch, then writes the checkpoints the broker reads on restart
//!     (recovery point, high watermark, leader epochs); see docs/kafka-compat.md. Kafka keeps
//!     topic configs in its metadata log, so the ones that matter to appending (segment.bytes)
//!     are given here.
//! ```
//!
//! Each expected line: `{"partition","offset","timestamp","key","value","headers":[{"key","value"}],
//! "codec"}`, bytes in base64 (null for null), header keys as text.

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use base64::Engine as _;
use seglog_log::RealFs;
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, Header, NewRecord};
use seglog_log::{
    CLEAN_SHUTDOWN_FILE, CleanOptions, EpochEntry, LOG_START_OFFSET_CHECKPOINT,
    LeaderEpochCheckpoint, LoadOptions, LogConfig, LogDir, LogDirOptions, OffsetCheckpoint,
    PartitionLog, RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT, SystemClock, Time,
    TopicPartition,
};

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

/// The codecs in turn.
fn codec(n: usize) -> Compression {
    CODECS
        .get(n % CODECS.len())
        .copied()
        .unwrap_or(Compression::None)
}

/// One record as written.
#[derive(Debug, Clone)]
struct Written {
    offset: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
    codec: Compression,
}

/// A small deterministic generator (xorshift64*), so runs are reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Printable ASCII text of `len` bytes (spaces included, never a newline), so Kafka's dump prints it
/// as is and its length in characters is its length in bytes.
fn text(rng: &mut Rng, prefix: &str, len: usize) -> Vec<u8> {
    let mut v = prefix.as_bytes().to_vec();
    while v.len() < len {
        let c = b' ' + u8::try_from(rng.below(95)).unwrap_or(0);
        v.push(c);
    }
    v
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["build", dir, expected] => build(Path::new(dir), Path::new(expected)),
        ["append", dir, count, expected, configs @ ..] => append(
            Path::new(dir),
            count.parse().context("<records> must be a number")?,
            Path::new(expected),
            configs,
        ),
        _ => bail!(
            "usage: seglog-kafka-interop-writer build <log-dir> <expected.jsonl>\n       seglog-kafka-interop-writer append <partition-dir> <records> <expected.jsonl> [<config>=<value>...]"
        ),
    }
}

fn b64(bytes: Option<&[u8]>) -> serde_json::Value {
    bytes.map_or(serde_json::Value::Null, |b| {
        serde_json::Value::String(base64::engine::general_purpose::STANDARD.encode(b))
    })
}

fn write_expected(
    out: &mut impl std::io::Write,
    tp: &TopicPartition,
    records: &[Written],
) -> Result<()> {
    for r in records {
        let headers: Vec<serde_json::Value> = r
            .headers
            .iter()
            .map(|(k, v)| serde_json::json!({"key": k, "value": b64(v.as_deref())}))
            .collect();
        let line = serde_json::json!({
            "partition": tp.to_string(),
            "offset": r.offset,
            "timestamp": r.timestamp,
            "key": b64(r.key.as_deref()),
            "value": b64(r.value.as_deref()),
            "headers": headers,
            "codec": r.codec.name(),
        });
        writeln!(out, "{line}")?;
    }
    Ok(())
}

/// Builds one batch of `records` with `codec` and `epoch` and appends it as the leader, filling in
/// the offsets the log assigned.
fn append_batch(
    log: &PartitionLog<RealFs>,
    builder: &mut BatchBuilder,
    codec: Compression,
    epoch: i32,
    records: &mut [Written],
) -> Result<()> {
    let headers: Vec<Vec<Header<'_>>> = records
        .iter()
        .map(|r| {
            r.headers
                .iter()
                .map(|(k, v)| Header {
                    key: k.as_bytes(),
                    value: v.as_deref(),
                })
                .collect()
        })
        .collect();
    let new = records
        .iter()
        .zip(&headers)
        .zip(0_i32..)
        .map(|((r, h), i)| {
            NewRecord::new(i, r.timestamp, r.key.as_deref(), r.value.as_deref()).with_headers(h)
        });
    let mut batch = Vec::new();
    let options = BatchOptions::new(0, codec).with_partition_leader_epoch(epoch);
    builder.build(&options, new, &mut batch)?;
    let info = log
        .append_as_leader(&mut batch)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for (r, offset) in records.iter_mut().zip(info.first_offset..) {
        r.offset = offset;
        r.codec = codec;
    }
    Ok(())
}

/// Records with every shape Kafka allows: null keys, null values, headers (some with null values,
/// some keys repeated), sizes from empty to a few KiB, and timestamps that go backwards.
fn varied_records(rng: &mut Rng, count: usize, start_ts: i64, first_id: usize) -> Vec<Written> {
    let mut ts = start_ts;
    (0..count)
        .map(|i| {
            let id = first_id + i;
            // Mostly forward, sometimes back by up to a minute.
            ts += i64::try_from(rng.below(2_000)).unwrap_or(0);
            let timestamp = if rng.below(5) == 0 {
                ts - i64::try_from(rng.below(60_000)).unwrap_or(0)
            } else {
                ts
            };
            let key = (rng.below(7) != 0).then(|| format!("key-{}", rng.below(500)).into_bytes());
            let value = (rng.below(11) != 0).then(|| {
                let len = match rng.below(10) {
                    0 => 0,
                    1 => 1_000 + usize::try_from(rng.below(3_000)).unwrap_or(0),
                    _ => 10 + usize::try_from(rng.below(200)).unwrap_or(0),
                };
                text(rng, &format!("value-{id} "), len)
            });
            let headers = (0..rng.below(4))
                .map(|h| {
                    let hk = if h == 2 {
                        "h0".to_owned()
                    } else {
                        format!("h{h}")
                    };
                    let hv = (rng.below(4) != 0).then(|| {
                        let len = 3 + usize::try_from(rng.below(20)).unwrap_or(0);
                        text(rng, "hv-", len)
                    });
                    (hk, hv)
                })
                .collect();
            Written {
                offset: -1,
                timestamp,
                key,
                value,
                headers,
                codec: Compression::None,
            }
        })
        .collect()
}

fn build(root: &Path, expected: &Path) -> Result<()> {
    if root.exists() {
        bail!("{}: already exists", root.display());
    }
    let options = LogDirOptions::default().with_recovery_threads(1);
    let (dir, _) = LogDir::open(RealFs, root, options).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(expected).with_context(|| expected.display().to_string())?,
    );
    let mut rng = Rng(0x5EED_1A7E_0FC0_DE01);
    let mut builder = BatchBuilder::new();
    let now = SystemClock.now_ms();

    // interop-0: small segments and a small index interval, so there are many segments and many
    // index entries; every codec in turn; epochs that change part way.
    let tp = TopicPartition::new("interop", 0);
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "24576"),
        ("index.interval.bytes", "300"),
    ])
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let log = dir
        .create_log(&tp, Some(config))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut written = Vec::new();
    let mut ts = now - 86_400_000;
    for batch_no in 0..150 {
        let count = 1 + usize::try_from(rng.below(20)).unwrap_or(0);
        let mut records = varied_records(&mut rng, count, ts, written.len());
        ts = records.iter().map(|r| r.timestamp).max().unwrap_or(ts);
        let codec = codec(batch_no);
        let epoch = i32::try_from(batch_no / 60).unwrap_or(0);
        append_batch(&log, &mut builder, codec, epoch, &mut records)?;
        written.extend(records);
    }
    if log.segment_count() < 4 {
        bail!(
            "{tp}: expected several segments, got {}",
            log.segment_count()
        );
    }
    write_expected(&mut out, &tp, &written)?;
    drop(log);
    build_compacted(&dir, &mut rng, &mut builder, now, &mut out)?;
    out.flush()?;
    dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

/// interop_compacted-0: 40 keys overwritten many times, tombstones, cleaned once.
fn build_compacted(
    dir: &LogDir<RealFs>,
    rng: &mut Rng,
    builder: &mut BatchBuilder,
    now: i64,
    out: &mut impl std::io::Write,
) -> Result<()> {
    let tp = TopicPartition::new("interop_compacted", 0);
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "8192"),
        ("index.interval.bytes", "200"),
        ("cleanup.policy", "compact"),
    ])
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    let log = dir
        .create_log(&tp, Some(config))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut written = Vec::new();
    for batch_no in 0..120 {
        let count = 1 + usize::try_from(rng.below(10)).unwrap_or(0);
        let mut records: Vec<Written> = (0..count)
            .map(|i| {
                let id = written.len() + i;
                let key = format!("user-{}", rng.below(40)).into_bytes();
                let value = (rng.below(9) != 0).then(|| {
                    let len = 20 + usize::try_from(rng.below(150)).unwrap_or(0);
                    text(rng, &format!("state-{id} "), len)
                });
                let headers = if id % 3 == 0 {
                    vec![("origin".to_owned(), Some(b"seglog".to_vec()))]
                } else {
                    Vec::new()
                };
                Written {
                    offset: -1,
                    timestamp: now - 3_600_000 + i64::try_from(id).unwrap_or(0) * 100
                        - i64::try_from(rng.below(5_000)).unwrap_or(0),
                    key: Some(key),
                    value,
                    headers,
                    codec: Compression::None,
                }
            })
            .collect();
        append_batch(&log, builder, codec(batch_no), 0, &mut records)?;
        written.extend(records);
    }
    // As a broker's would be once replicated: the cleaner stays below the high watermark.
    log.set_high_watermark(log.log_end_offset());
    let report = log
        .clean(&CleanOptions::default().with_dedupe_buffer_bytes(1 << 20))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    if report.segments_replaced == 0 || report.end_offset <= 0 {
        bail!("{tp}: the cleaner cleaned nothing: {report:?}");
    }
    // What Kafka's cleaner keeps: below the cleaned range's end, the last record of each key (a
    // tombstone too, as its delete horizon has not passed); from there on, everything.
    let mut last: HashMap<Vec<u8>, i64> = HashMap::new();
    for r in written.iter().filter(|r| r.offset < report.end_offset) {
        if let Some(k) = &r.key {
            last.insert(k.clone(), r.offset);
        }
    }
    let kept: Vec<Written> = written
        .into_iter()
        .filter(|r| {
            r.offset >= report.end_offset
                || r.key.as_ref().and_then(|k| last.get(k)) == Some(&r.offset)
        })
        .collect();
    let kept_below = kept.iter().filter(|r| r.offset < report.end_offset).count();
    if u64::try_from(kept_below).unwrap_or(0) != report.records_kept {
        bail!(
            "{tp}: the cleaner says it kept {} records below {}, the model says {kept_below}",
            report.records_kept,
            report.end_offset
        );
    }
    write_expected(out, &tp, &kept)?;
    Ok(())
}

/// Reads an offset checkpoint of the log directory, empty when it is missing.
fn checkpoint(path: PathBuf) -> Result<(OffsetCheckpoint<RealFs>, BTreeMap<TopicPartition, i64>)> {
    let cp = OffsetCheckpoint::new(RealFs, path);
    let entries = cp.read().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok((cp, entries))
}

fn append(partition_dir: &Path, count: usize, expected: &Path, configs: &[&str]) -> Result<()> {
    let pairs: Vec<(&str, &str)> = configs
        .iter()
        .map(|c| {
            c.split_once('=')
                .with_context(|| format!("{c}: expected key=value"))
        })
        .collect::<Result<_>>()?;
    let config = LogConfig::from_pairs(pairs).map_err(|e| anyhow::anyhow!("{e}"))?;
    let partition_dir = std::path::absolute(partition_dir)?;
    let (tp, _) = TopicPartition::parse_dir(&partition_dir).map_err(|e| anyhow::anyhow!("{e}"))?;
    let log_dir = partition_dir
        .parent()
        .context("a partition directory sits in a log directory")?;
    // What the broker left: it must have shut down cleanly, so its checkpoints are current.
    if !log_dir.join(CLEAN_SHUTDOWN_FILE).exists() {
        bail!(
            "{}: no {CLEAN_SHUTDOWN_FILE}; stop the broker cleanly first",
            log_dir.display()
        );
    }
    let (recovery_cp, mut recovery) = checkpoint(log_dir.join(RECOVERY_POINT_CHECKPOINT))?;
    let (_, starts) = checkpoint(log_dir.join(LOG_START_OFFSET_CHECKPOINT))?;
    let (hw_cp, mut hws) = checkpoint(log_dir.join(REPLICATION_OFFSET_CHECKPOINT))?;
    let epochs_cp = LeaderEpochCheckpoint::in_dir(RealFs, &partition_dir);
    let mut epochs = epochs_cp.read().map_err(|e| anyhow::anyhow!("{e}"))?;
    let load = LoadOptions::default()
        .with_recovery_point(recovery.get(&tp).copied().unwrap_or(0))
        .with_log_start_offset(starts.get(&tp).copied().unwrap_or(0))
        .with_had_clean_shutdown(true);
    let (log, _) = PartitionLog::open(RealFs, &partition_dir, config, load, Arc::new(SystemClock))
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let first_offset = log.log_end_offset();
    // The broker's current epoch; a partition never led has none yet, and takes epoch 0 from
    // our first offset, as a leader elected in epoch 0 would have.
    let epoch = if let Some(e) = epochs.last() {
        e.epoch
    } else {
        epochs.push(EpochEntry {
            epoch: 0,
            start_offset: first_offset,
        });
        0
    };
    let mut rng = Rng(0xA99E_7D00_0000_0001 ^ u64::try_from(first_offset).unwrap_or(0));
    let mut builder = BatchBuilder::new();
    let mut written = Vec::new();
    let mut batch_no = 0;
    while written.len() < count {
        let n = (1 + usize::try_from(rng.below(25)).unwrap_or(0)).min(count - written.len());
        let start = SystemClock.now_ms() - 600_000 + i64::try_from(written.len()).unwrap_or(0);
        let mut records = varied_records(&mut rng, n, start, written.len());
        append_batch(&log, &mut builder, codec(batch_no), epoch, &mut records)?;
        written.extend(records);
        batch_no += 1;
    }
    log.flush().map_err(|e| anyhow::anyhow!("{e}"))?;
    let end = log.log_end_offset();
    log.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    drop(log);
    // Everything is on disk: the recovery point and the high watermark move to the end, so the
    // broker neither re-scans the segments nor hides the records from consumers.
    recovery.insert(tp.clone(), end);
    recovery_cp
        .write(&recovery)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    hws.insert(tp.clone(), end);
    hw_cp.write(&hws).map_err(|e| anyhow::anyhow!("{e}"))?;
    epochs_cp
        .write(&epochs)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(expected).with_context(|| expected.display().to_string())?,
    );
    write_expected(&mut out, &tp, &written)?;
    out.flush()?;
    eprintln!(
        "appended {} records to {} at offsets {first_offset}..{end} in leader epoch {epoch}",
        written.len(),
        partition_dir.display()
    );
    Ok(())
}
