//! OffsetIndexTest `testReopen`: a closed index reopens with its entries (counted from the file
//! length, no scan) and, being trimmed, is full.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{Error, OffsetIndex, OffsetPosition};

#[test]
fn reopen_after_close() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.index");
    let mut idx = OffsetIndex::options(&path, 45)
        .max_index_size(30 * 8)
        .open()
        .unwrap();
    let first = OffsetPosition {
        offset: 51,
        position: 0,
    };
    let second = OffsetPosition {
        offset: 52,
        position: 1,
    };
    idx.append(first.offset, first.position).unwrap();
    idx.append(second.offset, second.position).unwrap();
    idx.close().unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().len(), 16);

    let mut ro = OffsetIndex::options(&path, 45).open().unwrap();
    assert_eq!(ro.lookup(first.offset).unwrap(), first);
    assert_eq!(ro.lookup(second.offset).unwrap(), second);
    assert_eq!(ro.last_offset(), second.offset);
    assert_eq!(ro.entries(), 2);
    assert!(ro.is_full());
    assert!(matches!(ro.append(53, 1), Err(Error::IndexFull { .. })));
}

#[test]
fn reopen_with_open_keeps_the_existing_length() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.index");
    let mut idx = OffsetIndex::options(&path, 0)
        .max_index_size(30 * 8)
        .open()
        .unwrap();
    idx.append(3, 9).unwrap();
    idx.close().unwrap();
    // `open` on an existing file ignores max_index_size, as Kafka does.
    let mut again = OffsetIndex::options(&path, 0)
        .max_index_size(1_000_000)
        .open()
        .unwrap();
    assert_eq!(
        (again.entries(), again.max_entries(), again.length()),
        (1, 1, 8)
    );
    // LogLoader's fix for KAFKA-6388: resize the reopened active index.
    assert!(again.resize(30 * 8).unwrap());
    again.append(4, 10).unwrap();
    assert_eq!(
        again.lookup(4).unwrap(),
        OffsetPosition {
            offset: 4,
            position: 10
        }
    );
}

#[test]
fn open_existing_on_a_missing_file_names_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing.index");
    let err = OffsetIndex::options(&path, 0).open().unwrap_err();
    assert!(
        matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    );
    assert_eq!(err.file(), path);
    assert!(!path.exists());
}
