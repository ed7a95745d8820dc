//! Behaviours Kafka's `LogCleanerTest` pins (reference 7.5), on our cleaner: unkeyed records are
//! dropped (`testCleaningWithUnkeyedMessages`), a map that fits one key still makes progress round
//! by round (`testPartialSegmentClean`), and a tombstone with an old timestamp survives the first
//! cleanings because its horizon counts from cleaning time (`testCleanTombstone`), nothing at or
//! past the first uncleanable offset changes (`testCleaningWithUncleanableSection`), and cleaned
//! segments of a preallocated log are trimmed (`testSizeTrimmedForPreallocatedAndCompactedTopic`),
//! the next dirty offset moves past offset gaps between segments (`testCleaningBeyondMissingOffsets`),
//! a source segment deleted meanwhile abandons the swap (`testCleanSegmentsWithConcurrentSegmentDeletion`),
//! a batch larger than today's `max.message.bytes` is still cleaned (`testLargeMessage`,
//! `testMessageLargerThanMaxMessageSize`), and grouping keeps each cleaned segment's offsets
//! within `i32::MAX` of its base across sparse offsets and empty segments
//! (`testSegmentGroupingWithSparseOffsets...`), and of batches the cleaning empties only the one
//! ending at the high watermark stays (`testCleanSegmentsRetainingLastEmptyBatch`).
//! Transactions: `cleaner_transactions.rs`.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::case_sensitive_file_extension_comparisons,
    reason = "tests"
)]

use crate::common;

use seglog_log::{CleanOptions, LoadOptions, LogConfig, MockClock, PartitionLog};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

fn config() -> LogConfig {
    LogConfig::from_pairs([
        ("internal.segment.bytes", "700"),
        ("cleanup.policy", "compact"),
        ("segment.index.bytes", "4096"),
        ("delete.retention.ms", "1000"),
    ])
    .unwrap()
}

/// One record per batch: `(key, value)`, `None` for null.
fn append(log: &PartitionLog, records: &[(Option<&str>, Option<&str>)], ts: i64) {
    let mut builder = BatchBuilder::new();
    for (key, value) in records {
        let mut batch = Vec::new();
        let record = NewRecord::new(0, ts, key.map(str::as_bytes), value.map(str::as_bytes));
        builder
            .build(
                &BatchOptions::new(0, Compression::None),
                [record],
                &mut batch,
            )
            .unwrap();
        // As a follower, offsets set at the log end: a leader of a compacted topic refuses a
        // record without a key (Kafka's `validateKey`), a replica takes what its leader wrote.
        seglog_record_format::set_base_offset(&mut batch, log.log_end_offset()).unwrap();
        log.append_as_follower(&batch).unwrap();
    }
}

/// Every record as `(offset, key, value)`.
fn all(log: &PartitionLog) -> Vec<(i64, Option<String>, Option<String>)> {
    let text = |b: Option<Vec<u8>>| b.map(|b| String::from_utf8(b).unwrap());
    common::read_records(log, log.log_start_offset())
        .into_iter()
        .map(|r| (r.offset, text(r.key), text(r.value)))
        .collect()
}

/// `count` records with values `v0`, `v1`, ... and keys taken from `keys` in turn, one a batch.
fn append_round_robin(log: &PartitionLog, count: usize, keys: &[&str]) {
    let values: Vec<String> = (0..count).map(|i| format!("v{i}")).collect();
    let records: Vec<_> = values
        .iter()
        .enumerate()
        .map(|(i, v)| (Some(keys[i % keys.len()]), Some(v.as_str())))
        .collect();
    append(log, &records, 1_000);
}

fn roll_and_commit(log: &PartitionLog) {
    log.roll().unwrap();
    log.set_high_watermark(log.log_end_offset());
}

