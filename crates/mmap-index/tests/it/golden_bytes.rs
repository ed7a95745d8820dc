//! Golden bytes: the files this crate writes equal hand-computed big-endian bytes, including
//! preallocation to `floor(max / entry) * entry` and trimming on close.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, OffsetIndex, TimeIndex};

#[test]
fn offset_index_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000100.index");
    let mut idx = OffsetIndex::options(&path, 100)
        .max_index_size(67)
        .open()
        .unwrap();
    // Kafka's example: roundDownToExactMultiple(67, 8) == 64.
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 64);
    assert_eq!(std::fs::read(&path).unwrap(), vec![0; 64]);
    idx.append(101, 0).unwrap();
    idx.append(100 + 0x0102_0304, 0x0a0b_0c0d).unwrap();
    idx.flush().unwrap();
    let expected = vec![0, 0, 0, 1, 0, 0, 0, 0, 1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d];
    let mut preallocated = expected.clone();
    preallocated.resize(64, 0);
    assert_eq!(std::fs::read(&path).unwrap(), preallocated);
    idx.close().unwrap();
    assert_eq!(std::fs::read(&path).unwrap(), expected);
}

#[test]
fn time_index_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000100.timeindex");
    let mut idx = TimeIndex::options(&path, 100)
        .max_index_size(40)
        .open()
        .unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 36);
    idx.maybe_append(0x0102_0304_0506_0708, 100 + 0x0a0b_0c0d, false)
        .unwrap();
    idx.maybe_append(0x0102_0304_0506_0709, 100 + 0x0a0b_0c0e, true)
        .unwrap();
    idx.close().unwrap();
    assert_eq!(
        std::fs::read(&path).unwrap(),
        vec![
            1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d, //
            1, 2, 3, 4, 5, 6, 7, 9, 0x0a, 0x0b, 0x0c, 0x0e,
        ]
    );
}

#[test]
fn default_size_preallocation_matches_kafka() {
    // Reference 3.7: 10 MiB gives 1,310,720 offset slots and 873,813 time slots (10,485,756 B).
    let dir = tempfile::tempdir().unwrap();
    let idx = OffsetIndex::options(dir.path().join("d.index"), 0)
        .max_index_size(10 * 1024 * 1024)
        .open()
        .unwrap();
    assert_eq!((idx.length(), idx.max_entries()), (10_485_760, 1_310_720));
    let tidx = TimeIndex::options(dir.path().join("d.timeindex"), 0)
        .max_index_size(10 * 1024 * 1024)
        .open()
        .unwrap();
    assert_eq!((tidx.length(), tidx.max_entries()), (10_485_756, 873_813));
}

#[test]
fn max_index_size_below_one_entry_is_refused_and_leaves_no_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tiny.timeindex");
    let err = TimeIndex::options(&path, 0)
        .max_index_size(11)
        .open()
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::InvalidMaxIndexSize {
                max_index_size: 11,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().starts_with("Invalid max index size: 11"));
    assert!(!path.exists());
    let path = dir.path().join("tiny.index");
    assert!(matches!(
        OffsetIndex::options(&path, 0).max_index_size(7).open(),
        Err(Error::InvalidMaxIndexSize { .. })
    ));
    OffsetIndex::options(&path, 0)
        .max_index_size(8)
        .open()
        .unwrap();
}
