//! KAFKA-6264: a legacy segment whose offsets lie more than `i32::MAX` past its base offset is
//! split on recovery, as Kafka's `LocalLog.splitOverflowedSegment` does, not cut. Each test
//! pins the Kafka test named in its comment (Kafka 4.4: `LogLoaderTest`, `UnifiedLogTest`), on
//! the directory Kafka's `LogTestUtils.initializeLogDirWithOverflowedSegment` writes.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::RealFs;
use seglog_log::inspect::LogDirView;
use seglog_log::{
    Isolation, LoadOptions, LoadReport, LogConfig, PartitionLog, SystemClock, plan_partition,
};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord, batches};

const M: i64 = i32::MAX as i64;

/// One v2 batch at `base` whose records have keys and values `offset.to_string()` (Kafka's
/// `record(offset)` in `initializeLogDirWithOverflowedSegment`).
fn batch(base: i64, count: i32) -> Vec<u8> {
    let texts: Vec<String> = (0..count)
        .map(|i| (base + i64::from(i)).to_string())
        .collect();
    let records = texts
        .iter()
        .zip(0..)
        .map(|(t, i)| NewRecord::new(i, 1_700_000_000_000, Some(t.as_bytes()), Some(t.as_bytes())));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(
            &BatchOptions::new(base, Compression::None),
            records,
            &mut out,
        )
        .unwrap();
    out
}

/// Kafka's `writeSampleBatches`: batches at `base`, `base + 1` (two records) and
/// `base + i32::MAX - 1`; the next offset is `base + i32::MAX`.
fn sample_batches(base: i64, log: &mut Vec<u8>) -> i64 {
    log.extend(batch(base, 1));
    log.extend(batch(base + 1, 2));
    log.extend(batch(base + M - 1, 1));
    base + M
}

/// A raw segment: its `.log`, and empty `.index` and `.timeindex` files so that recovery is
/// not triggered by a missing index (as Kafka's test does).
fn raw_segment(dir: &Path, base: i64, log: &[u8]) {
    std::fs::write(dir.join(format!("{base:020}.log")), log).unwrap();
    std::fs::write(dir.join(format!("{base:020}.index")), b"").unwrap();
    std::fs::write(dir.join(format!("{base:020}.timeindex")), b"").unwrap();
}

/// Kafka's `initializeLogDirWithOverflowedSegment`: three segments, the second holding offsets
/// that overflow it. Returns the overflowed segment's base offset.
fn initialize_log_dir_with_overflowed_segment(dir: &Path) -> i64 {
    std::fs::create_dir_all(dir).unwrap();
    let mut log = Vec::new();
    let next = sample_batches(0, &mut log);
    raw_segment(dir, 0, &log);
    let overflowed = next;
    let mut log = Vec::new();
    let next = sample_batches(overflowed, &mut log);
    let next = sample_batches(next, &mut log);
    raw_segment(dir, overflowed, &log);
    let mut log = Vec::new();
    sample_batches(next, &mut log);
    raw_segment(dir, next, &log);
    overflowed
}

fn partition_dir(root: &tempfile::TempDir) -> PathBuf {
    root.path().join("t-0")
}

/// Opens the log after a crash, recovering every segment (Kafka's `recoverAndCheck`:
/// `lastShutdownClean = false`, recovery point 0).
fn recover(dir: &Path) -> (PartitionLog, LoadReport) {
    PartitionLog::open(
        RealFs,
        dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap()
}

/// The segments' `.log` files, by base offset.
fn log_files(dir: &Path) -> Vec<(i64, PathBuf)> {
    let mut out: Vec<(i64, PathBuf)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| (p.file_stem().unwrap().to_str().unwrap().parse().unwrap(), p))
        .collect();
    out.sort();
    out
}

/// Every record of the directory's segments, read from the files: (offset, key, value).
fn records_in_files(dir: &Path) -> Vec<(i64, String, String)> {
    let mut out = Vec::new();
    for (_, path) in log_files(dir) {
        let bytes = std::fs::read(path).unwrap();
        for b in batches(&bytes) {
            for r in b.unwrap().decode().unwrap().to_records().unwrap() {
                let text = |v: Option<Vec<u8>>| String::from_utf8(v.unwrap()).unwrap();
                out.push((r.offset, text(r.key), text(r.value)));
            }
        }
    }
    out
}

