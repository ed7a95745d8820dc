//! Target `segment_recover`: recovering a segment from arbitrary `.log` bytes (base offset 0),
//! then checking what recovery promises.

use std::path::Path;

use seglog_fs::RealFs;
use seglog_mmap_index::{OffsetIndex, Problem, TimeIndex};
use seglog_record_format::{BatchOptions, Compression, NewRecord, batches, build_batch};
use seglog_segment::{LogSegment, SegmentConfig};

use crate::with_scratch_dir;

/// Small enough that short inputs get several index entries.
const INDEX_INTERVAL_BYTES: u32 = 128;

/// Room for every entry a fuzz input can produce (at most one per 61-byte batch).
const MAX_INDEX_SIZE: u32 = 1 << 20;

/// How many batches have their offsets translated and read back.
const CHECKED_BATCHES: usize = 64;

fn config() -> SegmentConfig {
    SegmentConfig::default()
        .with_index_interval_bytes(INDEX_INTERVAL_BYTES)
        .with_max_index_size(MAX_INDEX_SIZE)
}

/// One batch kept by recovery, as the record-format crate frames it.
#[derive(Debug, Clone, Copy)]
struct Kept {
    position: u64,
    size: u64,
    last_offset: i64,
    max_timestamp: i64,
}

/// The `segment_recover` target.
pub fn segment_recover(data: &[u8]) {
    with_scratch_dir(|dir| recover_and_check(dir, data));
}

fn open(dir: &Path) -> LogSegment {
    LogSegment::open(RealFs, dir, 0, config(), true, "", 0).expect("opening the segment")
}

fn recover_and_check(dir: &Path, data: &[u8]) {
    let log = dir.join("00000000000000000000.log");
    std::fs::write(&log, data).expect("writing the .log");
    let segment = open(dir);
    let report = segment
        .recover()
        .expect("recovery of an arbitrary .log must not fail");
    let len = data.len() as u64;

    // Recovery keeps exactly a prefix of the input and invents nothing.
    assert_eq!(
        report.valid_bytes + report.bytes_truncated,
        len,
        "{report:?}"
    );
    assert_eq!(segment.size(), report.valid_bytes);
    assert_eq!(
        report.stop.is_none(),
        report.bytes_truncated == 0,
        "{report:?}"
    );
    let on_disk = std::fs::read(&log).expect("reading the .log back");
    let valid = usize::try_from(report.valid_bytes).expect("a small input");
    assert!(
        data.get(..valid) == Some(on_disk.as_slice()),
        "the recovered .log is not a prefix of the input ({report:?})"
    );

    // The prefix is whole, valid batches whose offsets increase from the base.
    let kept = kept_batches(&on_disk);
    assert_eq!(kept.len() as u64, report.batches, "{report:?}");
    let next = kept.last().map_or(0, |k| k.last_offset + 1);
    assert_eq!(segment.read_next_offset().expect("read_next_offset"), next);
    assert_eq!(
        segment.index_entries().expect("index_entries"),
        report.index_entries
    );

    // Offsets translate to the batch that holds them, and reads start there.
    for k in kept.iter().take(CHECKED_BATCHES) {
        let found = segment
            .translate_offset(k.last_offset, 0)
            .expect("translate_offset")
            .unwrap_or_else(|| panic!("offset {} not found ({k:?})", k.last_offset));
        assert_eq!(
            (found.position, found.size),
            (k.position, k.size),
            "translate_offset({})",
            k.last_offset
        );
        let read = segment
            .read_simple(k.last_offset, i64::from(i32::MAX))
            .expect("read")
            .unwrap_or_else(|| panic!("nothing read at offset {}", k.last_offset));
        assert_eq!(read.region.position, k.position, "read({})", k.last_offset);
        assert_eq!(
            read.region.position + read.region.length,
            report.valid_bytes
        );
        // A compressed batch may carry a valid CRC over a corrupt payload: an error, not a panic.
        let _ = segment.find_offset_by_timestamp(k.max_timestamp, 0);
    }
    assert!(
        segment
            .translate_offset(next, 0)
            .expect("translate_offset")
            .is_none()
    );
    segment.close().expect("close");
    drop(segment);
    let indexes = index_files(dir);

    // A second recovery of what the first kept changes nothing and rebuilds the same indexes.
    let segment = open(dir);
    let again = segment.recover().expect("second recovery");
    assert_eq!(again.valid_bytes, report.valid_bytes, "{again:?}");
    assert!(
        again.stop.is_none(),
        "a recovered segment does not recover cleanly: {again:?}"
    );
    assert_eq!(again.index_entries, report.index_entries);
    segment.close().expect("close");
    drop(segment);
    assert!(
        index_files(dir) == indexes,
        "a second recovery rebuilt different indexes"
    );
    sane_indexes(dir);

    // And the segment takes an append at its next offset.
    append_one(
        dir,
        next,
        kept.last().map_or(0, |k| k.max_timestamp),
        report.valid_bytes,
    );
}

