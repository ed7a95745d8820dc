//! The base offset of an index opened from a path: read from its Kafka file name unless given,
//! and a given one that differs from the name's refused before the file is touched.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use seglog_mmap_index::{Error, OffsetIndex, TimeIndex, base_offset_from_file_name};

#[test]
fn kafka_names_hold_the_base_offset() {
    let parse = |name: &str| base_offset_from_file_name(Path::new(name));
    assert_eq!(parse("00000000000000000100.index"), Some(100));
    assert_eq!(parse("/d/t-0/00000000000000000007.timeindex.swap"), Some(7));
    assert_eq!(parse("00000000000000000000.index.deleted"), Some(0));
    assert_eq!(parse("a.index"), None);
    assert_eq!(parse("-1.index"), None);
    assert_eq!(parse("00000000000000000100"), None);
    assert_eq!(parse("99999999999999999999.index"), None); // past i64::MAX
}

#[test]
fn an_index_opened_by_name_takes_its_base_offset_from_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000100.index");
    let mut index = OffsetIndex::options(&path, 100)
        .max_index_size(4096)
        .open()
        .unwrap();
    index.append(110, 0).unwrap();
    index.close().unwrap();
    let read = OffsetIndex::options_from_file_name(&path)
        .unwrap()
        .read_only()
        .open()
        .unwrap();
    assert_eq!(read.base_offset(), 100);
    assert_eq!(read.entries(), 1);
    assert_eq!(read.lookup(110).unwrap().offset, 110);
}

#[test]
fn a_name_without_a_base_offset_needs_one_given() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scratch.timeindex");
    let err = TimeIndex::options_from_file_name(&path).unwrap_err();
    assert!(matches!(err, Error::NoBaseOffsetInName { .. }), "{err}");
    assert!(err.to_string().contains("scratch.timeindex"), "{err}");
    // Given, it is taken as it is.
    let index = TimeIndex::options(&path, 5)
        .max_index_size(120)
        .open()
        .unwrap();
    assert_eq!(index.base_offset(), 5);
}

#[test]
fn a_base_offset_other_than_the_names_is_refused_and_nothing_is_created() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000100.index");
    let err = OffsetIndex::options(&path, 0)
        .max_index_size(4096)
        .open()
        .unwrap_err();
    match &err {
        Error::BaseOffsetMismatch {
            file,
            from_name,
            given,
        } => assert_eq!(
            (file.as_path(), *from_name, *given),
            (path.as_path(), 100, 0)
        ),
        other => panic!("{other}"),
    }
    assert!(
        err.to_string().contains("00000000000000000100.index"),
        "{err}"
    );
    assert!(!path.exists());
    // A lazy index refuses it on first use.
    let lazy = OffsetIndex::options(&path, 99).max_index_size(4096).lazy();
    assert!(matches!(
        lazy.get(),
        Err(Error::BaseOffsetMismatch { given: 99, .. })
    ));
}
