//! Lazy open bench: constructing lazy handles for 10,000 existing index pairs, without touching
//! them. Asserts that no mapping is created (`live_mappings` does not move).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "bench")]

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use seglog_mmap_index::{LazyOffsetIndex, LazyTimeIndex, OffsetIndex, TimeIndex, live_mappings};

const PAIRS: i64 = 10_000;

fn bench_lazy_open(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for i in 0..PAIRS {
        let stem = dir.path().join(format!("{:020}", i * 1000));
        let (index, time) = (
            stem.with_extension("index"),
            stem.with_extension("timeindex"),
        );
        std::fs::write(&index, [0_u8; 80]).unwrap();
        std::fs::write(&time, [0_u8; 120]).unwrap();
        paths.push((i * 1000, index, time));
    }
    let before = live_mappings();
    let mut g = c.benchmark_group("lazy_open");
    g.bench_function("open_10000_pairs_untouched", |b| {
        b.iter(|| {
            let pairs: Vec<(LazyOffsetIndex, LazyTimeIndex)> = paths
                .iter()
                .map(|(base, index, time)| {
                    (
                        OffsetIndex::options(index.clone(), *base)
                            .max_index_size(10 << 20)
                            .lazy(),
                        TimeIndex::options(time.clone(), *base)
                            .max_index_size(10 << 20)
                            .lazy(),
                    )
                })
                .collect();
            assert_eq!(live_mappings(), before, "a lazy open created a mapping");
            black_box(pairs)
        });
    });
    g.finish();
    assert_eq!(live_mappings(), before);
}

criterion_group!(benches, bench_lazy_open);
criterion_main!(benches);
