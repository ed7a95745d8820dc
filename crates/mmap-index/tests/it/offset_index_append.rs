//! OffsetIndexTest `appendTooMany` and `appendOutOfOrder`, plus the relative-offset overflow
//! rules: the append preconditions and the errors they give.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, OffsetIndex};

#[test]
fn append_to_a_full_index_fails_with_index_full() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("a.index"), 45)
        .max_index_size(30 * 8)
        .open()
        .unwrap();
    for i in 0..30 {
        idx.append(45 + i + 1, u32::try_from(i).unwrap()).unwrap();
    }
    assert!(idx.is_full());
    let err = idx.append(45 + 31, 1).unwrap_err();
    assert!(matches!(err, Error::IndexFull { entries: 30, .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("Attempt to append to a full index (size = 30)."),
        "{err}"
    );
}

#[test]
fn append_out_of_order_fails_with_invalid_offset() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("a.index"), 45)
        .max_index_size(30 * 8)
        .open()
        .unwrap();
    idx.append(51, 0).unwrap();
    let err = idx.append(50, 1).unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidOffset {
                offset: 50,
                slot: 1,
                last_offset: 51,
                ..
            }
        ),
        "{err}"
    );
    // Equal offsets are refused by the offset index too.
    assert!(matches!(
        idx.append(51, 1),
        Err(Error::InvalidOffset { .. })
    ));
    assert_eq!(idx.entries(), 1);
}

#[test]
fn offsets_below_base_or_too_far_past_it_overflow() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("a.index"), 1_000)
        .max_index_size(30 * 8)
        .open()
        .unwrap();
    assert!(!idx.can_append_offset(999));
    assert!(matches!(
        idx.append(999, 0),
        Err(Error::OffsetOverflow { offset: 999, .. })
    ));
    let max = 1_000 + i64::from(i32::MAX);
    assert!(idx.can_append_offset(max));
    assert!(!idx.can_append_offset(max + 1));
    assert!(matches!(
        idx.append(max + 1, 0),
        Err(Error::OffsetOverflow { .. })
    ));
    assert_eq!(idx.entries(), 0);
    idx.append(max, 7).unwrap();
    assert_eq!(
        idx.relative_offset(max).unwrap(),
        u32::try_from(i32::MAX).unwrap()
    );
    assert_eq!(idx.lookup(i64::MAX).unwrap().offset, max);
}

#[test]
fn first_append_may_use_the_base_offset_and_sanity_passes() {
    // OffsetIndexTest `testSanityLastOffsetEqualToBaseOffset`.
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("a.index"), 20)
        .max_index_size(10 * 8)
        .open()
        .unwrap();
    idx.append(20, 0).unwrap();
    idx.sanity_check().unwrap();
    assert_eq!(idx.last_offset(), 20);
}

#[test]
fn positions_are_not_required_to_increase() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("a.index"), 0)
        .max_index_size(10 * 8)
        .open()
        .unwrap();
    idx.append(1, 100).unwrap();
    idx.append(2, 50).unwrap();
    assert_eq!(idx.entry(1).unwrap().position, 50);
}
