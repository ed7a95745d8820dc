//! The behaviours Kafka's LogSegmentTest pins (reference 7.3), as our own tests.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests index fixed vectors and do arithmetic on small values"
)]

use crate::common;

use crate::common::{create, last_offset, range, records_of, reopen, single};
use seglog_fs::RealFs;
use seglog_segment::{Error, LogSegment, RollParams, SegmentConfig};

fn read_all(seg: &LogSegment, start: i64) -> Vec<(i64, Vec<u8>)> {
    let Some(fetch) = seg.read_simple(start, 1 << 20).unwrap() else {
        return Vec::new();
    };
    let mut buf = Vec::new();
    seg.read_region(fetch.region, &mut buf).unwrap();
    records_of(&buf)
}

#[test]
fn append_with_offset_overflow_is_refused() {
    let cases: [(i64, i64); 7] = [
        (0, -(1 << 31)),
        (0, 1 << 31),
        (1, 0),
        (100, 10),
        (1 << 31, 0),
        (-(1 << 31), 0),
        (1 << 31, 1 << 32),
    ];
    for (base, largest) in cases {
        let dir = tempfile::tempdir().unwrap();
        let seg = create(dir.path(), base, 10);
        let err = seg.append(largest, &single(0)).unwrap_err();
        assert!(
            matches!(err, Error::OffsetOverflow { .. }),
            "({base}, {largest}): {err}"
        );
        assert_eq!(seg.size(), 0);
    }
}

#[test]
fn read_on_empty_segment_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    assert!(seg.read_simple(40, 300).unwrap().is_none());
}

#[test]
fn read_before_first_offset_returns_everything() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    let batch = range(50, 52);
    seg.append(52, &batch).unwrap();
    let got = read_all(&seg, 41);
    assert_eq!(
        got.iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![50, 51, 52]
    );
}

#[test]
fn read_after_last_offset_is_none() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    seg.append(51, &range(50, 51)).unwrap();
    assert!(seg.read_simple(52, 200).unwrap().is_none());
}

#[test]
fn read_from_a_gap_returns_the_next_batch() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    seg.append(51, &range(50, 51)).unwrap();
    seg.append(61, &range(60, 61)).unwrap();
    let got = read_all(&seg, 55);
    assert_eq!(got.iter().map(|r| r.0).collect::<Vec<_>>(), vec![60, 61]);
}

#[test]
fn read_without_max_position_returns_metadata_only() {
    for min_one_message in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let seg = create(dir.path(), 40, 10);
        let first = single(50);
        seg.append(50, &first).unwrap();
        seg.append(51, &single(51)).unwrap();
        let size_first = first.len() as u64;
        for (start, expected) in [(48, (50, 0)), (50, (50, 0)), (51, (51, size_first))] {
            let fetch = seg
                .read(start, 200, None, min_one_message)
                .unwrap()
                .unwrap();
            assert_eq!(fetch.region.length, 0);
            // KAFKA-17803: the metadata names the base offset of the batch that holds the start.
            assert_eq!(fetch.offset_metadata.message_offset, expected.0);
            assert_eq!(fetch.offset_metadata.segment_base_offset, 40);
            assert_eq!(fetch.offset_metadata.relative_position, expected.1);
        }
        assert!(seg.read(52, 200, None, min_one_message).unwrap().is_none());
        assert!(seg.read(53, 200, None, min_one_message).unwrap().is_none());
    }
}

#[test]
fn read_caps_at_max_size_and_max_position_and_min_one_message() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 0, 10);
    let a = range(0, 4);
    seg.append(4, &a).unwrap();
    seg.append(9, &range(5, 9)).unwrap();
    let small = seg.read(0, 10, Some(seg.size()), false).unwrap().unwrap();
    assert_eq!(small.region.length, 10);
    assert!(small.first_entry_incomplete);
    let whole = seg.read(0, 10, Some(seg.size()), true).unwrap().unwrap();
    assert_eq!(whole.region.length, a.len() as u64);
    assert!(!whole.first_entry_incomplete);
    let capped = seg
        .read(0, 1 << 20, Some(a.len() as u64), false)
        .unwrap()
        .unwrap();
    assert_eq!(capped.region.length, a.len() as u64);
    assert!(matches!(
        seg.read(0, -1, None, false),
        Err(Error::InvalidMaxSize { .. })
    ));
}

#[test]
fn truncate_leaves_only_earlier_batches() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    for offset in 40..70 {
        let first = single(offset);
        seg.append(offset, &first).unwrap();
        seg.append(offset + 1, &single(offset + 1)).unwrap();
        seg.truncate_to(offset + 1, 0).unwrap();
        let got = read_all(&seg, offset);
        assert_eq!(
            got.last().unwrap().0,
            offset,
            "the second batch must be gone"
        );
        assert_eq!(seg.read_next_offset().unwrap(), offset + 1);
    }
}

