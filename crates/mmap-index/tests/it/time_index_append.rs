//! TimeIndexTest `testAppend` and `testIsFull`, and `maybe_append`'s other rules: strictly
//! greater timestamps only, equal offsets accepted, and the skip-full-check path on a
//! completely used mapping (KAFKA-12734, KAFKA-19200) returning an error instead of overflowing.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, TimeIndex, TimestampOffset};

const BASE: i64 = 45;

fn filled(dir: &tempfile::TempDir, n: i64) -> TimeIndex {
    let mut idx = TimeIndex::options(dir.path().join("a.timeindex"), BASE)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    for i in 1..=n {
        idx.maybe_append(i * 10, i * 10 + BASE, false).unwrap();
    }
    idx
}

#[test]
fn full_at_max_entries_minus_one() {
    let dir = tempfile::tempdir().unwrap();
    let idx = filled(&dir, 28);
    assert!(!idx.is_full());
    let idx = filled(&tempfile::tempdir().unwrap(), 29);
    assert!(idx.is_full());
    assert_eq!(idx.max_entries(), 30);
}

#[test]
fn append_rules_on_a_full_index() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = filled(&dir, 29);
    let err = idx.maybe_append(10_000, 1_000, false).unwrap_err();
    assert!(matches!(err, Error::IndexFull { entries: 29, .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("Attempt to append to a full time index (size = 29).")
    );
    let err = idx.maybe_append(10_000, 28 * 10, true).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidOffset {
                offset: 280,
                last_offset: 335,
                ..
            }
        ),
        "{err}"
    );
    assert!(idx.maybe_append(10_000, 1_000, true).unwrap());
    assert_eq!(idx.entries(), 30);
    assert_eq!(
        idx.last_entry(),
        TimestampOffset {
            timestamp: 10_000,
            offset: 1_000
        }
    );
    // Every slot is now used: even the skip-full-check path must refuse, not overflow.
    let err = idx.maybe_append(20_000, 2_000, true).unwrap_err();
    assert!(
        matches!(
            err,
            Error::MappingFull {
                entries: 30,
                max_entries: 30,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(idx.entries(), 30);
}

#[test]
fn only_strictly_greater_timestamps_are_appended() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("s.timeindex"), 0)
        .max_index_size(10 * 12)
        .open()
        .unwrap();
    assert!(
        !idx.maybe_append(-1, 0, false).unwrap(),
        "NO_TIMESTAMP never makes an entry"
    );
    assert!(idx.maybe_append(100, 5, false).unwrap());
    assert!(
        !idx.maybe_append(100, 5, false).unwrap(),
        "re-appending the last entry is a no-op"
    );
    assert!(
        !idx.maybe_append(100, 9, false).unwrap(),
        "equal timestamp, larger offset: skipped"
    );
    assert!(
        idx.maybe_append(101, 9, false).unwrap(),
        "equal or larger offsets are accepted"
    );
    assert!(idx.maybe_append(102, 9, false).unwrap());
    let err = idx.maybe_append(99, 10, false).unwrap_err();
    assert!(
        matches!(
            err,
            Error::TimestampNotIncreasing {
                timestamp: 99,
                last_timestamp: 102,
                ..
            }
        ),
        "{err}"
    );
    let err = idx.maybe_append(200, 8, false).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidOffset {
                offset: 8,
                last_offset: 9,
                ..
            }
        ),
        "{err}"
    );
    assert_eq!(idx.entries(), 3);
}

#[test]
fn untrimmed_zero_tail_reopens_full_and_the_roll_entry_is_refused() {
    // KAFKA-19200: a preallocated file that was never written, reopened after a crash.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.timeindex");
    std::fs::write(&path, vec![0_u8; 10 * 12]).unwrap();
    let mut idx = TimeIndex::options(&path, 0)
        .max_index_size(10 * 12)
        .open()
        .unwrap();
    assert_eq!(idx.entries(), 10);
    assert!(idx.is_full());
    let err = idx.maybe_append(5, 3, true).unwrap_err();
    assert!(matches!(err, Error::MappingFull { .. }), "{err}");
}

#[test]
fn offset_overflow_is_checked_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("o.timeindex"), 100)
        .max_index_size(10 * 12)
        .open()
        .unwrap();
    assert!(matches!(
        idx.maybe_append(5, 99, false),
        Err(Error::OffsetOverflow { offset: 99, .. })
    ));
    assert_eq!(idx.entries(), 0);
    let far = 100 + i64::from(i32::MAX) + 1;
    assert!(matches!(
        idx.maybe_append(5, far, false),
        Err(Error::OffsetOverflow { .. })
    ));
    assert_eq!(idx.entries(), 0);
}
