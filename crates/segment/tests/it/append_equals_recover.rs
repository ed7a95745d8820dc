//! An appended segment and the same segment recovered from its `.log` end with byte-identical
//! `.index` and `.timeindex` files (the per-batch index rule of KAFKA-806 is shared by both), for
//! multi-batch appends, every codec and out-of-order timestamps.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests"
)]

use crate::common;

use seglog_fs::RealFs;
use seglog_segment::{LogSegment, SegmentConfig};

fn write_segment(dir: &std::path::Path, interval: u32, seed: u64) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let config = SegmentConfig::default().with_index_interval_bytes(interval);
    let seg = LogSegment::open(RealFs, dir, 100, config, false, "", 0).unwrap();
    common::append_random(&seg, 100, 200, seed, common::Stamps::Scattered);
    seg.on_become_inactive().unwrap();
    let files = (
        std::fs::read(seg.log_path()).unwrap(),
        std::fs::read(seg.offset_index_path()).unwrap(),
        std::fs::read(seg.time_index_path()).unwrap(),
    );
    seg.close().unwrap();
    files
}

#[test]
fn appended_and_recovered_indexes_are_byte_identical() {
    for (interval, seed) in [(0, 1), (1, 2), (700, 3), (4096, 4), (100_000, 5)] {
        let appended = tempfile::tempdir().unwrap();
        let (log, index, time_index) = write_segment(appended.path(), interval, seed);
        assert!(
            interval > 50_000 || !index.is_empty(),
            "interval {interval} made no entries"
        );

        let recovered = tempfile::tempdir().unwrap();
        std::fs::write(recovered.path().join("00000000000000000100.log"), &log).unwrap();
        let config = SegmentConfig::default().with_index_interval_bytes(interval);
        let seg = LogSegment::open(RealFs, recovered.path(), 100, config, true, "", 0).unwrap();
        let report = seg.recover().unwrap();
        assert_eq!(report.bytes_truncated, 0);
        assert_eq!(
            std::fs::read(seg.offset_index_path()).unwrap(),
            index,
            "interval {interval}"
        );
        assert_eq!(
            std::fs::read(seg.time_index_path()).unwrap(),
            time_index,
            "interval {interval}"
        );
    }
}

#[test]
fn interval_zero_indexes_every_batch_but_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentConfig::default().with_index_interval_bytes(0);
    let seg = LogSegment::open(RealFs, dir.path(), 0, config, false, "", 0).unwrap();
    // Three batches in one append: Kafka before KAFKA-806 added one entry per append.
    let mut chunk = common::range(0, 1);
    chunk.extend(common::range(2, 3));
    chunk.extend(common::range(4, 5));
    seg.append(5, &chunk).unwrap();
    seg.append(7, &common::range(6, 7)).unwrap();
    assert_eq!(seg.index_entries().unwrap(), (3, 3));
    // Each entry points at the start of the batch whose last offset it names.
    let first_size = common::range(0, 1).len() as u64;
    let at = seg.translate_offset(3, 0).unwrap().unwrap();
    assert_eq!((at.offset, at.position), (2, first_size));
}
