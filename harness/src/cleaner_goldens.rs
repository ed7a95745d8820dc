//! `seglog-cleaner-goldens <out-dir>`: writes the input partitions of the compaction goldens
//! (`interop/kafka/make-cleaner-goldens.sh` runs Kafka's cleaner on them), one directory per
//! case: `input/cleaner-0/` (the segments and producer snapshots seglog wrote, as a leader and a
//! transaction coordinator would), `config.properties` (the topic config both cleaners use) and
//! `passes.txt` (the cleaning times, one a line). Everything is written on a hand-driven clock,
//! so the bytes are the same on every run.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result, bail};
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{LoadOptions, LogConfig, MockClock, PartitionLog, RealFs, Time};

/// Record timestamps start here (2025-06-15), one millisecond per batch.
const START_MS: i64 = 1_750_000_000_000;
const DELETE_RETENTION_MS: i64 = 60_000;
const CONFIG: [(&str, &str); 5] = [
    ("cleanup.policy", "compact"),
    ("internal.segment.bytes", "1024"),
    ("index.interval.bytes", "128"),
    ("delete.retention.ms", "60000"),
    ("min.compaction.lag.ms", "0"),
];

/// One partition being written.
struct Writer {
    clock: MockClock,
    log: PartitionLog,
    builder: BatchBuilder,
    sequences: HashMap<i64, i32>,
    epochs: HashMap<i64, i16>,
}

type Rec<'a> = (&'a str, Option<&'a str>);

impl Writer {
    fn new(dir: &Path) -> Result<Self> {
        let clock = MockClock::new(START_MS);
        let config = LogConfig::from_pairs(CONFIG).map_err(|e| anyhow::anyhow!("{e}"))?;
        let (log, _) = PartitionLog::open(
            RealFs,
            dir,
            config,
            LoadOptions::default(),
            Arc::new(clock.clone()),
        )
        .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(Self {
            clock,
            log,
            builder: BatchBuilder::new(),
            sequences: HashMap::new(),
            epochs: HashMap::new(),
        })
    }

