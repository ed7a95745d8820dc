//! Segment benches: append against a plain `write_all` loop (the physical limit), random
//! `translate_offset` on a 1 GiB segment, recovery of a 1 GiB segment, and recovery of a
//! compressed segment against the decompression and CRC work it cannot avoid (recovery decodes
//! every record of every batch, issue 17 point 6).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "bench"
)]

use std::hint::black_box;
use std::io::Write;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use seglog_fs::RealFs;
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_segment::{LogSegment, MappingBudget, SegmentConfig};

/// 16 records of 1 KiB: a 16 KiB batch.
fn batch(base_offset: i64, builder: &mut BatchBuilder, out: &mut Vec<u8>) {
    let value = vec![b'x'; 1024];
    let key = b"key-0000";
    let records = (0..16).map(|i| {
        NewRecord::new(
            i,
            1_700_000_000_000 + base_offset + i64::from(i),
            Some(&key[..]),
            Some(&value[..]),
        )
    });
    builder
        .build(
            &BatchOptions::new(base_offset, Compression::None),
            records,
            out,
        )
        .unwrap();
}

/// `count` batches back to back, with their offsets.
fn batches(count: usize) -> Vec<(i64, Vec<u8>)> {
    let mut builder = BatchBuilder::new();
    (0..count)
        .map(|i| {
            let base = i as i64 * 16;
            let mut out = Vec::new();
            batch(base, &mut builder, &mut out);
            (base + 15, out)
        })
        .collect()
}

