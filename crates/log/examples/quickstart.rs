//! Quickstart: everything an embedder needs from `seglog-log` alone. Opens a log directory,
//! creates a partition, appends records built with the batch builder, reads them back as
//! records, looks one up by timestamp, and closes. It checks what it reads and exits non-zero
//! on any mismatch.
//!
//! ```text
//! cargo run -p seglog-log --example quickstart
//! ```

use std::error::Error;
use std::path::Path;

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, Header, NewRecord};
use seglog_log::{Isolation, ListOffset, LogDir, LogDirOptions, RealFs, TopicPartition};

const BATCHES: i64 = 3;
const PER_BATCH: i64 = 10;
const FIRST_TIMESTAMP: i64 = 1_700_000_000_000;

/// Record `i`'s timestamp: 10 ms apart.
fn timestamp(i: i64) -> i64 {
    FIRST_TIMESTAMP + 10 * i
}

fn expect(ok: bool, what: impl FnOnce() -> String) -> Result<(), Box<dyn Error>> {
    if ok { Ok(()) } else { Err(what().into()) }
}

fn run(root: &Path) -> Result<(), Box<dyn Error>> {
    let options = LogDirOptions::default();
    // Takes the directory's `.lock`, reads its checkpoints and loads its partitions.
    let (dir, _report) = LogDir::open(RealFs, root, options)?;
    let log = dir.create_log(&TopicPartition::new("quickstart", 0), None)?;

    // Producer batches (base offset 0 each); the log assigns the offsets.
    let mut builder = BatchBuilder::new();
    let mut batch = Vec::new();
    for b in 0..BATCHES {
        let keys: Vec<String> = (0..PER_BATCH)
            .map(|i| format!("key-{}", b * PER_BATCH + i))
            .collect();
        let values: Vec<String> = (0..PER_BATCH)
            .map(|i| format!("value-{}", b * PER_BATCH + i))
            .collect();
        let headers = [Header {
            key: b"batch",
            value: Some(b"quickstart"),
        }];
        let records = keys
            .iter()
            .zip(&values)
            .zip(0_i32..)
            .map(|((k, v), delta)| {
                let i = b * PER_BATCH + i64::from(delta);
                NewRecord::new(delta, timestamp(i), Some(k.as_bytes()), Some(v.as_bytes()))
                    .with_headers(&headers)
            });
        batch.clear();
        builder.build(
            &BatchOptions::new(0, Compression::Zstd),
            records,
            &mut batch,
        )?;
        let ack = log.append_durable(&mut batch)?;
        expect(ack.first_offset == b * PER_BATCH, || {
            format!("batch {b} starts at offset {}", ack.first_offset)
        })?;
    }

    // Reads return whole batches (starting at the one holding the offset), for a zero-copy
    // send; `records` decodes them into records.
    let end = log.log_end_offset();
    expect(end == BATCHES * PER_BATCH, || {
        format!("log end offset {end}")
    })?;
    let mut next = 0;
    let mut bytes = Vec::new();
    while next < end {
        let fetch = log.read(next, 1 << 20, Isolation::LogEnd, true)?;
        for record in fetch.records(&mut bytes)? {
            let record = record?;
            if record.offset < next {
                continue;
            }
            let i = record.offset;
            expect(i == next, || format!("offset {i} where {next} was due"))?;
            expect(record.timestamp == timestamp(i), || {
                format!("offset {i}: timestamp {}", record.timestamp)
            })?;
            expect(
                record.key.as_deref() == Some(format!("key-{i}").as_bytes()),
                || format!("offset {i}: key {:?}", record.key),
            )?;
            expect(
                record.value.as_deref() == Some(format!("value-{i}").as_bytes()),
                || format!("offset {i}: value {:?}", record.value),
            )?;
            expect(
                record.headers.len() == 1
                    && record.headers.first().is_some_and(|h| h.key == b"batch"),
                || format!("offset {i}: headers {:?}", record.headers),
            )?;
            next += 1;
        }
    }
    println!("read {next} records back");

    // Kafka's ListOffsets by time: the first record whose timestamp is at least the target.
    let found = log.offset_for_timestamp(ListOffset::Timestamp(timestamp(16) - 5))?;
    expect(found.map(|f| f.offset) == Some(16), || {
        format!("time lookup found {found:?}")
    })?;
    println!(
        "the first record at or after {} is offset 16",
        timestamp(16) - 5
    );

    // Flushes, writes the checkpoints and the clean-shutdown marker, releases the lock.
    drop(log);
    dir.close()?;
    Ok(())
}

fn main() -> Result<(), Box<dyn Error>> {
    let root = std::env::temp_dir().join(format!("seglog-quickstart-{}", std::process::id()));
    let result = run(&root);
    let _ = std::fs::remove_dir_all(&root);
    result
}
