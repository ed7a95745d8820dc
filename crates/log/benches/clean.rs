//! Cleaning throughput: a dirty compacted log where 90% of the records are overwritten (each key
//! written ten times), cleaned in one pass; bytes read per second, with the key map's budget and the
//! process's peak resident memory printed beside it. `SEGLOG_BENCH_CLEAN_MIB` sets the log size
//! (default 1024).
#![allow(
    clippy::unwrap_used,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "bench"
)]

use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use seglog_fs::RealFs;
use seglog_log::{CleanOptions, LoadOptions, LogConfig, PartitionLog, SystemClock};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

const RECORD_BYTES: usize = 100;
const PER_BATCH: i64 = 100;

fn peak_rss_kib() -> u64 {
    status_kib("VmHWM:")
}

/// One field of `/proc/self/status`, in KiB.
fn status_kib(field: &str) -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix(field)
                    .map(|v| v.trim().trim_end_matches(" kB").trim().parse().unwrap_or(0))
            })
        })
        .unwrap_or(0)
}

/// Samples `RssAnon` every few milliseconds until dropped, keeping the largest value. The peak
/// RSS (`VmHWM`) also counts the file pages the cleaning maps and reads (shared page cache); the
/// anonymous part is the process's own memory, where the key map lives.
struct AnonSampler {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    peak: std::sync::Arc<std::sync::atomic::AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl AnonSampler {
    fn start() -> Self {
        use std::sync::atomic::Ordering;
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let thread = {
            let (stop, peak) = (stop.clone(), peak.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    peak.fetch_max(status_kib("RssAnon:"), Ordering::Relaxed);
                    std::thread::sleep(Duration::from_millis(5));
                }
            })
        };
        Self {
            stop,
            peak,
            thread: Some(thread),
        }
    }

    fn finish(mut self) -> u64 {
        use std::sync::atomic::Ordering;
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.peak.load(Ordering::Relaxed)
    }
}

fn build(dir: &std::path::Path, mib: u64) -> (PartitionLog, u64) {
    let config = LogConfig::from_pairs([
        ("cleanup.policy", "compact"),
        ("segment.bytes", "134217728"),
    ])
    .unwrap();
    let (log, _) = PartitionLog::open(
        RealFs,
        dir,
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let target = mib << 20;
    let records_total = (target / (RECORD_BYTES as u64 + 10)) as i64;
    let keys = (records_total / 10).max(1);
    let value = [b'v'; RECORD_BYTES - 12];
    let mut builder = BatchBuilder::new();
    let mut offset = 0_i64;
    while log.size() < target {
        let key_bytes: Vec<[u8; 12]> = (0..PER_BATCH)
            .map(|i| {
                let mut k = [b'k'; 12];
                k[4..].copy_from_slice(&((offset + i) * 7_919 % keys).to_be_bytes());
                k
            })
            .collect();
        let records = key_bytes
            .iter()
            .zip(0_i32..)
            .map(|(k, d)| NewRecord::new(d, 1_700_000_000_000, Some(&k[..]), Some(&value[..])));
        let mut batch = Vec::new();
        builder
            .build(
                &BatchOptions::new(0, Compression::None),
                records,
                &mut batch,
            )
            .unwrap();
        log.append_as_leader(&mut batch).unwrap();
        offset += PER_BATCH;
    }
    log.roll().unwrap();
    log.wait_for_background_flushes();
    log.set_high_watermark(log.log_end_offset());
    let dirty = log.size();
    (log, dirty)
}

fn clean(c: &mut Criterion) {
    let mib: u64 = std::env::var("SEGLOG_BENCH_CLEAN_MIB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let budget = 128 * 1024 * 1024;
    let root = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group(format!("clean_{mib}mib_90pct_overwritten"));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(30));
    let mut run = 0;
    let mut bytes = 0;
    let rss_before = peak_rss_kib();
    let anon = AnonSampler::start();
    group.throughput(Throughput::Bytes(mib << 20));
    group.bench_function("clean_one_pass", |b| {
        b.iter_batched(
            || {
                // The previous run's files go first: dirty page cache piling up from earlier
                // samples would throttle later ones into writeback.
                let _ = std::fs::remove_dir_all(root.path().join(format!("t-{run}")));
                run += 1;
                let (log, dirty) = build(&root.path().join(format!("t-{run}")), mib);
                bytes = dirty;
                log
            },
            |log| {
                let options = CleanOptions::default()
                    .with_first_dirty_offset(0)
                    .with_dedupe_buffer_bytes(budget)
                    .with_io_max_bytes_per_second(None)
                    .with_uncleanable_offset(None);
                let report = log.clean(&options).unwrap();
                assert!(report.records_kept * 5 < report.records_read);
                log
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
    eprintln!(
        "clean bench: dirty log {bytes} bytes, key map budget {budget} bytes, peak RSS {} KiB (before the bench: {rss_before} KiB), peak anonymous RSS {} KiB (sampled every 5 ms; the rest of the peak is mapped page cache)",
        peak_rss_kib(),
        anon.finish()
    );
}

criterion_group!(benches, clean);
criterion_main!(benches);
