//! Framing alone, and framing plus CRC-32C validation, over uncompressed 16 KiB batches of
//! 1 KiB records (target: at least 2 GB/s with validation).
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
use seglog_record_format::{Compression, batches};

fn framing(c: &mut Criterion) {
    // 16 records with ~1000-byte values make a batch of about 16 KiB; 256 batches = 4 MiB.
    let buf = common::batches(256, 16, 1000, Compression::None);
    let mut g = c.benchmark_group("framing");
    g.throughput(Throughput::Bytes(buf.len() as u64));
    g.bench_function("frame only, 16 KiB batches", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for f in batches(black_box(&buf)) {
                n += f.expect("framed").size_in_bytes();
            }
            n
        });
    });
    g.bench_function("frame + validate CRC, 16 KiB batches", |b| {
        b.iter(|| {
            let mut n = 0usize;
            for f in batches(black_box(&buf)) {
                let f = f.expect("framed");
                f.validate().expect("valid");
                n += f.size_in_bytes();
            }
            n
        });
    });
    g.finish();
}

criterion_group!(benches, framing);
criterion_main!(benches);
