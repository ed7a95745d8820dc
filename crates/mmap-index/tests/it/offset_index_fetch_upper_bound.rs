//! OffsetIndexTest `testFetchUpperBoundOffset`: an entry whose position lies past a fetch.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{OffsetIndex, OffsetPosition};

#[test]
fn fetch_upper_bound_offset() {
    const B: i64 = 45;
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("f.index"), B)
        .max_index_size(30 * 8)
        .open()
        .unwrap();
    let first = OffsetPosition {
        offset: B,
        position: 0,
    };
    let second = OffsetPosition {
        offset: B + 1,
        position: 10,
    };
    let third = OffsetPosition {
        offset: B + 2,
        position: 23,
    };
    let fourth = OffsetPosition {
        offset: B + 3,
        position: 37,
    };
    assert_eq!(idx.fetch_upper_bound_offset(first, 5).unwrap(), None);
    for e in [first, second, third, fourth] {
        idx.append(e.offset, e.position).unwrap();
    }
    let reader = idx.reader();
    for (start, size, expected) in [
        (first, 5, Some(second)),
        (first, 10, Some(second)),
        (first, 23, Some(third)),
        (first, 22, Some(third)),
        (second, 24, Some(fourth)),
        (fourth, 1, None),
        (first, 200, None),
        (second, 200, None),
    ] {
        assert_eq!(
            idx.fetch_upper_bound_offset(start, size).unwrap(),
            expected,
            "{start:?} + {size}"
        );
        assert_eq!(
            reader.fetch_upper_bound_offset(start, size).unwrap(),
            expected
        );
    }
}
