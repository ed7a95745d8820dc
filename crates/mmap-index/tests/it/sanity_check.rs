//! OffsetIndexTest/TimeIndexTest `testSanityCheck`: Kafka's three rules and messages, reproduced
//! with real corrupt files instead of Kafka's mock overrides.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{CorruptKind, Error, OffsetIndex, TimeEntry, TimeIndex};
use zerocopy::IntoBytes;

fn time_file(entries: &[(i64, u32)]) -> Vec<u8> {
    entries
        .iter()
        .flat_map(|&(t, r)| TimeEntry::new(t, r).as_bytes().to_vec())
        .collect()
}

#[test]
fn a_healthy_time_index_passes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("h.timeindex");
    let mut idx = TimeIndex::options(&path, 45)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    idx.sanity_check().unwrap();
    for i in 1..=5 {
        idx.maybe_append(i * 10, 45 + i * 10, false).unwrap();
    }
    idx.sanity_check().unwrap();
    idx.close().unwrap();
    TimeIndex::options(&path, 45)
        .max_index_size(30 * 12)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap();
}

#[test]
fn time_index_last_offset_below_base() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.timeindex");
    // A relative offset with the top bit set decodes (as Kafka's getInt) to base - 1.
    std::fs::write(&path, time_file(&[(10, 5), (20, u32::MAX)])).unwrap();
    let idx = TimeIndex::options(&path, 45)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    let err = idx.sanity_check().unwrap_err();
    let Error::CorruptIndex { corruption, .. } = &err else {
        panic!("{err}")
    };
    assert_eq!(
        *corruption,
        CorruptKind::LastOffsetBelowBase {
            last_offset: 44,
            base_offset: 45
        }
    );
    assert_eq!(
        err.to_string(),
        format!(
            "Corrupt time index found, time index file ({}) has non-zero size but the last offset is 44 which is less than the first offset 45",
            path.display()
        )
    );
}

#[test]
fn time_index_last_timestamp_below_first() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.timeindex");
    std::fs::write(&path, time_file(&[(10, 5), (9, 6)])).unwrap();
    let err = TimeIndex::options(&path, 45)
        .max_index_size(30 * 12)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Corrupt time index found, time index file ({}) has non-zero size but the last timestamp is 9 which is less than the first timestamp 10",
            path.display()
        )
    );
}

#[test]
fn time_index_length_not_a_multiple() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("l.timeindex");
    let mut bytes = time_file(&[(10, 5), (20, 6)]);
    bytes.push(0);
    std::fs::write(&path, bytes).unwrap();
    let idx = TimeIndex::options(&path, 45)
        .max_index_size(30 * 12)
        .open()
        .unwrap();
    assert_eq!(
        idx.entries(),
        2,
        "the partial slot is ignored at open, as in Kafka"
    );
    let err = idx.sanity_check().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Time index file {} is corrupt, found 25 bytes which is neither positive nor a multiple of 12",
            path.display()
        )
    );
}

#[test]
fn offset_index_rules_and_messages() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("o.index");
    // Last entry's relative offset is 0xffff_fff0: offset base - 16.
    std::fs::write(
        &path,
        [0, 0, 0, 1, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 1],
    )
    .unwrap();
    let err = OffsetIndex::options(&path, 100)
        .max_index_size(80)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Corrupt index found, index file {} has non-zero size but the last offset is 84 which is less than the base offset 100",
            path.display()
        )
    );
    std::fs::write(&path, [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    let err = OffsetIndex::options(&path, 100)
        .max_index_size(80)
        .open()
        .unwrap()
        .sanity_check()
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Index file {} is corrupt, found 11 bytes which is neither positive nor a multiple of 8",
            path.display()
        )
    );
}

#[test]
fn offset_index_zero_tail_passes_kafka_sanity_but_not_verify() {
    // Reference 3.1: an untrimmed offset index's zero tail has last offset == base, which
    // Kafka's rule accepts.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("z.index");
    let mut bytes = vec![0, 0, 0, 5, 0, 0, 0, 9];
    bytes.resize(80, 0);
    std::fs::write(&path, bytes).unwrap();
    let idx = OffsetIndex::options(&path, 100)
        .max_index_size(80)
        .open()
        .unwrap();
    idx.sanity_check().unwrap();
    let report = idx.verify().unwrap();
    assert!(report.has_zero_tail(), "{report:?}");
}

/// Found by the `index` fuzz target: with a base offset near `i64::MAX`, a last entry whose
/// relative offset carries it past `i64::MAX` decoded (saturated) to `i64::MAX` and passed the
/// check, while Kafka's wrapping `baseOffset + relativeOffset` lands below the base and fails it.
#[test]
fn a_last_offset_past_i64_max_is_below_base_as_in_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let base = i64::MAX - 10;
    let mut bytes = Vec::new();
    for (relative, position) in [(1_u32, 0_u32), (16, 100)] {
        bytes.extend_from_slice(&relative.to_be_bytes());
        bytes.extend_from_slice(&position.to_be_bytes());
    }
    let path = dir.path().join("o.index");
    std::fs::write(&path, &bytes).unwrap();
    let idx = OffsetIndex::options(&path, base)
        .read_only()
        .open()
        .unwrap();
    let err = idx.sanity_check().unwrap_err();
    let Error::CorruptIndex { corruption, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(
        *corruption,
        CorruptKind::LastOffsetBelowBase {
            last_offset: base.wrapping_add(16),
            base_offset: base,
        }
    );

    let mut times = Vec::new();
    for (timestamp, relative) in [(10_i64, 1_u32), (20, 16)] {
        times.extend_from_slice(&timestamp.to_be_bytes());
        times.extend_from_slice(&relative.to_be_bytes());
    }
    let path = dir.path().join("t.timeindex");
    std::fs::write(&path, &times).unwrap();
    let idx = TimeIndex::options(&path, base).read_only().open().unwrap();
    let err = idx.sanity_check().unwrap_err();
    let Error::CorruptIndex { corruption, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!(
        *corruption,
        CorruptKind::LastOffsetBelowBase {
            last_offset: base.wrapping_add(16),
            base_offset: base,
        }
    );
}
