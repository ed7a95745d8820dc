//! TimeIndexTest `testTruncate`: truncation searches by offset (the entry's value).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{NO_TIMESTAMP, TimeIndex, TimestampOffset};

const BASE: i64 = 45;

#[test]
fn truncate_and_truncate_to_the_first_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("t.timeindex"), BASE)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    let fill = |idx: &mut TimeIndex| {
        for i in 1..=29 {
            idx.maybe_append(i * 10, i * 10 + BASE, false).unwrap();
        }
    };
    fill(&mut idx);
    idx.truncate().unwrap();
    assert_eq!(idx.entries(), 0);
    assert_eq!(
        idx.last_entry(),
        TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: BASE
        }
    );
    fill(&mut idx);
    idx.truncate_to(10 + BASE).unwrap();
    assert_eq!(idx.entries(), 0);
}

#[test]
fn truncate_to_uses_offsets_not_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("t.timeindex"), 0)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    // Timestamps far from offsets, so a key search would give other answers.
    for (t, o) in [(1_000, 10), (2_000, 20), (3_000, 30)] {
        idx.maybe_append(t, o, false).unwrap();
    }
    idx.truncate_to(25).unwrap();
    assert_eq!(idx.entries(), 2);
    assert_eq!(
        idx.last_entry(),
        TimestampOffset {
            timestamp: 2_000,
            offset: 20
        }
    );
    idx.truncate_to(20).unwrap();
    assert_eq!(idx.entries(), 1);
    idx.truncate_to(1_000_000).unwrap();
    assert_eq!(idx.entries(), 1);
    idx.truncate_to(5).unwrap();
    assert_eq!(idx.entries(), 0);
    assert!(
        idx.maybe_append(50, 3, false).unwrap(),
        "append works after truncation"
    );
}

#[test]
fn equal_offsets_follow_kafkas_probe_order() {
    // Offsets may repeat in a time index. Kafka's search returns the first slot it probes whose
    // offset equals the target, so truncate_to(50) over offsets 40, 50, 50, 60 keeps two entries,
    // one of them at offset 50 (Kafka's answer; "remove offsets >= 50" would keep one).
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("q.timeindex"), 0)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    for (t, o) in [(10, 40), (20, 50), (30, 50), (40, 60)] {
        assert!(idx.maybe_append(t, o, false).unwrap());
    }
    idx.truncate_to(50).unwrap();
    assert_eq!(idx.entries(), 2);
    assert_eq!(
        idx.last_entry(),
        TimestampOffset {
            timestamp: 20,
            offset: 50
        }
    );
    // Offsets 50, 50, 60 (first probe on slot 0 is not below the target): cold path, slot 0.
    let mut idx = TimeIndex::options(dir.path().join("r.timeindex"), 0)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    for (t, o) in [(10, 50), (20, 50), (30, 60)] {
        assert!(idx.maybe_append(t, o, false).unwrap());
    }
    idx.truncate_to(50).unwrap();
    assert_eq!(idx.entries(), 0);
}
