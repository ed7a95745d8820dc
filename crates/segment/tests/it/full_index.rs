//! A full index takes no more entries (issue 17, docs/reliability.md section 10): with
//! `segment.index.bytes=1024` (128 offset slots, 85 time slots) and `index.interval.bytes=0`
//! (an entry due at every batch but a segment's first), recovery of a segment that needs more
//! entries than append gave it (written by two processes, each restarting the byte count, or at a
//! wider interval) keeps every batch and fills the indexes, where Kafka's "Attempt to append to a
//! full index" failed the load. An append of many batches into a nearly full index keeps them
//! all; append rolls on a full time index as on a full offset index. Every offset and timestamp
//! stays findable, and the recovery scan's expected indexes mirror what recovery writes.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    reason = "tests"
)]

use std::path::Path;

use crate::common;

use seglog_fs::RealFs;
use seglog_record_format::Compression;
use seglog_segment::{LogSegment, RollParams, SegmentConfig, scan_segment};

const BASE: i64 = 0;
const INDEX_BYTES: u32 = 1024;

fn config(interval: u32, max_index_size: u32) -> SegmentConfig {
    SegmentConfig::default()
        .with_index_interval_bytes(interval)
        .with_max_index_size(max_index_size)
}

fn open(dir: &Path, config: SegmentConfig, exists: bool) -> LogSegment {
    LogSegment::open(RealFs, dir, BASE, config, exists, "", 0).unwrap()
}

/// Kafka's `shouldRoll` with only the index and offset conditions able to fire.
fn should_roll(seg: &LogSegment, ts: i64, last_offset: i64) -> bool {
    seg.should_roll(RollParams {
        max_segment_ms: i64::MAX,
        max_segment_bytes: u64::MAX / 2,
        max_timestamp_in_messages: ts,
        max_offset_in_messages: last_offset,
        messages_size: 100,
        now_ms: 0,
    })
    .unwrap()
}

/// The batch of two records at `offset`, timestamps `ts`.
fn batch(offset: i64, ts: i64) -> Vec<u8> {
    common::batch_with(offset, &[ts, ts], 8, Compression::None)
}

/// Appends two-record batches from `*offset`, timestamps `ts(offset)`, as a producer would (one
/// batch an append, the roll checked first) until the segment would roll; returns what it wrote.
fn append_until_roll(
    seg: &LogSegment,
    offset: &mut i64,
    ts: &dyn Fn(i64) -> i64,
) -> Vec<(i64, i64)> {
    let mut written = Vec::new();
    loop {
        let t = ts(*offset);
        if should_roll(seg, t, *offset + 1) {
            return written;
        }
        seg.append(*offset + 1, &batch(*offset, t)).unwrap();
        written.push((*offset, t));
        *offset += 2;
    }
}

/// Recovers a copy of `log` (the `.log` bytes of a crashed segment) with `config` and checks
/// that every batch was kept and is found by offset and by timestamp, and that the recovery
/// scan expects exactly the index files recovery wrote. Returns the entries rebuilt.
fn recover_copy(log: &[u8], config: SegmentConfig, timestamps: &[(i64, i64)]) -> (usize, usize) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("00000000000000000000.log"), log).unwrap();
    let before = scan_segment(
        &RealFs,
        dir.path(),
        BASE,
        "",
        config.index_interval_bytes,
        config.max_index_size,
        None,
    )
    .unwrap();
    assert!(before.stop.is_none(), "{:?}", before.stop);
    let seg = open(dir.path(), config, true);
    let report = seg.recover().unwrap();
    assert_eq!(report.bytes_truncated, 0);
    assert_eq!(report.batches as usize, timestamps.len());
    let (offsets, times) = report.index_entries;
    assert!(
        offsets <= (INDEX_BYTES / 8) as usize,
        "{offsets} offset entries"
    );
    assert!(times <= (INDEX_BYTES / 12) as usize, "{times} time entries");
    for &(offset, ts) in timestamps {
        let at = seg.translate_offset(offset + 1, 0).unwrap().unwrap();
        assert_eq!(at.offset, offset, "offset {}", offset + 1);
        let found = seg.find_offset_by_timestamp(ts, BASE).unwrap().unwrap();
        assert_eq!(found.timestamp, ts);
        assert!(
            found.offset <= offset,
            "timestamp {ts} found at {}",
            found.offset
        );
    }
    seg.close().unwrap();
    let after = scan_segment(
        &RealFs,
        dir.path(),
        BASE,
        "",
        config.index_interval_bytes,
        config.max_index_size,
        None,
    )
    .unwrap();
    assert!(
        after.indexes_match,
        "the scan's expected indexes differ from recovery's"
    );
    (offsets, times)
}

