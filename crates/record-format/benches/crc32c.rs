//! CRC-32C throughput on large buffers (target: at least 5 GB/s).
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

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn crc(c: &mut Criterion) {
    let mut g = c.benchmark_group("crc32c");
    for size in [64 << 10, 1 << 20, 16 << 20] {
        let buf: Vec<u8> = (0..size)
            .map(|i: usize| i.to_be_bytes()[7] ^ 0x5a)
            .collect();
        g.throughput(Throughput::Bytes(size as u64));
        g.bench_function(format!("{} KiB", size >> 10), |b| {
            b.iter(|| seglog_record_format::crc32c(black_box(&buf)));
        });
    }
    g.finish();
}

criterion_group!(benches, crc);
criterion_main!(benches);
