//! TimeIndexTest `testLookUp`, `testEntry`, `testEntryOverflow`, `testLastEntry`, `testEntrySize`
//! and `testParseEntry`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, NO_TIMESTAMP, TimeIndex, TimestampOffset};

const BASE: i64 = 45;
const MAX_ENTRIES: u32 = 30;

fn ts(timestamp: i64, offset: i64) -> TimestampOffset {
    TimestampOffset { timestamp, offset }
}

/// TimeIndexTest's `appendEntries(n)`: `(i * 10, base + i * 10)` for `i` in `1..=n`.
fn filled(dir: &tempfile::TempDir, n: i64) -> TimeIndex {
    let mut idx = TimeIndex::options(dir.path().join("t.timeindex"), BASE)
        .max_index_size(MAX_ENTRIES * 12)
        .open()
        .unwrap();
    for i in 1..=n {
        assert!(idx.maybe_append(i * 10, i * 10 + BASE, false).unwrap());
    }
    idx
}

#[test]
fn lookup() {
    let dir = tempfile::tempdir().unwrap();
    let empty = TimeIndex::options(dir.path().join("e.timeindex"), BASE)
        .max_index_size(MAX_ENTRIES * 12)
        .open()
        .unwrap();
    assert_eq!(empty.lookup(100).unwrap(), ts(NO_TIMESTAMP, BASE));
    let idx = filled(&dir, 29);
    let reader = idx.reader();
    for r in [idx.lookup(9).unwrap(), reader.lookup(9).unwrap()] {
        assert_eq!(r, ts(-1, BASE));
    }
    assert_eq!(idx.lookup(25).unwrap(), ts(20, 65));
    assert_eq!(reader.lookup(30).unwrap(), ts(30, 75));
    assert_eq!(reader.lookup(i64::MAX).unwrap(), ts(290, 335));
}

#[test]
fn entry_and_entry_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let empty = TimeIndex::options(dir.path().join("e.timeindex"), BASE)
        .max_index_size(MAX_ENTRIES * 12)
        .open()
        .unwrap();
    assert!(matches!(empty.entry(0), Err(Error::EntryOutOfRange { .. })));
    let idx = filled(&dir, 29);
    assert_eq!(idx.entry(0).unwrap(), ts(10, 55));
    assert_eq!(idx.entry(1).unwrap(), ts(20, 65));
    assert_eq!(idx.entry(2).unwrap(), ts(30, 75));
    assert_eq!(idx.reader().entry(3).unwrap(), ts(40, 85));
}

#[test]
fn last_entry_and_entry_size() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("l.timeindex"), BASE)
        .max_index_size(MAX_ENTRIES * 12)
        .open()
        .unwrap();
    assert_eq!(TimeIndex::ENTRY_SIZE, 12);
    assert_eq!(idx.last_entry(), ts(NO_TIMESTAMP, BASE));
    idx.maybe_append(1, 1 + BASE, false).unwrap();
    assert_eq!(idx.last_entry(), ts(1, BASE + 1));
    assert_eq!(idx.entry(0).unwrap(), ts(1, BASE + 1));
}

#[test]
fn lookups_on_both_sides_of_the_warm_section() {
    // 2000 entries: more than the 682-entry warm section of the time index.
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("w.timeindex"), 0)
        .max_index_size(2000 * 12)
        .open()
        .unwrap();
    for i in 0..1999_i64 {
        assert!(idx.maybe_append(i * 4 + 2, i * 3, false).unwrap());
    }
    let reader = idx.reader();
    for t in -3..8_010_i64 {
        let expected = if t < 2 {
            ts(NO_TIMESTAMP, 0)
        } else {
            let i = ((t - 2) / 4).min(1998);
            ts(i * 4 + 2, i * 3)
        };
        assert_eq!(reader.lookup(t).unwrap(), expected, "target {t}");
    }
}
