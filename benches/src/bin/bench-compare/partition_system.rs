//! seglog's side of the partition-level workloads: sequential consumption (zero-copy and decoded),
//! `append_as_leader` through the partition log, and opening a log of many segments after a clean
//! and an unclean shutdown, as Kafka's harness does them with `UnifiedLog`.

#![allow(
    clippy::field_reassign_with_default,
    reason = "the options structs are becoming #[non_exhaustive]: a field is set on a default, never in a literal"
)]

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use seglog_log::record::Record;
use seglog_log::{Isolation, LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};

use crate::pipe_drain::Drain;
use crate::{
    FETCH_MIB_BYTES, Figure, Params, SHAPES, idempotent_batches, kafka_batches, log_append_bytes,
    measure, mib_per_s, ms, round_clock,
};

/// A fresh partition directory `<dir>/<name>/bench-0` (removed first).
fn fresh_dir(params: &Params, name: &str) -> Result<PathBuf> {
    let parent = params.dir.join(name);
    if parent.exists() {
        std::fs::remove_dir_all(&parent)?;
    }
    std::fs::create_dir_all(&parent)?;
    Ok(parent.join("bench-0"))
}

fn open(dir: &Path, config: LogConfig, options: LoadOptions) -> Result<PartitionLog> {
    let (log, _) = PartitionLog::open(RealFs, dir, config, options, Arc::new(SystemClock))
        .with_context(|| format!("opening {}", dir.display()))?;
    Ok(log)
}

/// The consume dataset: `dataset_mib` MiB of 1 KiB x 16 batches appended as a follower (offsets
/// kept), flushed, the high watermark at the end. Returns the log and the (constant) batch length.
fn consume_dataset(params: &Params) -> Result<(PartitionLog, u64)> {
    let shape = SHAPES[0];
    let batches = kafka_batches(shape, shape.batches_for(params.dataset_mib))?;
    let batch_len = batches.first().map_or(0, |(_, b)| b.len());
    ensure!(
        batches.iter().all(|(_, b)| b.len() == batch_len),
        "the dataset's batches differ in length"
    );
    let log = open(
        &fresh_dir(params, "consume")?,
        LogConfig::default(),
        LoadOptions::default(),
    )?;
    for (_, bytes) in &batches {
        log.append_as_follower(bytes)?;
    }
    log.flush()?;
    log.set_high_watermark(log.log_end_offset());
    Ok((log, batch_len as u64))
}

fn consume_sequential(params: &Params, log: &PartitionLog, batch_len: u64) -> Result<Figure> {
    let per = SHAPES[0].records_per_batch as i64;
    let end = log.log_end_offset();
    let size = log.size();
    let samples = measure(
        params,
        || {
            let drain = Drain::new(&params.dir)?;
            let clock = round_clock();
            let started = clock();
            let (mut offset, mut sent, mut whole) = (0_i64, 0_u64, 0_u64);
            while offset < end {
                let fetch = log.read(offset, FETCH_MIB_BYTES, Isolation::HighWatermark, true)?;
                // Every batch has the same length, so the next offset follows from the bytes sent
                // (a fetch may end in part of a batch, which the next one sends again, as Kafka's);
                // each fetch checks that its first batch starts where the last whole one ended.
                ensure!(
                    fetch.offset_metadata.message_offset == offset,
                    "fetch at {offset} started at {:?}",
                    fetch.offset_metadata
                );
                let n = fetch.copy_to(drain.fd())?;
                ensure!(
                    n == fetch.region.length && n >= batch_len,
                    "fetch at {offset}: {n} bytes sent"
                );
                sent += n;
                whole += n / batch_len * batch_len;
                offset += (n / batch_len) as i64 * per;
            }
            let (drained, elapsed) = drain.finish(&clock, started)?;
            ensure!(
                drained == sent && whole == size && offset == end,
                "sent {sent} (drained {drained}), {whole} of {size} bytes in whole batches, up to offset {offset} of {end}"
            );
            Ok(elapsed)
        },
        mib_per_s(size),
    )?;
    Ok(Figure {
        workload: "consume_sequential".to_owned(),
        unit: "MiB/s",
        samples,
        note: "PartitionLog::read of 1 MiB fetches from offset 0 to the end (the next from the last whole batch), each sent with FetchDataInfo::copy_to (sendfile) into a 1 MiB FIFO that a drainer process splices to /dev/null".to_owned(),
    })
}

fn consume_records(params: &Params, log: &PartitionLog) -> Result<Figure> {
    let end = log.log_end_offset();
    let size = log.size();
    let payload = SHAPES[0].payload_bytes(SHAPES[0].batches_for(params.dataset_mib));
    let mut buf = Vec::with_capacity(FETCH_MIB_BYTES as usize);
    // A diagnostic, not a bench-compare figure: records lent, not owned (docs/perf/consume.md).
    let borrowed = std::env::var_os("SEGLOG_BENCH_BORROWED_RECORDS").is_some_and(|v| v == "1");
    let samples = measure(
        params,
        || {
            let clock = round_clock();
            let started = clock();
            let (mut offset, mut values) = (0_i64, 0_u64);
            while offset < end {
                let fetch = log.read(offset, FETCH_MIB_BYTES, Isolation::HighWatermark, true)?;
                let mut each = |record: &Record| {
                    if record.offset != offset {
                        return ControlFlow::Break(format!("record {} at {offset}", record.offset));
                    }
                    values += record.key.as_ref().map_or(0, |k| k.len() as u64)
                        + record.value.as_ref().map_or(0, |v| v.len() as u64);
                    offset += 1;
                    ControlFlow::Continue(())
                };
                let failed = if borrowed {
                    fetch.for_each_record_ref(&mut buf, each)?
                } else {
                    fetch.for_each_record(&mut buf, |record| each(&record))?
                };
                if let Some(e) = failed {
                    bail!(e);
                }
            }
            let elapsed = clock().saturating_sub(started);
            ensure!(
                offset == end && values == payload,
                "decoded {offset} records of {end}, {values} value bytes of {payload}"
            );
            Ok(elapsed)
        },
        mib_per_s(size),
    )?;
    Ok(Figure {
        workload: "consume_records".to_owned(),
        unit: "MiB/s",
        samples,
        note: "PartitionLog::read of 1 MiB fetches, then FetchDataInfo::for_each_record (each batch decoded in place in the .log's mapping, CRC checked, every record's offset, key and value decoded and owned: a new buffer per key and value, as Kafka's consumer allocates)".to_owned(),
    })
}

