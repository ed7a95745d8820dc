//! A cleaning stopped at each phase of the swap protocol (as a crash would stop it) leaves a
//! directory that the loader finishes or aborts: reopened, the log holds either the old or the new
//! segments, never both and never neither, with every key's latest value. Readers that hold a
//! segment keep reading it while a cleaning replaces it.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_sign_loss,
    clippy::case_sensitive_file_extension_comparisons,
    reason = "tests"
)]

use crate::common;

use std::collections::BTreeMap;

use seglog_log::{
    CleanOptions, Isolation, LoadOptions, LogConfig, MockClock, PartitionLog, StopAfter,
};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

fn config() -> LogConfig {
    LogConfig::from_pairs([
        ("internal.segment.bytes", "600"),
        ("cleanup.policy", "compact"),
        ("segment.index.bytes", "4096"),
    ])
    .unwrap()
}

/// 200 records over 10 keys: the latest of key k is at offset 190 + k.
fn fill(log: &PartitionLog) {
    let mut builder = BatchBuilder::new();
    for i in 0..40_i64 {
        let values: Vec<[u8; 2]> = (0..5)
            .map(|j| u16::try_from(i * 5 + j).unwrap().to_be_bytes())
            .collect();
        let keys: Vec<[u8; 1]> = (0..5)
            .map(|j| [u8::try_from((i * 5 + j) % 10).unwrap()])
            .collect();
        let records = (0..5).map(|j| {
            NewRecord::new(
                j,
                1_000 + i64::from(j),
                Some(&keys[j as usize][..]),
                Some(&values[j as usize][..]),
            )
        });
        let mut batch = Vec::new();
        builder
            .build(&BatchOptions::new(0, Compression::Lz4), records, &mut batch)
            .unwrap();
        log.append_as_leader(&mut batch).unwrap();
    }
    log.roll().unwrap();
    log.set_high_watermark(log.log_end_offset());
}

fn latest_values(log: &PartitionLog) -> BTreeMap<u8, (i64, u16)> {
    let mut latest = BTreeMap::new();
    for (offset, value) in all(log) {
        latest.insert(u8::try_from(offset % 10).unwrap(), (offset, value));
    }
    latest
}

fn all(log: &PartitionLog) -> Vec<(i64, u16)> {
    common::read_records(log, log.log_start_offset())
        .into_iter()
        .map(|r| {
            let v = r.value.unwrap();
            (r.offset, u16::from_be_bytes([v[0], v[1]]))
        })
        .collect()
}

#[test]
fn a_crash_at_any_swap_phase_recovers_to_one_consistent_log() {
    for stop in [
        StopAfter::Cleaned,
        StopAfter::Swapped,
        StopAfter::OldDeleted,
        StopAfter::Never,
    ] {
        let root = tempfile::tempdir().unwrap();
        let dir = common::partition_dir(root.path());
        let clock = MockClock::new(0);
        let (log, _) = common::open(&dir, config(), LoadOptions::default(), &clock);
        fill(&log);
        let before = latest_values(&log);
        let end = log.log_end_offset();
        let report = log.clean_until(&CleanOptions::default(), stop).unwrap();
        assert!(report.end_offset > 0, "{stop:?}: nothing was cleaned");
        drop(log); // the crash: nothing more happens
        let (log, load) = common::open(&dir, config(), LoadOptions::default(), &clock);
        match stop {
            StopAfter::Cleaned => assert!(!load.aborted_files.is_empty(), "{stop:?}: {load:?}"),
            StopAfter::Swapped | StopAfter::OldDeleted => {
                assert!(!load.completed_swaps.is_empty(), "{stop:?}: {load:?}");
            }
            StopAfter::Never => {}
        }
        assert_eq!(log.log_end_offset(), end, "{stop:?}");
        assert_eq!(latest_values(&log), before, "{stop:?}");
        let records = all(&log);
        assert!(
            records.windows(2).all(|w| w[0].0 < w[1].0),
            "{stop:?}: offsets out of order"
        );
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| !n.ends_with(".cleaned") && !n.ends_with(".swap")),
            "{stop:?}: leftovers {names:?}"
        );
        // A completed cleaning keeps one record per key; an interrupted one stopped after its first
        // group, so only that group is clean.
        if stop == StopAfter::Never {
            assert_eq!(records.len(), 10, "{stop:?}");
        }
    }
}

#[test]
fn readers_keep_reading_while_a_cleaning_replaces_their_segment() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = common::open(
        &common::partition_dir(root.path()),
        config(),
        LoadOptions::default(),
        &clock,
    );
    fill(&log);
    let held = log.read(0, 1 << 20, Isolation::LogEnd, true).unwrap();
    log.clean(&CleanOptions::default()).unwrap();
    let mut buf = Vec::new();
    held.read_into(&mut buf).unwrap();
    let first = seglog_record_format::batches(&buf).next().unwrap().unwrap();
    first.validate().unwrap();
    assert_eq!(first.decode().unwrap().to_records().unwrap()[0].offset, 0);
    drop(held);
    log.wait_for_background_flushes();
    // Every kept record is still readable by offset after the swap.
    for (offset, _) in all(&log) {
        let fetch = log.read(offset, 1, Isolation::LogEnd, true).unwrap();
        fetch.read_into(&mut buf).unwrap();
        let found = seglog_record_format::batches(&buf)
            .flat_map(|b| b.unwrap().decode().unwrap().to_records().unwrap())
            .any(|r| r.offset == offset);
        assert!(found, "offset {offset} not readable after cleaning");
    }
}
