//! The partition log: appends as leader and follower, reads across segments, rolls, offsets by
//! time, truncation, retention, and reopening after clean and unclean shutdowns.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_wrap,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "tests"
)]

use crate::common::{open, partition_dir, producer_batch, read_values, small_config};
use seglog_log::{Error, Isolation, ListOffset, LoadOptions, LogConfig, MockClock};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

#[test]
fn leader_appends_assign_offsets_and_read_back() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000_000);
    let (log, report) = open(
        &partition_dir(root.path()),
        small_config(4096),
        LoadOptions::default(),
        &clock,
    );
    assert_eq!(report.log_end_offset, 0);
    let mut first = producer_batch("a", 3, 1_000_000);
    let info = log.append_as_leader(&mut first).unwrap();
    assert_eq!((info.first_offset, info.last_offset), (0, 2));
    let mut second = producer_batch("b", 2, 1_000_010);
    let info = log.append_as_leader(&mut second).unwrap();
    assert_eq!((info.first_offset, info.last_offset), (3, 4));
    assert_eq!(log.log_end_offset(), 5);
    let values: Vec<String> = read_values(&log, 0).into_iter().map(|r| r.1).collect();
    assert_eq!(values, ["a-0", "a-1", "a-2", "b-0", "b-1"]);
    // Offset assignment leaves the CRC valid (the base offset is outside it).
    let fetch = log.read(3, 1 << 20, Isolation::LogEnd, true).unwrap();
    let mut buf = Vec::new();
    fetch.read_into(&mut buf).unwrap();
    seglog_record_format::batches(&buf)
        .next()
        .unwrap()
        .unwrap()
        .validate()
        .unwrap();
}

#[test]
fn size_rolls_make_segments_and_reads_cross_them() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000_000);
    let (log, _) = open(
        &partition_dir(root.path()),
        small_config(600),
        LoadOptions::default(),
        &clock,
    );
    for i in 0..40 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, 1_000_000 + i))
            .unwrap();
    }
    assert!(log.segment_count() > 5, "{} segments", log.segment_count());
    let got = read_values(&log, 0);
    assert_eq!(got.len(), 80);
    assert!(got.iter().enumerate().all(|(i, r)| r.0 == i as i64));
    // Rolls flush older segments in the background and move the recovery point.
    log.wait_for_background_flushes();
    assert_eq!(log.recovery_point(), log.active_segment().base_offset());
}

#[test]
fn reads_outside_the_log_are_offset_out_of_range() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = open(
        &partition_dir(root.path()),
        small_config(4096),
        LoadOptions::default(),
        &clock,
    );
    log.append_as_leader(&mut producer_batch("a", 5, 0))
        .unwrap();
    let err = log.read(6, 100, Isolation::LogEnd, false).unwrap_err();
    assert!(err.is_offset_out_of_range(), "{err}");
    // Reading at the log end is an empty read, not an error.
    assert_eq!(
        log.read(5, 100, Isolation::LogEnd, false)
            .unwrap()
            .region
            .length,
        0
    );
    log.set_high_watermark(5);
    log.delete_records_before(2).unwrap();
    assert!(
        log.read(1, 100, Isolation::LogEnd, false)
            .unwrap_err()
            .is_offset_out_of_range()
    );
}

#[test]
fn high_watermark_isolation_stops_below_it() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = open(
        &partition_dir(root.path()),
        small_config(4096),
        LoadOptions::default(),
        &clock,
    );
    log.append_as_leader(&mut producer_batch("a", 2, 0))
        .unwrap();
    log.append_as_leader(&mut producer_batch("b", 2, 0))
        .unwrap();
    log.set_high_watermark(2);
    let fetch = log
        .read(0, 1 << 20, Isolation::HighWatermark, false)
        .unwrap();
    let mut buf = Vec::new();
    fetch.read_into(&mut buf).unwrap();
    let offsets: Vec<i64> = seglog_record_format::batches(&buf)
        .flat_map(|b| b.unwrap().decode().unwrap().to_records().unwrap())
        .map(|r| r.offset)
        .collect();
    assert_eq!(offsets, [0, 1]);
    assert_eq!(
        log.read(2, 1 << 20, Isolation::HighWatermark, false)
            .unwrap()
            .region
            .length,
        0
    );
}

