//! Compaction of transactional data judged by Kafka 4.4's own cleaner: each case of
//! `testdata/cleaner/` (a partition seglog wrote, made by `interop/kafka/make-cleaner-goldens.sh`)
//! is cleaned by seglog at the times Kafka's `Cleaner.doClean` ran, pass after pass, and after
//! each pass the live segments must equal Kafka's: `.log`, `.index`, `.timeindex` and `.txnindex`
//! byte for byte (a missing `.txnindex` is an empty one), and the records a read_committed
//! consumer gets the same.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use crate::common;

use seglog_log::inspect::PartitionView;
use seglog_log::{CleanOptions, IsolationLevel, LoadOptions, LogConfig, MockClock, RealFs};

const CASES: [&str; 5] = [
    "interleaved",
    "spanning",
    "abort-last",
    "tombstones",
    "empty-batches",
];

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/cleaner")
}

fn config(case: &Path) -> LogConfig {
    let text = std::fs::read_to_string(case.join("config.properties")).unwrap();
    let pairs: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('=')).collect();
    LogConfig::from_pairs(pairs).unwrap()
}

fn passes(case: &Path) -> Vec<i64> {
    std::fs::read_to_string(case.join("passes.txt"))
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

/// The files of a directory, by name; an empty `.txnindex` counts as none.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            (
                e.file_name().into_string().unwrap(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .filter(|(name, bytes)| !(name.ends_with(".txnindex") && bytes.is_empty()))
        .collect()
}

/// The records a read_committed consumer gets from offset 0: offset, key, value.
type Consumed = Vec<(i64, Option<Vec<u8>>, Option<Vec<u8>>)>;

fn read_committed(dir: &Path) -> Consumed {
    let view = PartitionView::open(RealFs, dir).unwrap();
    let mut records = Vec::new();
    view.for_each_record(0, IsolationLevel::ReadCommitted, |r, _| {
        records.push((r.offset, r.key.clone(), r.value.clone()));
        ControlFlow::<()>::Continue(())
    })
    .unwrap();
    records
}

/// seglog's live segments, each index cut to its entries (as the oracle saves Kafka's).
fn save_live(log: &seglog_log::PartitionLog, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for segment in log.segments().values() {
        let (offsets, times) = segment.index_entries().unwrap();
        let cut = |path: PathBuf, len: usize| {
            let mut bytes = std::fs::read(&path).unwrap_or_default();
            bytes.truncate(len);
            std::fs::write(to.join(path.file_name().unwrap()), bytes).unwrap();
        };
        cut(segment.log_path(), usize::MAX);
        cut(segment.offset_index_path(), offsets * 8);
        cut(segment.time_index_path(), times * 12);
        let txn = segment.txn_index_path();
        if txn.exists() {
            cut(txn, usize::MAX);
        }
    }
}

/// Cleans one case pass by pass; returns each difference from Kafka's output.
fn run_case(name: &str) -> Vec<String> {
    let case = cases_dir().join(name);
    let scratch = tempfile::tempdir().unwrap();
    let dir = scratch.path().join("cleaner-0");
    copy_dir(&case.join("input/cleaner-0"), &dir);
    let times = passes(&case);
    let clock = MockClock::new(times[0]);
    let load = LoadOptions::default().with_had_clean_shutdown(true);
    let (log, _) = common::open(&dir, config(&case), load, &clock);
    log.set_high_watermark(log.log_end_offset());
    let options = CleanOptions::default().with_dedupe_buffer_bytes(16 * 1024 * 1024);
    let mut differences = Vec::new();
    for (i, time) in times.iter().enumerate() {
        let pass = format!("pass{}", i + 1);
        clock.set(*time);
        log.clean(&options).unwrap();
        let ours_root = scratch.path().join(&pass);
        let ours = ours_root.join("cleaner-0");
        save_live(&log, &ours);
        let kafka = case.join("kafka").join(&pass);
        let (mine, theirs) = (files(&ours), files(&kafka));
        let names: Vec<&String> = mine.keys().chain(theirs.keys()).collect();
        for file in names.into_iter().collect::<std::collections::BTreeSet<_>>() {
            let difference = match (mine.get(file), theirs.get(file)) {
                (Some(a), Some(b)) if a == b => continue,
                (Some(a), Some(b)) => format!(
                    "{} bytes, Kafka's {} bytes, first difference at byte {}",
                    a.len(),
                    b.len(),
                    a.iter().zip(b).take_while(|(x, y)| x == y).count()
                ),
                (Some(_), None) => "Kafka has none".to_string(),
                (None, _) => "seglog has none".to_string(),
            };
            differences.push(format!("{name} {pass} {file}: {difference}"));
        }
        let kafka_copy = scratch
            .path()
            .join(format!("kafka-{pass}"))
            .join("cleaner-0");
        copy_dir(&kafka, &kafka_copy);
        if read_committed(&ours) != read_committed(&kafka_copy) {
            differences.push(format!("{name} {pass}: read_committed records differ"));
        }
    }
    differences
}

#[test]
fn seglog_cleans_as_kafka_4_4_cleans() {
    let mut differences = Vec::new();
    for name in CASES {
        differences.extend(run_case(name));
    }
    assert!(
        differences.is_empty(),
        "seglog's compaction differs from Kafka's:\n{}",
        differences.join("\n")
    );
}

#[test]
fn every_case_is_tested() {
    let mut found: Vec<String> = std::fs::read_dir(cases_dir())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().into_string().unwrap())
        .collect();
    found.sort();
    let mut listed: Vec<String> = CASES.iter().map(ToString::to_string).collect();
    listed.sort();
    assert_eq!(found, listed);
}
