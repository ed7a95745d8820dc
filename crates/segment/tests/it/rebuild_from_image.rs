//! `LogSegment::rebuild_indexes_from` writes the index image a recovery scan built, without
//! reading the `.log` again, and leaves the segment exactly as recovery's walk does: the same
//! `.index` and `.timeindex` bytes, the same report, the same max timestamp, and the same files
//! after one more append. Checked over random segments (every codec, timestamps out of order,
//! offset gaps) at intervals and index sizes that fill the indexes; an image of other settings is
//! ignored, and a stale one writes nothing. `LogSegment::recover_from` does the same for a
//! damaged segment, which it cuts where the walk cuts, with the walk's report.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests"
)]

use std::path::Path;

use crate::common;

use seglog_fs::RealFs;
use seglog_record_format::Compression;
use seglog_segment::{IndexImage, LogSegment, SegmentConfig, SegmentScan, scan_segment};

const BASE: i64 = 100;
const LOG: &str = "00000000000000000100.log";

fn config(interval: u32, max_index_size: u32) -> SegmentConfig {
    SegmentConfig::default()
        .with_index_interval_bytes(interval)
        .with_max_index_size(max_index_size)
}

/// The `.log` of a segment of 150 appends of one to four batches each, and the next offset.
fn random_log(seed: u64) -> (Vec<u8>, i64) {
    let dir = tempfile::tempdir().unwrap();
    let seg = LogSegment::open(
        RealFs,
        dir.path(),
        BASE,
        config(4096, 1 << 20),
        false,
        "",
        0,
    )
    .unwrap();
    let offset = common::append_random(&seg, BASE, 150, seed, common::Stamps::Rising);
    let log = std::fs::read(seg.log_path()).unwrap();
    seg.close().unwrap();
    (log, offset)
}

/// A directory holding only `log` as the segment's `.log`.
fn dir_with(log: &[u8]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(LOG), log).unwrap();
    dir
}

/// The recovery scan of the segment in `dir` at `config`'s index settings.
fn scan(dir: &Path, config: SegmentConfig) -> SegmentScan {
    scan_segment(
        &RealFs,
        dir,
        BASE,
        "",
        config.index_interval_bytes,
        config.max_index_size,
        None,
    )
    .unwrap()
}

fn image_of(dir: &Path, config: SegmentConfig) -> IndexImage {
    let scan = scan(dir, config);
    assert!(scan.stop.is_none(), "{:?}", scan.stop);
    assert!(!scan.indexes_match);
    scan.index_image
        .expect("no image kept for indexes that differ")
}

fn index_files(seg: &LogSegment) -> (Vec<u8>, Vec<u8>) {
    (
        std::fs::read(seg.offset_index_path()).unwrap(),
        std::fs::read(seg.time_index_path()).unwrap(),
    )
}

/// What a segment is after its indexes were rebuilt, and after two more appends from `next`
/// (the indexes resized first, as the loader does for the active segment; the timestamps below
/// the max, so that a time index recovery filled is not asked for an entry it has no slot for:
/// the log rolls first).
fn state_then_append(seg: &LogSegment, config: SegmentConfig, next: i64) -> Vec<String> {
    let mut state = vec![
        format!("{:?}", index_files(seg)),
        format!("max {}", seg.max_timestamp_so_far().unwrap()),
        format!("next {}", seg.read_next_offset().unwrap()),
        format!("entries {:?}", seg.index_entries().unwrap()),
    ];
    seg.resize_indexes(config.max_index_size).unwrap();
    for offset in [next, next + 2] {
        let batch = common::batch_with(offset, &[1_000, 900], 5_000, Compression::None);
        seg.append(offset + 1, &batch).unwrap();
    }
    seg.on_become_inactive().unwrap();
    state.push(format!("after two appends {:?}", index_files(seg)));
    state.push(format!("entries {:?}", seg.index_entries().unwrap()));
    state
}