#[test]
fn follower_appends_keep_offsets_and_refuse_going_back() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = open(
        &partition_dir(root.path()),
        small_config(4096),
        LoadOptions::default(),
        &clock,
    );
    let mut batch = producer_batch("f", 3, 0);
    seglog_record_format::set_base_offset(&mut batch, 10).unwrap();
    let info = log.append_as_follower(&batch).unwrap();
    assert_eq!((info.first_offset, info.last_offset), (10, 12));
    assert_eq!(log.log_end_offset(), 13);
    let err = log.append_as_follower(&batch).unwrap_err();
    assert!(matches!(err, Error::InvalidRecords { .. }), "{err}");
}

/// Kafka's `testAppendEmptyLogBelowLogStartOffsetThrowsException`: an empty log starting at 7
/// (an empty segment there) refuses a follower append of offsets 4..=6, uncompressed or LZ4,
/// with Kafka's `UnexpectedAppendOffsetException` message (first and last offset included). Its
/// v0 and v1 batches do not apply: seglog's appends take record batch v2 only.
#[test]
fn a_follower_append_below_the_log_start_of_an_empty_log_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    std::fs::create_dir_all(&dir).unwrap();
    for suffix in ["log", "index"] {
        std::fs::write(dir.join(format!("00000000000000000007.{suffix}")), b"").unwrap();
    }
    let clock = MockClock::new(0);
    let options = LoadOptions::default()
        .with_log_start_offset(7)
        .with_recovery_point(7);
    let (log, _) = open(&dir, small_config(4096), options, &clock);
    assert_eq!((log.log_start_offset(), log.log_end_offset()), (7, 7));
    for codec in [Compression::None, Compression::Lz4] {
        let records = [("k1", "v1"), ("k2", "v2"), ("k3", "v3")];
        let records = records
            .iter()
            .enumerate()
            .map(|(i, (k, v))| NewRecord::new(i as i32, 0, Some(k.as_bytes()), Some(v.as_bytes())));
        let mut batch = Vec::new();
        BatchBuilder::new()
            .build(&BatchOptions::new(4, codec), records, &mut batch)
            .unwrap();
        let err = log.append_as_follower(&batch).unwrap_err();
        assert!(matches!(err, Error::InvalidRecords { .. }), "{err}");
        let want = "Unexpected offset in append to orders-0. First offset 4 is less than the next \
                    offset 7. First 10 offsets in append: 4, 5, 6, last offset in append: 6. Log \
                    start offset = 7";
        assert!(err.to_string().contains(want), "{codec:?}: {err}");
        assert_eq!(log.log_end_offset(), 7);
    }
}

#[test]
fn invalid_leader_appends_are_refused_with_kafkas_reasons() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let config = small_config(4096).with_max_message_bytes(200);
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    let mut corrupt = producer_batch("c", 1, 0);
    let last = corrupt.len() - 1;
    corrupt[last] ^= 0xff;
    let err = log.append_as_leader(&mut corrupt).unwrap_err().to_string();
    assert!(err.contains("Record is corrupt"), "{err}");
    let mut offset_set = producer_batch("c", 1, 0);
    seglog_record_format::set_base_offset(&mut offset_set, 7).unwrap();
    let err = log
        .append_as_leader(&mut offset_set)
        .unwrap_err()
        .to_string();
    assert!(err.contains("should be 0"), "{err}");
    let mut big = producer_batch("big", 20, 0);
    let err = log.append_as_leader(&mut big).unwrap_err().to_string();
    assert!(
        err.contains("exceeds the maximum configured value of 200"),
        "{err}"
    );
    let mut torn = producer_batch("t", 1, 0);
    torn.truncate(torn.len() - 1);
    assert!(log.append_as_leader(&mut torn).is_err());
    assert_eq!(log.log_end_offset(), 0, "nothing was appended");
}

