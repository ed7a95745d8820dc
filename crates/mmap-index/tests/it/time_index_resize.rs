//! TimeIndexTest `testResize`, and resize, trim and reset on both index types: file lengths,
//! capacities, refusals, and entries surviving the remap.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, OffsetIndex, TimeIndex, TimestampOffset};

#[test]
fn resize_returns_whether_the_length_changed() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("r.timeindex"), 45)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    assert!(!idx.resize(30 * 12).unwrap());
    assert!(
        !idx.resize(30 * 12 + 11).unwrap(),
        "rounded down to the same length"
    );
    assert!(idx.resize(15 * 12).unwrap());
    assert_eq!((idx.length(), idx.max_entries()), (180, 15));
    assert!(idx.resize(60 * 12).unwrap());
    assert_eq!((idx.length(), idx.max_entries()), (720, 60));
    assert_eq!(std::fs::metadata(idx.path()).unwrap().len(), 720);
}

#[test]
fn entries_survive_remaps_and_trim_keeps_exactly_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.timeindex");
    let mut idx = TimeIndex::options(&path, 0)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    for i in 1..=5 {
        idx.maybe_append(i * 100, i, false).unwrap();
    }
    let reader = idx.reader();
    assert!(idx.trim_to_valid_size().unwrap());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 60);
    assert!(idx.is_full(), "a trimmed time index is full");
    assert_eq!(
        reader.lookup(250).unwrap(),
        TimestampOffset {
            timestamp: 200,
            offset: 2
        }
    );
    assert!(idx.resize(100 * 12).unwrap());
    assert_eq!(
        idx.last_entry(),
        TimestampOffset {
            timestamp: 500,
            offset: 5
        }
    );
    assert!(idx.maybe_append(600, 6, false).unwrap());
    assert_eq!(
        reader.lookup(i64::MAX).unwrap(),
        TimestampOffset {
            timestamp: 600,
            offset: 6
        }
    );
}

#[test]
fn resize_below_the_entries_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("r.index"), 0)
        .max_index_size(10 * 8)
        .open()
        .unwrap();
    for o in 1..=4 {
        idx.append(o, 0).unwrap();
    }
    let err = idx.resize(3 * 8).unwrap_err();
    assert!(
        matches!(
            err,
            Error::ResizeBelowEntries {
                new_size: 24,
                entries: 4,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(idx.length(), 80);
    assert_eq!(idx.lookup(4).unwrap().offset, 4);
}

#[test]
fn reset_empties_and_restores_max_index_size() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.index");
    let mut idx = OffsetIndex::options(&path, 0)
        .max_index_size(10 * 8 + 5)
        .open()
        .unwrap();
    assert_eq!(
        idx.length(),
        80,
        "preallocated to a whole number of entries"
    );
    idx.append(1, 0).unwrap();
    idx.trim_to_valid_size().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 8);
    idx.reset().unwrap();
    assert_eq!(
        (idx.entries(), idx.max_entries(), idx.length()),
        (0, 10, 80)
    );
    assert_eq!(idx.last_offset(), 0);
    idx.append(7, 7).unwrap();
}