fn log_append(params: &Params) -> Result<Figure> {
    let shape = SHAPES[0];
    let batches = idempotent_batches(shape, shape.batches_for(params.append_mib))?;
    let mut config = LogConfig::default();
    config.segment_bytes = log_append_bytes(params.append_mib);
    let per = shape.records_per_batch as i64;
    let samples = measure(
        params,
        || {
            let dir = fresh_dir(params, "log_append")?;
            let log = open(&dir, config.clone(), LoadOptions::default())?;
            let mut copies = batches.clone();
            let started = Instant::now();
            for (i, bytes) in copies.iter_mut().enumerate() {
                let info = log.append_as_leader(bytes)?;
                ensure!(
                    info.first_offset == i as i64 * per,
                    "batch {i} appended at {info:?}"
                );
            }
            let elapsed = started.elapsed();
            ensure!(
                log.log_end_offset() == batches.len() as i64 * per
                    && log.segment_count() >= 8
                    && log.producer_id_count() == 1,
                "log end {} in {} segments",
                log.log_end_offset(),
                log.segment_count()
            );
            log.close()?;
            drop(log);
            std::fs::remove_dir_all(params.dir.join("log_append"))?;
            Ok(elapsed)
        },
        mib_per_s(shape.payload_bytes(batches.len())),
    )?;
    Ok(Figure {
        workload: "log_append".to_owned(),
        unit: "MiB/s",
        samples,
        note: "PartitionLog::append_as_leader of idempotent 1 KiB x 16 batches (one producer): offsets assigned, batches validated, producer state, indexes, a roll every 1/8 of the data".to_owned(),
    })
}

/// `segments` segments of one 1 KiB x 16 batch each, closed cleanly.
fn open_dataset(params: &Params) -> Result<(PathBuf, i64)> {
    let shape = SHAPES[0];
    let segments = params.open_segments as usize;
    let batches = kafka_batches(shape, segments)?;
    let dir = fresh_dir(params, "open")?;
    let log = open(&dir, LogConfig::default(), LoadOptions::default())?;
    for (i, (_, bytes)) in batches.iter().enumerate() {
        log.append_as_follower(bytes)?;
        if i + 1 < segments {
            log.roll()?;
        }
    }
    log.close()?;
    Ok((dir, segments as i64 * shape.records_per_batch as i64))
}

fn open_figure(params: &Params, dir: &Path, end: i64, clean: bool) -> Result<Figure> {
    let segments = params.open_segments as usize;
    let per = SHAPES[0].records_per_batch as i64;
    let mut options = LoadOptions::default();
    options.had_clean_shutdown = clean;
    // An unclean shutdown with the recovery point halfway: the upper half is recovered.
    options.recovery_point = if clean {
        end
    } else {
        (segments / 2) as i64 * per
    };
    let samples = measure(
        params,
        || {
            let started = Instant::now();
            let (log, report) = PartitionLog::open(
                RealFs,
                dir,
                LogConfig::default(),
                options,
                Arc::new(SystemClock),
            )?;
            let elapsed = started.elapsed();
            let scanned_enough = if clean {
                report.segments_scanned == 0
            } else {
                report.segments_scanned >= segments - segments / 2
            };
            ensure!(
                log.log_end_offset() == end && log.segment_count() == segments && scanned_enough,
                "opened {} segments up to {} ({} scanned), expected {segments} up to {end}",
                log.segment_count(),
                log.log_end_offset(),
                report.segments_scanned
            );
            log.close()?;
            Ok(elapsed)
        },
        ms,
    )?;
    Ok(Figure {
        workload: format!("open_10k_{}", if clean { "clean" } else { "unclean" }),
        unit: "ms",
        samples,
        note: format!(
            "PartitionLog::open of {segments} segments {}",
            if clean {
                "after a clean shutdown"
            } else {
                "after an unclean shutdown, recovery point halfway (the upper half recovered)"
            }
        ),
    })
}

/// The `consume` group: `consume_sequential` and `consume_records` on one dataset.
pub(crate) fn run_consume(params: &Params) -> Result<Vec<Figure>> {
    let (log, batch_len) = consume_dataset(params)?;
    let figures = vec![
        consume_sequential(params, &log, batch_len)?,
        consume_records(params, &log)?,
    ];
    log.close()?;
    drop(log);
    std::fs::remove_dir_all(params.dir.join("consume"))?;
    Ok(figures)
}

/// The `log_append` group.
pub(crate) fn run_log_append(params: &Params) -> Result<Vec<Figure>> {
    Ok(vec![log_append(params)?])
}

/// The `open` group: `open_10k_clean` and `open_10k_unclean` on one dataset.
pub(crate) fn run_open(params: &Params) -> Result<Vec<Figure>> {
    let (dir, end) = open_dataset(params)?;
    let figures = vec![
        open_figure(params, &dir, end, true)?,
        open_figure(params, &dir, end, false)?,
    ];
    std::fs::remove_dir_all(params.dir.join("open"))?;
    Ok(figures)
}