    fn append(&mut self, options: &BatchOptions, records: &[Rec<'_>]) -> Result<()> {
        self.clock.advance(1);
        let now = self.clock.now_ms();
        let news = records.iter().zip(0..).map(|((k, v), delta)| {
            NewRecord::new(delta, now, Some(k.as_bytes()), v.map(str::as_bytes))
        });
        let mut bytes = Vec::new();
        self.builder.build(options, news, &mut bytes)?;
        self.log
            .append_as_leader(&mut bytes)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(())
    }

    /// A batch of no producer.
    fn plain(&mut self, records: &[Rec<'_>]) -> Result<()> {
        self.append(&BatchOptions::new(0, Compression::None), records)
    }

    /// A batch of producer `pid`, transactional or idempotent, at its current epoch.
    fn produce(&mut self, pid: i64, transactional: bool, records: &[Rec<'_>]) -> Result<()> {
        let sequence = self.sequences.entry(pid).or_insert(0);
        let options = BatchOptions::new(0, Compression::None)
            .with_producer(pid, self.epochs.get(&pid).copied().unwrap_or(0), *sequence)
            .with_transactional(transactional);
        *sequence += i32::try_from(records.len())?;
        self.append(&options, records)
    }

    fn txn(&mut self, pid: i64, records: &[Rec<'_>]) -> Result<()> {
        self.produce(pid, true, records)
    }

    fn idempotent(&mut self, pid: i64, records: &[Rec<'_>]) -> Result<()> {
        self.produce(pid, false, records)
    }

    /// The coordinator's marker under transaction version 2: it bumps the producer's epoch, and
    /// the producer's next batches start their sequence over.
    fn end(&mut self, pid: i64, commit: bool) -> Result<()> {
        self.end_with_version(pid, commit, 2)
    }

    fn end_with_version(&mut self, pid: i64, commit: bool, version: i16) -> Result<()> {
        self.clock.advance(1);
        let epoch = self.epochs.get(&pid).copied().unwrap_or(0);
        let marker_epoch = if version >= 2 { epoch + 1 } else { epoch };
        self.log
            .append_end_txn_marker(pid, marker_epoch, 0, commit, version)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if marker_epoch != epoch {
            self.epochs.insert(pid, marker_epoch);
            self.sequences.insert(pid, 0);
        }
        Ok(())
    }

    /// Rolls (so every batch written is below the active segment, and cleanable), closes
    /// cleanly, and returns the last record timestamp.
    fn finish(self) -> Result<i64> {
        self.log.roll().map_err(|e| anyhow::anyhow!("{e}"))?;
        self.log.close().map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(self.clock.now_ms())
    }
}

/// Committed and aborted transactions of two producers, open at the same time, interleaved with
/// an idempotent producer and plain keyed records, over several segments.
fn interleaved(w: &mut Writer) -> Result<()> {
    let values = ["r0", "r1", "r2", "r3"];
    for (round, v) in values.iter().enumerate() {
        let v = Some(*v);
        w.txn(1001, &[("k0", v), ("k1", v), ("k2", v)])?;
        w.plain(&[("k1", v), ("k5", v)])?;
        w.txn(1002, &[("k3", v), ("k4", v)])?;
        w.idempotent(1003, &[("k6", v), ("k7", v)])?;
        w.txn(1001, &[("k8", v)])?;
        w.txn(1002, &[("k0", v)])?;
        let even = round % 2 == 0;
        w.end(1001, even)?;
        w.plain(&[("k9", v)])?;
        w.end(1002, !even)?;
        if round == 3 {
            w.plain(&[("k5", None)])?;
        }
    }
    Ok(())
}

/// An aborted transaction and then a committed one, each spanning several segments, with plain
/// records between their batches overwriting some of their keys.
fn spanning(w: &mut Writer) -> Result<()> {
    let keys = ["s0", "s1", "s2", "s3", "s4", "s5"];
    for i in 0..12 {
        let a = keys.get(i % 6).copied().unwrap_or("s0");
        let b = keys.get((i + 1) % 6).copied().unwrap_or("s0");
        w.txn(2001, &[(a, Some("aborted")), (b, Some("aborted"))])?;
        if i % 4 == 0 {
            w.plain(&[(a, Some("plain"))])?;
        }
    }
    w.end(2001, false)?;
    for i in 0..12 {
        let a = keys.get(i % 6).copied().unwrap_or("s0");
        w.txn(2002, &[(a, Some("committed")), ("t", Some("committed"))])?;
        if i % 5 == 0 {
            w.plain(&[(a, Some("later"))])?;
        }
    }
    w.end(2002, true)?;
    w.plain(&[("s0", Some("last"))])?;
    Ok(())
}

/// Aborted transactions whose marker is the producer's last batch: under transaction version 2
/// (the marker bumped the epoch, so it is the producer's last record), and under version 1 (the
/// aborted data batch is the producer's last data and stays, emptied).
fn abort_last(w: &mut Writer) -> Result<()> {
    w.txn(3001, &[("a0", Some("x")), ("a1", Some("x"))])?;
    w.txn(3002, &[("a2", Some("y"))])?;
    w.plain(&[("a0", Some("p")), ("a3", Some("p"))])?;
    w.txn(3001, &[("a3", Some("x"))])?;
    w.end(3001, false)?;
    w.txn(3002, &[("a4", Some("y"))])?;
    w.end_with_version(3002, false, 1)?;
    for i in 0..6 {
        let v = format!("fill{i}");
        w.plain(&[("a5", Some(&v)), ("a6", Some(&v))])?;
    }
    Ok(())
}

/// Tombstones: plain, in a committed transaction, in an idempotent producer's last batch, and a
/// tombstone ending the log (its batch, ending at the high watermark, stays when emptied).
fn tombstones(w: &mut Writer) -> Result<()> {
    for i in 0..5 {
        let v = format!("v{i}");
        w.plain(&[("d0", Some(&v)), ("d1", Some(&v)), ("d2", Some(&v))])?;
    }
    w.plain(&[("d0", None)])?;
    w.txn(4001, &[("d1", None), ("d3", Some("t"))])?;
    w.end(4001, true)?;
    w.idempotent(4002, &[("d4", Some("i")), ("d5", Some("i"))])?;
    w.idempotent(4002, &[("d4", None)])?;
    for i in 0..4 {
        let v = format!("w{i}");
        w.plain(&[("d3", Some(&v)), ("d6", Some(&v))])?;
    }
    w.plain(&[("d2", None)])?;
    Ok(())
}

/// A producer's last batch emptied by later writes of its keys (kept for its last sequence); a
/// committed transaction whose data is all overwritten; a marker with no data of its own, which
/// the first cleaning gives a delete horizon and the second removes.
fn empty_batches(w: &mut Writer) -> Result<()> {
    w.idempotent(5001, &[("e0", Some("i0")), ("e1", Some("i0"))])?;
    w.idempotent(5001, &[("e0", Some("i1")), ("e1", Some("i1"))])?;
    w.end(5002, true)?;
    w.txn(5002, &[("e2", Some("t")), ("e3", Some("t"))])?;
    w.end(5002, true)?;
    w.txn(5003, &[("e4", Some("u"))])?;
    w.end(5003, false)?;
    for i in 0..6 {
        let v = format!("p{i}");
        w.plain(&[
            ("e0", Some(&v)),
            ("e1", Some(&v)),
            ("e2", Some(&v)),
            ("e3", Some(&v)),
        ])?;
    }
    w.txn(5002, &[("e5", Some("t2"))])?;
    w.end(5002, true)?;
    w.plain(&[("e5", Some("p"))])?;
    Ok(())
}

type Case = fn(&mut Writer) -> Result<()>;

const CASES: [(&str, Case); 5] = [
    ("interleaved", interleaved),
    ("spanning", spanning),
    ("abort-last", abort_last),
    ("tombstones", tombstones),
    ("empty-batches", empty_batches),
];

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [out] = args.as_slice() else {
        bail!("usage: seglog-cleaner-goldens <out-dir>");
    };
    for (name, case) in CASES {
        let root = Path::new(out).join(name);
        let dir = root.join("input").join("cleaner-0");
        if dir.exists() {
            bail!("{}: exists", dir.display());
        }
        std::fs::create_dir_all(&dir).with_context(|| dir.display().to_string())?;
        let mut w = Writer::new(&dir)?;
        case(&mut w).with_context(|| name.to_string())?;
        let last = w.finish()?;
        let config = CONFIG.iter().fold(String::new(), |mut text, (k, v)| {
            let _ = writeln!(text, "{k}={v}");
            text
        });
        std::fs::write(root.join("config.properties"), config)?;
        // The first cleaning a second after the last write, then two each past the delete
        // horizon the one before set.
        let first = last + 1000;
        let passes = [
            first,
            first + DELETE_RETENTION_MS + 1,
            first + 2 * (DELETE_RETENTION_MS + 1),
        ];
        let text = passes.iter().fold(String::new(), |mut text, t| {
            let _ = writeln!(text, "{t}");
            text
        });
        std::fs::write(root.join("passes.txt"), text)?;
    }
    Ok(())
}
