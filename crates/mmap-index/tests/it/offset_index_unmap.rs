//! OffsetIndexTest `forceUnmapTest`: after an unmap, lookups fail (Kafka: a
//! `NullPointerException`; here `Closed`), on the index and on every reader handle.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, OffsetIndex};

#[test]
fn lookups_after_unmap_fail_with_closed() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("u.index"), 0)
        .max_index_size(10 * 8)
        .open()
        .unwrap();
    idx.append(1, 1).unwrap();
    let reader = idx.reader();
    idx.unmap();
    assert!(!idx.is_mapped() && idx.is_closed());
    assert!(matches!(idx.lookup(1), Err(Error::Closed { .. })));
    assert!(matches!(reader.lookup(1), Err(Error::Closed { .. })));
    assert!(matches!(idx.append(2, 2), Err(Error::Closed { .. })));
    assert!(matches!(idx.flush(), Err(Error::Closed { .. })));
    // Close after an unmap does nothing (Kafka's close checks for a null mmap).
    idx.close().unwrap();
    // Unmap does not trim: the preallocated length stays.
    assert_eq!(std::fs::metadata(idx.path()).unwrap().len(), 80);
}

#[test]
fn dropping_the_index_unmaps_even_with_readers_alive() {
    let dir = tempfile::tempdir().unwrap();
    let idx = seglog_mmap_index::TimeIndex::options(dir.path().join("u.timeindex"), 0)
        .max_index_size(120)
        .open()
        .unwrap();
    let reader = idx.reader();
    drop(idx);
    assert!(matches!(reader.lookup(1), Err(Error::Closed { .. })));
}
