//! Opening a log after a clean shutdown scans no segment and maps no index file (KAFKA-7283,
//! KAFKA-3163: startup cost is dominated by mappings), yet the log reads and appends at once.
//! Its own test binary, because the mapping counter is process-wide.
#![allow(clippy::unwrap_used, reason = "tests")]

mod common;

use common::{open, partition_dir, producer_batch, small_config};
use seglog_log::{LoadOptions, MockClock};

#[test]
fn clean_open_maps_nothing_until_used() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    let clock = MockClock::new(0);
    let (log, _) = open(&dir, small_config(600), LoadOptions::default(), &clock);
    for i in 0..60 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
    }
    let segments = log.segment_count();
    let end = log.log_end_offset();
    log.close().unwrap();
    drop(log);
    assert_eq!(seglog_mmap_index::live_mappings(), 0);

    let clean = LoadOptions::default()
        .with_recovery_point(end)
        .with_log_start_offset(0)
        .with_had_clean_shutdown(true)
        .with_discard(false);
    let (log, report) = open(&dir, small_config(600), clean, &clock);
    assert_eq!(report.segments_scanned, 0);
    assert_eq!(report.segments_loaded, segments);
    assert_eq!(log.log_end_offset(), end);
    assert_eq!(
        seglog_mmap_index::live_mappings(),
        0,
        "opening mapped an index"
    );

    // The first append resizes the active segment's trimmed indexes and goes on.
    let info = log
        .append_as_leader(&mut producer_batch("after", 2, 100))
        .unwrap();
    assert_eq!(info.first_offset, end);
    assert!(seglog_mmap_index::live_mappings() > 0);
    assert_eq!(common::read_values(&log, end).len(), 2);
}
