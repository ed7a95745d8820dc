//! Reads that borrow the `.log`'s mapping instead of copying it: `with_region`, and
//! `find_offset_by_timestamp`, which decodes the batch it finds in place. They see the same bytes
//! as the copy, and damaged bytes give the same error (file, byte position) as the same lookup
//! through `pread` (the same segment on `SimFs`, which maps nothing). A truncation, recovery,
//! close or delete of the segment from inside its own loan is refused (`Error::LoanHeld`, where
//! it used to deadlock) and changes nothing; one of another segment goes through.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use seglog_fs::sim::SimFs;
use seglog_fs::{FileSystem, RealFs};
use seglog_record_format::Compression;
use seglog_segment::{Error, FileRegion, LogSegment, SegmentConfig};

use crate::common::batch_with;

/// Four batches of ten records (offsets `10 * b ..`, timestamps `1000 + offset`); with
/// `damaged`, the third batch's first record has a negative length.
fn build<F: FileSystem>(fs: F, dir: &Path, damaged: bool) -> LogSegment<F> {
    let config = SegmentConfig::default().with_index_interval_bytes(1);
    let segment = LogSegment::open(fs, dir, 0, config, false, "", 0).unwrap();
    for b in 0..4 {
        let base = b * 10;
        let ts: Vec<i64> = (base..base + 10).map(|o| 1000 + o).collect();
        let mut batch = batch_with(base, &ts, 100, Compression::None);
        if damaged && b == 2 {
            // The first record's length varint (after the 61-byte header): zigzag 0x7F is -64.
            batch[61] = 0x7F;
        }
        segment.append(base + 9, &batch).unwrap();
    }
    segment
}

#[test]
fn a_loan_sees_the_bytes_a_copy_reads() {
    let dir = tempfile::tempdir().unwrap();
    let segment = build(RealFs, dir.path(), false);
    let file = std::fs::read(segment.log_path()).unwrap();
    let size = segment.size();
    let mut buf = Vec::new();
    for (position, length) in [
        (0, size),
        (61, 300),
        (size - 1, 1),
        (size, 0),
        (size - 5, 50),
    ] {
        let region = FileRegion { position, length };
        let lent = segment
            .with_region(region, &mut buf, <[u8]>::to_vec)
            .unwrap();
        let from = usize::try_from(position).unwrap();
        let to = usize::try_from((position + length).min(size)).unwrap();
        assert_eq!(lent, &file[from..to], "position {position} length {length}");
    }
}

#[test]
fn lookups_by_timestamp_find_the_same_records_and_errors_mapped_or_not() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimFs::new();
    for damaged in [false, true] {
        let sub = dir.path().join(format!("damaged-{damaged}"));
        std::fs::create_dir_all(&sub).unwrap();
        sim.create_dir_all(&sub).unwrap();
        let mapped = build(RealFs, &sub, damaged);
        let copied = build(sim.clone(), &sub, damaged);
        for target in [0, 1005, 1010, 1015, 1020, 1025, 1039, 1040] {
            let via_map = mapped.find_offset_by_timestamp(target, 0);
            let via_pread = copied.find_offset_by_timestamp(target, 0);
            let at = format!("damaged {damaged} target {target}");
            match (via_map, via_pread) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{at}");
                    assert!(!damaged || !(1020..1030).contains(&target), "{at}: {a:?}");
                    if target < 1040 {
                        assert_eq!(a.unwrap().offset, (target - 1000).max(0), "{at}");
                    }
                }
                (Err(lent), Err(read)) => {
                    assert!(damaged && (1020..1030).contains(&target), "{at}: {lent}");
                    let (
                        Error::Corrupt {
                            path,
                            position,
                            source,
                        },
                        Error::Corrupt {
                            path: read_path,
                            position: read_position,
                            source: read_source,
                        },
                    ) = (&lent, &read)
                    else {
                        panic!("{at}: {lent} / {read}");
                    };
                    assert_eq!(
                        (path, position, source),
                        (read_path, read_position, read_source),
                        "{at}"
                    );
                    assert_eq!(path, &mapped.log_path(), "{at}");
                    assert_eq!(lent.to_string(), read.to_string(), "{at}");
                }
                (a, b) => panic!("{at}: mapped {a:?}, pread {b:?}"),
            }
        }
    }
}

