//! Corrupt files never panic: lengths that are not a multiple of the entry size, zero tails,
//! random garbage, empty files and missing files each give a clear error or a correct sanity
//! or verify report, and every operation on such an index returns instead of panicking.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use proptest::prelude::*;
use seglog_mmap_index::{Error, OffsetIndex, OffsetPosition, Problem, TimeIndex};

/// Runs every read and write operation on an offset index opened from `bytes`.
fn exercise_offset(bytes: &[u8], base: i64, probes: &[i64]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.index");
    std::fs::write(&path, bytes).unwrap();
    let mut idx = OffsetIndex::options(&path, base)
        .max_index_size(1024)
        .open()
        .unwrap();
    assert_eq!(idx.entries(), bytes.len() / 8);
    let reader = idx.reader();
    for &t in probes {
        let found = idx.lookup(t).unwrap();
        assert_eq!(reader.lookup(t).unwrap(), found);
        let _ = idx
            .fetch_upper_bound_offset(
                OffsetPosition {
                    offset: t,
                    position: 0,
                },
                100,
            )
            .unwrap();
    }
    for n in 0..=idx.entries() {
        let _ = idx.entry(n);
    }
    let sane = idx.sanity_check();
    let report = idx.verify().unwrap();
    if !bytes.len().is_multiple_of(8) {
        assert!(matches!(sane, Err(Error::CorruptIndex { .. })));
    }
    // Kafka's findings reappear in the report.
    assert_eq!(
        sane.is_err(),
        report
            .problems
            .iter()
            .any(|p| matches!(p, Problem::Kafka(_)))
    );
    let _ = idx.append(t_max(probes), 1);
    let _ = idx.truncate_to(probes.first().copied().unwrap_or(0));
    let _ = idx.trim_to_valid_size();
    let _ = idx.resize(4096);
    idx.close().unwrap();
}

fn exercise_time(bytes: &[u8], base: i64, probes: &[i64]) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.timeindex");
    std::fs::write(&path, bytes).unwrap();
    let mut idx = TimeIndex::options(&path, base)
        .max_index_size(1200)
        .open()
        .unwrap();
    assert_eq!(idx.entries(), bytes.len() / 12);
    let reader = idx.reader();
    for &t in probes {
        assert_eq!(reader.lookup(t).unwrap(), idx.lookup(t).unwrap());
    }
    let sane = idx.sanity_check();
    let report = idx.verify().unwrap();
    assert_eq!(
        sane.is_err(),
        report
            .problems
            .iter()
            .any(|p| matches!(p, Problem::Kafka(_)))
    );
    let _ = idx.maybe_append(t_max(probes), t_max(probes), true);
    let _ = idx.maybe_append(t_max(probes), t_max(probes), false);
    let _ = idx.truncate_to(probes.first().copied().unwrap_or(0));
    let _ = idx.reset();
    idx.close().unwrap();
}

fn t_max(probes: &[i64]) -> i64 {
    probes.iter().copied().max().unwrap_or(0)
}

proptest! {
    #[test]
    fn garbage_offset_index(bytes in prop::collection::vec(any::<u8>(), 0..300), base in any::<i64>(), probes in prop::collection::vec(any::<i64>(), 1..20)) {
        exercise_offset(&bytes, base, &probes);
    }

    #[test]
    fn garbage_time_index(bytes in prop::collection::vec(any::<u8>(), 0..400), base in any::<i64>(), probes in prop::collection::vec(any::<i64>(), 1..20)) {
        exercise_time(&bytes, base, &probes);
    }
}

#[test]
fn length_not_a_multiple_is_reported() {
    exercise_offset(&[1, 2, 3, 4, 5, 6, 7, 8, 9], 0, &[0, 1, 100]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("odd.index");
    std::fs::write(&path, [0_u8; 13]).unwrap();
    let idx = OffsetIndex::options(&path, 0)
        .max_index_size(1024)
        .open()
        .unwrap();
    let report = idx.verify().unwrap();
    assert_eq!(report.entries, 1);
    assert!(matches!(
        report.problems[0],
        Problem::Kafka(seglog_mmap_index::CorruptKind::LengthNotMultiple {
            length: 13,
            entry_size: 8
        })
    ));
}

#[test]
fn empty_existing_file_opens_with_no_capacity() {
    exercise_offset(&[], 5, &[0, 5, 6]);
    exercise_time(&[], 5, &[0, 5, 6]);
}

#[test]
fn missing_file_is_created_by_open_and_refused_by_open_existing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nope.timeindex");
    let err = TimeIndex::options(&path, 0).open().unwrap_err();
    assert!(err.to_string().contains("nope.timeindex"), "{err}");
    let missing_dir = dir.path().join("no-such-dir").join("x.index");
    let err = OffsetIndex::options(&missing_dir, 0)
        .max_index_size(80)
        .open()
        .unwrap_err();
    assert!(matches!(err, Error::Io { op: "create", .. }), "{err}");
    assert_eq!(err.file(), missing_dir);
}

#[test]
fn a_directory_in_place_of_the_file_is_an_io_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("d.index");
    std::fs::create_dir(&path).unwrap();
    assert!(matches!(
        OffsetIndex::options(&path, 0).max_index_size(80).open(),
        Err(Error::Io { .. })
    ));
}

#[test]
fn offsets_going_backwards_are_reported_by_verify() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b.index");
    // Relative offsets 5, 9, 7, 7, 12 (positions irrelevant).
    let bytes: Vec<u8> = [5_u32, 9, 7, 7, 12]
        .iter()
        .flat_map(|r| [r.to_be_bytes(), 0_u32.to_be_bytes()].concat())
        .collect();
    std::fs::write(&path, bytes).unwrap();
    let idx = OffsetIndex::options(&path, 100)
        .max_index_size(1024)
        .open()
        .unwrap();
    idx.sanity_check().unwrap();
    let report = idx.verify().unwrap();
    assert_eq!(
        report.problems,
        vec![Problem::OffsetOutOfOrder {
            slot: 2,
            previous: 109,
            offset: 107,
            count: 2
        }]
    );
}
