//! One system's side of `cargo xtask bench-compare`: runs the workloads of one group (or all) that
//! the system supports and prints one JSON document of samples on stdout. The xtask runs this
//! binary once per group and system (seglog, commitlog, limit), and the Kafka harness
//! (interop/kafka-bench) with the same parameters, every system of a group back to back; it
//! computes the medians and ratios itself.
//!
//! ```text
//! seglog-bench-compare <seglog|commitlog|limit> --dir D --append-mib N --fsync-append-mib N
//!     --dataset-mib N --samples N --warmup N --lookups N --reads N --open-segments N [--part P]
//! ```
//!
//! `--part` is one workload group ([`GROUPS`]: `append`, `segment`, `consume`, `log_append`,
//! `open`, `logdir`, or `compact`), each building only its own data, or `main` (the default): every
//! group the system has but `compact`, one after the other. `--part compact-clean` (run by `--part
//! compact`) cleans one copy of the compaction dataset and prints its peak memory
//! (`compact_system::peak_in_fresh_process`).
//!
//! `seglog-bench-compare make-segment --dir D --mib N` writes the whole-process workloads' segment
//! (`make_segment.rs`); `seglog-bench-compare drain --fifo F` is the drainer of the zero-copy consume
//! (`pipe_drain.rs`); `seglog-bench-compare scale <log|open|compact> ...` runs one size of the scale
//! runs (`scale_system.rs`).
//!
//! Every system builds its own data (untimed) in its own format, then times only the operation.
//! The workloads and their units are described in `docs/benchmarks.md`.
#![allow(
    clippy::cast_precision_loss,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "a benchmark converts counts and durations to floats for reporting"
)]

mod commitlog_system;
mod compact_system;
mod count_records;
mod flags;
mod limit;
mod limit_logdir;
mod limit_partition;
mod logdir_system;
mod make_segment;
mod partition_system;
mod peak_memory;
mod pipe_drain;
mod read_check;
mod scale_compact;
mod scale_log;
mod scale_open;
mod scale_params;
mod scale_system;
mod seglog_system;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
use serde_json::{Value, json};

/// The first record's timestamp; record `o` has timestamp `BASE_TIMESTAMP + o`.
pub(crate) const BASE_TIMESTAMP: i64 = 1_700_000_000_000;
/// The most bytes one read by offset returns (Kafka's `maxSize`, commitlog's `ReadLimit`): one batch of
/// 16 records of 1 KiB and a little more.
pub(crate) const FETCH_BYTES: usize = 17 * 1024;
/// Bytes appended between two fsyncs in the `_fsync_1m` workloads.
pub(crate) const FSYNC_EVERY: u64 = 1 << 20;
/// The size of one fetch of the consume workloads (a consumer's `max.partition.fetch.bytes`).
pub(crate) const FETCH_MIB_BYTES: u32 = 1 << 20;
/// The producer id of `log_append`'s idempotent batches.
pub(crate) const PRODUCER_ID: i64 = 1000;
const MIB: f64 = 1024.0 * 1024.0;

/// Records of `record_bytes` (values, no key) in batches of `records_per_batch`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) name: &'static str,
    pub(crate) record_bytes: usize,
    pub(crate) records_per_batch: usize,
}

pub(crate) const SHAPES: [Shape; 2] = [
    Shape {
        name: "1k_x16",
        record_bytes: 1024,
        records_per_batch: 16,
    },
    Shape {
        name: "100b_x100",
        record_bytes: 100,
        records_per_batch: 100,
    },
];

impl Shape {
    /// The number of batches whose values add up to `mib` MiB.
    pub(crate) fn batches_for(self, mib: u64) -> usize {
        ((mib << 20) as usize / (self.record_bytes * self.records_per_batch)).max(1)
    }

    pub(crate) fn payload_bytes(self, batches: usize) -> u64 {
        (batches * self.records_per_batch * self.record_bytes) as u64
    }
}

/// The workload sizes, the same for every system (the xtask passes them to the Kafka harness too).
#[derive(Debug, Clone)]
pub(crate) struct Params {
    pub(crate) dir: PathBuf,
    pub(crate) append_mib: u64,
    pub(crate) fsync_append_mib: u64,
    pub(crate) dataset_mib: u64,
    pub(crate) samples: usize,
    pub(crate) warmup: usize,
    pub(crate) lookups: usize,
    pub(crate) reads: usize,
    /// Segments of the `open_10k_*` partition.
    pub(crate) open_segments: u64,
    /// Which workloads this process runs: one group of [`GROUPS`], `main` (all of them), or
    /// `compact` (alone, so that the process's peak memory is the cleaner's); `compact-clean` is
    /// the fresh process in which `compact` measures one cleaning's memory.
    pub(crate) part: String,
}

