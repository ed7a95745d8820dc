//! `compression.type` on a leader append, as Kafka 4.4's `LogValidator` applies it: the
//! recompression cases of Kafka's `LogValidatorTest` (each test names its Kafka case) on RecordBatch
//! v2, through `PartitionLog::append_as_leader`, checked on the stored batch.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::format_collect,
    reason = "tests"
)]

use std::path::Path;

use seglog_log::record::{
    BatchBuilder, BatchOptions, Compression, Header, NewRecord, TimestampType,
};
use seglog_log::{
    CompressionType, Error, Isolation, LoadOptions, LogConfig, MockClock, PartitionLog,
};
use seglog_record_format::{Batch, RecordBatch, batches};

use crate::common;

const NOW: i64 = 1_700_000_000_000;

fn open(dir: &Path, config: LogConfig, clock: &MockClock) -> PartitionLog {
    common::open(dir, config, LoadOptions::default(), clock).0
}

fn config(compression: &str) -> LogConfig {
    LogConfig::from_pairs([("compression.type", compression)]).unwrap()
}

/// `LogValidatorTest.checkRecompression`'s batch: three records at now - 1, now + 1 and now,
/// producer 1324 epoch 10 sequence 984, transactional, partition leader epoch 40, one header on
/// the second record, in `codec` at `level`.
fn kafka_batch(codec: Compression, level: Option<i32>) -> Vec<u8> {
    let options = BatchOptions::new(0, codec)
        .with_compression_level(level)
        .with_producer(1324, 10, 984)
        .with_transactional(true)
        .with_partition_leader_epoch(40);
    let headers = [Header::new(b"h", b"x")];
    // Long enough for the levels to make different output.
    let hello: String = (0..300).map(|i| format!("hello{}", i % 37)).collect();
    let records = [
        NewRecord::new(0, NOW - 1, None, Some(hello.as_bytes())),
        NewRecord::new(1, NOW + 1, Some(b"k"), Some(b"there")).with_headers(&headers),
        NewRecord::new(2, NOW, None, Some(b"beautiful")),
    ];
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&options, records, &mut out)
        .unwrap();
    out
}

/// The stored bytes of the log from offset 0.
fn stored(log: &PartitionLog) -> Vec<u8> {
    let mut buf = Vec::new();
    log.read(0, 1 << 20, Isolation::LogEnd, true)
        .unwrap()
        .read_into(&mut buf)
        .unwrap();
    buf
}

fn only_batch(bytes: &[u8]) -> RecordBatch<'_> {
    let mut all = batches(bytes);
    let Batch::V2(batch) = all.next().unwrap().unwrap().decode().unwrap() else {
        unreachable!("v2")
    };
    assert!(all.next().is_none());
    batch
}

/// (offset, timestamp, key, value, headers) of every record.
type Row = (
    i64,
    i64,
    Option<Vec<u8>>,
    Option<Vec<u8>>,
    Vec<(Vec<u8>, Option<Vec<u8>>)>,
);

fn rows(batch: &RecordBatch<'_>) -> Vec<Row> {
    batch
        .to_records()
        .unwrap()
        .into_iter()
        .map(|r| {
            let headers = r
                .headers
                .iter()
                .map(|h| (h.key.clone(), h.value.clone()))
                .collect();
            (r.offset, r.timestamp, r.key, r.value, headers)
        })
        .collect()
}