#[test]
fn the_image_rebuilds_what_the_walk_rebuilds() {
    let cases = [
        (0, 1024, 1),
        (0, 2048, 2),
        (1, 10 << 20, 3),
        (700, 10 << 20, 4),
        (700, 1200, 5),
        (4096, 10 << 20, 6),
        (100_000, 10 << 20, 7),
    ];
    for (interval, index_size, seed) in cases {
        let (log, next) = random_log(seed);
        let config = config(interval, index_size);
        let case = format!("interval {interval}, index size {index_size}");

        let walked = dir_with(&log);
        let seg = LogSegment::open(RealFs, walked.path(), BASE, config, true, "", 0).unwrap();
        let want_report = seg.recover().unwrap();
        let want = state_then_append(&seg, config, next);
        seg.close().unwrap();

        let imaged = dir_with(&log);
        let image = image_of(imaged.path(), config);
        assert_eq!(image.valid_bytes(), log.len() as u64);
        let seg = LogSegment::open(RealFs, imaged.path(), BASE, config, true, "", 0).unwrap();
        let report = seg.rebuild_indexes_from(&image).unwrap();
        assert_eq!(
            (report.valid_bytes, report.batches, report.index_entries),
            (
                want_report.valid_bytes,
                want_report.batches,
                want_report.index_entries
            ),
            "{case}"
        );
        assert!(
            report.stop.is_none() && report.bytes_truncated == 0,
            "{case}"
        );
        assert_eq!(state_then_append(&seg, config, next), want, "{case}");
        seg.close().unwrap();
        assert_eq!(std::fs::read(imaged.path().join(LOG)).unwrap().len(), {
            std::fs::read(walked.path().join(LOG)).unwrap().len()
        });
    }
}

#[test]
fn the_small_indexes_fill_as_the_walk_fills_them() {
    // The cases above must reach a full index, or they test no full-index rule.
    let (log, _) = random_log(1);
    let config = config(0, 1024);
    let dir = dir_with(&log);
    let image = image_of(dir.path(), config);
    let seg = LogSegment::open(RealFs, dir.path(), BASE, config, true, "", 0).unwrap();
    let (offsets, times) = seg.rebuild_indexes_from(&image).unwrap().index_entries;
    assert_eq!(offsets, 128);
    assert!(times >= 84, "{times} time entries");
}

#[test]
fn an_image_of_other_settings_is_ignored_and_the_headers_are_walked() {
    let (log, next) = random_log(9);
    let wide = config(4096, 10 << 20);
    let narrow = config(0, 2048);

    let walked = dir_with(&log);
    let seg = LogSegment::open(RealFs, walked.path(), BASE, narrow, true, "", 0).unwrap();
    seg.recover().unwrap();
    let want = state_then_append(&seg, narrow, next);
    seg.close().unwrap();

    let imaged = dir_with(&log);
    let image = image_of(imaged.path(), wide);
    let seg = LogSegment::open(RealFs, imaged.path(), BASE, narrow, true, "", 0).unwrap();
    let report = seg.rebuild_indexes_from(&image).unwrap();
    assert_eq!(report.valid_bytes, log.len() as u64);
    assert_eq!(state_then_append(&seg, narrow, next), want);
    seg.close().unwrap();
}

#[test]
fn a_stale_image_writes_nothing_and_says_so() {
    let (log, next) = random_log(11);
    let config = config(0, 10 << 20);
    let dir = dir_with(&log);
    let image = image_of(dir.path(), config);
    let seg = LogSegment::open(RealFs, dir.path(), BASE, config, true, "", 0).unwrap();
    // The `.log` grows after the scan.
    seg.resize_indexes(config.max_index_size).unwrap();
    seg.append(next, &common::range(next, next)).unwrap();
    let before = index_files(&seg);
    let report = seg.rebuild_indexes_from(&image).unwrap();
    assert_eq!(report.valid_bytes, log.len() as u64);
    assert_ne!(report.valid_bytes, seg.size(), "the caller's check");
    assert_eq!(index_files(&seg), before, "a stale image wrote the indexes");
    seg.close().unwrap();
}

