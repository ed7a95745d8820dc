//! Regression: a log closed cleanly whose active segment was damaged afterwards (its last batch
//! torn). The open after a clean shutdown rescans nothing, and the log end offset (Kafka's
//! `readNextOffset`, from the last index entry) fell back to the segment's base offset: the
//! segment's whole batches were no longer served, and appends reused their offsets after the
//! torn bytes, where a later recovery would cut them off. Now such a segment is recovered on open.
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

fn read_all(log: &seglog_log::PartitionLog) -> Vec<String> {
    let mut out = Vec::new();
    let mut next = log.log_start_offset();
    while next < log.log_end_offset() {
        let fetch = log.read(next, 1 << 20, Isolation::LogEnd, true).unwrap();
        let mut bytes = Vec::new();
        fetch.read_into(&mut bytes).unwrap();
        assert!(!bytes.is_empty(), "nothing to read at {next}");
        for batch in batches(&bytes) {
            let Ok(batch) = batch else { break };
            for r in batch.decode().unwrap().to_records().unwrap() {
                if r.offset >= next {
                    assert_eq!(r.offset, next);
                    out.push(String::from_utf8(r.value.unwrap()).unwrap());
                    next += 1;
                }
            }
        }
    }
    out
}

#[test]
fn a_torn_tail_found_after_a_clean_shutdown_is_recovered_on_open() {
    let root = tempfile::tempdir().unwrap();
    let tp = TopicPartition::new("t", 0);
    let values: Vec<String> = (0..40).map(|o| format!("v{o}")).collect();
    {
        let (dir, _) = LogDir::open(RealFs, root.path(), options(false)).unwrap();
        let config = LogConfig::from_pairs([
            ("internal.segment.bytes", "400"),
            ("index.interval.bytes", "1"),
        ])
        .unwrap();
        let log = dir.create_log(&tp, Some(config)).unwrap();
        for chunk in values.chunks(4) {
            append(&log, chunk);
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
    let active = logs.last().unwrap();
    let base: i64 = active
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        base < 36,
        "the active segment must hold more than one batch"
    );
    // Tear the last batch (offsets 36..=39).
    let len = std::fs::metadata(active).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(active)
        .unwrap()
        .set_len(len - 5)
        .unwrap();

    let (dir, report) = LogDir::open(RealFs, root.path(), options(false)).unwrap();
    assert!(report.had_clean_shutdown);
    let log = dir.log(&tp).unwrap();
    assert_eq!(log.log_end_offset(), 36);
    assert_eq!(read_all(&log), values[..36]);
    assert_eq!(append(&log, &["after".to_owned()]), 36);
    drop(log);
    dir.close().unwrap();
    drop(dir);

    // A full recovery keeps the record appended after the damage.
    let (dir, _) = LogDir::open(RealFs, root.path(), options(true)).unwrap();
    let log = dir.log(&tp).unwrap();
    let mut want = values[..36].to_vec();
    want.push("after".to_owned());
    assert_eq!(read_all(&log), want);
    drop(log);
    dir.close().unwrap();
}