/// Kafka's `LogValidatorTest.checkRecompression` (v2): an uncompressed batch into a gzip topic is
/// rebuilt in gzip, keeping producer id, epoch, base sequence, the transactional flag, the
/// partition leader epoch and every record, with offsets from the log end and the records'
/// largest timestamp as max timestamp. Also `testDifferentCodecCausesRecompression` and
/// `checkCompressed` for the other codecs: every source codec into every target codec.
#[test]
fn a_batch_in_another_codec_is_rebuilt_in_the_topics() {
    let codecs = [
        ("uncompressed", Compression::None),
        ("gzip", Compression::Gzip),
        ("snappy", Compression::Snappy),
        ("lz4", Compression::Lz4),
        ("zstd", Compression::Zstd),
    ];
    for (name, target) in codecs {
        for (_, source) in codecs {
            let dir = tempfile::tempdir().unwrap();
            let clock = MockClock::new(NOW);
            let log = open(&dir.path().join("t-0"), config(name), &clock);
            // Two records first, so that the batch lands at offset 2.
            let mut plain = BatchBuilder::new();
            let mut head = Vec::new();
            plain
                .build(
                    &BatchOptions::new(0, Compression::None),
                    [
                        NewRecord::new(0, NOW, None, Some(b"a")),
                        NewRecord::new(1, NOW, None, Some(b"b")),
                    ],
                    &mut head,
                )
                .unwrap();
            log.append_as_leader(&mut head).unwrap();
            let mut input = kafka_batch(source, None);
            let want = rows(&only_batch(&kafka_batch(Compression::None, None)));
            let info = log.append_as_leader(&mut input).unwrap();
            assert_eq!(
                (info.first_offset, info.last_offset),
                (2, 4),
                "{source}->{name}"
            );
            assert_eq!(info.max_timestamp, NOW + 1);
            let all = stored(&log);
            let second = batches(&all).nth(1).unwrap().unwrap();
            let Batch::V2(batch) = second.decode().unwrap() else {
                unreachable!()
            };
            batch.validate().unwrap();
            assert_eq!(batch.compression().unwrap(), target, "{source}->{name}");
            assert_eq!(batch.base_offset(), 2);
            assert_eq!(batch.last_offset(), 4);
            assert_eq!(batch.producer_id(), 1324);
            assert_eq!(batch.producer_epoch(), 10);
            assert_eq!(batch.base_sequence(), 984);
            assert!(batch.is_transactional());
            assert_eq!(batch.partition_leader_epoch(), 40);
            assert_eq!(batch.timestamp_type(), TimestampType::CreateTime);
            assert_eq!(batch.max_timestamp(), NOW + 1);
            assert_eq!(batch.base_timestamp(), NOW - 1);
            let got: Vec<Row> = rows(&batch)
                .into_iter()
                .map(|mut r| {
                    r.0 -= 2;
                    r
                })
                .collect();
            assert_eq!(got, want, "{source}->{name}");
            // A rebuilt batch is what Kafka's builder writes: the same as building it in the
            // target codec directly (the level being the topic's default).
            if source != target {
                let mut direct = kafka_batch(target, None);
                seglog_record_format::set_base_offset(&mut direct, 2).unwrap();
                assert_eq!(second.bytes(), &direct[..], "{source}->{name}");
            }
        }
    }
}

/// Kafka's `LogValidatorTest.testDifferentLevelDoesNotCauseRecompression`: a gzip batch at level
/// 9 into a topic of gzip at level 1 is stored as the producer sent it; and
/// `testRelativeOffsetAssignmentCompressedV2`: only its offsets change.
#[test]
fn the_same_codec_at_another_level_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let config = LogConfig::from_pairs([
        ("compression.type", "gzip"),
        ("compression.gzip.level", "1"),
    ])
    .unwrap();
    let log = open(&dir.path().join("t-0"), config, &clock);
    let mut input = kafka_batch(Compression::Gzip, Some(9));
    let sent = input.clone();
    let at_one = kafka_batch(Compression::Gzip, Some(1));
    assert_ne!(sent, at_one, "levels 9 and 1 compress differently");
    log.append_as_leader(&mut input).unwrap();
    assert_eq!(stored(&log), sent);
    // The topic's level applies where Kafka rebuilds: an uncompressed batch is written at 1.
    let again = tempfile::tempdir().unwrap();
    let log = open(&again.path().join("t-0"), (*log.config()).clone(), &clock);
    log.append_as_leader(&mut kafka_batch(Compression::None, None))
        .unwrap();
    assert_eq!(stored(&log), at_one);
}

/// `compression.type=producer` (Kafka's default) keeps every codec, and `uncompressed` turns a
/// gzip batch into an uncompressed one (`LogValidatorTest.checkCompressed`'s uncompressed target).
#[test]
fn producer_keeps_the_codec_and_uncompressed_decompresses() {
    for codec in [Compression::Gzip, Compression::Lz4, Compression::Zstd] {
        let dir = tempfile::tempdir().unwrap();
        let clock = MockClock::new(NOW);
        let log = open(&dir.path().join("t-0"), config("producer"), &clock);
        let mut input = kafka_batch(codec, None);
        let sent = input.clone();
        log.append_as_leader(&mut input).unwrap();
        assert_eq!(stored(&log), sent, "{codec}");
    }
    let dir = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(&dir.path().join("t-0"), config("uncompressed"), &clock);
    log.append_as_leader(&mut kafka_batch(Compression::Gzip, None))
        .unwrap();
    assert_eq!(stored(&log), kafka_batch(Compression::None, None));
}

/// Kafka's `LogValidatorTest.checkLogAppendTimeWithRecompression` (v2): under LogAppendTime the
/// rebuilt batch says LogAppendTime with the append time as its max timestamp, the records
/// keeping theirs.
#[test]
fn log_append_time_with_recompression() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW + 5);
    let config = LogConfig::from_pairs([
        ("compression.type", "zstd"),
        ("message.timestamp.type", "LogAppendTime"),
    ])
    .unwrap();
    let log = open(&dir.path().join("t-0"), config, &clock);
    let info = log
        .append_as_leader(&mut kafka_batch(Compression::Gzip, None))
        .unwrap();
    assert_eq!(info.log_append_time, Some(NOW + 5));
    assert_eq!(info.max_timestamp, NOW + 5);
    let all = stored(&log);
    let batch = only_batch(&all);
    batch.validate().unwrap();
    assert_eq!(batch.compression().unwrap(), Compression::Zstd);
    assert_eq!(batch.timestamp_type(), TimestampType::LogAppendTime);
    assert_eq!(batch.max_timestamp(), NOW + 5);
    assert_eq!(batch.base_timestamp(), NOW - 1);
}