#[test]
fn unkeyed_records_are_dropped_from_the_cleaned_range() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = common::open(
        &common::partition_dir(root.path()),
        config(),
        LoadOptions::default(),
        &clock,
    );
    let mut records = Vec::new();
    let names: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
    for (i, name) in names.iter().enumerate() {
        let key = if i % 4 == 0 {
            None
        } else {
            Some(["a", "b", "c"][i % 3])
        };
        records.push((key, Some(name.as_str())));
    }
    append(&log, &records, 1_000);
    roll_and_commit(&log);
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert_eq!(report.end_offset, 40);
    let after = all(&log);
    assert!(after.iter().all(|(_, k, _)| k.is_some()), "{after:?}");
    // The latest of each key survives at its original offset.
    for key in ["a", "b", "c"] {
        let last = (0..40_usize)
            .filter(|i| i % 4 != 0 && ["a", "b", "c"][i % 3] == key)
            .max()
            .unwrap();
        assert!(
            after.contains(&(last as i64, Some(key.to_owned()), Some(format!("v{last}")))),
            "{key}: {after:?}"
        );
    }
    assert_eq!(after.len(), 3);
}

#[test]
fn a_map_that_fits_one_key_still_progresses_each_round() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = common::open(
        &common::partition_dir(root.path()),
        config(),
        LoadOptions::default(),
        &clock,
    );
    let keys = ["a", "b", "c", "d"];
    append_round_robin(&log, 24, &keys);
    roll_and_commit(&log);
    let before: Vec<i64> = all(&log).iter().map(|r| r.0).collect();
    // Budget for two slots: one key (Kafka's test sizes its map the same way).
    let mut options = CleanOptions::default().with_dedupe_buffer_bytes(48);
    let mut rounds = 0;
    while options.first_dirty_offset < 24 {
        let report = log.clean(&options).unwrap();
        assert!(
            report.end_offset > options.first_dirty_offset,
            "round {rounds} made no progress: {report:?}"
        );
        options.first_dirty_offset = report.end_offset;
        rounds += 1;
        assert!(rounds < 30, "no end in sight");
        // Offsets never move; they only disappear.
        let now: Vec<i64> = all(&log).iter().map(|r| r.0).collect();
        assert!(now.iter().all(|o| before.contains(o)));
        assert!(now.windows(2).all(|w| w[0] < w[1]));
    }
    assert!(rounds > 1, "a one-key map cleaned four keys in one round");
    let after = all(&log);
    for (k, key) in keys.iter().enumerate() {
        let last = 20 + k;
        assert!(
            after.contains(&(
                last as i64,
                Some((*key).to_owned()),
                Some(format!("v{last}"))
            )),
            "{key}: {after:?}"
        );
    }
}

#[test]
fn an_old_tombstone_survives_until_the_horizon_measured_from_the_cleaning() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000_000);
    let (log, _) = common::open(
        &common::partition_dir(root.path()),
        config(),
        LoadOptions::default(),
        &clock,
    );
    // Record timestamps far in the past: the horizon must not be taken from them.
    append(
        &log,
        &[
            (Some("a"), Some("1")),
            (Some("b"), Some("2")),
            (Some("a"), None),
        ],
        10,
    );
    append(&log, &[(Some("c"), Some("3"))], 10);
    roll_and_commit(&log);
    log.clean(&CleanOptions::default()).unwrap();
    let tombstone = (2_i64, Some("a".to_owned()), None);
    assert!(
        all(&log).contains(&tombstone),
        "first cleaning dropped the tombstone"
    );
    // Within delete.retention.ms of that cleaning it is still there.
    clock.advance(500);
    log.clean(&CleanOptions::default()).unwrap();
    assert!(all(&log).contains(&tombstone), "dropped before its horizon");
    // Past the horizon the next cleaning removes it; the other keys stay.
    clock.advance(1_000);
    let report = log.clean(&CleanOptions::default()).unwrap();
    let after = all(&log);
    assert!(
        !after.iter().any(|(_, k, _)| k.as_deref() == Some("a")),
        "{after:?} {report:?}"
    );
    assert!(after.contains(&(1, Some("b".to_owned()), Some("2".to_owned()))));
    assert!(after.contains(&(3, Some("c".to_owned()), Some("3".to_owned()))));
}

