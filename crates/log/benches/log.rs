//! Partition-log benches: leader appends (plain and idempotent) against segment appends in the
//! same run, durable appends with group commit against one fsync per append (concurrent, and
//! serialized as in a log without group commit), opening a 10,000-segment log after a clean
//! shutdown, and random one-record reads (in wall time, or in CPU time with
//! `SEGLOG_BENCH_CPU_TIME=1`).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::cast_lossless,
    clippy::cast_precision_loss,
    reason = "bench"
)]

#[path = "common/segments.rs"]
mod segments;

use std::hint::black_box;
use std::io;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use seglog_fs::{File, FileSystem, OpenMode, RealFs};
use seglog_log::inspect::AbortedTxn;
use seglog_log::record::{ControlRecordType, EndTransactionMarker};
use seglog_log::{
    Isolation, IsolationLevel, LoadOptions, LogConfig, PartitionLog, SystemClock, consumer_records,
};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord, set_base_offset};
use seglog_segment::{LogSegment, SegmentConfig};

/// A producer batch of `count` records of `size` bytes.
fn producer_batch(count: i32, size: usize) -> Vec<u8> {
    let value = vec![b'v'; size];
    let records = (0..count).map(|i| {
        NewRecord::new(
            i,
            1_700_000_000_000 + i64::from(i),
            Some(b"key-0001"),
            Some(&value[..]),
        )
    });
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
}

fn open_log(dir: &Path, config: LogConfig) -> PartitionLog {
    PartitionLog::open(
        RealFs,
        dir,
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap()
    .0
}

fn append(c: &mut Criterion) {
    let template = producer_batch(16, 1024);
    let batches = 2048_usize;
    let total = (template.len() * batches) as u64;
    let root = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("log_append_16x1k");
    group.throughput(Throughput::Bytes(total));
    group.sample_size(20);
    let mut run = 0;
    group.bench_function("segment_append_baseline", |b| {
        b.iter_batched(
            || {
                // The previous run's files go first, so dirty page cache does not pile up
                // into writeback throttling that the later bench would pay for.
                let _ = std::fs::remove_dir_all(root.path().join(format!("seg-{run}")));
                run += 1;
                let dir = root.path().join(format!("seg-{run}"));
                std::fs::create_dir_all(&dir).unwrap();
                let seg = LogSegment::open(RealFs, &dir, 0, SegmentConfig::default(), false, "", 0)
                    .unwrap();
                seg.index_entries().unwrap();
                let prepared: Vec<(i64, Vec<u8>)> = (0..batches)
                    .map(|i| {
                        let mut b = template.clone();
                        set_base_offset(&mut b, i as i64 * 16).unwrap();
                        (i as i64 * 16 + 15, b)
                    })
                    .collect();
                (seg, prepared)
            },
            |(seg, prepared)| {
                for (last, bytes) in &prepared {
                    seg.append(*last, bytes).unwrap();
                }
                seg
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("partition_leader_append", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_dir_all(root.path().join(format!("t-{run}")));
                run += 1;
                let log = open_log(&root.path().join(format!("t-{run}")), LogConfig::default());
                log.active_segment().index_entries().unwrap();
                let prepared: Vec<Vec<u8>> = (0..batches).map(|_| template.clone()).collect();
                (log, prepared)
            },
            |(log, mut prepared)| {
                for bytes in &mut prepared {
                    log.append_as_leader(bytes).unwrap();
                }
                log
            },
            BatchSize::PerIteration,
        );
    });
    // The same batches from one idempotent producer: sequences continue across the batches, so
    // every append is validated against the producer state (issue 18: at least 0.9x the plain
    // leader append above).
    group.bench_function("partition_idempotent_leader_append", |b| {
        b.iter_batched(
            || {
                let _ = std::fs::remove_dir_all(root.path().join(format!("t-{run}")));
                run += 1;
                let log = open_log(&root.path().join(format!("t-{run}")), LogConfig::default());
                log.active_segment().index_entries().unwrap();
                let prepared: Vec<Vec<u8>> = (0..batches)
                    .map(|i| segments::idempotent_batch(16, 1024, 1, 0, i as i32 * 16))
                    .collect();
                (log, prepared)
            },
            |(log, mut prepared)| {
                for bytes in &mut prepared {
                    log.append_as_leader(bytes).unwrap();
                }
                log
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// `RealFs` that counts the syncs the log asks for: `fdatasync`s of files and `fsync`s of
/// directories.
#[derive(Debug, Clone, Default)]
struct CountingFs {
    file_syncs: Arc<AtomicU64>,
    dir_syncs: Arc<AtomicU64>,
}

impl CountingFs {
    fn syncs(&self) -> u64 {
        self.file_syncs.load(Ordering::Relaxed) + self.dir_syncs.load(Ordering::Relaxed)
    }
}

#[derive(Debug)]
struct CountingFile {
    file: <RealFs as FileSystem>::File,
    syncs: Arc<AtomicU64>,
}

impl FileSystem for CountingFs {
    type File = CountingFile;
    type Lock = <RealFs as FileSystem>::Lock;

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<CountingFile> {
        Ok(CountingFile {
            file: RealFs.open(path, mode)?,
            syncs: Arc::clone(&self.file_syncs),
        })
    }
    fn exists(&self, path: &Path) -> bool {
        RealFs.exists(path)
    }
    fn is_dir(&self, path: &Path) -> bool {
        RealFs.is_dir(path)
    }
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        RealFs.rename(from, to)
    }
    fn remove_file(&self, path: &Path) -> io::Result<()> {
        RealFs.remove_file(path)
    }
    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        RealFs.remove_dir(dir)
    }
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        RealFs.read_dir(dir)
    }
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        RealFs.create_dir_all(dir)
    }
    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        self.dir_syncs.fetch_add(1, Ordering::Relaxed);
        RealFs.sync_dir(dir)
    }
    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        RealFs.modified_ms(path)
    }
    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        RealFs.set_modified_ms(path, ms)
    }
    fn try_lock(&self, path: &Path) -> io::Result<Self::Lock> {
        RealFs.try_lock(path)
    }
}

