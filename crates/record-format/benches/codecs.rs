//! Each codec's compress and decompress throughput on the records section of a batch of 64
//! JSON-like 1 KiB records (throughput counts uncompressed bytes).
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
use seglog_record_format::{Compression, Compressor};

fn codecs(c: &mut Criterion) {
    let raw = common::batches(1, 64, 1024, Compression::None);
    let records = raw[61..].to_vec();
    let mut compressor = Compressor::new();
    let mut g = c.benchmark_group("codecs");
    g.throughput(Throughput::Bytes(records.len() as u64));
    for codec in &Compression::ALL[1..] {
        let mut z = Vec::new();
        compressor
            .compress(*codec, &records, &mut z)
            .expect("compress");
        eprintln!(
            "{codec}: {} -> {} bytes ({:.2}x)",
            records.len(),
            z.len(),
            records.len() as f64 / z.len() as f64
        );
        let mut out = Vec::with_capacity(2 * records.len());
        g.bench_function(format!("{codec} compress"), |b| {
            b.iter(|| {
                out.clear();
                compressor
                    .compress(*codec, black_box(&records), &mut out)
                    .expect("compress");
                out.len()
            });
        });
        g.bench_function(format!("{codec} decompress"), |b| {
            b.iter(|| {
                out.clear();
                seglog_record_format::decompress(*codec, black_box(&z), 2, &mut out, 1 << 24)
                    .expect("decompress");
                out.len()
            });
        });
    }
    g.finish();
}

criterion_group!(benches, codecs);
criterion_main!(benches);
