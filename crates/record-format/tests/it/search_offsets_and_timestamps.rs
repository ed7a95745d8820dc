//! Finding the batch that holds an offset (`FileRecords.searchForOffsetWithSize`) and the first
//! record at or past a timestamp (`FileRecords.searchForTimestamp`), from a start position.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, Compression, NewRecord, build_batch, find_batch_with_offset, search_for_timestamp,
};

fn two_batches() -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let r = [
        NewRecord::new(0, 10, Some(b"a"), Some(b"1")),
        NewRecord::new(1, 11, None, Some(b"2")),
    ];
    build_batch(&BatchOptions::new(0, Compression::None), r, &mut out).unwrap();
    let first = out.len();
    build_batch(&BatchOptions::new(2, Compression::None), r, &mut out).unwrap();
    (out, first)
}

#[test]
fn finds_the_batch_holding_an_offset() {
    let (buf, first) = two_batches();
    assert_eq!(
        find_batch_with_offset(&buf, 0, 0)
            .unwrap()
            .unwrap()
            .position(),
        0
    );
    assert_eq!(
        find_batch_with_offset(&buf, 0, 1)
            .unwrap()
            .unwrap()
            .position(),
        0
    );
    assert_eq!(
        find_batch_with_offset(&buf, 0, 2)
            .unwrap()
            .unwrap()
            .position(),
        first
    );
    assert_eq!(
        find_batch_with_offset(&buf, first, 0)
            .unwrap()
            .unwrap()
            .position(),
        first
    );
    assert!(find_batch_with_offset(&buf, 0, 4).unwrap().is_none());
}

#[test]
fn searches_by_timestamp_like_file_records() {
    let mut buf = Vec::new();
    let r = [
        NewRecord::new(0, 100, None, None),
        NewRecord::new(1, 300, None, None),
        NewRecord::new(2, 200, None, None),
    ];
    let opts = BatchOptions::new(0, Compression::Gzip).with_partition_leader_epoch(4);
    build_batch(&opts, r, &mut buf).unwrap();
    let second = buf.len();
    build_batch(
        &BatchOptions::new(3, Compression::None),
        [NewRecord::new(0, 250, None, None)],
        &mut buf,
    )
    .unwrap();
    let mut scratch = Vec::new();
    let hit = |start, ts, from| {
        search_for_timestamp(&buf, start, ts, from, &mut Vec::new())
            .unwrap()
            .map(|t| (t.timestamp, t.offset, t.leader_epoch))
    };
    assert_eq!(
        hit(0, 150, 0),
        Some((300, 1, Some(4))),
        "first record at or past the target"
    );
    assert_eq!(
        hit(0, 150, 2),
        Some((200, 2, Some(4))),
        "respects the starting offset"
    );
    assert_eq!(hit(0, 260, 2), None, "no record >= 260 at offset >= 2");
    assert_eq!(hit(second, 0, 0), Some((250, 3, None)));
    assert_eq!(hit(0, 301, 0), None);
    assert!(
        search_for_timestamp(&buf, 0, 0, 0, &mut scratch)
            .unwrap()
            .is_some()
    );
}