impl File for CountingFile {
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize> {
        self.file.read_at(buf, position)
    }
    fn write_all_at(&self, buf: &[u8], position: u64) -> io::Result<()> {
        self.file.write_all_at(buf, position)
    }
    fn len(&self) -> io::Result<u64> {
        self.file.len()
    }
    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }
    fn sync_data(&self) -> io::Result<()> {
        self.syncs.fetch_add(1, Ordering::Relaxed);
        self.file.sync_data()
    }
    fn map_fd(&self) -> Option<BorrowedFd<'_>> {
        self.file.map_fd()
    }
    fn copy_range_to(&self, position: u64, len: u64, out: BorrowedFd<'_>) -> io::Result<u64> {
        self.file.copy_range_to(position, len, out)
    }
}

/// The cache flushes the block device under `dir` has completed (field 16 of its
/// `/sys/dev/block/M:m/stat`: what an fsync costs the disk, after the journal merged what it
/// could), counting every process's; `None` where the kernel does not say.
fn device_flushes(dir: &Path) -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(dir).ok()?.dev();
    let major = ((dev >> 8) & 0xfff) | ((dev >> 32) & !0xfff);
    let minor = (dev & 0xff) | ((dev >> 12) & !0xff);
    let stat = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/stat")).ok()?;
    stat.split_whitespace().nth(15)?.parse().ok()
}

/// One durable append of a bench variant.
type AppendFn = fn(&PartitionLog<CountingFs>, &[u8]);

/// Durable appends by 4 threads, three ways, each counting the syncs it asks for:
/// - `fsync_per_append_concurrent`: `append_as_leader`, then `flush_data` of the active
///   segment, outside any lock, so concurrent `fdatasync`s overlap: the disk may run them in
///   parallel, and a journaling file system may merge them into shared commits (the kernel's own
///   group commit);
/// - `fsync_per_append_serialized`: a log without group commit, `flush.messages=1`: each append
///   fsyncs inside the log's writer path, in append order, before the next append starts;
/// - `group_commit`: `append_durable`.
///
/// Where the kernel says, each also reports the disk's cache flushes per append: concurrent
/// `fdatasync`s can share one.
/// The three ways `durable` appends, with the `flush.messages` each runs under.
const DURABLE_VARIANTS: [(&str, AppendFn, i64); 3] = [
    (
        "fsync_per_append_concurrent",
        |log, template| {
            log.append_as_leader(&mut template.to_vec()).unwrap();
            log.active_segment().flush_data().unwrap();
        },
        i64::MAX,
    ),
    (
        "fsync_per_append_serialized",
        |log, template| {
            log.append_as_leader(&mut template.to_vec()).unwrap();
        },
        1,
    ),
    (
        "group_commit",
        |log, template| {
            log.append_durable(&mut template.to_vec()).unwrap();
        },
        i64::MAX,
    ),
];

const DURABLE_THREADS: usize = 4;
const DURABLE_PER_THREAD: usize = 200;