/// The scan's image of a segment recovery cuts.
fn image_of_cut(dir: &Path, config: SegmentConfig) -> IndexImage {
    let scan = scan(dir, config);
    assert!(scan.stop.is_some(), "the damage was not found");
    scan.index_image.expect("no image kept for a cut")
}

/// `log` damaged: `0` torn inside its last 300 bytes, `1` a byte flipped near its middle (a CRC
/// or framing failure there), `2` ten zero bytes after its end (a torn header).
fn damaged(log: &[u8], how: u64, seed: u64) -> Vec<u8> {
    let mut log = log.to_vec();
    match how {
        0 => log.truncate(log.len() - 1 - (seed as usize * 37) % 300),
        1 => {
            let at = log.len() / 2 + (seed as usize * 101) % 1000;
            log[at] ^= 0x5a;
        }
        _ => log.extend_from_slice(&[0; 10]),
    }
    log
}

#[test]
fn the_image_cuts_what_the_walk_cuts() {
    let cases = [
        (0, 1024, 1),
        (1, 10 << 20, 3),
        (700, 1200, 5),
        (4096, 10 << 20, 6),
        (100_000, 10 << 20, 7),
    ];
    for (interval, index_size, seed) in cases {
        let (clean, _) = random_log(seed);
        let config = config(interval, index_size);
        for how in 0..3 {
            let log = damaged(&clean, how, seed);
            let case = format!("interval {interval}, index size {index_size}, damage {how}");

            let walked = dir_with(&log);
            let seg = LogSegment::open(RealFs, walked.path(), BASE, config, true, "", 0).unwrap();
            let want_report = seg.recover().unwrap();
            let next = seg.read_next_offset().unwrap();
            let want = state_then_append(&seg, config, next);
            seg.close().unwrap();
            assert!(want_report.bytes_truncated > 0, "{case}");

            let imaged = dir_with(&log);
            let image = image_of_cut(imaged.path(), config);
            assert_eq!(image.scanned_size(), log.len() as u64);
            let seg = LogSegment::open(RealFs, imaged.path(), BASE, config, true, "", 0).unwrap();
            let report = seg
                .recover_from(&image)
                .unwrap()
                .expect("the image applies");
            assert_eq!(format!("{report:?}"), format!("{want_report:?}"), "{case}");
            assert_eq!(seg.size(), want_report.valid_bytes, "{case}");
            let on_disk = std::fs::metadata(imaged.path().join(LOG)).unwrap().len();
            assert_eq!(on_disk, want_report.valid_bytes, "{case}: the file not cut");
            assert_eq!(state_then_append(&seg, config, next), want, "{case}");
            seg.close().unwrap();
            assert_eq!(
                std::fs::read(imaged.path().join(LOG)).unwrap(),
                std::fs::read(walked.path().join(LOG)).unwrap(),
                "{case}"
            );
        }
    }
}

#[test]
fn an_image_that_no_longer_applies_changes_nothing() {
    let (clean, _) = random_log(13);
    let log = damaged(&clean, 0, 13);
    let config = config(0, 10 << 20);
    let dir = dir_with(&log);
    let image = image_of_cut(dir.path(), config);
    // Other settings.
    let other = self::config(4096, 10 << 20);
    let seg = LogSegment::open(RealFs, dir.path(), BASE, other, true, "", 0).unwrap();
    assert!(seg.recover_from(&image).unwrap().is_none());
    assert_eq!(seg.size(), log.len() as u64);
    seg.close().unwrap();
    // The `.log` changed size since the scan (here: cut by hand).
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open(dir.path().join(LOG))
        .unwrap();
    file.set_len(image.valid_bytes()).unwrap();
    drop(file);
    let seg = LogSegment::open(RealFs, dir.path(), BASE, config, true, "", 0).unwrap();
    let before = index_files(&seg);
    assert!(seg.recover_from(&image).unwrap().is_none());
    assert_eq!(index_files(&seg), before);
    assert_eq!(seg.size(), image.valid_bytes());
    seg.close().unwrap();
}
