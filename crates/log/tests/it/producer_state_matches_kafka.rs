//! Kafka 4.4's own `ProducerStateManager` (interop/kafka `Oracle snapshot`, see
//! testdata/producer-state/README.md) and seglog's, driven by the same steps, give the same
//! outcome at every step, word for word, and snapshots of the same state: seglog reads Kafka's
//! files to the state it holds itself, and writes Kafka's bytes for it.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::panic,
    reason = "tests"
)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use seglog_log::RealFs;
use seglog_log::producer::{
    AppendOrigin, EndTxnMarker, LogOffsetMetadata, ProducerStateEntry, ProducerStateManager,
    ProducerStateManagerConfig, decode, encode, read_snapshot,
};

fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/producer-state")
}

fn origin(s: &str) -> AppendOrigin {
    match s {
        "client" => AppendOrigin::Client,
        "coordinator" => AppendOrigin::Coordinator,
        "replication" => AppendOrigin::Replication,
        other => panic!("origin {other}"),
    }
}

fn step(m: &mut ProducerStateManager<RealFs>, f: &[&str]) -> String {
    let n = |i: usize| -> i64 { f[i].parse().unwrap() };
    let e16 = |i: usize| -> i16 { f[i].parse().unwrap() };
    let e32 = |i: usize| -> i32 { f[i].parse().unwrap() };
    match f[0] {
        "data" => {
            let mut info = m.prepare_update(n(2), origin(f[1]));
            match info.append_data_batch(
                e16(3),
                e32(4),
                e32(5),
                n(8),
                LogOffsetMetadata::offset(n(6)),
                n(7),
                f[9] == "1",
            ) {
                Ok(()) => {
                    m.update(&info);
                    "ok".to_owned()
                }
                Err(e) => format!("error {}: {e}", e.kafka_name()),
            }
        }
        "marker" => {
            let mut info = m.prepare_update(n(2), origin(f[1]));
            let marker = EndTxnMarker {
                is_abort: f[6] == "abort",
                coordinator_epoch: e32(7),
            };
            match info.append_end_txn_marker(marker, e16(3), n(4), n(5), e16(8)) {
                Ok(done) => {
                    m.update(&info);
                    match done {
                        None => "ok".to_owned(),
                        Some(t) => {
                            let lso = m.last_stable_offset(&t);
                            m.complete_txn(&t).unwrap();
                            format!(
                                "completed {} {} {} {} lso {lso}",
                                t.producer_id, t.first_offset, t.last_offset, t.is_aborted
                            )
                        }
                    }
                }
                Err(e) => format!("error {}: {e}", e.kafka_name()),
            }
        }
        "end" => {
            m.update_map_end_offset(n(1));
            "ok".to_owned()
        }
        "hw" => {
            m.on_high_watermark_updated(n(1));
            "ok".to_owned()
        }
        "expire" => {
            m.remove_expired_producers(n(1));
            "ok".to_owned()
        }
        "snapshot" => {
            let p = m.take_snapshot(true).unwrap();
            let name = p.as_ref().map_or("none".to_owned(), |p| {
                p.file_name().unwrap().to_str().unwrap().to_owned()
            });
            format!("snapshot {name}")
        }
        "state" => format!(
            "state fuo {} producers {}",
            m.first_unstable_offset()
                .map_or("none".to_owned(), |o| o.message_offset.to_string()),
            m.active_producers().len()
        ),
        other => panic!("step {other}"),
    }
}

fn by_id(entries: Vec<ProducerStateEntry>) -> HashMap<i64, ProducerStateEntry> {
    entries.into_iter().map(|e| (e.producer_id(), e)).collect()
}

#[test]
fn every_step_and_every_snapshot_matches_kafka() {
    let dir = tempfile::tempdir().unwrap();
    let mut m = ProducerStateManager::new(
        RealFs,
        dir.path(),
        "test-0",
        60_000,
        ProducerStateManagerConfig::default(),
    )
    .unwrap();
    let script = std::fs::read_to_string(golden().join("script.txt")).unwrap();
    let expected = std::fs::read_to_string(golden().join("steps.out")).unwrap();
    let mut ours = String::new();
    let mut snapshots = 0;
    for line in script.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split_whitespace().collect();
        let out = step(&mut m, &fields);
        if let Some(name) = out.strip_prefix("snapshot ").filter(|n| *n != "none") {
            snapshots += 1;
            let kafka_bytes = std::fs::read(golden().join(name)).unwrap();
            let kafka = decode(&kafka_bytes).unwrap();
            let mine = read_snapshot(&RealFs, &dir.path().join(name)).unwrap();
            assert_eq!(
                by_id(mine.clone()),
                by_id(kafka.clone()),
                "{name}: state differs"
            );
            // Kafka writes its HashMap's order, seglog ascending ids: in Kafka's order, our
            // encoder gives Kafka's bytes exactly.
            assert_eq!(encode(kafka.iter()), kafka_bytes, "{name}: bytes differ");
            assert_eq!(mine.len(), m.active_producers().len());
        }
        ours.push_str(&out);
        ours.push('\n');
    }
    assert_eq!(ours, expected);
    assert_eq!(snapshots, 4);
}

#[test]
fn kafkas_corrupt_snapshots_are_refused_with_kafkas_messages_and_positions() {
    let cases = [
        (
            "00000000000000000001.snapshot",
            0,
            "Snapshot failed schema validation: Snapshot contained an unknown file version 2",
        ),
        (
            "00000000000000000002.snapshot",
            24,
            "Snapshot failed schema validation: null",
        ),
        (
            "00000000000000000003.snapshot",
            2,
            "Snapshot is corrupt (CRC is no longer valid). Stored crc: 2416167784. Computed crc: 1270459795",
        ),
    ];
    for (name, at, message) in cases {
        let path = golden().join("corrupt").join(name);
        match read_snapshot(&RealFs, &path) {
            Err(seglog_log::Error::CorruptSnapshot {
                path: p,
                position,
                message: m,
            }) => {
                assert_eq!(
                    (p, position, m.as_str()),
                    (path.clone(), at, message),
                    "{name}"
                );
            }
            other => panic!("{name}: {other:?}"),
        }
    }
}