impl Params {
    /// The command-line flags of these parameters, with `--part part`.
    pub(crate) fn to_args(&self, part: &str) -> Vec<std::ffi::OsString> {
        let numbers = [
            ("--append-mib", self.append_mib),
            ("--fsync-append-mib", self.fsync_append_mib),
            ("--dataset-mib", self.dataset_mib),
            ("--samples", self.samples as u64),
            ("--warmup", self.warmup as u64),
            ("--lookups", self.lookups as u64),
            ("--reads", self.reads as u64),
            ("--open-segments", self.open_segments),
        ];
        let mut args: Vec<std::ffi::OsString> = vec!["--dir".into(), self.dir.clone().into()];
        for (flag, n) in numbers {
            args.extend([flag.into(), n.to_string().into()]);
        }
        args.extend(["--part".into(), part.into()]);
        args
    }
}

/// One measured figure: every timed sample, warm-ups excluded.
#[derive(Debug)]
pub(crate) struct Figure {
    pub(crate) workload: String,
    pub(crate) unit: &'static str,
    pub(crate) samples: Vec<f64>,
    pub(crate) note: String,
}

impl Figure {
    fn to_json(&self) -> Value {
        json!({
            "workload": self.workload,
            "unit": self.unit,
            "higher_is_better": self.unit == "MiB/s",
            "samples": self.samples,
            "note": self.note,
        })
    }
}

/// Runs `warmup` untimed and `samples` timed rounds of `round`, which returns the time of its
/// measured part, and converts each to a figure with `convert`.
pub(crate) fn measure(
    params: &Params,
    mut round: impl FnMut() -> Result<Duration>,
    convert: impl Fn(Duration) -> f64,
) -> Result<Vec<f64>> {
    for _ in 0..params.warmup {
        round()?;
    }
    let mut out = Vec::with_capacity(params.samples);
    for _ in 0..params.samples {
        out.push(convert(round()?));
    }
    Ok(out)
}

/// The `append` group of a system whose `figure` measures one shape without or with an fsync every
/// MiB: both shapes, then both with the fsync.
pub(crate) fn append_group(
    params: &Params,
    figure: impl Fn(&Params, Shape, bool) -> Result<Figure>,
) -> Result<Vec<Figure>> {
    let mut figures = Vec::new();
    for fsync in [false, true] {
        for shape in SHAPES {
            figures.push(figure(params, shape, fsync)?);
        }
    }
    Ok(figures)
}

/// MiB/s of `bytes` moved in `elapsed`.
pub(crate) fn mib_per_s(bytes: u64) -> impl Fn(Duration) -> f64 {
    move |elapsed| bytes as f64 / MIB / elapsed.as_secs_f64()
}

/// Milliseconds of wall time (the whole-operation workloads: opening a log).
pub(crate) fn ms(elapsed: Duration) -> f64 {
    elapsed.as_secs_f64() * 1000.0
}

/// `segment.bytes` of `log_append`: an eighth of the data appended (at least 1 MiB, Kafka's
/// smallest), so every run rolls about eight times.
pub(crate) fn log_append_bytes(append_mib: u64) -> i32 {
    ((append_mib << 20) / 8).clamp(1 << 20, 1 << 30) as i32
}

/// Nanoseconds per operation for `ops` operations in `elapsed`.
pub(crate) fn ns_per_op(ops: usize) -> impl Fn(Duration) -> f64 {
    move |elapsed| elapsed.as_nanos() as f64 / ops as f64
}

/// xorshift64: the same random targets in every process.
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new() -> Self {
        Self(0x9e37_79b9_7f4a_7c15)
    }

    pub(crate) fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Kafka RecordBatch v2 bytes of `batches` batches of `shape`, offsets from 0, record `o` stamped
/// `BASE_TIMESTAMP + o`, each with its last offset. seglog appends these; the limit writes them.
pub(crate) fn kafka_batches(shape: Shape, batches: usize) -> Result<Vec<(i64, Vec<u8>)>> {
    let value = vec![b'v'; shape.record_bytes];
    let mut builder = BatchBuilder::new();
    let per = shape.records_per_batch as i64;
    (0..batches as i64)
        .map(|b| {
            let base = b * per;
            let records = (0..shape.records_per_batch as i32).map(|i| {
                NewRecord::new(
                    i,
                    BASE_TIMESTAMP + base + i64::from(i),
                    None,
                    Some(&value[..]),
                )
            });
            let mut out = Vec::new();
            builder
                .build(
                    &BatchOptions::new(base, Compression::None),
                    records,
                    &mut out,
                )
                .context("building a batch")?;
            Ok((base + per - 1, out))
        })
        .collect()
}