#[test]
fn nothing_at_or_past_the_first_uncleanable_offset_changes() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = common::open(
        &common::partition_dir(root.path()),
        config(),
        LoadOptions::default(),
        &clock,
    );
    append_round_robin(&log, 60, &["a", "b"]);
    log.roll().unwrap();
    // The high watermark stops in the middle of the log: only whole segments below it are cleanable.
    log.set_high_watermark(30);
    let before = all(&log);
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert!(report.end_offset <= 30, "{report:?}");
    assert!(report.end_offset > 0, "{report:?}");
    let after = all(&log);
    let tail = |rs: &[(i64, Option<String>, Option<String>)]| {
        rs.iter()
            .filter(|r| r.0 >= report.end_offset)
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(tail(&after), tail(&before));
    assert!(after.len() < before.len());
}

#[test]
fn cleaned_segments_of_a_preallocated_log_are_trimmed() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let dir = common::partition_dir(root.path());
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "2000"),
        ("cleanup.policy", "compact"),
        ("segment.index.bytes", "4096"),
        ("preallocate", "true"),
    ])
    .unwrap();
    let (log, _) = common::open(&dir, config, LoadOptions::default(), &clock);
    append_round_robin(&log, 80, &["a", "b", "c"]);
    roll_and_commit(&log);
    // The active segment shows preallocation is on: its file is longer than its data.
    let active = log.active_segment().log_path();
    assert_eq!(std::fs::metadata(&active).unwrap().len(), 2000);
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert!(report.segments_replaced > 0, "{report:?}");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "log") && path != active {
            let bytes = std::fs::read(&path).unwrap();
            let mut batches = seglog_record_format::batches(&bytes);
            for b in &mut batches {
                b.unwrap();
            }
            assert_eq!(
                batches.position(),
                bytes.len(),
                "{}: untrimmed tail",
                path.display()
            );
        }
    }
}

#[test]
fn a_corrupt_batch_size_stops_the_cleaning_with_the_file_and_byte() {
    // Kafka: "Log segment may be corrupt, batch size X > Y bytes left in segment"
    // (testCorruptMessageSizeLargerThanBytesAvailable), and sizes below the minimum.
    for bad_size in [0x7FFF_0000_u32, 5] {
        let root = tempfile::tempdir().unwrap();
        let clock = MockClock::new(0);
        let dir = common::partition_dir(root.path());
        let (log, _) = common::open(&dir, config(), LoadOptions::default(), &clock);
        append_round_robin(&log, 30, &["a", "b"]);
        roll_and_commit(&log);
        let first = dir.join("00000000000000000000.log");
        let mut bytes = std::fs::read(&first).unwrap();
        let second = seglog_record_format::batches(&bytes)
            .next()
            .unwrap()
            .unwrap()
            .size_in_bytes();
        bytes[second + 8..second + 12].copy_from_slice(&bad_size.to_be_bytes());
        std::fs::write(&first, &bytes).unwrap();

        let error = log.clean(&CleanOptions::default()).unwrap_err().to_string();
        assert!(error.contains("00000000000000000000.log"), "{error}");
        assert!(error.contains(&second.to_string()), "{error}");
        // Nothing was swapped in: the damaged segment is still the one the log holds.
        assert_eq!(std::fs::read(&first).unwrap(), bytes, "{bad_size}");
        let names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert!(
            names
                .iter()
                .all(|n| !n.ends_with(".swap") && !n.ends_with(".deleted")),
            "{names:?}"
        );
    }
}

/// One single-record batch with offset `offset` (for follower appends), key and value as given.
fn follower_batch(offset: i64, key: &str, value: &[u8]) -> Vec<u8> {
    let mut batch = Vec::new();
    BatchBuilder::new()
        .build(
            &BatchOptions::new(offset, Compression::None),
            [NewRecord::new(0, 1_000, Some(key.as_bytes()), Some(value))],
            &mut batch,
        )
        .unwrap();
    batch
}