#[test]
fn log_append_time_stamps_the_batches() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(5_000_000);
    let config = LogConfig::from_pairs([("message.timestamp.type", "LogAppendTime")]).unwrap();
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    let info = log
        .append_as_leader(&mut producer_batch("x", 3, 1))
        .unwrap();
    assert_eq!(info.log_append_time, Some(5_000_000));
    let fetch = log.read(0, 1 << 20, Isolation::LogEnd, true).unwrap();
    let mut buf = Vec::new();
    fetch.read_into(&mut buf).unwrap();
    let batch = seglog_record_format::batches(&buf).next().unwrap().unwrap();
    batch.validate().unwrap();
    for r in batch.decode().unwrap().to_records().unwrap() {
        assert_eq!(r.timestamp, 5_000_000);
    }
}

#[test]
fn offsets_for_times_follow_kafka() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000_000);
    let (log, _) = open(
        &partition_dir(root.path()),
        small_config(700),
        LoadOptions::default(),
        &clock,
    );
    // Timestamps 100, 110, ... with one out-of-order maximum at offset 25.
    for i in 0..40_i64 {
        let ts = if i == 25 { 9_999 } else { 100 + 10 * i };
        log.append_as_leader(&mut producer_batch("t", 1, ts))
            .unwrap();
    }
    let find = |t| log.offset_for_timestamp(t).unwrap().map(|r| r.offset);
    assert_eq!(find(ListOffset::Earliest), Some(0));
    assert_eq!(find(ListOffset::Latest), Some(40));
    assert_eq!(find(ListOffset::MaxTimestamp), Some(25));
    assert_eq!(find(ListOffset::Timestamp(0)), Some(0));
    assert_eq!(find(ListOffset::Timestamp(150)), Some(5));
    assert_eq!(find(ListOffset::Timestamp(151)), Some(6));
    assert_eq!(find(ListOffset::Timestamp(10_000)), None);
}

#[test]
fn truncation_is_batch_granular_and_full_truncation_restarts_the_log() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let (log, _) = open(
        &partition_dir(root.path()),
        small_config(600),
        LoadOptions::default(),
        &clock,
    );
    for i in 0..20 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
    }
    let segments_before = log.segment_count();
    assert!(log.truncate_to(13).unwrap());
    assert_eq!(log.log_end_offset(), 13);
    assert!(log.segment_count() < segments_before);
    // The batch holding 12..13 was cut whole: offsets 12 and 13 are gone... 12 is in batch 12..13.
    let got = read_values(&log, 0);
    assert_eq!(got.last().unwrap().0, 11);
    assert!(!log.truncate_to(100).unwrap());
    log.append_as_leader(&mut producer_batch("again", 1, 0))
        .unwrap();
    log.truncate_fully_and_start_at(500).unwrap();
    assert_eq!(log.log_start_offset(), 500);
    assert_eq!(log.log_end_offset(), 500);
    assert_eq!(log.segment_count(), 1);
    let info = log
        .append_as_leader(&mut producer_batch("new", 1, 0))
        .unwrap();
    assert_eq!(info.first_offset, 500);
}

#[test]
fn clean_reopen_scans_nothing_and_unclean_reopen_scans_from_the_recovery_point() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    let clock = MockClock::new(0);
    let (log, _) = open(&dir, small_config(600), LoadOptions::default(), &clock);
    for i in 0..30 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
    }
    let segments = log.segment_count();
    let end = log.log_end_offset();
    log.close().unwrap();
    drop(log);

    let clean = LoadOptions::default()
        .with_recovery_point(end)
        .with_log_start_offset(0)
        .with_had_clean_shutdown(true)
        .with_discard(false);
    let (log, report) = open(&dir, small_config(600), clean, &clock);
    assert_eq!(report.segments_scanned, 0);
    assert_eq!(report.segments_loaded, segments);
    assert_eq!(log.log_end_offset(), end);
    assert_eq!(read_values(&log, 0).len(), 60);
    drop(log);

    // Unclean, with the recovery point in the third-to-last segment: exactly three are scanned.
    let bases: Vec<i64> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".log").map(|p| p.parse().unwrap())
        })
        .collect::<std::collections::BTreeSet<i64>>()
        .into_iter()
        .collect();
    let rp = bases[bases.len() - 3] + 1;
    let unclean = LoadOptions::default()
        .with_recovery_point(rp)
        .with_log_start_offset(0)
        .with_had_clean_shutdown(false)
        .with_discard(false);
    let (log, report) = open(&dir, small_config(600), unclean, &clock);
    assert_eq!(report.segments_scanned, 3, "{report:?}");
    assert_eq!(log.log_end_offset(), end);
    assert_eq!(log.recovery_point(), rp);
}

