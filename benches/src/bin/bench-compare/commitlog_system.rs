//! The `commitlog` crate's side, on the workloads it supports: appends (with and without a flush every
//! MiB) and reads by offset. It has no timestamp index and no recovery that validates the log, so it is
//! not measured there. Each record is one commitlog message (its own offset and index entry); a batch is
//! one `MessageBuf` appended at once.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use commitlog::message::{MessageBuf, MessageSet};
use commitlog::{CommitLog, LogOptions, ReadLimit};

use crate::{
    FETCH_BYTES, FSYNC_EVERY, Figure, Params, SHAPES, Shape, measure, mib_per_s, random_ops,
};

/// The version this package locks (checked against Cargo.lock by the xtask's report).
pub(crate) const VERSION: &str = "0.2.0";

/// A fresh log in `dir` sized to hold `messages` in one segment, as seglog and Kafka hold their data.
fn fresh_log(dir: &Path, messages: usize) -> Result<CommitLog> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    let mut opts = LogOptions::new(dir);
    opts.segment_max_bytes(i32::MAX as usize)
        .index_max_items(messages + 1024)
        .message_max_bytes(4 << 20);
    Ok(CommitLog::new(opts)?)
}

fn buffers(shape: Shape, batches: usize) -> Result<Vec<MessageBuf>> {
    let value = vec![b'v'; shape.record_bytes];
    (0..batches)
        .map(|_| {
            let mut buf = MessageBuf::default();
            for _ in 0..shape.records_per_batch {
                buf.push(&value).map_err(|e| anyhow::anyhow!("{e:?}"))?;
            }
            Ok(buf)
        })
        .collect()
}

fn append_figure(params: &Params, shape: Shape, fsync: bool) -> Result<Figure> {
    let mib = if fsync {
        params.fsync_append_mib
    } else {
        params.append_mib
    };
    let count = shape.batches_for(mib);
    let mut bufs = buffers(shape, count)?;
    let dir = params.dir.join("append");
    let samples = measure(
        params,
        || {
            let mut log = fresh_log(&dir, count * shape.records_per_batch)?;
            let mut unsynced = 0_u64;
            let started = Instant::now();
            for buf in &mut bufs {
                log.append(buf)
                    .map_err(|e| anyhow::anyhow!("append: {e:?}"))?;
                unsynced += buf.bytes().len() as u64;
                if fsync && unsynced >= FSYNC_EVERY {
                    log.flush()?;
                    unsynced = 0;
                }
            }
            let elapsed = started.elapsed();
            let messages = (count * shape.records_per_batch) as u64;
            ensure!(
                log.next_offset() == messages,
                "appended up to {} of {messages} messages",
                log.next_offset()
            );
            drop(log);
            std::fs::remove_dir_all(&dir)?;
            Ok(elapsed)
        },
        mib_per_s(shape.payload_bytes(count)),
    )?;
    let suffix = if fsync { "_fsync_1m" } else { "" };
    Ok(Figure {
        workload: format!("append_{}{suffix}", shape.name),
        unit: "MiB/s",
        samples,
        note: "CommitLog::append of a MessageBuf per batch; flush() (segment + index) every MiB"
            .to_owned(),
    })
}

/// The `append` group: both shapes, without and with a flush every MiB.
pub(crate) fn run_append(params: &Params) -> Result<Vec<Figure>> {
    crate::append_group(params, append_figure)
}

/// The `segment` group: reads by offset on the dataset (commitlog has no recovery or lookups
/// to measure).
pub(crate) fn run_segment(params: &Params) -> Result<Vec<Figure>> {
    let mut figures = Vec::new();
    let shape = SHAPES[0];
    let count = shape.batches_for(params.dataset_mib);
    let messages = count * shape.records_per_batch;
    let dir = params.dir.join("dataset");
    let mut log = fresh_log(&dir, messages)?;
    for mut buf in buffers(shape, count)? {
        log.append(&mut buf)
            .map_err(|e| anyhow::anyhow!("append: {e:?}"))?;
    }
    log.flush()?;
    figures.push(Figure {
        workload: "read_by_offset".to_owned(),
        unit: "ns/op",
        samples: random_ops(params, params.reads, messages as u64, |target| {
            let read = log
                .read(target as u64, ReadLimit::max_bytes(FETCH_BYTES))
                .map_err(|e| anyhow::anyhow!("read {target}: {e:?}"))?;
            let first = read.iter().next().context("empty read")?;
            ensure!(
                first.offset() == target as u64,
                "read of {target} began at {}",
                first.offset()
            );
            Ok(read.bytes().len() as u64)
        })?,
        note: "CommitLog::read with a 17 KiB ReadLimit (per-message index, bytes copied)"
            .to_owned(),
    });
    drop(log);
    std::fs::remove_dir_all(&dir)?;
    Ok(figures)
}
