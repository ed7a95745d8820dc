//! Regression (found by the roll/retention/compaction stress test): a cleaned segment takes the
//! base offset, and so the file names, of the first segment it replaces. When retention later
//! removes the cleaned segment, renaming it `.deleted` used to replace the `.deleted` files of
//! the replaced segment, still queued for deletion because a reader held it; deleting that one
//! then unlinked the cleaned segment's files while readers still used them (its modification
//! time, and its indexes' remaps after a mapping budget eviction, failed with `NotFound`). The
//! queued segment is now moved aside to `<name>.<n>.deleted` first.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::sync::Arc;

use seglog_log::{CleanOptions, LogConfig, MockClock};

#[test]
fn a_second_segment_renamed_deleted_under_the_same_name_keeps_its_files() {
    let root = tempfile::tempdir().unwrap();
    let dir = common::partition_dir(root.path());
    // Far ahead of the files' modification times: a segment the cleaning emptied has no record
    // timestamp, and time retention takes its modification time instead, as Kafka's does.
    let clock = MockClock::new(4_102_444_800_000);
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "300"),
        ("cleanup.policy", "compact,delete"),
        ("index.interval.bytes", "1"),
    ])
    .unwrap()
    .with_file_delete_delay_ms(0);
    let (log, _) = common::open(&dir, config, seglog_log::LoadOptions::default(), &clock);
    for i in 0..12 {
        log.append_as_leader(&mut common::producer_batch(&format!("v{i}"), 2, 1_000))
            .unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    assert!(log.segment_count() > 3);
    // Rolls flush in the background, and a flush holds a snapshot of the segments.
    log.wait_for_background_flushes();

    // A reader holds the original first segment; compaction replaces it with a cleaned segment
    // of the same base offset, and the original waits, renamed `.deleted`, for that reader.
    let old_snapshot = log.segments();
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert!(report.segments_replaced > 1, "{report:?}");
    let cleaned = Arc::clone(log.segments().values().next().unwrap());
    assert_eq!(
        cleaned.base_offset(),
        *old_snapshot.keys().next().unwrap(),
        "the cleaned segment reuses the first base offset"
    );
    assert!(log.pending_deletes() > 0);

    // Retention removes the cleaned segment while another reader (`cleaned`) still holds it.
    let next_base = *log.segments().keys().nth(1).unwrap();
    log.delete_records_before(next_base).unwrap();
    let retention = log.delete_old_segments().unwrap();
    assert!(
        retention
            .log_start_breached
            .contains(&cleaned.base_offset()),
        "{retention:?}"
    );
    // The records' timestamps are far older than `retention.ms`, so time retention takes every
    // other segment too, the active one included: retention rolls first, and that roll's
    // background flush holds the rolled segment until it ends, which keeps it queued. Wait for
    // it, so that below only the test's own readers hold segments.
    assert_eq!(log.segment_count(), 1, "{retention:?}");
    log.wait_for_background_flushes();
    assert!(
        cleaned
            .log_path()
            .to_string_lossy()
            .ends_with(".log.deleted")
    );
    // The original moved aside, and its reader still reads it.
    let original = old_snapshot.values().next().unwrap();
    assert!(original.log_path().exists());
    assert!(
        original
            .log_path()
            .to_string_lossy()
            .ends_with(".log.0.deleted")
    );
    assert!(original.translate_offset(0, 0).unwrap().is_some());

    // The first reader leaves: its segment's files go, and only its own.
    drop(old_snapshot);
    log.delete_expired_files().unwrap();
    assert!(
        cleaned.log_path().exists(),
        "the cleaned segment's {} was deleted under its reader",
        cleaned.log_path().display()
    );
    assert!(cleaned.last_modified_ms().is_ok());
    assert!(cleaned.offset_index_path().exists());
    // Once its reader leaves too, its files go.
    drop(cleaned);
    log.delete_expired_files().unwrap();
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(log.pending_deletes(), 0, "{names:?}");
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".deleted"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    log.close().unwrap();
}
