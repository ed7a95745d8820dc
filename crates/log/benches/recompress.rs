//! Leader append with recompression (issue 34's speed point): uncompressed producer batches
//! appended to a topic of `compression.type=zstd` (each batch decoded, rebuilt and compressed
//! at level 3, then written), against compressing the same records sections with the zstd
//! crate alone at the same level, in the same run. The target: at least 0.9x the zstd crate.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "bench"
)]

use std::hint::black_box;
use std::path::Path;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use seglog_fs::RealFs;
use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock};
use seglog_record_format::{
    BatchBuilder, BatchOptions, Compression, NewRecord, RECORD_BATCH_OVERHEAD,
};

/// A producer batch of 16 records of about 1 KiB of JSON-like text (compressible as real
/// payloads are, about 4:1 at zstd level 3), uncompressed.
fn producer_batch(seed: usize) -> Vec<u8> {
    let values: Vec<String> = (0..16)
        .map(|i| {
            let n = seed * 16 + i;
            (0..12)
                .map(|j| {
                    format!(
                        "{{\"id\":{n},\"item\":{j},\"user\":\"user-{}\",\"amount\":{}.{:02}}},",
                        (n * 31 + j) % 1000,
                        (n * 7 + j * 13) % 10_000,
                        (n + j) % 100
                    )
                })
                .collect()
        })
        .collect();
    let records = values.iter().enumerate().map(|(i, v)| {
        NewRecord::new(
            i as i32,
            1_700_000_000_000 + i as i64,
            Some(b"key-0001"),
            Some(v.as_bytes()),
        )
    });
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
}

/// The wall clock's origin.
static START: LazyLock<Instant> = LazyLock::new(Instant::now);

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

fn recompress(c: &mut Criterion) {
    let batches = 1024_usize;
    let templates: Vec<Vec<u8>> = (0..batches).map(producer_batch).collect();
    let total: usize = templates.iter().map(Vec::len).sum();
    let root = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("log_append_recompress_zstd_16x1k");
    group.throughput(Throughput::Bytes(total as u64));
    group.sample_size(20);
    // `SEGLOG_BENCH_CPU_TIME=1` times both in this thread's CPU time (user and system) instead
    // of wall time: on a shared machine, wall time also counts the time the thread waited for a
    // core. Each iteration is one pass over the batches, its setup (a fresh log, the batches
    // copied) outside the timing.
    let cpu = std::env::var_os("SEGLOG_BENCH_CPU_TIME").is_some_and(|v| v == "1");
    let clock = move || {
        if cpu {
            let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
            Duration::new(t.tv_sec.cast_unsigned(), t.tv_nsec.try_into().unwrap_or(0))
        } else {
            START.elapsed()
        }
    };
    let suffix = if cpu { "_cpu_time" } else { "" };
    // The floor: the zstd crate alone compressing each batch's records section, one context
    // reused as the log reuses its own.
    group.bench_function(format!("zstd_crate_alone{suffix}"), |b| {
        let mut zstd = zstd::bulk::Compressor::new(3).unwrap();
        let mut out = Vec::with_capacity(64 << 10);
        b.iter_custom(|iters| {
            let started = clock();
            for _ in 0..iters {
                for t in &templates {
                    out.clear();
                    let records = &t[RECORD_BATCH_OVERHEAD..];
                    out.reserve(zstd::zstd_safe::compress_bound(records.len()));
                    zstd.compress_to_buffer(records, &mut out).unwrap();
                    black_box(&out);
                }
            }
            clock().saturating_sub(started)
        });
    });
    let config = LogConfig::from_pairs([("compression.type", "zstd")]).unwrap();
    let mut run = 0;
    group.bench_function(format!("partition_leader_append_to_zstd{suffix}"), |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let _ = std::fs::remove_dir_all(root.path().join(format!("t-{run}")));
                run += 1;
                let log = open_log(&root.path().join(format!("t-{run}")), config.clone());
                log.active_segment().index_entries().unwrap();
                let mut prepared = templates.clone();
                let started = clock();
                for bytes in &mut prepared {
                    log.append_as_leader(bytes).unwrap();
                }
                total += clock().saturating_sub(started);
                black_box(&log);
            }
            total
        });
    });
    group.finish();
}

criterion_group!(benches, recompress);
criterion_main!(benches);
