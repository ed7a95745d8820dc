//! The embedder's whole tour on `seglog_log` alone: open, append, read records, look offsets up
//! by time, retain, compact, close, and read the result through the read-only inspection API.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::PathBuf;

use seglog_log::inspect::LogDirView;
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, Header, NewRecord};
use seglog_log::{
    CleanupPolicy, Isolation, ListOffset, LogConfig, LogDir, LogDirOptions, RealFs, TopicPartition,
};

const T0: i64 = 1_700_000_000_000;

/// A directory of its own under the system's temporary directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let path = std::env::temp_dir().join(format!("seglog-tour-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        Scratch(path)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// One producer batch of `n` records keyed `key-{i % 4}`, 10 ms apart from record `first`.
fn batch(builder: &mut BatchBuilder, first: i64, n: i32, codec: Compression) -> Vec<u8> {
    let keys: Vec<String> = (0..n)
        .map(|i| format!("key-{}", (first + i64::from(i)) % 4))
        .collect();
    let values: Vec<Vec<u8>> = (0..n)
        .map(|i| format!("value-{}", first + i64::from(i)).into_bytes())
        .collect();
    let headers = [Header {
        key: b"source",
        value: Some(b"tour"),
    }];
    let records = (0..n).map(|i| {
        let at = usize::try_from(i).unwrap();
        NewRecord::new(
            i,
            T0 + 10 * (first + i64::from(i)),
            Some(keys[at].as_bytes()),
            Some(&values[at]),
        )
        .with_headers(&headers)
    });
    let mut out = Vec::new();
    builder
        .build(&BatchOptions::new(0, codec), records, &mut out)
        .unwrap();
    out
}

#[test]
fn open_append_read_look_up_retain_compact_close_inspect() {
    let root = Scratch::new("all");
    let config = LogConfig::default()
        .with_segment_bytes(1024) // many small segments
        .with_retention_ms(-1) // the records are from 2023: keep them by time
        .with_cleanup_policy(CleanupPolicy {
            delete: true,
            compact: true,
        })
        .with_min_cleanable_dirty_ratio(0.0)
        .with_file_delete_delay_ms(0);
    let options = LogDirOptions::default().with_recovery_threads(1);
    let (dir, report) = LogDir::open(RealFs, &root.0, options).unwrap();
    assert!(report.logs.is_empty());
    let tp = TopicPartition::new("tour", 0);
    let log = dir.create_log(&tp, Some(config)).unwrap();

    // Append 40 batches of 5 records; every codec this build has takes a turn.
    let codecs: Vec<Compression> = Compression::ALL
        .into_iter()
        .filter(|c| c.is_enabled())
        .collect();
    let mut builder = BatchBuilder::new();
    for b in 0..40 {
        let codec = codecs[b % codecs.len()];
        let first = i64::try_from(b).unwrap() * 5;
        let ack = log
            .append_durable(&mut batch(&mut builder, first, 5, codec))
            .unwrap();
        assert_eq!((ack.first_offset, ack.last_offset), (first, first + 4));
    }
    assert_eq!(log.log_end_offset(), 200);
    // What the replicas have: here, everything (a consumer reads below it).
    log.set_high_watermark(log.log_end_offset());
    assert!(
        log.segments().len() > 3,
        "{} segments",
        log.segments().len()
    );

    // Read records back, in order, from the record iterator over a read.
    let mut buf = Vec::new();
    let mut next = 0;
    while next < 200 {
        let fetch = log.read(next, 4096, Isolation::LogEnd, true).unwrap();
        for record in fetch.records(&mut buf).unwrap() {
            let record = record.unwrap();
            if record.offset < next {
                continue;
            }
            assert_eq!(record.offset, next);
            assert_eq!(record.timestamp, T0 + 10 * next);
            assert_eq!(
                record.key.as_deref(),
                Some(format!("key-{}", next % 4).as_bytes())
            );
            assert_eq!(
                record.value.as_deref(),
                Some(format!("value-{next}").as_bytes())
            );
            assert_eq!(record.headers.len(), 1);
            next += 1;
        }
    }

    // Offsets by time: Kafka's ListOffsets.
    let at = |target| log.offset_for_timestamp(target).unwrap().map(|t| t.offset);
    assert_eq!(at(ListOffset::Earliest), Some(0));
    assert_eq!(at(ListOffset::Latest), Some(200));
    assert_eq!(at(ListOffset::Timestamp(T0 + 10 * 123 - 3)), Some(123));
    assert_eq!(at(ListOffset::Timestamp(T0 + 10 * 500)), None);

    // Retain: move the log start offset, and let retention drop the segments below it.
    assert!(log.delete_records_before(60).unwrap());
    assert_eq!(log.log_start_offset(), 60);
    log.delete_old_segments().unwrap();
    let first_base = *log.segments().keys().next().unwrap();
    assert!(
        first_base > 0 && first_base <= 60,
        "first segment {first_base}"
    );
    assert_eq!(at(ListOffset::Earliest), Some(60));

    // Compact: only the latest record of each key stays below the active segment.
    let cleaned = dir.compact(&tp).unwrap().expect("the log exists");
    assert!(cleaned.end_offset > 60, "{cleaned:?}");
    let active = log.active_segment().base_offset();
    let mut kept = Vec::new();
    let mut offset = log.log_start_offset();
    while offset < active {
        let fetch = log.read(offset, 1 << 20, Isolation::LogEnd, true).unwrap();
        for record in fetch.records(&mut buf).unwrap() {
            let record = record.unwrap();
            if record.offset >= offset && record.offset < active {
                kept.push(record.offset);
            }
            offset = offset.max(record.offset + 1);
        }
    }
    assert!(
        kept.len() <= 4,
        "below the active segment {active}: {kept:?}"
    );

    // Close: flush, checkpoints, the clean-shutdown marker.
    drop(log);
    dir.close().unwrap();

    // Inspect read-only, without the lock: what the log holds now.
    let view = LogDirView::open(RealFs, &root.0).unwrap();
    let partition = view.partition(&root.0.join("tour-0")).unwrap();
    assert_eq!(partition.topic_partition(), &tp);
    assert_eq!(partition.log_start_offset(), 60);
    assert!(!partition.segments().is_empty());
    let check = view.check(|| {}).unwrap();
    assert!(check.is_clean(), "{check:?}");
}