#[test]
fn the_next_dirty_offset_moves_past_offset_gaps_between_segments() {
    // Ten equal batches fill a segment; the next batch rolls a new one at its own base offset,
    // which leaves a gap of missing offsets between the two segments.
    let size = follower_batch(0, "0", b"0").len();
    // Each case: the (start, end) offset ranges of the rolled segments, and the active base.
    for (segments, active_base) in [(&[(0, 10)][..], 11_i64), (&[(0, 10), (15, 25)][..], 30)] {
        let root = tempfile::tempdir().unwrap();
        let clock = MockClock::new(0);
        let config = LogConfig::from_pairs([
            (
                "internal.segment.bytes",
                (10 * size + size / 2).to_string().as_str(),
            ),
            ("cleanup.policy", "compact"),
        ])
        .unwrap();
        let dir = common::partition_dir(root.path());
        let (log, _) = common::open(&dir, config, LoadOptions::default(), &clock);
        for range in segments {
            for offset in range.0..range.1 {
                let key = (offset % 10).to_string();
                log.append_as_follower(&follower_batch(offset, &key, key.as_bytes()))
                    .unwrap();
            }
        }
        log.append_as_follower(&follower_batch(active_base, "1015", b"1015"))
            .unwrap();
        let bases: Vec<i64> = log.segments().keys().copied().collect();
        let mut expected: Vec<i64> = segments.iter().map(|r| r.0).collect();
        expected.push(active_base);
        assert_eq!(bases, expected, "the setup did not roll where it meant to");
        log.set_high_watermark(log.log_end_offset());

        let report = log.clean(&CleanOptions::default()).unwrap();
        assert_eq!(
            report.end_offset, active_base,
            "the cleaning point must pass the offset gap: {report:?}"
        );
        // A second cleaning finds nothing dirty.
        let again = log
            .clean(&CleanOptions::default().with_first_dirty_offset(report.end_offset))
            .unwrap();
        assert_eq!(again.groups, 0, "{again:?}");
    }
}

#[test]
fn a_source_segment_deleted_during_the_cleaning_abandons_the_swap() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let dir = common::partition_dir(root.path());
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "2000"),
        ("cleanup.policy", "compact"),
        ("file.delete.delay.ms", "0"),
    ])
    .unwrap();
    let (log, _) = common::open(&dir, config, LoadOptions::default(), &clock);
    append_round_robin(&log, 120, &["a", "b", "c"]);
    roll_and_commit(&log);
    assert!(log.segment_count() > 3);
    let first_segment_end = *log.segments().keys().nth(1).unwrap();
    let log = std::sync::Arc::new(log);
    let cleaner = {
        let log = std::sync::Arc::clone(&log);
        std::thread::spawn(move || {
            // Slow enough (a few seconds for ~9 KB read and written) that the deletion below
            // lands while the cleaned segment is being written, before the swap.
            log.clean(&CleanOptions::default().with_io_max_bytes_per_second(Some(4_000.0)))
        })
    };
    // Wait for the `.cleaned` segment to appear: the key map is built, the rewrite has begun.
    let cleaned_exists = || {
        std::fs::read_dir(&dir).unwrap().any(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .ends_with(".cleaned")
        })
    };
    let started = std::time::Instant::now();
    while !cleaned_exists() {
        assert!(
            !cleaner.is_finished(),
            "the cleaning ended before it was seen"
        );
        assert!(started.elapsed() < std::time::Duration::from_mins(1));
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // Retention removes the first segment meanwhile (Kafka's test deletes it the same way).
    assert!(log.delete_records_before(first_segment_end).unwrap());
    let deleted = log.delete_old_segments().unwrap();
    assert_eq!(deleted.log_start_breached, vec![0]);
    let before = all(&log);

    let report = cleaner.join().unwrap().unwrap();
    assert!(report.aborted, "{report:?}");
    assert_eq!(report.groups, 0, "{report:?}");
    // Nothing changed, and no replacement file is left behind.
    assert_eq!(all(&log), before);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert!(
        names
            .iter()
            .all(|n| !n.ends_with(".cleaned") && !n.ends_with(".swap")),
        "{names:?}"
    );
    // The next cleaning, from the new log start, succeeds.
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert!(!report.aborted && report.groups > 0, "{report:?}");
    let after = all(&log);
    for key in ["a", "b", "c"] {
        let last = before
            .iter()
            .rev()
            .find(|r| r.1.as_deref() == Some(key))
            .unwrap();
        assert!(after.contains(last), "{key}: {after:?}");
    }
}