/// One timed run: a fresh log in `dir`, 4 threads of 200 durable appends each.
fn durable_run(dir: &Path, template: &[u8], append: AppendFn, flush_messages: i64) -> DurableRun {
    let fs = CountingFs::default();
    let config = LogConfig::default().with_flush_messages(flush_messages);
    let (log, _) = PartitionLog::open(
        fs.clone(),
        dir,
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let syncs_before = fs.syncs();
    let flushes_before = device_flushes(dir);
    let started = Instant::now();
    std::thread::scope(|s| {
        for _ in 0..DURABLE_THREADS {
            let log = &log;
            s.spawn(move || {
                for _ in 0..DURABLE_PER_THREAD {
                    append(log, template);
                }
            });
        }
    });
    let elapsed = started.elapsed();
    let run = DurableRun {
        elapsed,
        syncs: fs.syncs() - syncs_before,
        rounds: log.group_commit_rounds(),
        flushes: flushes_before
            .zip(device_flushes(dir))
            .map(|(before, after)| after - before),
    };
    drop(log);
    let _ = std::fs::remove_dir_all(dir);
    run
}

fn durable(c: &mut Criterion) {
    let template = producer_batch(16, 1024);
    let root = tempfile::tempdir().unwrap();
    let appends = (DURABLE_PER_THREAD * DURABLE_THREADS) as u64;
    let mut group = c.benchmark_group("log_durable_append_4_threads");
    group.throughput(Throughput::Elements(appends));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    let mut run = 0;
    let mut counts: Vec<(&str, Vec<DurableRun>)> = Vec::new();
    for (name, append, flush_messages) in DURABLE_VARIANTS {
        let mut runs = Vec::new();
        group.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let mut elapsed = Duration::ZERO;
                for _ in 0..iters {
                    run += 1;
                    let dir = root.path().join(format!("d-{run}"));
                    let one = durable_run(&dir, &template, append, flush_messages);
                    elapsed += one.elapsed;
                    runs.push(one);
                }
                elapsed
            });
        });
        counts.push((name, runs));
    }
    group.finish();
    for (name, runs) in counts {
        print_durable_counts(name, appends, runs);
    }
    // Criterion times one variant after the other, so a shared machine's load can change in
    // between: also run them in turn, round after round, and compare their medians.
    let rounds: usize = std::env::var("SEGLOG_BENCH_DURABLE_ROUNDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let mut interleaved: Vec<Vec<DurableRun>> =
        DURABLE_VARIANTS.iter().map(|_| Vec::new()).collect();
    for _ in 0..rounds {
        for ((_, append, flush_messages), runs) in DURABLE_VARIANTS.iter().zip(&mut interleaved) {
            run += 1;
            let dir = root.path().join(format!("d-{run}"));
            runs.push(durable_run(&dir, &template, *append, *flush_messages));
        }
    }
    if rounds > 0 {
        let medians: Vec<Duration> = interleaved
            .iter_mut()
            .map(|runs| {
                runs.sort_unstable_by_key(|r| r.elapsed);
                runs[runs.len() / 2].elapsed
            })
            .collect();
        let group_commit = medians[2].as_secs_f64();
        eprintln!(
            "interleaved, {rounds} rounds of the three in turn; median time for {appends} durable appends:"
        );
        for ((name, ..), (median, runs)) in
            DURABLE_VARIANTS.iter().zip(medians.iter().zip(interleaved))
        {
            eprintln!(
                "  {name}: {:.1} ms ({:.0} appends/s; group commit is {:.2}x its throughput)",
                median.as_secs_f64() * 1e3,
                appends as f64 / median.as_secs_f64(),
                median.as_secs_f64() / group_commit
            );
            print_durable_counts(name, appends, runs);
        }
        print_durable_ceiling(appends, &medians);
    }
}

/// The most any scheme can do here: each of the 4 appenders waits for its own ack, and no ack
/// comes sooner than one append plus one sync of it on an otherwise idle disk, which is what
/// each append of the serialized variant takes. So at most 4 appends complete per serialized
/// append's time, and 2x the concurrent variant is out of reach wherever that variant already
/// runs at more than half of this ceiling (the disk runs concurrent flushes in parallel, or the
/// journal merges them).
fn print_durable_ceiling(appends: u64, medians: &[Duration]) {
    let rate = |d: &Duration| appends as f64 / d.as_secs_f64();
    let ceiling = DURABLE_THREADS as f64 * rate(&medians[1]);
    eprintln!(
        "ceiling for {DURABLE_THREADS} appenders that each wait for their own ack: \
         {DURABLE_THREADS} x the serialized rate = {ceiling:.0} appends/s; of it, group commit \
         reaches {:.0}%, concurrent fsyncs {:.0}%, serialized {:.0}%",
        100.0 * rate(&medians[2]) / ceiling,
        100.0 * rate(&medians[0]) / ceiling,
        100.0 * rate(&medians[1]) / ceiling,
    );
}

