//! Lifecycle: close trims then unmaps deterministically (no mapping left, even while reader
//! handles exist), flush, rename keeps the mapping working, delete unmaps and removes.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, OffsetIndex, TimeIndex, TimestampOffset, live_mappings};

#[test]
fn close_unmaps_deterministically_and_trims() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.timeindex");
    let mut idx = TimeIndex::options(&path, 0)
        .max_index_size(1200)
        .open()
        .unwrap();
    idx.maybe_append(10, 1, false).unwrap();
    idx.flush().unwrap();
    let readers: Vec<_> = (0..4).map(|_| idx.reader()).collect();
    assert!(idx.is_mapped());
    idx.close().unwrap();
    assert!(!idx.is_mapped());
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 12);
    for r in &readers {
        assert!(matches!(r.lookup(10), Err(Error::Closed { .. })));
    }
    idx.close().unwrap();
    assert!(matches!(
        idx.maybe_append(20, 2, false),
        Err(Error::Closed { .. })
    ));
    // The closed index still answers Kafka's sanity rules that need no mapping? No: the time
    // index reads entry 0, so it reports the closed state instead of a wrong answer.
    assert!(matches!(idx.sanity_check(), Err(Error::Closed { .. })));
}

#[test]
fn rename_keeps_the_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = TimeIndex::options(dir.path().join("a.timeindex"), 0)
        .max_index_size(1200)
        .open()
        .unwrap();
    idx.maybe_append(10, 1, false).unwrap();
    let to = dir.path().join("a.timeindex.deleted");
    idx.rename(&to).unwrap();
    assert_eq!(idx.path(), to);
    idx.maybe_append(20, 2, false).unwrap();
    assert_eq!(
        idx.lookup(25).unwrap(),
        TimestampOffset {
            timestamp: 20,
            offset: 2
        }
    );
    // Resize reopens the file by its new name.
    assert!(idx.trim_to_valid_size().unwrap());
    assert_eq!(std::fs::metadata(&to).unwrap().len(), 24);
}

#[test]
fn rename_failure_still_takes_the_new_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("a.index"), 0)
        .max_index_size(80)
        .open()
        .unwrap();
    let bad = dir.path().join("missing-dir").join("a.index");
    assert!(matches!(
        idx.rename(&bad),
        Err(Error::Io { op: "rename", .. })
    ));
    assert_eq!(
        idx.path(),
        bad,
        "Kafka sets the new file even when the move fails"
    );
}

#[test]
fn delete_unmaps_and_removes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.index");
    let mut idx = OffsetIndex::options(&path, 0)
        .max_index_size(80)
        .open()
        .unwrap();
    let reader = idx.reader();
    let mapped_before = live_mappings();
    assert!(idx.delete().unwrap());
    assert!(!path.exists());
    assert!(live_mappings() < mapped_before || !idx.is_mapped());
    assert!(matches!(reader.lookup(0), Err(Error::Closed { .. })));
    assert!(!idx.delete().unwrap(), "deleting again finds no file");
}
