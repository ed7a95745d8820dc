//! Helpers shared by the segment integration tests: batch builders and segment constructors.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_wrap,
    reason = "helpers: each test file uses a different subset, on small fixed values"
)]

use std::path::Path;

use seglog_fs::RealFs;
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_segment::{LogSegment, SegmentConfig};

/// One v2 batch at `base_offset` with one record per timestamp in `timestamps` (offset deltas
/// 0, 1, ...), values `v<offset>` padded to `value_len` bytes.
pub(crate) fn batch_with(
    base_offset: i64,
    timestamps: &[i64],
    value_len: usize,
    compression: Compression,
) -> Vec<u8> {
    let values: Vec<Vec<u8>> = (0..timestamps.len())
        .map(|i| {
            let mut v = format!("v{}", base_offset + i as i64).into_bytes();
            v.resize(value_len.max(v.len()), b'x');
            v
        })
        .collect();
    let keys: Vec<Vec<u8>> = (0..timestamps.len())
        .map(|i| format!("k{}", base_offset + i as i64).into_bytes())
        .collect();
    let records = timestamps.iter().enumerate().map(|(i, ts)| {
        NewRecord::new(
            i32::try_from(i).unwrap(),
            *ts,
            Some(&keys[i][..]),
            Some(&values[i][..]),
        )
    });
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(
            &BatchOptions::new(base_offset, compression),
            records,
            &mut out,
        )
        .unwrap();
    out
}

/// One uncompressed record at `offset` with timestamp `offset * 10`, as Kafka's LogSegmentTest
/// helper writes them.
pub(crate) fn single(offset: i64) -> Vec<u8> {
    batch_with(offset, &[offset * 10], 4, Compression::None)
}

/// A batch of records `first..=last` with timestamps `offset * 10`.
pub(crate) fn range(first: i64, last: i64) -> Vec<u8> {
    let ts: Vec<i64> = (first..=last).map(|o| o * 10).collect();
    batch_with(first, &ts, 4, Compression::None)
}

/// A new segment on the real file system, as Kafka's `createSegment(offset, indexIntervalBytes)`.
pub(crate) fn create(dir: &Path, base_offset: i64, index_interval_bytes: u32) -> LogSegment {
    let config = SegmentConfig::default()
        .with_index_interval_bytes(index_interval_bytes)
        .with_max_index_size(30 * 12 * 8);
    LogSegment::open(RealFs, dir, base_offset, config, false, "", 0).unwrap()
}

/// Reopens an existing segment.
pub(crate) fn reopen(dir: &Path, base_offset: i64, index_interval_bytes: u32) -> LogSegment {
    let config = SegmentConfig::default()
        .with_index_interval_bytes(index_interval_bytes)
        .with_max_index_size(30 * 12 * 8);
    LogSegment::open(RealFs, dir, base_offset, config, true, "", 0).unwrap()
}

/// The last offset of a buffer of batches.
pub(crate) fn last_offset(batches: &[u8]) -> i64 {
    seglog_record_format::batches(batches)
        .map(|b| b.unwrap().last_offset().unwrap())
        .max()
        .unwrap()
}

/// How [`append_random`] stamps its records.
#[derive(Clone, Copy)]
pub(crate) enum Stamps {
    /// Anywhere in 50 s: the max rarely moves.
    Scattered,
    /// Rising with the offset, out of order by up to 2 s: the max moves often.
    Rising,
}

/// Appends `appends` random appends of one to four batches each (as a follower fetch holds)
/// from `first_offset`: 1 to 20 records a batch, values of 10 to 310 bytes, every codec, gaps of
/// up to 2 offsets between batches (as compaction leaves them). Returns the next offset. The
/// same `seed` gives the same batches.
pub(crate) fn append_random(
    seg: &LogSegment,
    first_offset: i64,
    appends: usize,
    seed: u64,
    stamps: Stamps,
) -> i64 {
    const CODECS: [Compression; 5] = [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ];
    let mut rng = seed;
    let mut next = move || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut offset = first_offset;
    for _ in 0..appends {
        let mut chunk = Vec::new();
        for _ in 0..=(next() % 4) {
            let count = 1 + usize::try_from(next() % 20).unwrap();
            let ts: Vec<i64> = (0..count)
                .map(|_| match stamps {
                    Stamps::Scattered => 1_000_000 + i64::try_from(next() % 50_000).unwrap(),
                    Stamps::Rising => {
                        1_000_000 + offset * 10 - i64::try_from(next() % 2_000).unwrap()
                    }
                })
                .collect();
            let codec = CODECS[usize::try_from(next() % 5).unwrap()];
            let value_len = 10 + usize::try_from(next() % 300).unwrap();
            chunk.extend(batch_with(offset, &ts, value_len, codec));
            offset += count as i64 + i64::try_from(next() % 3).unwrap();
        }
        seg.append(last_offset(&chunk), &chunk).unwrap();
    }
    offset
}

/// Every (offset, value) a region holds.
pub(crate) fn records_of(bytes: &[u8]) -> Vec<(i64, Vec<u8>)> {
    let mut out = Vec::new();
    for batch in seglog_record_format::batches(bytes) {
        let batch = batch.unwrap();
        for r in batch.decode().unwrap().to_records().unwrap() {
            out.push((r.offset, r.value.unwrap_or_default()));
        }
    }
    out
}