/// What one timed run of a durable-append variant asked of the file system and the disk.
struct DurableRun {
    /// The wall time of the appends.
    elapsed: Duration,
    /// `fdatasync`s and directory `fsync`s.
    syncs: u64,
    /// Group-commit rounds.
    rounds: u64,
    /// The disk's cache flushes, if the kernel says.
    flushes: Option<u64>,
}

fn print_durable_counts(name: &str, appends: u64, mut runs: Vec<DurableRun>) {
    if runs.is_empty() {
        return;
    }
    runs.sort_unstable_by_key(|r| (r.syncs, r.rounds));
    let (syncs, rounds) = (runs[runs.len() / 2].syncs, runs[runs.len() / 2].rounds);
    let rounds = if rounds == 0 {
        String::new()
    } else {
        format!(", {rounds} group-commit rounds")
    };
    let mut flushes: Vec<u64> = runs.iter().filter_map(|r| r.flushes).collect();
    let device = if flushes.is_empty() {
        String::new()
    } else {
        flushes.sort_unstable();
        let median = flushes[flushes.len() / 2];
        format!(
            "; the disk: median {median} cache flushes, {:.2} per append (any process's)",
            median as f64 / appends as f64
        )
    };
    eprintln!(
        "{name}: median {syncs} syncs (fdatasync + directory fsync) for {appends} durable \
         appends: {:.2} syncs per append, {:.2} appends per sync{rounds}{device} ({} runs)",
        syncs as f64 / appends as f64,
        appends as f64 / syncs as f64,
        runs.len()
    );
}

fn open_many_segments(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("many-0");
    std::fs::create_dir_all(&dir).unwrap();
    let template = producer_batch(1, 100);
    let segments = 10_000_i64;
    segments::one_batch_segments(&dir, segments, |_| template.clone(), |_| {});
    let clean = segments::clean_shutdown(segments);
    let mut group = c.benchmark_group("log_open");
    group.sample_size(10);
    group.bench_function("open_10000_segments_clean", |b| {
        b.iter(|| {
            let (log, report) = PartitionLog::open(
                RealFs,
                &dir,
                LogConfig::default(),
                clean,
                Arc::new(SystemClock),
            )
            .unwrap();
            assert_eq!(report.segments_scanned, 0);
            assert_eq!(log.log_end_offset(), segments);
            assert_eq!(
                seglog_mmap_index::live_mappings(),
                0,
                "opening mapped an index"
            );
            log
        });
    });
    group.finish();
}

fn random_reads(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let gib: u64 = std::env::var("SEGLOG_BENCH_READ_GIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    // `SEGLOG_BENCH_MAPPINGS=n` puts the log's mappings under a budget of `n`
    // (`seglog.max.segment.mappings`), to measure its bookkeeping on the same path.
    let config = LogConfig::default().with_max_segment_mappings(
        std::env::var("SEGLOG_BENCH_MAPPINGS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(-1),
    );
    let log = open_log(&root.path().join("reads-0"), config);
    // 100-byte records in batches of 10: one record's batch is about 1.3 KiB.
    let template = producer_batch(10, 100);
    while log.size() < gib << 30 {
        log.append_as_leader(&mut template.clone()).unwrap();
    }
    log.wait_for_background_flushes();
    let end = log.log_end_offset();
    let mut rng = 0x9E37_79B9_7F4A_7C15_u64;
    let mut buf = Vec::new();
    let mut group = c.benchmark_group(format!("log_random_read_{gib}gib"));
    group.throughput(Throughput::Elements(1));
    let mut read_one = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        let target = (rng % end as u64) as i64;
        let fetch = log.read(target, 1, Isolation::LogEnd, true).unwrap();
        fetch.read_into(&mut buf).unwrap();
        black_box(buf.len())
    };
    // `SEGLOG_BENCH_CPU_TIME=1` times the reads in this thread's CPU time (user and system)
    // instead of wall time: on a shared machine, wall time also counts the time the thread
    // waited for a core.
    if std::env::var_os("SEGLOG_BENCH_CPU_TIME").is_some_and(|v| v == "1") {
        group.bench_function("read_one_record_cpu_time", |b| {
            b.iter_custom(|iters| {
                let started = thread_cpu_time();
                for _ in 0..iters {
                    read_one();
                }
                thread_cpu_time().saturating_sub(started)
            });
        });
    } else {
        group.bench_function("read_one_record", |b| b.iter(&mut read_one));
    }
    group.finish();
}

/// The CPU time this thread has used (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// One batch of `count` 100-byte records at `base`; `txn` makes it transactional data of that
/// producer.
fn batch_at(base: i64, count: i32, txn: Option<i64>) -> Vec<u8> {
    let value = [b'v'; 100];
    let mut options = BatchOptions::new(base, Compression::None);
    if let Some(pid) = txn {
        options.producer_id = pid;
        options.producer_epoch = 0;
        options.base_sequence = 0;
        options.transactional = true;
    }
    let records = (0..count).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(&value[..])));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&options, records, &mut out)
        .unwrap();
    out
}

