//! Opens the index files that `testdata/gen/index_files.py` wrote with Python's `struct`
//! (independently of this crate) and checks them against the values the script encodes.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};

use seglog_mmap_index::{
    CorruptKind, Error, OffsetIndex, OffsetPosition, Problem, TimeIndex, TimestampOffset,
};

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/index")
}

/// Copies a fixture into a temporary directory, so no test can modify the committed file.
fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(name);
    std::fs::copy(fixture_dir().join(name), &to).unwrap();
    (dir, to)
}

#[test]
fn fixture_manifest_lists_every_file_with_its_length() {
    let manifest = std::fs::read_to_string(fixture_dir().join("manifest.txt")).unwrap();
    let mut seen = 0;
    for line in manifest.lines().filter(|l| !l.starts_with('#')) {
        let mut parts = line.split(' ');
        let (name, len) = (
            parts.next().unwrap(),
            parts.next().unwrap().parse::<u64>().unwrap(),
        );
        assert_eq!(
            std::fs::metadata(fixture_dir().join(name)).unwrap().len(),
            len,
            "{name}"
        );
        seen += 1;
    }
    assert_eq!(seen, 8);
}

#[test]
fn fixture_rolled_offset_index() {
    let (_dir, path) = copy("00000000000000001000.index");
    let idx = OffsetIndex::options(&path, 1000).open().unwrap();
    assert_eq!((idx.entries(), idx.max_entries()), (100, 100));
    for i in 0..100_i64 {
        let expected = OffsetPosition {
            offset: 1000 + 7 * i + 3,
            position: u32::try_from(4096 * i + 17).unwrap(),
        };
        assert_eq!(idx.entry(usize::try_from(i).unwrap()).unwrap(), expected);
        assert_eq!(idx.lookup(expected.offset).unwrap(), expected);
        assert_eq!(idx.lookup(expected.offset + 6).unwrap(), expected);
    }
    assert_eq!(
        idx.lookup(1002).unwrap(),
        OffsetPosition {
            offset: 1000,
            position: 0
        }
    );
    idx.sanity_check().unwrap();
    assert!(idx.verify().unwrap().is_clean());
    assert_eq!(idx.last_offset(), 1000 + 7 * 99 + 3);
}

#[test]
fn fixture_rolled_time_index() {
    let (_dir, path) = copy("00000000000000001000.timeindex");
    let idx = TimeIndex::options(&path, 1000).open().unwrap();
    assert_eq!(idx.entries(), 100);
    for i in 0..100_i64 {
        let expected = TimestampOffset {
            timestamp: 1_700_000_000_000 + 250 * i,
            offset: 1000 + 7 * i + 3,
        };
        assert_eq!(idx.entry(usize::try_from(i).unwrap()).unwrap(), expected);
        assert_eq!(idx.lookup(expected.timestamp + 249).unwrap(), expected);
    }
    assert_eq!(
        idx.lookup(0).unwrap(),
        TimestampOffset {
            timestamp: -1,
            offset: 1000
        }
    );
    idx.sanity_check().unwrap();
    assert!(idx.verify().unwrap().is_clean());
}

#[test]
fn fixture_crash_image_offset_index() {
    let (_dir, path) = copy("00000000000000000000.index");
    let idx = OffsetIndex::options(&path, 0)
        .max_index_size(10 * 1024 * 1024)
        .open()
        .unwrap();
    // Kafka's count: every slot of the untrimmed file is an entry, and its last offset is the
    // base, so Kafka's sanity check passes.
    assert_eq!((idx.entries(), idx.last_offset()), (80, 0));
    idx.sanity_check().unwrap();
    let report = idx.verify().unwrap();
    assert_eq!(
        report.problems,
        vec![Problem::ZeroTail {
            first_slot: 5,
            slots: 75
        }]
    );
}

#[test]
fn fixture_crash_image_time_index() {
    let (_dir, path) = copy("00000000000000000000.timeindex");
    let idx = TimeIndex::options(&path, 0)
        .max_index_size(10 * 1024 * 1024)
        .open()
        .unwrap();
    assert_eq!(idx.entries(), 80);
    let err = idx.sanity_check().unwrap_err();
    assert!(matches!(
        err,
        Error::CorruptIndex {
            corruption: CorruptKind::LastTimestampBelowFirst {
                last_timestamp: 0,
                first_timestamp: 5000
            },
            ..
        }
    ));
    let report = idx.verify().unwrap();
    assert!(report.has_zero_tail(), "{report:?}");
    assert!(report.problems.contains(&Problem::ZeroTail {
        first_slot: 4,
        slots: 76
    }));
    assert!(report.problems.contains(&Problem::LastTimestampZero));
}

#[test]
fn fixture_large_base_offset() {
    let (_dir, path) = copy("00000000005000000000.index");
    let idx = OffsetIndex::options(&path, 5_000_000_000).open().unwrap();
    let max = 5_000_000_000 + i64::from(i32::MAX);
    assert_eq!(
        idx.lookup(i64::MAX).unwrap(),
        OffsetPosition {
            offset: max,
            position: 183
        }
    );
    assert_eq!(
        idx.lookup(max - 2).unwrap(),
        OffsetPosition {
            offset: 5_000_000_001,
            position: 61
        }
    );
    idx.sanity_check().unwrap();
    assert!(idx.verify().unwrap().is_clean());
}

#[test]
fn fixture_garbage_and_empty_files() {
    let (_dir, path) = copy("garbage.index");
    let idx = OffsetIndex::options(&path, 0).open().unwrap();
    assert_eq!(idx.entries(), 2);
    assert!(matches!(
        idx.sanity_check(),
        Err(Error::CorruptIndex { .. })
    ));
    let report = idx.verify().unwrap();
    assert!(!report.is_clean());
    let (_dir, path) = copy("garbage.timeindex");
    let idx = TimeIndex::options(&path, 0).open().unwrap();
    assert_eq!(idx.entries(), 1);
    assert!(idx.sanity_check().is_err());
    let (_dir, path) = copy("empty.index");
    let mut idx = OffsetIndex::options(&path, 0).open().unwrap();
    assert_eq!((idx.entries(), idx.max_entries()), (0, 0));
    assert!(idx.is_full(), "KAFKA-6388: an empty existing index is full");
    assert!(!idx.is_mapped());
    idx.sanity_check().unwrap();
    assert!(matches!(idx.append(1, 1), Err(Error::IndexFull { .. })));
}

#[test]
fn fixture_sanity_messages_match_kafka_4_4_0() {
    // Kafka 4.4.0's `kafka-dump-log --index-sanity-check` on these files (see
    // testdata/README-index.md) printed exactly these messages, with base offset 100 for the
    // garbage files and 0 for the crash image.
    let (_dir, path) = copy("garbage.index");
    let err = OffsetIndex::options(&path, 100)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Index file {} is corrupt, found 20 bytes which is neither positive nor a multiple of 8",
            path.display()
        )
    );
    let (_dir, path) = copy("garbage.timeindex");
    let err = TimeIndex::options(&path, 100)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Time index file {} is corrupt, found 20 bytes which is neither positive nor a multiple of 12",
            path.display()
        )
    );
    let (_dir, path) = copy("00000000000000000000.timeindex");
    let err = TimeIndex::options(&path, 0)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Corrupt time index found, time index file ({}) has non-zero size but the last timestamp is 0 which is less than the first timestamp 5000",
            path.display()
        )
    );
    let (_dir, path) = copy("00000000000000000000.index");
    OffsetIndex::options(&path, 0)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap();
}
