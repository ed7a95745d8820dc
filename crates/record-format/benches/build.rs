//! Building and encoding uncompressed batches of 1 KiB records into a reused buffer (target: at
//! least 1 GB/s).
#![allow(
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::expect_used,
    reason = "bench setup on fixed, known sizes"
)]
#![allow(missing_docs, reason = "criterion macros generate undocumented items")]

mod common;

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

fn build(c: &mut Criterion) {
    let values: Vec<Vec<u8>> = (0..16).map(|i| common::json_record(i, 1000)).collect();
    let mut builder = BatchBuilder::new();
    let mut out = Vec::with_capacity(8 << 20);
    let per_iter = 256;
    // Measure the output size once for the throughput figure.
    for b in 0..per_iter {
        let recs = values
            .iter()
            .enumerate()
            .map(|(i, v)| NewRecord::new(i as i32, 1_700_000_000_000, None, Some(&v[..])));
        builder
            .build(
                &BatchOptions::new(b * 16, Compression::None),
                recs,
                &mut out,
            )
            .expect("valid");
    }
    let bytes = out.len() as u64;
    let mut g = c.benchmark_group("build");
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("uncompressed, 16 KiB batches of 1 KiB records", |b| {
        b.iter(|| {
            out.clear();
            for batch in 0..per_iter {
                let recs = values.iter().enumerate().map(|(i, v)| {
                    NewRecord::new(i as i32, 1_700_000_000_000 + i as i64, None, Some(&v[..]))
                });
                builder
                    .build(
                        &BatchOptions::new(batch * 16, Compression::None),
                        recs,
                        &mut out,
                    )
                    .expect("valid");
            }
            black_box(out.len())
        });
    });
    g.finish();
}

criterion_group!(benches, build);
criterion_main!(benches);