#[test]
fn a_batch_larger_than_todays_max_message_bytes_is_still_cleaned() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let dir = common::partition_dir(root.path());
    let big: Vec<u8> = (0..3 * 1024 * 1024_u32).map(|i| (i % 251) as u8).collect();
    let pairs = |max: &str| {
        LogConfig::from_pairs([
            ("cleanup.policy", "compact"),
            ("max.message.bytes", max),
            ("segment.bytes", "16777216"),
        ])
        .unwrap()
    };
    {
        let (log, _) = common::open(&dir, pairs("4000000"), LoadOptions::default(), &clock);
        append(&log, &[(Some("small"), Some("old"))], 1_000);
        let mut batch = Vec::new();
        BatchBuilder::new()
            .build(
                &BatchOptions::new(0, Compression::None),
                [NewRecord::new(0, 1_000, Some(b"big"), Some(&big[..]))],
                &mut batch,
            )
            .unwrap();
        log.append_as_leader(&mut batch).unwrap();
        append(&log, &[(Some("small"), Some("new"))], 1_000);
        log.close().unwrap();
    }
    // Reopened with the default limit (1 MiB): the 3 MiB batch is in the log and must survive.
    let (log, _) = common::open(&dir, pairs("1048588"), LoadOptions::default(), &clock);
    roll_and_commit(&log);
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert_eq!(report.records_kept, 2, "{report:?}");
    let after = common::read_records(&log, 0);
    assert_eq!(after.len(), 2);
    assert_eq!(after[0].offset, 1);
    assert_eq!(after[0].value.as_deref(), Some(&big[..]));
    assert_eq!(after[1].value.as_deref(), Some(&b"new"[..]));
}

#[test]
fn grouping_keeps_offsets_within_i32_max_across_sparse_offsets_and_empty_segments() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let dir = common::partition_dir(root.path());
    let (log, _) = common::open(&dir, config(), LoadOptions::default(), &clock);
    let far = i64::from(i32::MAX) + 10;
    // Offsets 0..4, an empty segment at 5 (rolled, never written), then offsets past i32::MAX:
    // the batch at `far` cannot live in a segment based at 5, so it rolls its own.
    for offset in 0..5 {
        log.append_as_follower(&follower_batch(
            offset,
            if offset % 2 == 0 { "a" } else { "b" },
            b"x",
        ))
        .unwrap();
    }
    log.roll().unwrap();
    for (i, offset) in [far, far + 1, 2 * far, 2 * far + 1].into_iter().enumerate() {
        log.append_as_follower(&follower_batch(
            offset,
            ["a", "b"][i % 2],
            format!("y{i}").as_bytes(),
        ))
        .unwrap();
    }
    roll_and_commit(&log);
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    assert!(bases.starts_with(&[0, 5, far]), "{bases:?}");

    let report = log.clean(&CleanOptions::default()).unwrap();
    assert!(!report.aborted && report.groups >= 2, "{report:?}");
    // Every cleaned segment's offsets fit its index: each lies within i32::MAX of its base.
    for (base, segment) in log.segments().iter() {
        let next = segment.read_next_offset().unwrap();
        assert!(next - 1 - base <= i64::from(i32::MAX), "{base}..{next}");
    }
    let after: Vec<(i64, Option<String>)> = all(&log).into_iter().map(|r| (r.0, r.2)).collect();
    assert_eq!(
        after,
        vec![
            (2 * far, Some("y2".to_owned())),
            (2 * far + 1, Some("y3".to_owned()))
        ]
    );
    // The log still takes appends and answers reads after the cleaning.
    log.append_as_follower(&follower_batch(2 * far + 2, "c", b"z"))
        .unwrap();
    assert_eq!(all(&log).len(), 3);
}

