//! Decoding 100-byte records into borrowed views (target: at least 20 M records/s).
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
use seglog_record_format::{Compression, NewRecord, RecordBatch, batches};

fn decode(c: &mut Criterion) {
    // Each record: ~8 bytes of framing + a 12-byte key + an 80-byte value = about 100 bytes.
    let values: Vec<Vec<u8>> = (0..1000)
        .map(|i| {
            let mut v = common::json_record(i, 200);
            v.truncate(80);
            v
        })
        .collect();
    let keys: Vec<Vec<u8>> = (0..1000)
        .map(|i| format!("key-{i:08}").into_bytes())
        .collect();
    let mut buf = Vec::new();
    let mut builder = seglog_record_format::BatchBuilder::new();
    for b in 0..64 {
        let recs = (0..1000).map(|i| {
            NewRecord::new(
                i as i32,
                1_700_000_000_000 + i as i64,
                Some(&keys[i][..]),
                Some(&values[i][..]),
            )
        });
        let opts = seglog_record_format::BatchOptions::new(b * 1000, Compression::None);
        builder.build(&opts, recs, &mut buf).expect("valid");
    }
    let per_record = (buf.len() - 64 * 61) / 64_000;
    assert!((95..=110).contains(&per_record), "record size {per_record}");
    let views: Vec<RecordBatch<'_>> = batches(&buf)
        .map(|f| f.expect("framed").v2().expect("v2"))
        .collect();

    let mut g = c.benchmark_group("decode_records");
    g.throughput(Throughput::Elements(64_000));
    g.bench_function(format!("borrowed views, {per_record}-byte records"), |b| {
        b.iter(|| {
            let mut sum = 0usize;
            for batch in &views {
                for r in batch.records().expect("uncompressed") {
                    let r = r.expect("valid");
                    sum += r.value().map_or(0, <[u8]>::len) + r.key().map_or(0, <[u8]>::len);
                    sum ^= r.offset() as usize;
                }
            }
            black_box(sum)
        });
    });
    g.finish();
}

criterion_group!(benches, decode);
criterion_main!(benches);
