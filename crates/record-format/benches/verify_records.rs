//! Recovery's records check (`RecordBatch::verify_records`) on uncompressed batches, against
//! the record iterator it replaced for good batches (the same answer, every record a view).
//! Shapes: recovery's 16 records of 1 KiB a batch, and 1000 records of 100 bytes a batch, about
//! 200 KiB of each: in L2, as a batch is in cache when recovery has just checked its CRC.
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
use seglog_record_format::{
    Compression, DEFAULT_MAX_DECOMPRESSED_BYTES, RecordBatch, Result, batches,
};

/// The iterator's answer: what `verify_records` computed for every batch before the walk.
fn iterate(batch: &RecordBatch<'_>) -> Result<Option<i64>> {
    let mut last = None;
    for r in batch.records()? {
        last = Some(r?.offset());
    }
    Ok(last)
}

fn verify(c: &mut Criterion) {
    let shapes = [
        (
            "16 x 1 KiB records a batch",
            common::batches(16, 16, 1000, Compression::None),
        ),
        (
            "1000 x 100 B records a batch",
            common::batches(2, 1000, 90, Compression::None),
        ),
    ];
    let mut g = c.benchmark_group("verify_records");
    for (name, buf) in &shapes {
        let views: Vec<RecordBatch<'_>> = batches(buf)
            .map(|f| f.expect("framed").v2().expect("v2"))
            .collect();
        let records: u64 = views.iter().map(|b| b.records_count() as u64).sum();
        g.throughput(Throughput::Elements(records));
        g.bench_function(format!("walk, {name}"), |b| {
            let mut scratch = Vec::new();
            b.iter(|| {
                let mut sum = 0i64;
                for batch in black_box(&views) {
                    let last = batch
                        .verify_records(&mut scratch, DEFAULT_MAX_DECOMPRESSED_BYTES)
                        .expect("valid");
                    sum ^= last.unwrap_or(-1);
                }
                sum
            });
        });
        g.bench_function(format!("iterator, {name}"), |b| {
            b.iter(|| {
                let mut sum = 0i64;
                for batch in black_box(&views) {
                    sum ^= iterate(batch).expect("valid").unwrap_or(-1);
                }
                sum
            });
        });
    }
    g.finish();
}

criterion_group!(benches, verify);
criterion_main!(benches);