/// Kafka's `LogTestUtils.hasOffsetOverflow`: a batch whose last offset is more than
/// `i32::MAX` past its segment's base offset, or whose base offset lies below it.
fn has_offset_overflow(dir: &Path) -> bool {
    log_files(dir).into_iter().any(|(base, path)| {
        let bytes = std::fs::read(path).unwrap();
        batches(&bytes).any(|b| {
            let b = b.unwrap().decode().unwrap();
            let first = b.to_records().unwrap()[0].offset;
            b.last_offset() > base + M || first < base
        })
    })
}

/// Every record as the log serves it: (offset, key, value).
fn read_all(log: &PartitionLog) -> Vec<(i64, String, String)> {
    let mut out = Vec::new();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let fetch = log.read(next, 1 << 20, Isolation::LogEnd, true).unwrap();
        let mut bytes = Vec::new();
        fetch.read_into(&mut bytes).unwrap();
        assert!(!bytes.is_empty(), "nothing to read at {next}");
        for b in batches(&bytes) {
            for r in b.unwrap().decode().unwrap().to_records().unwrap() {
                if r.offset >= next {
                    let text = |v: Option<Vec<u8>>| String::from_utf8(v.unwrap()).unwrap();
                    out.push((r.offset, text(r.key), text(r.value)));
                    next = r.offset + 1;
                }
            }
        }
    }
    out
}

/// Kafka's `recoverAndCheck`: after recovery no `.deleted`, `.cleaned` or `.swap` file is left,
/// the records are the expected ones, read from the files and through the log, and no segment
/// overflows.
fn recover_and_check(dir: &Path, expected: &[(i64, String, String)]) -> (PartitionLog, LoadReport) {
    let (log, report) = recover(dir);
    for entry in std::fs::read_dir(dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        for suffix in [".deleted", ".cleaned", ".swap"] {
            assert!(!name.ends_with(suffix), "unexpected {name} after recovery");
        }
    }
    assert_eq!(records_in_files(dir), expected);
    assert_eq!(read_all(&log), expected);
    assert!(!has_offset_overflow(dir));
    (log, report)
}

fn segment_count(dir: &Path) -> usize {
    log_files(dir).len()
}

/// LogLoaderTest.testRecoveryOfSegmentWithOffsetOverflow: recovery splits the segment; running
/// the split again is refused (seglog: a second plan finds nothing to split or cut).
#[test]
fn recovery_of_segment_with_offset_overflow() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    let overflowed = initialize_log_dir_with_overflowed_segment(&dir);
    let expected = records_in_files(&dir);
    assert!(has_offset_overflow(&dir));
    let (log, report) = recover_and_check(&dir, &expected);
    // The pieces: the first four batches fit the old base offset (2M - M = i32::MAX); the
    // batch at 2M + 1 starts the second piece.
    assert_eq!(
        report.splits,
        vec![(overflowed, vec![overflowed, 2 * M + 1])]
    );
    assert!(report.plan.cuts.is_empty() && report.plan.dropped.is_empty());
    assert!(report.quarantine.is_none(), "a split drops nothing");
    assert_eq!(log.log_end_offset(), 4 * M);
    drop(log);
    let again = plan_partition(&RealFs, &dir, 4096, 10 << 20, LoadOptions::default()).unwrap();
    assert!(again.splits.is_empty() && again.cuts.is_empty(), "{again}");
}

/// UnifiedLogTest.testSplitOnOffsetOverflow: four segments after the split, every record as it
/// was, no overflow left.
#[test]
fn split_on_offset_overflow() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    initialize_log_dir_with_overflowed_segment(&dir);
    let before = records_in_files(&dir);
    assert!(has_offset_overflow(&dir), "a segment must overflow");
    let (_log, _) = recover_and_check(&dir, &before);
    assert_eq!(segment_count(&dir), 4);
}

