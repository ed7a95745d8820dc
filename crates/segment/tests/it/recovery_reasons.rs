//! Recovery that reasons (`seglog_segment::verify`): crafted damage in each header field of one
//! batch among ten (with the CRC recomputed where the field is under it), and recovery must name
//! that batch, keep exactly the batches before it, and never leave a log end offset the batches
//! do not prove. Then the judge's rules alone, batch facts in, verdicts out.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{Compression, crc32c};
use seglog_segment::StopReason;
use seglog_segment::verify::{OffsetBounds, OffsetJudge, VerifiedBatch};

use crate::common;

/// Ten batches of three records each (offsets 0..=29) in a segment at base 0, the `.log`'s bytes
/// and each batch's position.
fn ten_batches(codec: Compression) -> (tempfile::TempDir, std::path::PathBuf, Vec<usize>) {
    let dir = tempfile::tempdir().unwrap();
    let seg = common::create(dir.path(), 0, 4096);
    let mut positions = Vec::new();
    let mut at = 0;
    for i in 0..10 {
        let first = i * 3;
        let ts: Vec<i64> = (first..first + 3).map(|o| o * 10).collect();
        let batch = common::batch_with(first, &ts, 4, codec);
        positions.push(at);
        at += batch.len();
        seg.append(first + 2, &batch).unwrap();
    }
    let path = seg.log_path();
    seg.close().unwrap();
    (dir, path, positions)
}

fn edit(path: &std::path::Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    f(&mut bytes);
    std::fs::write(path, &bytes).unwrap();
}

fn recrc(bytes: &mut [u8], at: usize) {
    let size = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap());
    let end = at + 12 + usize::try_from(size).unwrap();
    let crc = crc32c(&bytes[at + 21..end]);
    bytes[at + 17..at + 21].copy_from_slice(&crc.to_be_bytes());
}

fn set_i32(bytes: &mut [u8], at: usize, value: i32) {
    bytes[at..at + 4].copy_from_slice(&value.to_be_bytes());
}

/// Recovers, and returns (valid bytes, the stop, the log end offset after it).
fn recover(
    dir: &tempfile::TempDir,
    next_base: Option<i64>,
) -> (u64, Option<seglog_segment::RecoveryStop>, i64) {
    let seg = common::reopen(dir.path(), 0, 4096);
    let report = seg.recover_before(next_base).unwrap();
    let next = seg.read_next_offset().unwrap();
    (report.valid_bytes, report.stop, next)
}

const CODECS: [Compression; 3] = [Compression::None, Compression::Gzip, Compression::Lz4];

#[test]
fn a_raised_base_offset_is_the_damaged_batch_not_the_one_after_it() {
    for codec in CODECS {
        for bit in [4, 20, 30] {
            let (dir, path, positions) = ten_batches(codec);
            let at = positions[5];
            edit(&path, |b| b[at + 7 - bit / 8] ^= 1 << (bit % 8));
            let (valid, stop, next) = recover(&dir, None);
            let stop = stop.unwrap();
            assert_eq!(
                stop.position, at as u64,
                "{codec} bit {bit}: {}",
                stop.reason
            );
            assert!(
                matches!(
                    stop.reason,
                    StopReason::ContradictedByNext {
                        previous_last_offset: 14,
                        next_first_offset: 18,
                        ..
                    }
                ),
                "{codec} bit {bit}: {}",
                stop.reason
            );
            assert_eq!(valid, at as u64);
            assert_eq!(
                next, 15,
                "the log end offset is what the kept batches prove"
            );
        }
    }
}

#[test]
fn a_lowered_base_offset_is_the_damaged_batch() {
    for codec in CODECS {
        let (dir, path, positions) = ten_batches(codec);
        let at = positions[5];
        // 15 -> 7: below the previous batch's last offset (14).
        edit(&path, |b| b[at + 7] ^= 8);
        let (valid, stop, next) = recover(&dir, None);
        let stop = stop.unwrap();
        assert_eq!(stop.position, at as u64);
        assert!(matches!(
            stop.reason,
            StopReason::OffsetsOutOfOrder {
                first_offset: 7,
                previous_last_offset: 14,
                ..
            }
        ));
        assert_eq!((valid, next), (at as u64, 15));
    }
}

#[test]
fn a_raised_base_offset_in_the_last_batch_stops_at_the_next_segment() {
    let (dir, path, positions) = ten_batches(Compression::None);
    let at = positions[9];
    edit(&path, |b| b[at + 4] ^= 0x40); // + 2^30
    let (valid, stop, next) = recover(&dir, Some(30));
    let stop = stop.unwrap();
    assert_eq!(stop.position, at as u64);
    assert!(matches!(
        stop.reason,
        StopReason::PastNextSegment {
            next_base_offset: 30,
            ..
        }
    ));
    assert_eq!((valid, next), (at as u64, 27));
}

#[test]
fn a_last_offset_delta_past_the_records_is_the_damaged_batch() {
    for codec in CODECS {
        let (dir, path, positions) = ten_batches(codec);
        let at = positions[5];
        // lastOffsetDelta 2 -> 2 + 2^20, under the CRC: recomputed.
        edit(&path, |b| {
            set_i32(b, at + 23, 2 + (1 << 20));
            recrc(b, at);
        });
        let (valid, stop, next) = recover(&dir, None);
        let stop = stop.unwrap();
        assert_eq!(stop.position, at as u64, "{codec}: {}", stop.reason);
        assert!(matches!(stop.reason, StopReason::ContradictedByNext { .. }));
        assert_eq!((valid, next), (at as u64, 15), "{codec}");
    }
}