/// A segment written by two processes (the second reopens it, resizes its indexes as the loader
/// does, and appends until it would roll), crashed before its indexes were trimmed.
fn written_by_two_opens(ts: &dyn Fn(i64) -> i64) -> (Vec<u8>, Vec<(i64, i64)>) {
    let dir = tempfile::tempdir().unwrap();
    let mut offset = BASE;
    let mut written = Vec::new();
    let seg = open(dir.path(), config(0, INDEX_BYTES), false);
    for _ in 0..40 {
        seg.append(offset + 1, &batch(offset, ts(offset))).unwrap();
        written.push((offset, ts(offset)));
        offset += 2;
    }
    seg.close().unwrap();
    let seg = open(dir.path(), config(0, INDEX_BYTES), true);
    seg.resize_indexes(INDEX_BYTES).unwrap();
    written.extend(append_until_roll(&seg, &mut offset, ts));
    let log = std::fs::read(seg.log_path()).unwrap();
    seg.close().unwrap();
    (log, written)
}

#[test]
fn a_segment_written_by_two_opens_recovers_into_a_full_offset_index() {
    // One timestamp: the offset index fills first (128 entries), so the segment holds 130
    // batches (the first of each open unindexed), where recovery finds 129 entries due.
    let (log, written) = written_by_two_opens(&|_| 1_000);
    assert_eq!(written.len(), 130);
    let (offsets, times) = recover_copy(&log, config(0, INDEX_BYTES), &written);
    assert_eq!((offsets, times), (128, 1));
}

#[test]
fn a_segment_written_by_two_opens_recovers_into_a_full_time_index() {
    // A new timestamp every batch: the time index is full at 84 entries (its last slot kept for
    // the final entry), so the segment rolls after 86 batches, where recovery finds 85 due.
    let (log, written) = written_by_two_opens(&|o| 1_000 + o);
    assert_eq!(written.len(), 86);
    let (offsets, times) = recover_copy(&log, config(0, INDEX_BYTES), &written);
    assert_eq!((offsets, times), (85, 85));
}

#[test]
fn a_segment_written_at_a_wider_interval_recovers_into_smaller_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), config(4096, 10 * 1024 * 1024), false);
    let mut written = Vec::new();
    for i in 0..400 {
        let (offset, ts) = (BASE + 2 * i, 1_000 + i / 3);
        seg.append(offset + 1, &batch(offset, ts)).unwrap();
        written.push((offset, ts));
    }
    let log = std::fs::read(seg.log_path()).unwrap();
    seg.close().unwrap();
    // Both fill: 128 offset entries; 84 time entries and the final one, the segment's largest
    // timestamp, in the slot kept for it.
    let (offsets, times) = recover_copy(&log, config(0, INDEX_BYTES), &written);
    assert_eq!((offsets, times), (128, 85));
}

#[test]
fn an_append_of_many_batches_into_a_nearly_full_index_keeps_them_all() {
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), config(0, INDEX_BYTES), false);
    let mut chunk = Vec::new();
    let mut written = Vec::new();
    for i in 0..200 {
        let (offset, ts) = (BASE + 2 * i, 1_000 + i);
        chunk.extend(batch(offset, ts));
        written.push((offset, ts));
    }
    seg.append(BASE + 399, &chunk).unwrap();
    assert_eq!(seg.index_entries().unwrap(), (128, 84));
    assert!(should_roll(&seg, 2_000, BASE + 401));
    seg.on_become_inactive().unwrap();
    let index = std::fs::read(seg.offset_index_path()).unwrap();
    let time_index = std::fs::read(seg.time_index_path()).unwrap();
    let log = std::fs::read(seg.log_path()).unwrap();
    seg.close().unwrap();
    // Recovery builds the same files, and finds every batch through them.
    let recovered = tempfile::tempdir().unwrap();
    std::fs::write(recovered.path().join("00000000000000000000.log"), &log).unwrap();
    let seg = open(recovered.path(), config(0, INDEX_BYTES), true);
    seg.recover().unwrap();
    assert_eq!(std::fs::read(seg.offset_index_path()).unwrap(), index);
    assert_eq!(std::fs::read(seg.time_index_path()).unwrap(), time_index);
    seg.close().unwrap();
    recover_copy(&log, config(0, INDEX_BYTES), &written);
}

#[test]
fn append_rolls_on_a_full_time_index_and_on_a_full_offset_index() {
    // New timestamps every batch: 84 time entries make the time index full (85 slots).
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), config(0, INDEX_BYTES), false);
    let mut offset = BASE;
    let appended = append_until_roll(&seg, &mut offset, &|o| 1_000 + o).len();
    assert_eq!((appended, seg.index_entries().unwrap()), (85, (84, 84)));
    seg.close().unwrap();
    // One timestamp: the offset index fills at 128 entries, the time index holds one.
    let dir = tempfile::tempdir().unwrap();
    let seg = open(dir.path(), config(0, INDEX_BYTES), false);
    let mut offset = BASE;
    let appended = append_until_roll(&seg, &mut offset, &|_| 1_000).len();
    assert_eq!((appended, seg.index_entries().unwrap()), (129, (128, 1)));
    seg.close().unwrap();
}