/// UnifiedLogTest.testDegenerateSplitSegmentWithOverflow: a segment at `segment_base` holding
/// `logs` splits into one segment, based at its first batch's base offset.
fn degenerate_split_segment_with_overflow(segment_base: i64, logs: &[Vec<u8>]) {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    std::fs::create_dir_all(&dir).unwrap();
    raw_segment(&dir, segment_base, &logs.concat());
    let before = records_in_files(&dir);
    assert!(has_offset_overflow(&dir), "a segment must overflow");
    let first_batch_base = i64::from_be_bytes(logs[0][..8].try_into().unwrap());
    let (_log, report) = recover_and_check(&dir, &before);
    assert_eq!(segment_count(&dir), 1);
    assert_eq!(log_files(&dir)[0].0, first_batch_base);
    assert_eq!(report.splits, vec![(segment_base, vec![first_batch_base])]);
}

/// UnifiedLogTest.testDegenerateSegmentSplit: every batch of the segment overflows.
#[test]
fn degenerate_segment_split() {
    let overflow_offset = M + 1;
    degenerate_split_segment_with_overflow(
        0,
        &[batch(overflow_offset, 1), batch(overflow_offset + 1, 1)],
    );
}

/// UnifiedLogTest.testDegenerateSegmentSplitWithOutOfRangeBatchLastOffset: the only batch
/// starts within range, but its last offset overflows.
#[test]
fn degenerate_segment_split_with_out_of_range_batch_last_offset() {
    degenerate_split_segment_with_overflow(0, &[batch(M - 1, 3)]);
}

/// The files a split leaves for the overflowed segment (its pieces' `.log`, `.index` and
/// `.timeindex`), taken from a copy of `dir` recovered once: name and bytes, by piece.
fn split_outputs(dir: &Path, root: &Path) -> Vec<Vec<(String, Vec<u8>)>> {
    let copy = root.join("copy-0");
    std::fs::create_dir_all(&copy).unwrap();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, copy.join(path.file_name().unwrap())).unwrap();
    }
    let (_, report) = recover(&copy);
    let (_, pieces) = report.splits[0].clone();
    pieces
        .iter()
        .map(|base| {
            ["log", "index", "timeindex"]
                .iter()
                .map(|ext| {
                    let name = format!("{base:020}.{ext}");
                    (name.clone(), std::fs::read(copy.join(&name)).unwrap())
                })
                .collect()
        })
        .collect()
}

/// Writes a piece's files into `dir` under `suffix`, emptied when `truncate` (as Kafka's tests
/// truncate the split segments they rename).
fn place(dir: &Path, piece: &[(String, Vec<u8>)], suffix: &str, truncate: bool) {
    for (name, bytes) in piece {
        let bytes: &[u8] = if truncate { &[] } else { bytes };
        std::fs::write(dir.join(format!("{name}{suffix}")), bytes).unwrap();
    }
}

fn remove_segment(dir: &Path, base: i64) {
    for ext in ["log", "index", "timeindex"] {
        std::fs::remove_file(dir.join(format!("{base:020}.{ext}"))).unwrap();
    }
}

/// A crash during the split, simulated as Kafka's tests do, then recovery: the same records in
/// one more segment than before.
fn crash_during_split(simulate: impl FnOnce(&Path, i64, &[Vec<(String, Vec<u8>)>])) {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    let overflowed = initialize_log_dir_with_overflowed_segment(&dir);
    let expected = records_in_files(&dir);
    let initial = segment_count(&dir);
    let pieces = split_outputs(&dir, root.path());
    assert_eq!(pieces.len(), 2);
    simulate(&dir, overflowed, &pieces);
    let (_log, _) = recover_and_check(&dir, &expected);
    assert_eq!(segment_count(&dir), initial + 1);
}

/// LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase1: the new segments are still
/// `.cleaned`; recovery aborts that split and splits again.
#[test]
fn recovery_after_crash_during_split_phase1() {
    crash_during_split(|dir, _, pieces| {
        for piece in pieces.iter().rev() {
            place(dir, piece, ".cleaned", true);
        }
    });
}

/// LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase2: one new segment (the highest) is a
/// `.swap`, the other `.cleaned`; recovery aborts that split and splits again.
#[test]
fn recovery_after_crash_during_split_phase2() {
    crash_during_split(|dir, _, pieces| {
        let (last, rest) = pieces.split_last().unwrap();
        place(dir, last, ".swap", true);
        for piece in rest {
            place(dir, piece, ".cleaned", true);
        }
    });
}

/// LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase3: every new segment is a `.swap` and
/// the old segment is still there (emptied, as Kafka's test truncates it); recovery completes
/// the split and the old segment goes.
#[test]
fn recovery_after_crash_during_split_phase3() {
    crash_during_split(|dir, overflowed, pieces| {
        for piece in pieces.iter().rev() {
            place(dir, piece, ".swap", false);
        }
        std::fs::write(dir.join(format!("{overflowed:020}.log")), b"").unwrap();
    });
}

/// LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase4: every new segment is a `.swap` and
/// the old segment was deleted; recovery completes the split.
#[test]
fn recovery_after_crash_during_split_phase4() {
    crash_during_split(|dir, overflowed, pieces| {
        for piece in pieces.iter().rev() {
            place(dir, piece, ".swap", false);
        }
        remove_segment(dir, overflowed);
    });
}

/// LogLoaderTest.testRecoveryAfterCrashDuringSplitPhase5: the first new segment is in place
/// (where the old one was), the other still a `.swap`; recovery completes the split.
#[test]
fn recovery_after_crash_during_split_phase5() {
    crash_during_split(|dir, overflowed, pieces| {
        remove_segment(dir, overflowed);
        place(dir, &pieces[0], "", false);
        place(dir, &pieces[1], ".swap", false);
    });
}

/// The degenerate split interrupted after its one piece became a `.swap`, the old segment
/// still there: the piece is based above the old segment, so no swap range covers the old
/// one's name, and the load replaces it all the same (it holds no offset below the piece).
#[test]
fn a_completed_degenerate_split_replaces_the_segment_below_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    std::fs::create_dir_all(&dir).unwrap();
    raw_segment(&dir, 0, &[batch(M + 1, 1), batch(M + 2, 1)].concat());
    let expected = records_in_files(&dir);
    let pieces = split_outputs(&dir, root.path());
    assert_eq!(pieces.len(), 1);
    place(&dir, &pieces[0], ".swap", false);
    let (_log, report) = recover_and_check(&dir, &expected);
    assert_eq!(report.completed_swaps, vec![M + 1]);
    assert!(report.splits.is_empty());
    assert_eq!(
        log_files(&dir).iter().map(|(b, _)| *b).collect::<Vec<_>>(),
        [M + 1]
    );
}

/// Damage after the overflow (a torn last batch) is cut as recovery cuts it: the tail goes to
/// the quarantine, the pieces hold the rest, and the segments after it are dropped (Kafka's
/// recovery truncates the last piece and deletes the later segments).
#[test]
fn damage_after_the_overflow_is_cut_from_the_last_piece() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    let overflowed = initialize_log_dir_with_overflowed_segment(&dir);
    let log_path = dir.join(format!("{overflowed:020}.log"));
    let mut bytes = std::fs::read(&log_path).unwrap();
    let last = batch(3 * M - 1, 1);
    let torn_at = bytes.len() - last.len();
    bytes.truncate(bytes.len() - 5);
    std::fs::write(&log_path, &bytes).unwrap();
    let (log, report) = recover(&dir);
    let split = &report.plan.splits[0];
    assert_eq!(split.pieces.len(), 2);
    let cut = split.cut.as_ref().expect("the torn tail is cut");
    assert_eq!(cut.position, torn_at as u64);
    assert!(cut.drops_later_segments);
    assert_eq!(report.deleted_after_corruption, vec![3 * M]);
    assert!(report.quarantine.is_some());
    assert_eq!(log.log_end_offset(), 2 * M + 3);
    assert!(!has_offset_overflow(&dir));
    assert_eq!(
        log_files(&dir).iter().map(|(b, _)| *b).collect::<Vec<_>>(),
        [0, overflowed, 2 * M + 1]
    );
}

