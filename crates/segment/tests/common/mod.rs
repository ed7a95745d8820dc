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