fn kept_batches(log: &[u8]) -> Vec<Kept> {
    let mut kept = Vec::new();
    let mut previous = -1_i64;
    for framed in batches(log) {
        let framed = framed.expect("a recovered .log frames cleanly");
        let batch = framed.decode().expect("a recovered batch decodes");
        batch.validate().expect("a recovered batch validates");
        let last_offset = batch.last_offset();
        assert!(
            last_offset > previous,
            "offsets go backwards after recovery"
        );
        previous = last_offset;
        kept.push(Kept {
            position: framed.position() as u64,
            size: framed.size_in_bytes() as u64,
            last_offset,
            max_timestamp: batch.max_timestamp(),
        });
    }
    let end = kept.last().map_or(0, |k| k.position + k.size);
    assert_eq!(
        end,
        log.len() as u64,
        "the recovered .log ends inside a batch"
    );
    kept
}

fn index_files(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap_or_default();
    (
        read("00000000000000000000.index"),
        read("00000000000000000000.timeindex"),
    )
}

/// The rebuilt indexes pass Kafka's sanity check and have no out-of-order entries.
fn sane_indexes(dir: &Path) {
    let offsets = OffsetIndex::options(dir.join("00000000000000000000.index"), 0)
        .read_only()
        .open()
        .expect("opening the rebuilt offset index");
    offsets
        .sanity_check()
        .expect("rebuilt offset index is sane");
    let report = offsets.verify().expect("verify");
    assert!(
        !report.problems.iter().any(|p| matches!(
            p,
            Problem::OffsetOutOfOrder { .. } | Problem::ZeroTail { .. }
        )),
        "{report:?}"
    );
    let times = TimeIndex::options(dir.join("00000000000000000000.timeindex"), 0)
        .read_only()
        .open()
        .expect("opening the rebuilt time index");
    times.sanity_check().expect("rebuilt time index is sane");
    let report = times.verify().expect("verify");
    assert!(
        !report.problems.iter().any(|p| matches!(
            p,
            Problem::OffsetOutOfOrder { .. }
                | Problem::TimestampOutOfOrder { .. }
                | Problem::ZeroTail { .. }
        )),
        "{report:?}"
    );
}

fn append_one(dir: &Path, next: i64, max_timestamp: i64, valid_bytes: u64) {
    let segment = open(dir);
    if !segment.can_convert_to_relative_offset(next) {
        return;
    }
    segment.recover().expect("recovery");
    segment
        .resize_indexes(MAX_INDEX_SIZE)
        .expect("resize_indexes");
    let mut batch = Vec::new();
    let ts = max_timestamp.max(0).saturating_add(1);
    build_batch(
        &BatchOptions::new(next, Compression::None),
        [NewRecord::new(
            0,
            ts,
            Some(b"k".as_slice()),
            Some(b"v".as_slice()),
        )],
        &mut batch,
    )
    .expect("building a batch");
    segment.append(next, &batch).expect("append after recovery");
    assert_eq!(
        segment.read_next_offset().expect("read_next_offset"),
        next + 1
    );
    let found = segment
        .translate_offset(next, 0)
        .expect("translate_offset")
        .expect("the appended batch");
    assert_eq!(found.position, valid_bytes);
    segment.close().expect("close");
    drop(segment);
    let segment = open(dir);
    let report = segment.recover().expect("recovery after the append");
    assert_eq!(
        report.valid_bytes,
        valid_bytes + batch.len() as u64,
        "{report:?}"
    );
    segment.close().expect("close");
}
