//! Helpers shared by the log integration tests.
#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    reason = "helpers: each test file uses a different subset, on small fixed values"
)]

pub(crate) mod txn;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::RealFs;
use seglog_log::{LoadOptions, LoadReport, LogConfig, MockClock, PartitionLog};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

/// Reads at `offset` of `log` (a fetch of 256 bytes) and checks that the records there carry
/// their offsets as values ([`offset_valued_batch`]) and that the one at `offset` is among them.
pub(crate) fn check_offset_read(log: &PartitionLog, offset: i64, buf: &mut Vec<u8>) {
    let fetch = log
        .read(offset, 256, seglog_log::Isolation::LogEnd, true)
        .unwrap();
    fetch.read_into(buf).unwrap();
    let mut seen = false;
    for b in seglog_record_format::batches(buf) {
        for r in b.unwrap().decode().unwrap().to_records().unwrap() {
            assert_eq!(r.value.unwrap(), r.offset.to_string().into_bytes());
            seen |= r.offset == offset;
        }
    }
    assert!(seen, "read at {offset} did not return it");
}

/// The open descriptors of this process on files under `dir`.
pub(crate) fn open_files_under(dir: &Path) -> usize {
    std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
        .filter(|target| target.starts_with(dir))
        .count()
}

/// A producer batch (base offset 0) of `per_batch` records whose values are the offsets they will
/// get from `first_offset` on, timestamped `1_000_000 + offset`: a read checks each record by its
/// value alone.
pub(crate) fn offset_valued_batch(
    first_offset: i64,
    per_batch: i64,
    builder: &mut BatchBuilder,
) -> Vec<u8> {
    let values: Vec<String> = (0..per_batch)
        .map(|i| (first_offset + i).to_string())
        .collect();
    let records = values.iter().enumerate().map(|(i, v)| {
        NewRecord::new(
            i as i32,
            1_000_000 + first_offset + i as i64,
            None,
            Some(v.as_bytes()),
        )
    });
    let mut out = Vec::new();
    builder
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
}

/// A producer batch (base offset 0) of `count` records with values `prefix-i` and timestamps
/// `ts + i`.
pub(crate) fn producer_batch(prefix: &str, count: usize, ts: i64) -> Vec<u8> {
    let values: Vec<Vec<u8>> = (0..count)
        .map(|i| format!("{prefix}-{i}").into_bytes())
        .collect();
    let records = values
        .iter()
        .enumerate()
        .map(|(i, v)| NewRecord::new(i as i32, ts + i as i64, Some(b"key"), Some(&v[..])));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
}

/// A small-segment config for tests (Kafka's tests use `internal.segment.bytes` the same way).
pub(crate) fn small_config(segment_bytes: i32) -> LogConfig {
    LogConfig::from_pairs([
        ("internal.segment.bytes", segment_bytes.to_string().as_str()),
        ("segment.index.bytes", "4096"),
        ("index.interval.bytes", "64"),
        ("file.delete.delay.ms", "1000"),
    ])
    .unwrap()
}

pub(crate) fn partition_dir(root: &Path) -> PathBuf {
    root.join("orders-0")
}

pub(crate) fn open(
    dir: &Path,
    config: LogConfig,
    options: LoadOptions,
    clock: &MockClock,
) -> (PartitionLog, LoadReport) {
    PartitionLog::open(RealFs, dir, config, options, Arc::new(clock.clone())).unwrap()
}

/// Every record readable from `start` to the end, batch by batch (a batch emptied by compaction
/// still moves the walk past its last offset).
pub(crate) fn read_records<F: seglog_fs::FileSystem>(
    log: &PartitionLog<F>,
    start: i64,
) -> Vec<seglog_record_format::Record> {
    let mut out = Vec::new();
    let mut next = start;
    let mut buf = Vec::new();
    while next < log.log_end_offset() {
        let fetch = log
            .read(next, 1 << 20, seglog_log::Isolation::LogEnd, true)
            .unwrap();
        fetch.read_into(&mut buf).unwrap();
        if buf.is_empty() {
            break;
        }
        let mut advanced = next;
        for batch in seglog_record_format::batches(&buf) {
            let batch = batch.unwrap().decode().unwrap();
            advanced = advanced.max(batch.last_offset() + 1);
            out.extend(
                batch
                    .to_records()
                    .unwrap()
                    .into_iter()
                    .filter(|r| r.offset >= next),
            );
        }
        next = advanced;
    }
    out
}

/// Every (offset, value) readable from `start` to the end.
pub(crate) fn read_values<F: seglog_fs::FileSystem>(
    log: &PartitionLog<F>,
    start: i64,
) -> Vec<(i64, String)> {
    read_records(log, start)
        .into_iter()
        .map(|r| (r.offset, String::from_utf8(r.value.unwrap()).unwrap()))
        .collect()
}