#[test]
fn corruption_in_a_middle_segment_truncates_it_and_deletes_later_segments() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    let clock = MockClock::new(0);
    let (log, _) = open(&dir, small_config(600), LoadOptions::default(), &clock);
    for i in 0..30 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
    }
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    log.close().unwrap();
    drop(log);
    let victim = bases[2];
    let path = dir.join(format!("{victim:020}.log"));
    let mut bytes = std::fs::read(&path).unwrap();
    // Damage the records (CRC-covered) of the batch holding the middle of the file.
    let middle = bytes.len() / 2;
    let start = seglog_record_format::batches(&bytes)
        .map(|b| b.unwrap().position())
        .take_while(|p| *p <= middle)
        .last()
        .unwrap();
    bytes[start + 64] ^= 0x55;
    std::fs::write(&path, &bytes).unwrap();
    let (log, report) = open(&dir, small_config(600), LoadOptions::default(), &clock);
    assert_eq!(report.deleted_after_corruption, bases[3..].to_vec());
    assert_eq!(log.segment_count(), 3);
    let got = read_values(&log, 0);
    // Every record before the corrupt batch is intact and in order.
    assert!(got.iter().enumerate().all(|(i, r)| r.0 == i as i64));
    assert!(log.log_end_offset() > victim && log.log_end_offset() < bases[3]);
}

#[test]
fn loader_cleans_leftover_files_and_rebuilds_missing_indexes() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_dir(root.path());
    let clock = MockClock::new(0);
    let (log, _) = open(&dir, small_config(600), LoadOptions::default(), &clock);
    for i in 0..20 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
    }
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    let end = log.log_end_offset();
    log.close().unwrap();
    drop(log);
    std::fs::write(dir.join("00000000000000099999.log.deleted"), b"old").unwrap();
    std::fs::write(dir.join("00000000000000088888.index"), b"orphan").unwrap();
    std::fs::write(
        dir.join(format!("{:020}.log.cleaned", bases[1])),
        b"half-written",
    )
    .unwrap();
    std::fs::remove_file(dir.join(format!("{:020}.index", bases[0]))).unwrap();
    let clean = LoadOptions::default()
        .with_recovery_point(end)
        .with_log_start_offset(0)
        .with_had_clean_shutdown(true)
        .with_discard(false);
    let (log, report) = open(&dir, small_config(600), clean, &clock);
    assert_eq!(report.deleted_files.len(), 1);
    assert_eq!(report.orphan_indexes.len(), 1);
    assert_eq!(report.aborted_files.len(), 1);
    assert_eq!(report.rebuilt_missing_index, vec![bases[0]]);
    assert!(dir.join(format!("{:020}.index", bases[0])).exists());
    assert_eq!(read_values(&log, 0).len(), 40);
}

#[test]
fn retention_by_time_size_and_log_start_respects_the_high_watermark() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(10_000);
    let config = small_config(600).with_retention_ms(5_000);
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    for i in 0..30 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, 10_000 + i))
            .unwrap();
    }
    let segments = log.segment_count();
    // Background flushes after rolls hold the segment list for a moment; let them finish so the
    // delayed deletion below depends only on the clock.
    log.wait_for_background_flushes();
    clock.advance(100_000);
    // Nothing is deletable above the high watermark (still 0).
    assert_eq!(log.delete_old_segments().unwrap().total(), 0);
    log.set_high_watermark(log.log_end_offset());
    let report = log.delete_old_segments().unwrap();
    // Every segment was too old: the active one was rolled first so the log keeps one.
    assert_eq!(report.time_breached.len(), segments);
    assert_eq!(log.segment_count(), 1);
    assert_eq!(log.log_start_offset(), log.log_end_offset());
    assert!(
        log.read(0, 100, Isolation::LogEnd, false)
            .unwrap_err()
            .is_offset_out_of_range()
    );
    // Files are renamed .deleted and removed only after file.delete.delay.ms.
    assert_eq!(log.pending_deletes(), segments);
    log.wait_for_background_flushes();
    assert_eq!(log.delete_expired_files().unwrap(), 0);
    clock.advance(1_000);
    assert_eq!(log.delete_expired_files().unwrap(), segments);
}

