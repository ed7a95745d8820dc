//! Partition-log benches: leader appends against segment appends in the same run, durable appends
//! with group commit against one fsync per append, opening a 10,000-segment log after a clean
//! shutdown, and random one-record reads.
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

use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use seglog_log::{Isolation, LoadOptions, LogConfig, PartitionLog, SystemClock};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord, set_base_offset};
use seglog_segment::io::RealFs;
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
    group.finish();
}

fn durable(c: &mut Criterion) {
    let template = producer_batch(16, 1024);
    let root = tempfile::tempdir().unwrap();
    let per_thread = 200;
    let threads = 4;
    let mut group = c.benchmark_group("log_durable_append_4_threads");
    group.throughput(Throughput::Elements((per_thread * threads) as u64));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    let mut run = 0;
    let mut stats = Vec::new();
    group.bench_function("fsync_per_append_baseline", |b| {
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iters {
                run += 1;
                let log = open_log(&root.path().join(format!("b-{run}")), LogConfig::default());
                let started = Instant::now();
                std::thread::scope(|s| {
                    for _ in 0..threads {
                        let (log, template) = (log.clone(), &template);
                        s.spawn(move || {
                            for _ in 0..per_thread {
                                log.append_as_leader(&mut template.clone()).unwrap();
                                log.active_segment().flush_data().unwrap();
                            }
                        });
                    }
                });
                elapsed += started.elapsed();
            }
            elapsed
        });
    });
    group.bench_function("group_commit", |b| {
        b.iter_custom(|iters| {
            let mut elapsed = Duration::ZERO;
            for _ in 0..iters {
                run += 1;
                let log = open_log(&root.path().join(format!("g-{run}")), LogConfig::default());
                let started = Instant::now();
                std::thread::scope(|s| {
                    for _ in 0..threads {
                        let (log, template) = (log.clone(), &template);
                        s.spawn(move || {
                            for _ in 0..per_thread {
                                log.append_durable(&mut template.clone()).unwrap();
                            }
                        });
                    }
                });
                elapsed += started.elapsed();
                stats.push(log.group_commit_rounds());
            }
            elapsed
        });
    });
    group.finish();
    if !stats.is_empty() {
        stats.sort_unstable();
        let appends = per_thread * threads;
        eprintln!(
            "group commit: median {} fsync rounds for {appends} durable appends ({:.1} appends per fsync)",
            stats[stats.len() / 2],
            appends as f64 / stats[stats.len() / 2] as f64
        );
    }
}

fn open_many_segments(c: &mut Criterion) {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("many-0");
    std::fs::create_dir_all(&dir).unwrap();
    let template = producer_batch(1, 100);
    let segments = 10_000_i64;
    for base in 0..segments {
        let seg =
            LogSegment::open(RealFs, &dir, base, SegmentConfig::default(), false, "", 0).unwrap();
        let mut batch = template.clone();
        set_base_offset(&mut batch, base).unwrap();
        seg.append(base, &batch).unwrap();
        seg.index_entries().unwrap();
        seg.close().unwrap();
    }
    let clean = LoadOptions {
        recovery_point: segments,
        log_start_offset: 0,
        had_clean_shutdown: true,
    };
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
    let config = LogConfig {
        max_segment_mappings: std::env::var("SEGLOG_BENCH_MAPPINGS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(-1),
        ..LogConfig::default()
    };
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
    group.bench_function("read_one_record", |b| {
        b.iter(|| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let target = (rng % end as u64) as i64;
            let fetch = log.read(target, 1, Isolation::LogEnd, true).unwrap();
            fetch.read_into(&mut buf).unwrap();
            black_box(buf.len())
        });
    });
    group.finish();
}

criterion_group!(benches, append, durable, open_many_segments, random_reads);
criterion_main!(benches);