/// `SEGLOG_BENCH_MAPPINGS=n` counts the benched segment's mappings against a budget of `n`, to
/// measure the budget's bookkeeping on the same paths (unset: no budget, as before).
fn budget() -> Option<MappingBudget> {
    std::env::var("SEGLOG_BENCH_MAPPINGS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map(MappingBudget::new)
}

fn config() -> SegmentConfig {
    SegmentConfig::default()
        .with_index_interval_bytes(4096)
        .with_max_index_size(10 * 1024 * 1024)
}

fn append(c: &mut Criterion) {
    let data = batches(2048); // about 34 MiB per iteration
    let total: u64 = data.iter().map(|(_, b)| b.len() as u64).sum();
    let dir = tempfile::tempdir().unwrap();
    let mut group = c.benchmark_group("segment_append_16k_batches");
    group.throughput(Throughput::Bytes(total));
    group.sample_size(20);
    group.bench_function("write_all_baseline", |b| {
        b.iter_batched(
            || {
                let path = dir.path().join("baseline");
                let _ = std::fs::remove_file(&path);
                std::fs::File::create(&path).unwrap()
            },
            |mut file| {
                for (_, bytes) in &data {
                    file.write_all(bytes).unwrap();
                }
                file
            },
            BatchSize::PerIteration,
        );
    });
    group.bench_function("log_segment_append", |b| {
        b.iter_batched(
            || {
                for ext in ["log", "index", "timeindex"] {
                    let _ = std::fs::remove_file(
                        dir.path().join(format!("00000000000000000000.{ext}")),
                    );
                }
                let seg = LogSegment::open(RealFs, dir.path(), 0, config(), false, "", 0)
                    .unwrap()
                    .with_mapping_budget(budget());
                seg.index_entries().unwrap(); // open the indexes outside the timed part
                seg
            },
            |seg| {
                for (last, bytes) in &data {
                    seg.append(*last, bytes).unwrap();
                }
                seg
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
}

/// A 1 GiB segment of 16 KiB batches with the default index interval.
fn big_segment(dir: &std::path::Path) -> (LogSegment, i64) {
    let seg = LogSegment::open(RealFs, dir, 0, config(), false, "", 0)
        .unwrap()
        .with_mapping_budget(budget());
    let mut builder = BatchBuilder::new();
    let mut buf = Vec::new();
    let mut base = 0_i64;
    while seg.size() < (1 << 30) - 64 * 1024 {
        buf.clear();
        batch(base, &mut builder, &mut buf);
        seg.append(base + 15, &buf).unwrap();
        base += 16;
    }
    (seg, base)
}

fn translate_and_recover(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (seg, next_offset) = big_segment(dir.path());
    let mut rng = 0x9e37_79b9_7f4a_7c15_u64;
    let mut group = c.benchmark_group("segment_1gib");
    group.bench_function("translate_offset_random", |b| {
        b.iter(|| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let target = (rng % next_offset.cast_unsigned()).cast_signed();
            black_box(seg.translate_offset(target, 0).unwrap())
        });
    });
    // The floor under translate: one positioned read of a 61-byte batch header at a random batch.
    let log = std::fs::File::open(seg.log_path()).unwrap();
    let batch_size = 16 * 1024 + 1024;
    let batches_count = seg.size() / batch_size;
    group.bench_function("pread_61_bytes_baseline", |b| {
        let mut buf = [0_u8; 61];
        b.iter(|| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let at = (rng % batches_count) * batch_size;
            std::os::unix::fs::FileExt::read_at(&log, &mut buf, at).unwrap();
            black_box(buf[8])
        });
    });
    // A one-record fetch's copy: 1.3 KiB at a random batch, through the segment (its mapping)
    // and, as the baseline, with one positioned read.
    let mut region = Vec::new();
    group.bench_function("read_region_1300_bytes_random", |b| {
        b.iter(|| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let position = (rng % batches_count) * batch_size;
            seg.read_region(
                seglog_segment::FileRegion {
                    position,
                    length: 1300,
                },
                &mut region,
            )
            .unwrap();
            black_box(region.len())
        });
    });
    group.bench_function("pread_1300_bytes_baseline", |b| {
        let mut buf = vec![0_u8; 1300];
        b.iter(|| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let at = (rng % batches_count) * batch_size;
            std::os::unix::fs::FileExt::read_at(&log, &mut buf, at).unwrap();
            black_box(buf[8])
        });
    });
    group.throughput(Throughput::Bytes(seg.size()));
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("recover", |b| {
        b.iter(|| {
            let report = seg.recover().unwrap();
            assert_eq!(report.bytes_truncated, 0);
            report
        });
    });
    group.finish();
}

/// A segment of about 128 MiB of compressed 16-record batches whose values are pseudo-random
/// text (about 2:1 for lz4), and the file's bytes.
fn compressed_segment(dir: &std::path::Path, codec: Compression) -> (LogSegment, Vec<u8>) {
    let seg = LogSegment::open(RealFs, dir, 0, config(), false, "", 0).unwrap();
    let mut builder = BatchBuilder::new();
    let mut buf = Vec::new();
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut base = 0_i64;
    while seg.size() < 128 << 20 {
        let values: Vec<Vec<u8>> = (0..16)
            .map(|_| {
                (0..1024)
                    .map(|_| {
                        rng ^= rng << 13;
                        rng ^= rng >> 7;
                        rng ^= rng << 17;
                        b"abcdefghijklmnop"[(rng % 16) as usize]
                    })
                    .collect()
            })
            .collect();
        let records = values.iter().enumerate().map(|(i, v)| {
            NewRecord::new(
                i as i32,
                1_700_000_000_000 + base,
                Some(b"key"),
                Some(&v[..]),
            )
        });
        buf.clear();
        builder
            .build(&BatchOptions::new(base, codec), records, &mut buf)
            .unwrap();
        seg.append(base + 15, &buf).unwrap();
        base += 16;
    }
    seg.flush().unwrap();
    let bytes = std::fs::read(seg.log_path()).unwrap();
    (seg, bytes)
}

fn recover_compressed(c: &mut Criterion) {
    let mut group = c.benchmark_group("segment_recover_compressed_128mib");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(10));
    for codec in [Compression::Lz4, Compression::Zstd] {
        let dir = tempfile::tempdir().unwrap();
        let (seg, bytes) = compressed_segment(dir.path(), codec);
        group.throughput(Throughput::Bytes(seg.size()));
        group.bench_function(format!("{codec:?}_recover"), |b| {
            b.iter(|| {
                let report = seg.recover().unwrap();
                assert_eq!(report.bytes_truncated, 0);
                report
            });
        });
        // The floor: every batch's CRC and its records decompressed, from memory.
        let mut scratch = Vec::new();
        group.bench_function(format!("{codec:?}_crc_and_decompress_baseline"), |b| {
            b.iter(|| {
                let mut n = 0_usize;
                for framed in seglog_record_format::batches(&bytes) {
                    let batch = framed.unwrap().v2().unwrap();
                    assert!(batch.is_valid());
                    batch
                        .decompress_into(
                            &mut scratch,
                            seglog_record_format::DEFAULT_MAX_DECOMPRESSED_BYTES,
                        )
                        .unwrap();
                    n += scratch.len();
                }
                black_box(n)
            });
        });
    }
    group.finish();
}

criterion_group!(benches, append, translate_and_recover, recover_compressed);
criterion_main!(benches);
