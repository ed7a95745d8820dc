//! OffsetIndexTest `truncate`: Kafka's three truncation cases, and appends after each.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{OffsetIndex, OffsetPosition};

fn op(offset: i64, position: u32) -> OffsetPosition {
    OffsetPosition { offset, position }
}

#[test]
fn truncate_cases() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("t.index"), 0)
        .max_index_size(10 * 8)
        .open()
        .unwrap();
    idx.truncate().unwrap();
    for i in 1..10 {
        idx.append(i, u32::try_from(i).unwrap()).unwrap();
    }

    idx.truncate_to(12).unwrap();
    assert_eq!(
        idx.lookup(10).unwrap(),
        op(9, 9),
        "unchanged by truncate past the end"
    );
    assert_eq!(idx.last_offset(), 9);

    idx.append(10, 10).unwrap();
    idx.truncate_to(10).unwrap();
    assert_eq!(
        idx.lookup(10).unwrap(),
        op(9, 9),
        "the exact offset is removed"
    );
    assert_eq!(idx.last_offset(), 9);
    idx.append(10, 10).unwrap();

    idx.truncate_to(9).unwrap();
    assert_eq!(idx.lookup(10).unwrap(), op(8, 8));
    assert_eq!(idx.last_offset(), 8);
    idx.append(9, 9).unwrap();

    idx.truncate_to(5).unwrap();
    assert_eq!(idx.lookup(10).unwrap(), op(4, 4));
    assert_eq!(idx.last_offset(), 4);
    idx.append(5, 5).unwrap();

    idx.truncate().unwrap();
    assert_eq!(idx.entries(), 0);
    assert_eq!(idx.last_offset(), 0);
    idx.append(0, 0).unwrap();
}

#[test]
fn truncate_to_an_absent_offset_keeps_the_floor() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("t.index"), 100)
        .max_index_size(10 * 8)
        .open()
        .unwrap();
    for o in [110, 120, 130] {
        idx.append(o, 0).unwrap();
    }
    idx.truncate_to(125).unwrap();
    assert_eq!(idx.entries(), 2);
    idx.truncate_to(105).unwrap();
    assert_eq!(
        idx.entries(),
        0,
        "no entry at or below the offset: everything goes"
    );
    // The file keeps its preallocated length; truncation only moves the count.
    assert_eq!(idx.length(), 80);
}
