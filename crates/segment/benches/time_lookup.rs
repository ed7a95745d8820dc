//! `LogSegment::find_offset_by_timestamp` (time index, offset index, batch scan, record decode)
//! of a random record in a 256 MiB segment of 16 x 1 KiB batches, against its limit in the same
//! run: `partition_point` over the batches' max timestamps held in memory, then one `pread` of
//! the batch header found (what bench-compare's `lookup_by_timestamp` limit does). Both timed in
//! this thread's CPU time with `SEGLOG_BENCH_CPU_TIME=1`, wall time otherwise.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "bench"
)]

use std::hint::black_box;
use std::os::unix::fs::FileExt;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use seglog_fs::RealFs;
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_segment::{LogSegment, SegmentConfig};

const BASE_TIMESTAMP: i64 = 1_700_000_000_000;
const SEGMENT_BYTES: u64 = 256 << 20;

/// A batch's last offset and max timestamp, and its position: the limit's in-memory index.
struct Batch {
    last_offset: i64,
    max_timestamp: i64,
    position: u64,
}

/// The segment, and its batches as the limit keeps them. Record `o` has timestamp
/// `BASE_TIMESTAMP + o`, as in bench-compare.
fn segment(dir: &std::path::Path) -> (LogSegment, Vec<Batch>) {
    let seg = LogSegment::open(RealFs, dir, 0, SegmentConfig::default(), false, "", 0).unwrap();
    let value = vec![b'v'; 1024];
    let mut builder = BatchBuilder::new();
    let mut buf = Vec::new();
    let mut batches = Vec::new();
    let mut base = 0_i64;
    while seg.size() < SEGMENT_BYTES {
        buf.clear();
        let records = (0..16).map(|i| {
            NewRecord::new(
                i,
                BASE_TIMESTAMP + base + i64::from(i),
                None,
                Some(&value[..]),
            )
        });
        builder
            .build(
                &BatchOptions::new(base, Compression::None),
                records,
                &mut buf,
            )
            .unwrap();
        let position = seg.size();
        seg.append(base + 15, &buf).unwrap();
        batches.push(Batch {
            last_offset: base + 15,
            max_timestamp: BASE_TIMESTAMP + base + 15,
            position,
        });
        base += 16;
    }
    seg.flush().unwrap();
    (seg, batches)
}

fn xorshift(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// The CPU time this thread has used (`CLOCK_THREAD_CPUTIME_ID`).
fn thread_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

type Group<'a> = criterion::BenchmarkGroup<'a, criterion::measurement::WallTime>;

/// Benches `op` on a fresh random offset below `end` per iteration, timed in wall time or, with
/// `SEGLOG_BENCH_CPU_TIME=1`, in this thread's CPU time.
fn random_ops(g: &mut Group<'_>, name: &str, end: i64, mut op: impl FnMut(i64) -> i64) {
    let mut seed = 0x2545_f491_4f6c_dd1d_u64;
    let mut step = move || op((xorshift(&mut seed) % end as u64) as i64);
    if std::env::var_os("SEGLOG_BENCH_CPU_TIME").is_some_and(|v| v == "1") {
        g.bench_function(name, |b| {
            b.iter_custom(|iters| {
                let started = thread_cpu_time();
                for _ in 0..iters {
                    black_box(step());
                }
                thread_cpu_time().saturating_sub(started)
            });
        });
    } else {
        g.bench_function(name, |b| b.iter(&mut step));
    }
}

fn time_lookup(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (seg, batches) = segment(dir.path());
    let end = batches.last().unwrap().last_offset + 1;
    let mut g = c.benchmark_group("segment_lookup_by_timestamp_256mib");
    random_ops(&mut g, "find_offset_by_timestamp", end, |target| {
        let found = seg
            .find_offset_by_timestamp(BASE_TIMESTAMP + target, 0)
            .unwrap()
            .unwrap();
        assert_eq!(found.offset, target);
        found.offset
    });
    let file = std::fs::File::open(seg.log_path()).unwrap();
    let mut header = [0_u8; 61];
    random_ops(&mut g, "max_timestamps_and_pread_limit", end, |target| {
        let ts = BASE_TIMESTAMP + target;
        let at = batches.partition_point(|b| b.max_timestamp < ts);
        let batch = &batches[at];
        file.read_exact_at(&mut header, batch.position).unwrap();
        let base = i64::from_be_bytes(header[..8].try_into().unwrap());
        assert!(base <= target && target <= batch.last_offset);
        base
    });
    g.finish();
}

criterion_group!(benches, time_lookup);
criterion_main!(benches);