/// `batches` idempotent batches of `shape` as a producer sends them: base offset 0, producer
/// [`PRODUCER_ID`], epoch 0, sequences counting up from 0, record `i` of batch `b` stamped
/// `BASE_TIMESTAMP + b * records_per_batch + i`. `log_append` appends copies of these as a leader.
pub(crate) fn idempotent_batches(shape: Shape, batches: usize) -> Result<Vec<Vec<u8>>> {
    let value = vec![b'v'; shape.record_bytes];
    let mut builder = BatchBuilder::new();
    let per = shape.records_per_batch as i64;
    (0..batches as i64)
        .map(|b| {
            let records = (0..shape.records_per_batch as i32).map(|i| {
                NewRecord::new(
                    i,
                    BASE_TIMESTAMP + b * per + i64::from(i),
                    None,
                    Some(&value[..]),
                )
            });
            let mut options = BatchOptions::new(0, Compression::None);
            options.producer_id = PRODUCER_ID;
            options.producer_epoch = 0;
            options.base_sequence = (b * per) as i32;
            let mut out = Vec::new();
            builder
                .build(&options, records, &mut out)
                .context("building a batch")?;
            Ok(out)
        })
        .collect()
}

/// One batch of `count` keyed 1 KiB records from offset `base` (compaction's dataset): record `o`
/// has key `key-<o % keys>` (8 digits) and timestamp `BASE_TIMESTAMP + o`.
pub(crate) fn keyed_batch(base: i64, count: i32, keys: i64) -> Result<Vec<u8>> {
    let value = vec![b'v'; 1024];
    let names: Vec<String> = (0..i64::from(count))
        .map(|i| format!("key-{:08}", (base + i) % keys))
        .collect();
    let records = names.iter().zip(0..count).map(|(key, i)| {
        NewRecord::new(
            i,
            BASE_TIMESTAMP + base + i64::from(i),
            Some(key.as_bytes()),
            Some(&value[..]),
        )
    });
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(
            &BatchOptions::new(base, Compression::None),
            records,
            &mut out,
        )
        .context("building a keyed batch")?;
    Ok(out)
}