#[test]
fn truncating_an_empty_reopened_segment_makes_it_writable_and_resets_roll_time() {
    let dir = tempfile::tempdir().unwrap();
    let max_segment_ms = 300_000;
    {
        let seg = create(dir.path(), 40, 10);
        seg.close().unwrap();
    }
    let config = SegmentConfig::default()
        .with_index_interval_bytes(10)
        .with_max_index_size(30 * 12 * 8);
    let seg = LogSegment::open(RealFs, dir.path(), 40, config, true, "", 0).unwrap();
    seg.truncate_to(40, 1000).unwrap();
    let (o, t) = seg.index_entries().unwrap();
    assert_eq!((o, t), (0, 0));
    let params = |now_ms, max_offset| RollParams {
        max_segment_ms,
        max_segment_bytes: 1 << 30,
        max_timestamp_in_messages: -1,
        max_offset_in_messages: max_offset,
        messages_size: 1024,
        now_ms,
    };
    // Indexes were resized back to full size, so they are not full.
    assert!(!seg.should_roll(params(1000, 40)).unwrap());
    assert_eq!(seg.time_waited_for_roll(1000 + 100, -1).unwrap(), 100);
    // An empty segment never rolls on time.
    assert!(
        !seg.should_roll(params(1000 + max_segment_ms + 1, 40))
            .unwrap()
    );
    // But it rolls when the next offset cannot be stored relative to its base.
    assert!(seg.should_roll(params(1000, 40 + (1_i64 << 31))).unwrap());
}

#[test]
fn reload_largest_timestamp_and_next_offset_after_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let size = single(40).len() as u32;
    let seg = create(dir.path(), 40, 2 * size - 1);
    for offset in 40..70 {
        seg.append(offset, &single(offset)).unwrap();
    }
    assert_eq!(seg.index_entries().unwrap(), (14, 14));
    seg.truncate_to(41, 0).unwrap();
    assert_eq!(seg.index_entries().unwrap(), (0, 0));
    assert_eq!(seg.max_timestamp_so_far().unwrap(), 400);
    assert_eq!(seg.read_next_offset().unwrap(), 41);
}

#[test]
fn truncate_full_resets_everything() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    seg.append(43, &range(40, 43)).unwrap();
    seg.append(45, &range(44, 45)).unwrap();
    seg.truncate_to(0, 5000).unwrap();
    assert_eq!(seg.size(), 0);
    assert_eq!(seg.time_waited_for_roll(5100, -1).unwrap(), 100);
    assert!(seg.read_simple(0, 1024).unwrap().is_none());
    let params = RollParams {
        max_segment_ms: i64::MAX,
        max_segment_bytes: 1 << 30,
        max_timestamp_in_messages: -1,
        max_offset_in_messages: 43,
        messages_size: 10,
        now_ms: 5000,
    };
    assert!(!seg.should_roll(params).unwrap());
    seg.append(43, &range(40, 43)).unwrap();
    assert_eq!(read_all(&seg, 40).len(), 4);
}

#[test]
fn find_offset_by_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let size = single(40).len() as u32;
    let seg = create(dir.path(), 40, 2 * size - 1);
    for offset in 40..50 {
        seg.append(offset, &single(offset)).unwrap();
    }
    let find = |ts| {
        seg.find_offset_by_timestamp(ts, 40)
            .unwrap()
            .map(|t| t.offset)
    };
    assert_eq!(find(420), Some(42));
    assert_eq!(find(421), Some(43));
    assert_eq!(find(430), Some(43));
    assert_eq!(find(431), Some(44));
    assert_eq!(find(491), None);
    assert_eq!(find(401), Some(41));
    assert_eq!(find(399), Some(40));
    // The starting offset bounds the answer from below.
    assert_eq!(
        seg.find_offset_by_timestamp(399, 45)
            .unwrap()
            .map(|t| t.offset),
        Some(45)
    );
}

#[test]
fn next_offset_calculation() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    assert_eq!(seg.read_next_offset().unwrap(), 40);
    seg.append(52, &range(50, 52)).unwrap();
    assert_eq!(seg.read_next_offset().unwrap(), 53);
}

#[test]
fn changing_suffixes_does_not_create_indexes() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    let log = seg.log_path();
    let index = seg.offset_index_path();
    let time_index = seg.time_index_path();
    assert!(log.exists() && !index.exists() && !time_index.exists());
    seg.change_file_suffixes("", ".deleted").unwrap();
    assert!(!log.exists() && seg.log_path().exists());
    assert!(seg.log_path().to_string_lossy().ends_with(".log.deleted"));
    assert!(!seg.offset_index_path().exists() && !seg.time_index_path().exists());
    assert_eq!(seg.indexes_loaded(), (false, false));
    // Created lazily on access, under the new name.
    seg.index_entries().unwrap();
    assert!(seg.offset_index_path().exists());
    assert!(
        seg.offset_index_path()
            .to_string_lossy()
            .ends_with(".index.deleted")
    );
}