/// An ABORT marker of `pid` at `offset`.
fn abort_marker(offset: i64, pid: i64) -> Vec<u8> {
    let mut options = BatchOptions::new(offset, Compression::None);
    options.producer_id = pid;
    options.producer_epoch = 0;
    options.transactional = true;
    options.control = true;
    let key = ControlRecordType::Abort.key_bytes();
    let value = EndTransactionMarker {
        version: 0,
        coordinator_epoch: 0,
    }
    .value_bytes();
    let record = NewRecord::new(0, 1_700_000_000_000, Some(&key), Some(&value));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&options, std::iter::once(record), &mut out)
        .unwrap();
    out
}

/// A log of 20,000 batches of 10 records; with `aborted`, every 100th batch is a transaction
/// of its own producer, aborted by the marker after it (1% of the batches), its `.txnindex`
/// entry written if the append path did not write it.
fn isolation_log(dir: &Path, aborted: bool) -> PartitionLog {
    let log = open_log(dir, LogConfig::default());
    let mut next = 0_i64;
    for i in 0..20_000_i64 {
        let txn = (aborted && i % 100 == 50).then_some(1000 + i);
        log.append_as_follower(&batch_at(next, 10, txn)).unwrap();
        let first = next;
        next += 10;
        if let Some(pid) = txn {
            log.append_as_follower(&abort_marker(next, pid)).unwrap();
            let txn = AbortedTxn::new(pid, first, next, next + 1);
            let active = log.active_segment();
            if !active.all_aborted_txns().unwrap().contains(&txn) {
                active.append_aborted_txn(txn).unwrap();
            }
            next += 1;
        }
    }
    log.set_high_watermark(log.log_end_offset());
    log
}

/// The whole log consumed in 1 MiB fetches, as a consumer at `level` does: the read, the bytes,
/// and the records `consumer_records` returns. Returns the records.
fn consume_all(log: &PartitionLog, level: IsolationLevel, buf: &mut Vec<u8>) -> usize {
    let isolation = Isolation::for_consumer(level);
    let (mut next, mut count) = (0, 0);
    while next < log.log_end_offset() {
        let fetch = log.read(next, 1 << 20, isolation, true).unwrap();
        fetch.read_into(buf).unwrap();
        let aborted = fetch.aborted_transactions.unwrap_or_default();
        let mut records = consumer_records(buf, next, level, &aborted);
        for r in records.by_ref() {
            black_box(r.unwrap());
            count += 1;
        }
        assert!(records.next_fetch_offset() > next, "the consumer moves on");
        next = records.next_fetch_offset();
    }
    count
}

/// read_committed against read_uncommitted over the same log (issue 18's targets: at least
/// 0.95x without aborted transactions, 0.8x with 1% of the batches aborted).
fn read_isolation(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let plain = isolation_log(&root.path().join("plain-0"), false);
    let mixed = isolation_log(&root.path().join("mixed-0"), true);
    let mut buf = Vec::new();
    let mut group = c.benchmark_group("log_read_isolation");
    group.throughput(Throughput::Elements(200_000));
    group.sample_size(20);
    for (name, log, level) in [
        ("read_uncommitted", &plain, IsolationLevel::ReadUncommitted),
        (
            "read_committed_no_aborts",
            &plain,
            IsolationLevel::ReadCommitted,
        ),
        (
            "read_uncommitted_1pct_aborted",
            &mixed,
            IsolationLevel::ReadUncommitted,
        ),
        (
            "read_committed_1pct_aborted",
            &mixed,
            IsolationLevel::ReadCommitted,
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| consume_all(log, level, &mut buf)));
    }
    group.finish();
}

criterion_group!(
    benches,
    append,
    durable,
    open_many_segments,
    random_reads,
    read_isolation
);
criterion_main!(benches);
