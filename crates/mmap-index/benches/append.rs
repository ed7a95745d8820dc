//! Append bench: amortized cost of `OffsetIndex::append` and `TimeIndex::maybe_append` into a
//! default-size (10 MiB) preallocated index whose pages are already in the page cache. When the
//! index fills up it is truncated (a count reset), which is amortized over 1.3 million appends.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "bench")]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use seglog_mmap_index::{OffsetIndex, TimeIndex};

const MAX_INDEX_SIZE: u32 = 10 * 1024 * 1024;

fn bench_append(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut index = OffsetIndex::options(dir.path().join("a.index"), 0)
        .max_index_size(MAX_INDEX_SIZE)
        .open()
        .unwrap();
    // Touch every page once so the bench measures appends, not first-touch page faults.
    while !index.is_full() {
        let n = i64::try_from(index.entries()).unwrap();
        index.append(n, 0).unwrap();
    }
    index.truncate().unwrap();

    let mut g = c.benchmark_group("append");
    let mut next: i64 = 0;
    g.bench_function("offset_index_append", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut start = Instant::now();
            for _ in 0..iters {
                if index.is_full() {
                    total += start.elapsed();
                    index.truncate().unwrap();
                    next = 0;
                    start = Instant::now();
                }
                index.append(black_box(next), black_box(4096)).unwrap();
                next += 1;
            }
            total + start.elapsed()
        });
    });

    let mut tindex = TimeIndex::options(dir.path().join("a.timeindex"), 0)
        .max_index_size(MAX_INDEX_SIZE)
        .open()
        .unwrap();
    while !tindex.is_full() {
        let n = i64::try_from(tindex.entries()).unwrap();
        tindex.maybe_append(n, n, false).unwrap();
    }
    tindex.truncate().unwrap();
    let mut tnext: i64 = 0;
    g.bench_function("time_index_maybe_append", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut start = Instant::now();
            for _ in 0..iters {
                if tindex.is_full() {
                    total += start.elapsed();
                    tindex.truncate().unwrap();
                    tnext = 0;
                    start = Instant::now();
                }
                tindex
                    .maybe_append(black_box(tnext), black_box(tnext), false)
                    .unwrap();
                tnext += 1;
            }
            total + start.elapsed()
        });
    });
    g.finish();
}

criterion_group!(benches, bench_append);
criterion_main!(benches);