/// Kafka's `LogValidatorTest.checkOnlyOneBatch` (v2 rows: gzip->none, gzip->gzip, none->gzip,
/// zstd->gzip): two batches in one append where either side is compressed are refused, and
/// nothing is written; two uncompressed batches into an uncompressed topic stay accepted as
/// seglog accepted them before.
#[test]
fn only_one_batch_when_compressed() {
    for (source, topic) in [
        (Compression::Gzip, "uncompressed"),
        (Compression::Gzip, "gzip"),
        (Compression::None, "gzip"),
        (Compression::Zstd, "gzip"),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let clock = MockClock::new(NOW);
        let log = open(&dir.path().join("t-0"), config(topic), &clock);
        let mut two = kafka_batch(source, None);
        two.extend(kafka_batch(source, None));
        let err = log.append_as_leader(&mut two).unwrap_err();
        let Error::InvalidRecords { reason, .. } = &err else {
            panic!("{err}")
        };
        assert_eq!(reason, "Compressed outer record has more than one batch");
        assert_eq!(log.log_end_offset(), 0);
    }
}

/// Kafka's `LogValidatorTest.testControlRecordsNotCompressed`: an uncompressed end-transaction
/// marker written by the coordinator stays uncompressed in a snappy topic.
#[test]
fn control_records_are_not_compressed() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let log = open(&dir.path().join("t-0"), config("snappy"), &clock);
    let mut batch = kafka_batch(Compression::None, None);
    log.append_as_leader(&mut batch).unwrap();
    log.append_end_txn_marker(1324, 10, 0, true, 1).unwrap();
    let all = stored(&log);
    let mut it = batches(&all);
    let first = it.next().unwrap().unwrap();
    let Batch::V2(data) = first.decode().unwrap() else {
        unreachable!()
    };
    assert_eq!(data.compression().unwrap(), Compression::Snappy);
    let Batch::V2(marker) = it.next().unwrap().unwrap().decode().unwrap() else {
        unreachable!()
    };
    assert!(marker.is_control());
    assert_eq!(marker.compression().unwrap(), Compression::None);
}

/// The topic's zstd level applies (`compression.zstd.level`, KIP-390): a batch rebuilt at 19 is
/// the one built at 19.
#[test]
fn the_zstd_level_applies() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let config = LogConfig::from_pairs([
        ("compression.type", "zstd"),
        ("compression.zstd.level", "19"),
    ])
    .unwrap();
    assert_eq!(config.compression_type, CompressionType::Zstd);
    let log = open(&dir.path().join("t-0"), config, &clock);
    log.append_as_leader(&mut kafka_batch(Compression::None, None))
        .unwrap();
    let at_19 = kafka_batch(Compression::Zstd, Some(19));
    assert_ne!(
        at_19,
        kafka_batch(Compression::Zstd, None),
        "levels 19 and 3 differ"
    );
    assert_eq!(stored(&log), at_19);
}

/// An uncompressed batch whose records section is what the rebuild writes is compressed as it
/// is (`RecordsSection`); one with a record's attributes byte set (Kafka ignores it and writes
/// 0) is decoded and rebuilt. Both store the same batch, the one the builder makes for the
/// same records in zstd, byte for byte.
#[test]
fn a_section_taken_as_it_is_and_one_rebuilt_store_the_same_batch() {
    let dir = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let canonical = kafka_batch(Compression::None, None);
    let mut odd = canonical.clone();
    // The first record: its length varint (two bytes here), then its attributes.
    assert!(odd[61] & 0x80 != 0 && odd[62] & 0x80 == 0 && odd[63] == 0);
    odd[63] = 0x01;
    let crc = seglog_record_format::crc32c(&odd[21..]);
    odd[17..21].copy_from_slice(&crc.to_be_bytes());
    let mut stores = Vec::new();
    for (name, mut batch) in [("canonical-0", canonical), ("odd-0", odd)] {
        let log = open(&dir.path().join(name), config("zstd"), &clock);
        log.append_as_leader(&mut batch).unwrap();
        stores.push(stored(&log));
    }
    assert_eq!(stores[0], stores[1]);
    assert_eq!(stores[0], kafka_batch(Compression::Zstd, None));
}
