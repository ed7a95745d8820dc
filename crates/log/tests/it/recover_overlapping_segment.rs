//! Regression: a segment whose base offset lies inside the previous segment (here a copy of the
//! last segment's one-batch `.log`, named one offset higher). Recovery used to cut that segment
//! to empty and keep it, so the log end offset fell inside the previous segment: records there
//! could no longer be read and the next append reused their offsets. Now the overlapping segment
//! is deleted (with any later one), and the log keeps its valid prefix.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_fs::RealFs;
use seglog_log::{Isolation, LogConfig, LogDir, LogDirOptions, TopicPartition};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord, batches};

fn options(recover_all: bool) -> LogDirOptions {
    LogDirOptions::default()
        .with_recovery_threads(1)
        .with_recover_all(recover_all)
}

fn append(log: &seglog_log::PartitionLog, values: &[String]) -> i64 {
    let records = values
        .iter()
        .zip(0..)
        .map(|(v, i)| NewRecord::new(i, 1_700_000_000_000, None, Some(v.as_bytes())));
    let mut batch = Vec::new();
    BatchBuilder::new()
        .build(
            &BatchOptions::new(0, Compression::None),
            records,
            &mut batch,
        )
        .unwrap();
    log.append_as_leader(&mut batch).unwrap().first_offset
}

fn read_all(log: &seglog_log::PartitionLog) -> Vec<(i64, String)> {
    let mut out: Vec<(i64, String)> = Vec::new();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let fetch = log.read(next, 1 << 20, Isolation::LogEnd, true).unwrap();
        let mut bytes = Vec::new();
        fetch.read_into(&mut bytes).unwrap();
        assert!(!bytes.is_empty(), "nothing to read at {next}");
        for batch in batches(&bytes) {
            for r in batch.unwrap().decode().unwrap().to_records().unwrap() {
                if r.offset >= next {
                    out.push((r.offset, String::from_utf8(r.value.unwrap()).unwrap()));
                    next = r.offset + 1;
                }
            }
        }
    }
    out
}

#[test]
fn a_segment_overlapping_its_predecessor_is_dropped_and_the_log_end_stays() {
    let root = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let written: Vec<(i64, String)> = (0..40).map(|o| (o, format!("v{o}"))).collect();
    {
        let (dir, _) = LogDir::open(RealFs, root.path(), options(false)).unwrap();
        let config = LogConfig::from_pairs([("internal.segment.bytes", "300")]).unwrap();
        let log = dir.create_log(&tp, Some(config)).unwrap();
        for chunk in written.chunks(4) {
            let values: Vec<String> = chunk.iter().map(|(_, v)| v.clone()).collect();
            append(&log, &values);
        }
        drop(log);
        dir.close().unwrap();
    }
    let partition = root.path().join("t-0");
    let mut logs: Vec<_> = std::fs::read_dir(&partition)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let last = logs.last().unwrap().clone();
    let base: i64 = last.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    assert!(base < 39, "the last segment must hold more than one offset");
    let overlap = partition.join(format!("{:020}.log", base + 1));
    std::fs::copy(&last, &overlap).unwrap();

    let (dir, report) = LogDir::open(RealFs, root.path(), options(true)).unwrap();
    let log = dir.log(&tp).unwrap();
    assert_eq!(log.log_end_offset(), 40);
    assert_eq!(read_all(&log), written);
    assert_eq!(append(&log, &["next".to_owned()]), 40);
    let load = &report.logs.iter().find(|(t, _)| **t == tp).unwrap().1;
    assert_eq!(load.deleted_after_corruption, vec![base + 1]);
    assert!(!overlap.exists());
    drop(log);
    dir.close().unwrap();
}