#[test]
fn a_wrong_record_count_with_a_valid_crc_is_damage() {
    for codec in CODECS {
        for count in [0, 2, 4] {
            let (dir, path, positions) = ten_batches(codec);
            let at = positions[5];
            edit(&path, |b| {
                set_i32(b, at + 57, count);
                recrc(b, at);
            });
            let (valid, stop, next) = recover(&dir, None);
            let stop = stop.unwrap();
            assert_eq!(stop.position, at as u64, "{codec} count {count}");
            assert!(
                matches!(stop.reason, StopReason::Invalid(_)),
                "{codec} count {count}: {}",
                stop.reason
            );
            assert_eq!((valid, next), (at as u64, 15));
        }
    }
}

#[test]
fn a_bit_flip_under_the_crc_is_still_a_checksum_failure() {
    let (dir, path, positions) = ten_batches(Compression::None);
    let at = positions[5];
    edit(&path, |b| b[at + 58] ^= 1); // recordsCount, CRC left as it was
    let (valid, stop, _) = recover(&dir, None);
    let stop = stop.unwrap();
    assert!(matches!(
        stop.reason,
        StopReason::Invalid(seglog_record_format::Error::ChecksumMismatch { .. })
    ));
    assert_eq!(valid, at as u64);
}

#[test]
fn undamaged_segments_recover_whole_with_the_next_base_known() {
    for codec in CODECS {
        let (dir, path, _) = ten_batches(codec);
        let len = std::fs::metadata(&path).unwrap().len();
        let (valid, stop, next) = recover(&dir, Some(30));
        assert!(stop.is_none(), "{codec}");
        assert_eq!((valid, next), (len, 30));
    }
}

fn b(position: u64, first: i64, last: i64) -> VerifiedBatch {
    VerifiedBatch {
        position,
        size: 1,
        first_offset: first,
        last_offset: last,
        max_timestamp: -1,
        records: u64::try_from(last - first + 1).unwrap(),
        last_record_offset: Some(last),
        magic: 2,
        partition_leader_epoch: -1,
        producer_id: -1,
        producer_epoch: -1,
        base_sequence: -1,
        is_control: false,
        is_transactional: false,
    }
}

fn judge(next_base_offset: Option<i64>, batches: &[VerifiedBatch]) -> (Vec<i64>, Option<u64>) {
    let mut j = OffsetJudge::new(OffsetBounds {
        base_offset: 100,
        next_base_offset,
    });
    let mut kept = Vec::new();
    let mut stop = None;
    for batch in batches {
        match j.push(*batch, false) {
            Ok(Some(k)) => kept.push(k.first_offset),
            Ok(None) => {}
            Err(s) => {
                stop = Some(s.position);
                break;
            }
        }
    }
    kept.extend(j.finish().map(|k| k.first_offset));
    (kept, stop)
}

#[test]
fn the_judge_keeps_compaction_gaps() {
    // Gaps between batches (a compacted segment) contradict nothing.
    let batches = [
        b(0, 100, 104),
        b(1, 110, 112),
        b(2, 200, 200),
        b(3, 201, 205),
    ];
    assert_eq!(judge(Some(300), &batches), (vec![100, 110, 200, 201], None));
}

#[test]
fn the_judge_names_the_unpinned_batch_of_an_overlap() {
    // 110 follows a gap and overlaps 107, which follows 104: 110's base is the damage.
    let batches = [b(0, 100, 104), b(1, 1110, 1112), b(2, 108, 110)];
    assert_eq!(judge(None, &batches), (vec![100], Some(1)));
    // Pinned (starts right after 104): the batch after it is the damage.
    let batches = [b(0, 100, 104), b(1, 105, 107), b(2, 106, 110)];
    assert_eq!(judge(None, &batches), (vec![100, 105], Some(2)));
    // A batch below everything kept is the damage, whatever came before it.
    let batches = [b(0, 100, 104), b(1, 110, 112), b(2, 90, 95)];
    assert_eq!(judge(None, &batches), (vec![100, 110], Some(2)));
}

#[test]
fn the_judge_refuses_offsets_outside_the_segment() {
    assert_eq!(judge(None, &[b(0, 99, 101)]), (vec![], Some(0)));
    // Unpinned (after a gap) and reaching the next segment: the batch is the damage.
    assert_eq!(
        judge(Some(200), &[b(0, 100, 150), b(1, 160, 200)]),
        (vec![100], Some(1))
    );
    // Pinned, its header past its records: the batch is the damage.
    let mut inflated = b(1, 151, 200);
    inflated.last_record_offset = Some(153);
    assert_eq!(
        judge(Some(200), &[b(0, 100, 150), inflated]),
        (vec![100], Some(1))
    );
    // Pinned and its records reach the next base: the next segment's name is wrong (a copied
    // file), which the loader's overlap rule handles; the batch is kept.
    assert_eq!(
        judge(Some(200), &[b(0, 100, 150), b(1, 151, 200)]),
        (vec![100, 151], None)
    );
    let far = 100 + i64::from(i32::MAX) + 1;
    assert_eq!(
        judge(None, &[b(0, 100, 150), b(1, far, far)]),
        (vec![100], Some(1))
    );
}