#[test]
fn the_last_batch_of_each_producer_is_kept_even_when_emptied() {
    // Kafka's testLogCleanerRetainsProducerLastSequence, record for record.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let dir = common::partition_dir(root.path());
    let (log, _) = common::open(&dir, config(), LoadOptions::default(), &clock);
    // (key, value, producer id, sequence); producer id -1 is a plain (non-idempotent) batch.
    for (key, value, producer, sequence) in [
        ("0", "0", -1_i64, -1),
        ("0", "1", 1, 0),
        ("0", "2", 2, 0),
        ("0", "3", 3, 0),
        ("1", "1", 2, 1),
    ] {
        let options = BatchOptions::new(0, Compression::None)
            .with_producer_id(producer)
            .with_producer_epoch(if producer < 0 { -1 } else { 0 })
            .with_base_sequence(sequence);
        let mut batch = Vec::new();
        BatchBuilder::new()
            .build(
                &options,
                [NewRecord::new(
                    0,
                    1_000,
                    Some(key.as_bytes()),
                    Some(value.as_bytes()),
                )],
                &mut batch,
            )
            .unwrap();
        log.append_as_leader(&mut batch).unwrap();
    }
    roll_and_commit(&log);
    log.clean(&CleanOptions::default()).unwrap();

    // Batches left: producer 1's (emptied: key 0 has a newer value), producer 3's, producer 2's
    // last; producer 2's first batch and the plain one are gone.
    let segment = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
    let mut last_offsets = Vec::new();
    let mut last_sequences = Vec::new();
    for framed in seglog_record_format::batches(&segment) {
        let framed = framed.unwrap();
        let seglog_record_format::Batch::V2(b) = framed.decode().unwrap() else {
            panic!("v2 expected");
        };
        last_offsets.push(b.last_offset());
        last_sequences.push((b.producer_id(), b.base_sequence() + b.last_offset_delta()));
    }
    assert_eq!(last_offsets, vec![1, 3, 4]);
    assert_eq!(last_sequences, vec![(1, 0), (3, 0), (2, 1)]);
    let records: Vec<(i64, Option<String>)> = all(&log).into_iter().map(|r| (r.0, r.1)).collect();
    assert_eq!(
        records,
        vec![(3, Some("0".to_owned())), (4, Some("1".to_owned()))]
    );
}

#[test]
fn only_the_batch_ending_at_the_high_watermark_is_kept_emptied() {
    // Kafka's testCleanSegmentsRetainingLastEmptyBatch (KAFKA-17076): when cleaning empties every
    // batch, only the one ending just below the high watermark (Kafka 4.4's bound; here also the
    // first uncleanable offset) stays, as an empty batch, so the last offset is not lost; the
    // emptied last batches of the other groups go.
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let dir = common::partition_dir(root.path());
    let (log, _) = common::open(&dir, config(), LoadOptions::default(), &clock);
    let keys: Vec<String> = (0..30).map(|k| k.to_string()).collect();
    let values: Vec<_> = keys.iter().map(|k| (Some(k.as_str()), Some("v"))).collect();
    append(&log, &values, 1_000);
    let tombstones: Vec<_> = keys.iter().map(|k| (Some(k.as_str()), None)).collect();
    append(&log, &tombstones, 1_000);
    roll_and_commit(&log);
    let active = log.active_segment().base_offset();
    assert_eq!(active, 60);
    assert!(log.segment_count() > 3, "the setup needs several groups");
    // The first cleaning sets the tombstones' horizons, the second removes them all.
    log.clean(&CleanOptions::default()).unwrap();
    clock.advance(1_001);
    let report = log.clean(&CleanOptions::default()).unwrap();
    assert!(report.groups > 1, "{report:?}");
    assert!(all(&log).is_empty(), "{:?}", all(&log));
    let mut batches = Vec::new();
    for segment in log.segments().values() {
        let bytes = std::fs::read(segment.log_path()).unwrap();
        for framed in seglog_record_format::batches(&bytes) {
            let seglog_record_format::Batch::V2(b) = framed.unwrap().decode().unwrap() else {
                panic!("v2 expected");
            };
            batches.push((b.last_offset(), b.records_count()));
        }
    }
    assert_eq!(batches, vec![(active - 1, 0)]);
    assert_eq!(log.log_end_offset(), active);
}