#[test]
fn retention_by_size_deletes_oldest_while_the_excess_covers_them() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let config = small_config(600).with_retention_bytes(2_000);
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    for i in 0..40 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    let before = log.size();
    let report = log.delete_old_segments().unwrap();
    assert!(!report.size_breached.is_empty());
    assert!(log.size() >= 2_000 && log.size() < before);
    // One more segment would have brought it below the limit.
    let first = log.segments().values().next().unwrap().size();
    assert!(log.size() - first < 2_000);
}

#[test]
fn a_reader_holding_a_deleted_segment_keeps_its_files() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(0);
    let config = small_config(600).with_retention_ms(1);
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    for i in 0..10 {
        log.append_as_leader(&mut producer_batch(&format!("m{i}"), 2, i))
            .unwrap();
    }
    log.set_high_watermark(log.log_end_offset());
    let held = log.read(0, 1 << 20, Isolation::LogEnd, true).unwrap();
    clock.advance(1_000_000);
    log.delete_old_segments().unwrap();
    clock.advance(1_000_000);
    log.delete_expired_files().unwrap();
    assert!(log.pending_deletes() >= 1, "the held segment must wait");
    let mut buf = Vec::new();
    held.read_into(&mut buf).unwrap();
    assert!(!buf.is_empty());
    drop(held);
    log.wait_for_background_flushes();
    log.delete_expired_files().unwrap();
    assert_eq!(log.pending_deletes(), 0);
}

/// A client batch of records `(key, timestamp)` under `options` (base offset 0).
fn records_batch(options: &BatchOptions, records: &[(Option<&str>, i64)]) -> Vec<u8> {
    let records = records
        .iter()
        .enumerate()
        .map(|(i, (k, ts))| NewRecord::new(i as i32, *ts, k.map(str::as_bytes), Some(b"v")));
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(options, records, &mut out)
        .unwrap();
    out
}

/// Kafka's `LogValidator.validateKey` (`testCompactedTopicWithoutKey`-like): a record without a
/// key in a compacted topic refuses its batch, with `processRecordErrors`' message; keyed
/// records are taken.
#[test]
fn a_compacted_topic_refuses_records_without_a_key() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000);
    let config = LogConfig::from_pairs([("cleanup.policy", "compact")]).unwrap();
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    let plain = BatchOptions::new(0, Compression::None);
    let mut keyless = records_batch(&plain, &[(Some("a"), 1_000), (None, 1_000), (None, 1_000)]);
    let err = log.append_as_leader(&mut keyless).unwrap_err().to_string();
    let want = "One or more records have been rejected due to 2 record errors in total, and only \
                showing the first three errors at most: [RecordError(batchIndex=1, \
                message='Compacted topic cannot accept message without key in topic partition \
                orders-0'), RecordError(batchIndex=2, message='Compacted topic cannot accept \
                message without key in topic partition orders-0')]";
    assert!(err.contains(want), "{err}");
    assert_eq!(log.log_end_offset(), 0);
    let mut keyed = records_batch(&plain, &[(Some("a"), 1_000), (Some("b"), 1_000)]);
    assert_eq!(log.append_as_leader(&mut keyed).unwrap().last_offset, 1);
}