/// The CPU time this thread has used. The lookup workloads are timed with it: they are CPU-bound
/// (everything is in the page cache), and on a shared machine wall time would also count the time
/// the thread spent waiting for a core, which depends on the other processes, not on the code.
/// It includes the kernel's time on the thread's behalf (a `pread`'s copy, page faults).
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Whether `SEGLOG_BENCH_CPU_CLOCK=1`: the consume workloads are then timed in CPU time (the
/// measuring thread's, plus the drainer's for `consume_sequential`) rather than wall time, to
/// compare code on a loaded machine (docs/perf/consume.md). A bench-compare run's figures are
/// wall time.
pub(crate) fn cpu_clock() -> bool {
    std::env::var_os("SEGLOG_BENCH_CPU_CLOCK").is_some_and(|v| v == "1")
}

/// The clock of a consume round: wall time since it was made, or this thread's CPU time under
/// [`cpu_clock`].
pub(crate) fn round_clock() -> impl Fn() -> Duration {
    let cpu = cpu_clock();
    let started = std::time::Instant::now();
    move || {
        if cpu {
            thread_cpu_time()
        } else {
            started.elapsed()
        }
    }
}

/// Times `ops` random targets in `0..count` through `op`, which must check its own answer, in
/// this thread's CPU time.
pub(crate) fn random_ops(
    params: &Params,
    ops: usize,
    count: u64,
    mut op: impl FnMut(i64) -> Result<u64>,
) -> Result<Vec<f64>> {
    let mut rng = Rng::new();
    measure(
        params,
        || {
            let mut sink = 0_u64;
            let started = thread_cpu_time();
            for _ in 0..ops {
                sink = sink.wrapping_add(op(rng.below(count) as i64)?);
            }
            let elapsed = thread_cpu_time().saturating_sub(started);
            black_box(sink);
            Ok(elapsed)
        },
        ns_per_op(ops),
    )
}

fn parse_args() -> Result<(String, Params)> {
    let mut args = std::env::args().skip(1);
    let system = args
        .next()
        .context("usage: seglog-bench-compare <system> --dir D ...")?;
    let flags::Flags {
        dir,
        mut words,
        mut numbers,
    } = flags::parse(args, &["--part"])?;
    let mut get = |name: &str| {
        numbers
            .remove(name)
            .with_context(|| format!("missing {name}"))
    };
    let params = Params {
        dir: dir.context("missing --dir")?,
        append_mib: get("--append-mib")?,
        fsync_append_mib: get("--fsync-append-mib")?,
        dataset_mib: get("--dataset-mib")?,
        samples: get("--samples")? as usize,
        warmup: get("--warmup")? as usize,
        lookups: get("--lookups")? as usize,
        reads: get("--reads")? as usize,
        open_segments: get("--open-segments")?,
        part: words.remove("--part").unwrap_or_else(|| "main".to_owned()),
    };
    if let Some(flag) = numbers.keys().next() {
        bail!("unknown flag {flag}");
    }
    if params.samples == 0 {
        bail!("--samples must be at least 1");
    }
    Ok((system, params))
}

/// The workload groups of `--part`, in the order `--part main` runs them. Each builds only its
/// own data, so that the xtask can run one group on every system back to back
/// (docs/perf/method.md); `compact` is apart, in a process of its own for its peak memory.
const GROUPS: [&str; 6] = [
    "append",
    "segment",
    "consume",
    "log_append",
    "open",
    "logdir",
];

/// `system`'s figures of one group, or `None` if it has no such group.
fn run_group(system: &str, group: &str, params: &Params) -> Result<Option<Vec<Figure>>> {
    Ok(Some(match (system, group) {
        ("seglog", "append") => seglog_system::run_append(params)?,
        ("seglog", "segment") => seglog_system::run_segment(params)?,
        ("seglog", "consume") => partition_system::run_consume(params)?,
        ("seglog", "log_append") => partition_system::run_log_append(params)?,
        ("seglog", "open") => partition_system::run_open(params)?,
        ("seglog", "logdir") => logdir_system::run(params)?,
        ("seglog", "compact") => compact_system::run(params)?,
        ("limit", "append") => limit::run_append(params)?,
        ("limit", "segment") => limit::run_segment(params)?,
        ("limit", "consume") => limit_partition::run_consume(params)?,
        ("limit", "log_append") => limit_partition::run_log_append(params)?,
        ("limit", "logdir") => limit_logdir::run(params)?,
        ("commitlog", "append") => commitlog_system::run_append(params)?,
        ("commitlog", "segment") => commitlog_system::run_segment(params)?,
        _ => return Ok(None),
    }))
}

fn main() -> Result<()> {
    if std::env::args().nth(1).is_some_and(|a| a == "make-segment") {
        return make_segment::run(std::env::args().skip(2));
    }
    if std::env::args()
        .nth(1)
        .is_some_and(|a| a == "count-records")
    {
        return count_records::run();
    }
    if std::env::args().nth(1).is_some_and(|a| a == "drain") {
        return pipe_drain::run(std::env::args().skip(2));
    }
    if std::env::args().nth(1).is_some_and(|a| a == "read-check") {
        return read_check::run(std::env::args().skip(2));
    }
    if std::env::args().nth(1).is_some_and(|a| a == "scale") {
        return scale_system::run(std::env::args().skip(2));
    }
    let (system, params) = parse_args()?;
    std::fs::create_dir_all(&params.dir)
        .with_context(|| format!("creating {}", params.dir.display()))?;
    if (system.as_str(), params.part.as_str()) == ("seglog", "compact-clean") {
        println!("{}", compact_system::clean_child(&params)?);
        return Ok(());
    }
    let version = match system.as_str() {
        "seglog" => env!("CARGO_PKG_VERSION"),
        "commitlog" => commitlog_system::VERSION,
        "limit" => "-",
        other => bail!("unknown system `{other}` (seglog, commitlog or limit)"),
    };
    let part = params.part.as_str();
    let figures = if part == "main" {
        let mut figures = Vec::new();
        for group in GROUPS {
            figures.extend(run_group(&system, group, &params)?.unwrap_or_default());
        }
        figures
    } else if GROUPS.contains(&part) || part == "compact" {
        run_group(&system, part, &params)?
            .with_context(|| format!("{system} has no --part {part}"))?
    } else {
        bail!(
            "unknown --part {part} (main, compact, or one of {})",
            GROUPS.join(", ")
        )
    };
    let doc = json!({
        "system": system,
        "version": version,
        "figures": figures.iter().map(Figure::to_json).collect::<Vec<_>>(),
    });
    println!("{doc}");
    Ok(())
}
