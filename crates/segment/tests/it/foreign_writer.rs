//! A `.log` written by another writer (kafka-python batches from `testdata/`, concatenated with
//! offsets assigned in sequence, no index files) recovers and reads correctly by offset and by
//! timestamp.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "tests"
)]

use std::path::Path;

use seglog_fs::RealFs;
use seglog_record_format::{batches, set_base_offset};
use seglog_segment::{LogSegment, SegmentConfig};

struct Expected {
    offset: i64,
    timestamp: i64,
    value: Option<String>,
}

/// Concatenates every v2 fixture, reassigning base offsets from 0 in sequence. Returns the log
/// bytes and every record with its new offset.
fn build_log() -> (Vec<u8>, Vec<Expected>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/record-format");
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with("v2_") && Path::new(n).extension().is_some_and(|e| e == "bin"))
        .collect();
    names.sort();
    assert!(names.len() >= 10, "fixtures missing: {names:?}");
    let mut log = Vec::new();
    let mut expected = Vec::new();
    let mut next_offset = 0_i64;
    for name in names {
        let bin = std::fs::read(dir.join(&name)).unwrap();
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(name.replace(".bin", ".json"))).unwrap(),
        )
        .unwrap();
        let mut position = 0;
        for (batch, facts) in batches(&bin).zip(json["batches"].as_array().unwrap()) {
            let batch = batch.unwrap();
            let mut bytes = batch.bytes().to_vec();
            let old_base = facts["base_offset"].as_i64().unwrap();
            let shift = next_offset - old_base;
            // The base offset is outside the CRC, so reassigning it keeps the batch valid.
            set_base_offset(&mut bytes, next_offset).unwrap();
            for r in facts["records"].as_array().unwrap() {
                expected.push(Expected {
                    offset: r["offset"].as_i64().unwrap() + shift,
                    timestamp: r["timestamp"].as_i64().unwrap(),
                    value: r["value"].as_str().map(str::to_owned),
                });
            }
            next_offset = facts["last_offset"].as_i64().unwrap() + shift + 1;
            log.extend_from_slice(&bytes);
            position += bytes.len();
        }
        assert_eq!(position, bin.len());
    }
    (log, expected)
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[test]
fn kafka_python_batches_recover_and_read_by_offset_and_timestamp() {
    let (log, expected) = build_log();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("00000000000000000000.log"), &log).unwrap();
    let config = SegmentConfig::default().with_index_interval_bytes(100);
    let seg = LogSegment::open(RealFs, dir.path(), 0, config, true, "", 0).unwrap();
    let report = seg.recover().unwrap();
    assert_eq!(report.bytes_truncated, 0, "{report:?}");
    assert!(report.stop.is_none());
    let (offset_entries, time_entries) = report.index_entries;
    assert!(offset_entries > 3 && time_entries > 1, "{report:?}");

    for e in &expected {
        let fetch = seg.read_simple(e.offset, 1 << 20).unwrap().unwrap();
        let mut buf = Vec::new();
        seg.read_region(fetch.region, &mut buf).unwrap();
        let first = batches(&buf).next().unwrap().unwrap().decode().unwrap();
        let records = first.to_records().unwrap();
        let got = records
            .iter()
            .find(|r| r.offset == e.offset)
            .expect("offset present in its batch");
        assert_eq!(got.timestamp, e.timestamp, "offset {}", e.offset);
        assert_eq!(
            got.value.as_deref().map(hex),
            e.value,
            "offset {}",
            e.offset
        );
    }

    // By timestamp: Kafka's answer is the first record in offset order with a timestamp at least
    // the target.
    for e in &expected {
        let want = expected
            .iter()
            .find(|x| x.timestamp >= e.timestamp)
            .map(|x| x.offset);
        let got = seg
            .find_offset_by_timestamp(e.timestamp, 0)
            .unwrap()
            .map(|t| t.offset);
        assert_eq!(got, want, "timestamp {}", e.timestamp);
    }
    let max = expected.iter().map(|e| e.timestamp).max().unwrap();
    assert_eq!(seg.find_offset_by_timestamp(max + 1, 0).unwrap(), None);
    assert_eq!(
        seg.read_next_offset().unwrap(),
        expected.last().unwrap().offset + 1
    );
}