/// Kafka's `validateTimestamp` checks every record, not the batch header: a record older than
/// the batch's base timestamp (timestamp deltas are signed) and out of range refuses its batch.
#[test]
fn every_record_timestamp_is_checked_under_create_time() {
    let root = tempfile::tempdir().unwrap();
    let now = 10_000_000;
    let clock = MockClock::new(now);
    let config = LogConfig::default()
        .with_message_timestamp_before_max_ms(1_000)
        .with_message_timestamp_after_max_ms(1_000);
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    let plain = BatchOptions::new(0, Compression::None);
    for codec in [Compression::None, Compression::Lz4] {
        let options = BatchOptions::new(0, codec);
        let mut old = records_batch(&options, &[(None, now), (None, now - 5_000), (None, now)]);
        let err = log.append_as_leader(&mut old).unwrap_err().to_string();
        let want = format!(
            "One or more records have been rejected due to invalid timestamp: \
             [RecordError(batchIndex=1, message='Timestamp {} of message with offset 1 is out of \
             range. The timestamp should be within [{}, {}]')]",
            now - 5_000,
            now - 1_000,
            now + 1_000
        );
        assert!(err.contains(&want), "{codec:?}: {err}");
    }
    let mut new = records_batch(&plain, &[(None, now + 5_000)]);
    let err = log.append_as_leader(&mut new).unwrap_err().to_string();
    assert!(
        err.contains("of message with offset 0 is out of range"),
        "{err}"
    );
    // -1 (no timestamp) is not checked.
    let mut none = records_batch(&plain, &[(None, -1), (None, now)]);
    assert_eq!(log.append_as_leader(&mut none).unwrap().last_offset, 1);
}

/// Kafka's `validateTimestamp`: a producer may not set LogAppendTime itself (here under a
/// LogAppendTime topic, where record timestamps are not range-checked).
#[test]
fn a_producer_may_not_set_log_append_time() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(5_000);
    let config = LogConfig::from_pairs([("message.timestamp.type", "LogAppendTime")]).unwrap();
    let (log, _) = open(
        &partition_dir(root.path()),
        config,
        LoadOptions::default(),
        &clock,
    );
    let mut options = BatchOptions::new(0, Compression::None);
    options.timestamp_type = seglog_record_format::TimestampType::LogAppendTime;
    options.log_append_time = 4_000;
    let mut batch = records_batch(&options, &[(None, 1), (None, 2)]);
    let err = log.append_as_leader(&mut batch).unwrap_err().to_string();
    let want = "One or more records have been rejected due to invalid timestamp: \
                [RecordError(batchIndex=0, message='Invalid timestamp type in message \
                DefaultRecord(offset=0, timestamp=4000, key=0 bytes, value=1 bytes). Producer \
                should not set timestamp type to LogAppendTime.'), RecordError(batchIndex=1, \
                message='Invalid timestamp type in message DefaultRecord(offset=1, \
                timestamp=4000, key=0 bytes, value=1 bytes). Producer should not set timestamp \
                type to LogAppendTime.')]";
    assert!(err.contains(want), "{err}");
    assert_eq!(log.log_end_offset(), 0);
}

/// Kafka's `assignOffsetsNonCompressed` sets the batch's max timestamp to its records' largest
/// (`setMaxTimestamp`, a new CRC): a producer's wrong header is corrected on disk and in the
/// append's result; a right one is left as sent.
#[test]
fn the_max_timestamp_is_the_records_largest() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000);
    let (log, _) = open(
        &partition_dir(root.path()),
        LogConfig::default(),
        LoadOptions::default(),
        &clock,
    );
    let plain = BatchOptions::new(0, Compression::None);
    let mut wrong = records_batch(&plain, &[(None, 700), (None, 900), (None, 800)]);
    seglog_record_format::set_max_timestamp(
        &mut wrong,
        seglog_record_format::TimestampType::CreateTime,
        5_000,
    )
    .unwrap();
    assert_eq!(log.append_as_leader(&mut wrong).unwrap().max_timestamp, 900);
    let mut right = records_batch(&plain, &[(None, 950)]);
    let sent = right.clone();
    assert_eq!(log.append_as_leader(&mut right).unwrap().max_timestamp, 950);
    assert_eq!(right[21..], sent[21..], "CRC and body as sent");
    let fetch = log.read(0, 1 << 20, Isolation::LogEnd, false).unwrap();
    let mut buf = Vec::new();
    fetch.read_into(&mut buf).unwrap();
    let stored: Vec<i64> = seglog_record_format::batches(&buf)
        .map(|b| {
            let b = seglog_record_format::RecordBatch::parse(b.unwrap().bytes()).unwrap();
            b.validate().unwrap();
            b.max_timestamp()
        })
        .collect();
    assert_eq!(stored, [900, 950]);
}