#[test]
fn recovery_fixes_a_corrupt_offset_or_time_index() {
    for corrupt_time_index in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let seg = create(dir.path(), 0, 1);
        for offset in 0..100 {
            seg.append(offset, &single(offset)).unwrap();
        }
        let path = if corrupt_time_index {
            seg.time_index_path()
        } else {
            seg.offset_index_path()
        };
        seg.close().unwrap();
        let len = std::fs::metadata(&path).unwrap().len() as usize;
        let garbage: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        std::fs::write(&path, garbage).unwrap();
        let seg = reopen(dir.path(), 0, 1);
        let report = seg.recover().unwrap();
        assert_eq!(report.bytes_truncated, 0);
        for offset in 0..100 {
            let got = read_all(&seg, offset);
            assert_eq!(got[0].0, offset);
            let found = seg
                .find_offset_by_timestamp(offset * 10, 0)
                .unwrap()
                .unwrap();
            assert_eq!(found.offset, offset);
        }
    }
}

#[test]
fn recovery_with_a_corrupt_batch_keeps_exactly_the_batches_before_it() {
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    for _ in 0..10 {
        let dir = tempfile::tempdir().unwrap();
        let seg = create(dir.path(), 0, 10);
        let mut positions = Vec::new();
        for offset in 0..100 {
            positions.push(seg.size());
            seg.append(offset, &single(offset)).unwrap();
        }
        let k = (next() % 100) as usize;
        let start = positions[k] + next() % (single(k as i64).len() as u64);
        let log_path = seg.log_path();
        seg.close().unwrap();
        let mut bytes = std::fs::read(&log_path).unwrap();
        let len = bytes.len();
        for b in &mut bytes[usize::try_from(start).unwrap()..len] {
            *b = (next() % 256) as u8;
        }
        std::fs::write(&log_path, &bytes).unwrap();
        let seg = reopen(dir.path(), 0, 10);
        let report = seg.recover().unwrap();
        assert_eq!(report.valid_bytes, positions[k], "k = {k}");
        assert!(report.stop.is_some());
        let got = read_all(&seg, 0);
        assert_eq!(
            got.iter().map(|r| r.0).collect::<Vec<_>>(),
            (0..k as i64).collect::<Vec<_>>()
        );
    }
}

#[test]
fn preallocated_segment_is_trimmed_on_close_and_reopens_at_its_size() {
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentConfig::default()
        .with_preallocate(true)
        .with_initial_file_size(512 * 1024 * 1024);
    let seg = LogSegment::open(RealFs, dir.path(), 40, config, false, "", 0).unwrap();
    assert_eq!(
        std::fs::metadata(seg.log_path()).unwrap().len(),
        512 * 1024 * 1024
    );
    let batch = range(40, 45);
    seg.append(45, &batch).unwrap();
    assert_eq!(seg.size(), batch.len() as u64);
    seg.close().unwrap();
    assert_eq!(
        std::fs::metadata(seg.log_path()).unwrap().len(),
        batch.len() as u64
    );
    let again = LogSegment::open(RealFs, dir.path(), 40, config, true, "", 0).unwrap();
    assert_eq!(again.size(), batch.len() as u64);
    assert_eq!(again.read_next_offset().unwrap(), 46);
}

#[test]
fn truncate_to_an_offset_in_a_gap_removes_the_next_batch() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    seg.append(40, &single(40)).unwrap();
    seg.append(43, &single(43)).unwrap();
    seg.truncate_to(41, 0).unwrap();
    assert_eq!(
        read_all(&seg, 40).iter().map(|r| r.0).collect::<Vec<_>>(),
        vec![40]
    );
    assert_eq!(seg.read_next_offset().unwrap(), 41);
}

#[test]
fn first_batch_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let seg = create(dir.path(), 40, 10);
    assert_eq!(seg.first_batch_timestamp().unwrap(), i64::MAX);
    seg.append(
        40,
        &common::batch_with(40, &[1000], 4, seglog_record_format::Compression::None),
    )
    .unwrap();
    assert_eq!(seg.first_batch_timestamp().unwrap(), 1000);
}

#[test]
fn size_roll_and_time_roll_follow_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let config = SegmentConfig::default().with_roll_jitter_ms(100);
    let seg = LogSegment::open(RealFs, dir.path(), 0, config, false, "", 0).unwrap();
    let batch = common::batch_with(0, &[10_000], 4, seglog_record_format::Compression::None);
    seg.append(0, &batch).unwrap();
    let size = seg.size();
    let params = |messages_size, max_ts| RollParams {
        max_segment_ms: 1000,
        max_segment_bytes: size + 100,
        max_timestamp_in_messages: max_ts,
        max_offset_in_messages: 1,
        messages_size,
        now_ms: 0,
    };
    assert!(!seg.should_roll(params(100, 10_000)).unwrap());
    assert!(
        seg.should_roll(params(101, 10_000)).unwrap(),
        "size + incoming > segment.bytes"
    );
    // Time is measured from the first batch's timestamp with the incoming max timestamp,
    // against segment.ms minus the jitter: 10_900 - 10_000 = 900 = 1000 - 100 is not enough.
    assert!(!seg.should_roll(params(1, 10_900)).unwrap());
    assert!(seg.should_roll(params(1, 10_901)).unwrap());
}

#[test]
fn last_offset_helper_matches() {
    assert_eq!(last_offset(&range(5, 9)), 9);
}
