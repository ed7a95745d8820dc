//! Index files written by Kafka 4.4.0 itself (`LogSegment.recover` then `close`, made by
//! `interop/kafka/make-goldens.sh`): we open them and must read exactly what Kafka's
//! `kafka-dump-log` printed for them, and pass the sanity check Kafka passed.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};

use seglog_mmap_index::{OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// Copies a Kafka-written file into a temporary directory, so no test can modify it.
fn copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join(name);
    std::fs::copy(testdata().join("segment").join(name), &to).unwrap();
    (dir, to)
}

/// The `key: value` pairs of each entry line of a kafka-dump-log output.
fn dumped(file: &str, first: &str, second: &str) -> Vec<(i64, i64)> {
    let text = std::fs::read_to_string(testdata().join("kafka-dump").join(file)).unwrap();
    text.lines()
        .filter(|l| l.starts_with(first))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            assert_eq!((words[0], words[2]), (first, second), "{l}");
            (words[1].parse().unwrap(), words[3].parse().unwrap())
        })
        .collect()
}

#[test]
fn fixture_kafka_offset_index_reads_as_kafka_dumps_it() {
    let expected = dumped("index.stdout", "offset:", "position:");
    assert!(expected.len() > 5);
    let (_dir, path) = copy("00000000000000000000.index");
    let idx = OffsetIndex::options(&path, 0).open().unwrap();
    assert_eq!(idx.entries(), expected.len());
    for (slot, &(offset, position)) in expected.iter().enumerate() {
        let entry = OffsetPosition {
            offset,
            position: u32::try_from(position).unwrap(),
        };
        assert_eq!(idx.entry(slot).unwrap(), entry);
        assert_eq!(idx.lookup(offset).unwrap(), entry);
    }
    // Between entries: the floor; below the first: the base at position 0.
    for pair in expected.windows(2) {
        let (lo, hi) = (pair[0], pair[1]);
        for t in lo.0..hi.0 {
            assert_eq!(idx.lookup(t).unwrap().offset, lo.0, "target {t}");
        }
    }
    assert_eq!(
        idx.lookup(expected[0].0 - 1).unwrap(),
        OffsetPosition {
            offset: 0,
            position: 0
        }
    );
    idx.sanity_check().unwrap();
    assert!(idx.verify().unwrap().is_clean());
}

#[test]
fn fixture_kafka_time_index_reads_as_kafka_dumps_it() {
    let expected = dumped("timeindex.stdout", "timestamp:", "offset:");
    assert!(!expected.is_empty());
    let (_dir, path) = copy("00000000000000000000.timeindex");
    let idx = TimeIndex::options(&path, 0).open().unwrap();
    assert_eq!(idx.entries(), expected.len());
    for (slot, &(timestamp, offset)) in expected.iter().enumerate() {
        let entry = TimestampOffset { timestamp, offset };
        assert_eq!(idx.entry(slot).unwrap(), entry);
        assert_eq!(idx.lookup(timestamp).unwrap(), entry);
        assert_eq!(idx.lookup(timestamp + 1).unwrap(), entry);
    }
    assert_eq!(idx.last_entry(), {
        let &(timestamp, offset) = expected.last().unwrap();
        TimestampOffset { timestamp, offset }
    });
    assert_eq!(
        idx.lookup(expected[0].0 - 1).unwrap(),
        TimestampOffset {
            timestamp: -1,
            offset: 0
        }
    );
    idx.sanity_check().unwrap();
    assert!(idx.verify().unwrap().is_clean());
}