/// The segment's observable state: size, next offset, the `.log`'s bytes, where offset 25 is,
/// the index entries.
type State = (u64, i64, Vec<u8>, Option<u64>, (usize, usize));

fn state<F: FileSystem>(segment: &LogSegment<F>) -> State {
    let mut bytes = Vec::new();
    let region = FileRegion {
        position: 0,
        length: segment.size(),
    };
    segment.read_region(region, &mut bytes).unwrap();
    let at_25 = segment.translate_offset(25, 0).unwrap().map(|m| m.position);
    let entries = segment.index_entries().unwrap();
    (
        segment.size(),
        segment.read_next_offset().unwrap(),
        bytes,
        at_25,
        entries,
    )
}

#[test]
fn a_truncate_recover_close_or_delete_inside_its_own_loan_is_refused_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (one, two) = (dir.path().join("one"), dir.path().join("two"));
    std::fs::create_dir_all(&one).unwrap();
    std::fs::create_dir_all(&two).unwrap();
    let segment = build(RealFs, &one, false);
    let other = build(RealFs, &two, false);
    let before = state(&segment);
    let whole = FileRegion {
        position: 0,
        length: segment.size(),
    };
    let mut buf = Vec::new();
    assert!(!segment.is_lent_by_this_thread());
    let refusals = segment
        .with_region(whole, &mut buf, |bytes| {
            assert_eq!(
                bytes,
                before.2.as_slice(),
                "the loan lends the mapped bytes"
            );
            assert!(segment.is_lent_by_this_thread());
            let refused = [
                ("truncate", segment.truncate_to(20, 0).map(drop)),
                ("recover", segment.recover().map(drop)),
                ("close", segment.close()),
                ("delete", segment.delete()),
            ];
            let refusals: Vec<_> = refused
                .into_iter()
                .map(|(what, result)| match result {
                    Err(Error::LoanHeld { path, op }) => {
                        assert_eq!((path.as_path(), op), (segment.log_path().as_path(), what));
                        format!("{}", Error::LoanHeld { path, op })
                    }
                    other => panic!("{what} inside the loan: {other:?}"),
                })
                .collect();
            // Nothing changed, and what waits for no loan still works: a truncation that cuts
            // nothing, and everything on another segment.
            assert_eq!(state(&segment), before);
            assert_eq!(segment.truncate_to(40, 0).unwrap(), 0);
            assert!(!other.is_lent_by_this_thread());
            assert!(other.truncate_to(20, 0).unwrap() > 0);
            other.recover().unwrap();
            assert_eq!(other.read_next_offset().unwrap(), 20);
            other.close().unwrap();
            refusals
        })
        .unwrap();
    assert!(refusals[0].contains("truncate of ") && refusals[0].contains("loan"));
    assert_eq!(state(&segment), before);
    // The loan ended: the same calls go through, and the segment takes appends again.
    assert!(!segment.is_lent_by_this_thread());
    assert!(segment.truncate_to(20, 0).unwrap() > 0);
    assert_eq!(segment.read_next_offset().unwrap(), 20);
    let ts: Vec<i64> = (20..30).map(|o| 1000 + o).collect();
    segment
        .append(29, &batch_with(20, &ts, 100, Compression::None))
        .unwrap();
    assert_eq!(state(&segment).1, 30);
    assert_eq!(segment.recover().unwrap().batches, 3);
    segment.close().unwrap();
    segment.delete().unwrap();
    assert!(!segment.log_path().exists());
}
