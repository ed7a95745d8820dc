//! `split::plan_split` (Kafka's `LocalLog.splitOverflowedSegment`, KAFKA-6264): a new piece at
//! each batch that overflows the piece before it, based where Kafka bases it; damage ends the
//! walk as it ends recovery's.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_fs::{FileSystem as _, OpenMode, RealFs};
use seglog_record_format::{
    BatchOptions, Compression, NewRecord, build_batch, snappy, write_legacy_message,
};
use seglog_segment::split::plan_split;
use seglog_segment::verify::{OffsetBounds, StopReason};

const M: i64 = i32::MAX as i64;

fn v2(base: i64, count: i32) -> Vec<u8> {
    let records = (0..count).map(|i| NewRecord::new(i, 1_000, None, Some(b"v")));
    let mut out = Vec::new();
    build_batch(
        &BatchOptions::new(base, Compression::None),
        records,
        &mut out,
    )
    .unwrap();
    out
}

/// A magic-1 snappy wrapper holding `count` messages whose last offset is `last`: inner offsets
/// are relative (0..count), the wrapper's offset is the last one's.
fn legacy_wrapper(last: i64, count: i64) -> Vec<u8> {
    let mut inner = Vec::new();
    for i in 0..count {
        write_legacy_message(&mut inner, i, 1, 0, Some(1_000), None, Some(b"x"));
    }
    let mut z = Vec::new();
    snappy::compress(&inner, &mut z).unwrap();
    let mut out = Vec::new();
    let codec = Compression::Snappy.id();
    write_legacy_message(&mut out, last, 1, codec, Some(1_000), None, Some(&z));
    out
}

fn plan(log: &[u8], base: i64) -> seglog_segment::split::SplitScan {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(format!("{base:020}.log"));
    std::fs::write(&path, log).unwrap();
    let file = RealFs.open(&path, OpenMode::ReadOnly).unwrap();
    let bounds = OffsetBounds {
        base_offset: base,
        next_base_offset: None,
    };
    plan_split(&file, &path, log.len() as u64, 4096, bounds).unwrap()
}

#[test]
fn pieces_start_at_each_overflowing_batch() {
    let log = [
        v2(0, 2),
        v2(M - 1, 1),
        v2(M, 2),
        v2(2 * M, 1),
        v2(2 * M + 3, 1),
    ]
    .concat();
    let split = plan(&log, 0);
    let bases: Vec<i64> = split.pieces.iter().map(|p| p.base_offset).collect();
    // M..=M+1 overflows base 0; 2M fits base M (distance i32::MAX); 2M+3 overflows it.
    assert_eq!(bases, [0, M, 2 * M + 3]);
    assert_eq!(split.pieces.iter().map(|p| p.batches).sum::<u64>(), 5);
    assert_eq!(
        split.pieces.iter().map(|p| p.bytes).sum::<u64>(),
        log.len() as u64
    );
    assert_eq!(split.valid_bytes, log.len() as u64);
    assert!(split.stop.is_none());
    assert!(split.splits(0));
}

#[test]
fn a_compressed_legacy_entry_starts_its_piece_at_its_first_record() {
    let mut log = Vec::new();
    write_legacy_message(&mut log, 0, 1, 0, Some(1_000), None, Some(b"x"));
    let first = log.len() as u64;
    log.extend(legacy_wrapper(M + 12, 3));
    let split = plan(&log, 0);
    let bases: Vec<i64> = split.pieces.iter().map(|p| p.base_offset).collect();
    // Kafka's `baseOffset()` of the wrapper: its first record's, M + 10.
    assert_eq!(bases, [0, M + 10]);
    assert_eq!(split.pieces[1].position, first);
    assert_eq!(split.pieces[1].last_offset, M + 12);
}

#[test]
fn damage_after_the_overflow_ends_the_last_piece() {
    let mut log = [v2(0, 1), v2(M + 5, 1), v2(M + 6, 1)].concat();
    let torn = log.len() - 10;
    log.truncate(torn);
    let split = plan(&log, 0);
    assert_eq!(split.pieces.len(), 2);
    let stop = split.stop.clone().unwrap();
    assert_eq!(stop.reason, StopReason::TornTail);
    assert_eq!(stop.position, split.valid_bytes);
    assert_eq!(split.last_offset(), Some(M + 5));
}

#[test]
fn a_batch_that_overflows_but_the_next_disproves_is_damage_not_a_piece() {
    let log = [v2(0, 2), v2(4 * M, 2), v2(2, 2)].concat();
    let split = plan(&log, 0);
    assert_eq!(split.pieces.len(), 1);
    assert!(!split.splits(0));
    assert!(matches!(
        split.stop.unwrap().reason,
        StopReason::ContradictedByNext { .. }
    ));
}
