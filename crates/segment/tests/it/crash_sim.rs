//! A segment on `SimFs`: bytes synced by `flush` survive a power loss, unsynced bytes may be lost
//! or torn at any byte, and recovery keeps exactly a prefix of whole, valid batches.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "tests"
)]

use crate::common;

use std::os::fd::AsFd;

use seglog_fs::FileSystem;
use seglog_fs::sim::{SimFs, Tear};
use seglog_segment::{LogSegment, SegmentConfig};

#[test]
fn flushed_batches_survive_and_torn_tails_are_cut() {
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentConfig::default().with_index_interval_bytes(64);
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, config, false, "", 0).unwrap();
    fs.sync_dir(dir.path()).unwrap();
    let mut boundaries = vec![0_u64];
    for offset in 0..20 {
        seg.append(offset, &common::single(offset)).unwrap();
        boundaries.push(seg.size());
    }
    seg.flush().unwrap();
    let durable = seg.size();
    let unsynced = common::range(20, 29);
    seg.append(29, &unsynced).unwrap();

    for keep in 0..=unsynced.len() {
        let crashed = fs.crash(Tear::KeepPrefix(keep));
        let seg = LogSegment::open(crashed, dir.path(), 0, config, true, "", 0).unwrap();
        let report = seg.recover().unwrap();
        let expected_end = if keep == unsynced.len() {
            durable + keep as u64
        } else {
            durable
        };
        assert_eq!(report.valid_bytes, expected_end, "keep {keep}");
        assert_eq!(seg.size(), expected_end);
        let next = seg.read_next_offset().unwrap();
        assert_eq!(next, if keep == unsynced.len() { 30 } else { 20 });
        for offset in 0..next {
            let at = seg.translate_offset(offset, 0).unwrap().unwrap();
            assert!(
                at.offset <= offset,
                "offset {offset} maps to batch {}",
                at.offset
            );
        }
        // The log takes appends again.
        seg.append(next, &common::single(next)).unwrap();
    }
}

#[test]
fn zero_filled_preallocated_tail_is_cut_by_recovery() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let config = SegmentConfig::default()
        .with_preallocate(true)
        .with_initial_file_size(64 * 1024);
    let seg = LogSegment::open(fs.clone(), dir.path(), 0, config, false, "", 0).unwrap();
    fs.sync_dir(dir.path()).unwrap();
    let batch = common::range(0, 9);
    seg.append(9, &batch).unwrap();
    seg.flush().unwrap();
    // A crash before the trim on close: the reopened file is 64 KiB with a zero tail.
    let crashed = fs.crash(Tear::DropAll);
    let seg = LogSegment::open(crashed, dir.path(), 0, config, true, "", 0).unwrap();
    assert_eq!(seg.size(), 64 * 1024);
    let report = seg.recover().unwrap();
    assert_eq!(report.valid_bytes, batch.len() as u64);
    assert_eq!(report.bytes_truncated, 64 * 1024 - batch.len() as u64);
    assert!(
        matches!(report.stop, Some(seglog_segment::RecoveryStop { position, .. }) if position == batch.len() as u64)
    );
}

#[test]
fn out_of_space_leaves_the_segment_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let fs = SimFs::new();
    fs.create_dir_all(dir.path()).unwrap();
    let seg = LogSegment::open(
        fs.clone(),
        dir.path(),
        0,
        SegmentConfig::default(),
        false,
        "",
        0,
    )
    .unwrap();
    seg.append(0, &common::single(0)).unwrap();
    let before = seg.size();
    fs.set_space_limit(Some(before + 10));
    let err = seg.append(9, &common::range(1, 9)).unwrap_err();
    assert!(err.to_string().contains("write"), "{err}");
    assert_eq!(seg.size(), before, "a failed append publishes nothing");
    fs.set_space_limit(None);
    // The short write left bytes past the logical end; the next append overwrites them.
    seg.append(9, &common::range(1, 9)).unwrap();
    assert_eq!(seg.read_next_offset().unwrap(), 10);
    let report = seg.recover().unwrap();
    assert_eq!(report.bytes_truncated, 0);
}

#[test]
fn regions_copy_to_files_without_a_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let seg = common::create(dir.path(), 0, 4096);
    let data = common::range(0, 99);
    seg.append(99, &data).unwrap();
    let fetch = seg.read_simple(0, 1 << 20).unwrap().unwrap();
    let out_path = dir.path().join("out");
    let out = std::fs::File::create(&out_path).unwrap();
    assert_eq!(
        seg.copy_region_to(fetch.region, out.as_fd()).unwrap(),
        data.len() as u64
    );
    assert_eq!(std::fs::read(&out_path).unwrap(), data);
}

#[test]
fn a_damaged_base_offset_ends_the_valid_prefix() {
    // The CRC does not cover the base offset: recovery catches a damaged one by its order.
    let dir = tempfile::tempdir().unwrap();
    let seg = common::create(dir.path(), 0, 4096);
    let mut sizes = Vec::new();
    for offset in 0..10 {
        let batch = common::single(offset);
        sizes.push(batch.len() as u64);
        seg.append(offset, &batch).unwrap();
    }
    let log_path = seg.log_path();
    seg.close().unwrap();
    let mut bytes = std::fs::read(&log_path).unwrap();
    let sixth: u64 = sizes[..5].iter().sum();
    let at = usize::try_from(sixth).unwrap();
    bytes[at..at + 8].copy_from_slice(&2_i64.to_be_bytes());
    std::fs::write(&log_path, &bytes).unwrap();
    let seg = common::reopen(dir.path(), 0, 4096);
    let report = seg.recover().unwrap();
    assert_eq!(report.valid_bytes, sixth);
    assert!(matches!(
        report.stop,
        Some(seglog_segment::RecoveryStop {
            reason: seglog_segment::StopReason::OffsetsOutOfOrder {
                first_offset: 2,
                previous_last_offset: 4,
                ..
            },
            ..
        })
    ));
    assert_eq!(seg.read_next_offset().unwrap(), 5);
}