/// A base offset raised past `i32::MAX` by damage (the CRC does not cover it) is not taken for
/// an overflow: the batch after it follows the batch before, so the raised one is the damage
/// and recovery cuts there, as it always did.
#[test]
fn a_raised_base_offset_the_next_batch_disproves_is_cut_not_split() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    std::fs::create_dir_all(&dir).unwrap();
    let parts = [batch(0, 2), batch(2, 2), batch(4, 2), batch(6, 2)];
    let at = parts[0].len() + parts[1].len();
    let mut log = parts.concat();
    log[at + 3] ^= 1; // base offset 4 + 2^32
    raw_segment(&dir, 0, &log);
    // `check` names the damaged batch, as recovery does, not an overflow.
    let found = LogDirView::open(RealFs, root.path())
        .unwrap()
        .check(|| {})
        .unwrap();
    let kinds: Vec<&str> = found.findings.iter().map(|f| f.kind).collect();
    assert!(kinds.contains(&"damaged_base_offset"), "{kinds:?}");
    assert!(!kinds.contains(&"offset_overflow"), "{kinds:?}");
    let (log, report) = recover(&dir);
    assert!(report.plan.splits.is_empty(), "{}", report.plan);
    assert_eq!(report.plan.cuts.len(), 1);
    assert_eq!(report.plan.cuts[0].position, at as u64);
    assert!(
        report.plan.cuts[0].reason.contains("damaged"),
        "{}",
        report.plan
    );
    assert_eq!(log.log_end_offset(), 4);
}

/// `check` reports the overflowed segment as a problem that recovering it repairs, and finds
/// nothing once `recover` split it.
#[test]
fn check_reports_the_overflow_that_recovery_splits() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    let overflowed = initialize_log_dir_with_overflowed_segment(&dir);
    let report = LogDirView::open(RealFs, root.path())
        .unwrap()
        .check(|| {})
        .unwrap();
    let overflow: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.kind == "offset_overflow")
        .collect();
    assert_eq!(overflow.len(), 1, "{:#?}", report.findings);
    assert_eq!(overflow[0].file, dir.join(format!("{overflowed:020}.log")));
    assert!(
        overflow[0].detail.contains("splits"),
        "{}",
        overflow[0].detail
    );
    assert!(
        matches!(
            overflow[0].repair(),
            Some(seglog_log::inspect::Repair::RecoverFrom { base_offset, .. })
                if base_offset == overflowed
        ),
        "{:?}",
        overflow[0].repair()
    );
    let (log, _) = recover(&dir);
    log.close().unwrap();
    drop(log);
    let report = LogDirView::open(RealFs, root.path())
        .unwrap()
        .check(|| {})
        .unwrap();
    assert!(report.is_clean(), "{:#?}", report.findings);
}

/// A legacy segment (magic 1, what brokers before KAFKA-6264 wrote): a compressed wrapper whose
/// records overflow starts a piece at its first record's offset, as Kafka's `baseOffset()` of
/// the wrapper gives it, and the log serves every record afterwards.
#[test]
fn a_legacy_compressed_wrapper_starts_its_piece_at_its_first_record() {
    use seglog_record_format::{snappy, write_legacy_message};
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(&root);
    std::fs::create_dir_all(&dir).unwrap();
    let mut log = Vec::new();
    write_legacy_message(&mut log, 0, 1, 0, Some(1_000), Some(b"0"), Some(b"0"));
    let mut inner = Vec::new();
    for i in 0..3 {
        let text = (M + 10 + i).to_string();
        let t = Some(text.as_bytes());
        write_legacy_message(&mut inner, i, 1, 0, Some(1_000), t, t);
    }
    let mut z = Vec::new();
    snappy::compress(&inner, &mut z).unwrap();
    let codec = Compression::Snappy.id();
    write_legacy_message(&mut log, M + 12, 1, codec, Some(1_000), None, Some(&z));
    raw_segment(&dir, 0, &log);
    let expected: Vec<(i64, String, String)> = [0, M + 10, M + 11, M + 12]
        .iter()
        .map(|o| (*o, o.to_string(), o.to_string()))
        .collect();
    let (log, report) = recover_and_check(&dir, &expected);
    assert_eq!(report.splits, vec![(0, vec![0, M + 10])]);
    assert_eq!(log.log_end_offset(), M + 13);
}
