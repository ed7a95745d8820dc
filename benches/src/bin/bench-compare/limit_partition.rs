//! The limit of the partition-level workloads: `sendfile` of the dataset's file in 1 MiB pieces into
//! the same drained FIFO (`consume_sequential`); the CRC-32C (the fastest at hand, which seglog
//! uses too) and a minimal record decode of batches already in memory (`consume_records`);
//! `write_all` of the batch bytes (`log_append`).

use std::fs::File;
use std::io::Write;
use std::os::fd::AsFd;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};

use crate::pipe_drain::Drain;
use crate::{
    FETCH_MIB_BYTES, Figure, Params, SHAPES, idempotent_batches, kafka_batches, measure, mib_per_s,
    round_clock,
};

fn consume_sequential(params: &Params, bytes: &[Vec<u8>]) -> Result<Figure> {
    let path = params.dir.join("consume.log");
    {
        let mut file = File::create(&path)?;
        for b in bytes {
            file.write_all(b)?;
        }
        file.sync_data()?;
    }
    let size = std::fs::metadata(&path)?.len();
    let batch_len = bytes.first().map_or(1, |b| b.len() as u64);
    ensure!(
        bytes.iter().all(|b| b.len() as u64 == batch_len),
        "the dataset's batches differ in length"
    );
    let file = File::open(&path)?;
    let samples = measure(
        params,
        || {
            let drain = Drain::new(&params.dir)?;
            let clock = round_clock();
            let started = clock();
            let (mut position, mut sent) = (0_u64, 0_u64);
            while position < size {
                // One fetch: the 1 MiB from `position`, sent whole (sendfile into a pipe returns
                // at most what the pipe holds), as the systems' copy_to sends their regions.
                let want = (size - position).min(u64::from(FETCH_MIB_BYTES));
                let (mut at, end) = (position, position + want);
                while at < end {
                    let left = (end - at) as usize;
                    let n = rustix::fs::sendfile(drain.fd(), file.as_fd(), Some(&mut at), left)
                        .context("sendfile")?;
                    ensure!(n > 0, "sendfile sent nothing at {at}");
                }
                sent += want;
                ensure!(want >= batch_len, "a fetch of {want} bytes at {position}");
                // The same fetches as the systems': the next starts after the last whole batch.
                position += want / batch_len * batch_len;
            }
            let (drained, elapsed) = drain.finish(&clock, started)?;
            ensure!(
                drained == sent && position == size,
                "drained {drained} of {sent} bytes sent, up to {position} of {size}"
            );
            Ok(elapsed)
        },
        mib_per_s(size),
    )?;
    drop(file);
    std::fs::remove_file(&path)?;
    Ok(Figure {
        workload: "consume_sequential".to_owned(),
        unit: "MiB/s",
        samples,
        note: "sendfile of the dataset's .log in 1 MiB pieces (the next from the last whole batch) into a 1 MiB FIFO that a drainer process splices to /dev/null"
            .to_owned(),
    })
}

/// Reads a zigzag varint at `*at`.
fn varint(bytes: &[u8], at: &mut usize) -> Result<i64> {
    let mut value = 0_u64;
    for shift in (0..64).step_by(7) {
        let Some(&b) = bytes.get(*at) else {
            bail!("varint past the end at {at}");
        };
        *at += 1;
        value |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Ok((value >> 1) as i64 ^ -((value & 1) as i64));
        }
    }
    bail!("varint too long at {at}")
}

/// The records of one uncompressed v2 batch after its CRC is checked: (records, key and value bytes),
/// offsets checked against `next`. With `owned`, each key and value is also copied into a new
/// buffer, dropped at once (a diagnostic, docs/perf/consume.md section 9).
fn decode_batch(batch: &[u8], next: &mut i64, owned: bool) -> Result<u64> {
    let field = |at: usize, len: usize| batch.get(at..at + len).context("short batch header");
    let base = i64::from_be_bytes(field(0, 8)?.try_into()?);
    let crc = u32::from_be_bytes(field(17, 4)?.try_into()?);
    let body = batch.get(21..).context("short batch")?;
    ensure!(
        crc_fast::crc32_iscsi(body) == crc,
        "CRC mismatch in batch {base}"
    );
    let count = i32::from_be_bytes(field(57, 4)?.try_into()?);
    let mut at = 61;
    let mut payload = 0_u64;
    for _ in 0..count {
        let _length = varint(batch, &mut at)?;
        at += 1; // attributes
        let _timestamp_delta = varint(batch, &mut at)?;
        let offset = base + varint(batch, &mut at)?;
        ensure!(offset == *next, "record {offset} at {next}");
        *next += 1;
        for _ in 0..2 {
            let len = varint(batch, &mut at)?;
            if len > 0 {
                let part = batch.get(at..at + len as usize).context("short record")?;
                payload += if owned {
                    std::hint::black_box(part.to_vec()).len() as u64
                } else {
                    part.len() as u64
                };
                at += len as usize;
            }
        }
        ensure!(varint(batch, &mut at)? == 0, "headers in batch {base}");
    }
    Ok(payload)
}

fn consume_records(params: &Params, bytes: &[Vec<u8>], end: i64) -> Result<Figure> {
    let size: u64 = bytes.iter().map(|b| b.len() as u64).sum();
    let payload = SHAPES[0].payload_bytes(bytes.len());
    // The batches in one buffer, as seglog reads them from one mapping: 65,536 separate heap
    // buffers made the limit's CRC 1.4x slower than seglog's over the same bytes.
    let whole = bytes.concat();
    let mut ranges = Vec::with_capacity(bytes.len());
    let mut at = 0;
    for b in bytes {
        ranges.push(at..at + b.len());
        at += b.len();
    }
    // A diagnostic, not a bench-compare figure: the limit's work plus what owned records add.
    let owned = std::env::var_os("SEGLOG_BENCH_LIMIT_OWNED").is_some_and(|v| v == "1");
    let samples = measure(
        params,
        || {
            let clock = round_clock();
            let started = clock();
            let (mut next, mut values) = (0_i64, 0_u64);
            for range in &ranges {
                let batch = whole
                    .get(range.clone())
                    .context("a batch past the buffer")?;
                values += decode_batch(batch, &mut next, owned)?;
            }
            let elapsed = clock().saturating_sub(started);
            ensure!(
                next == end && values == payload,
                "decoded {next} records of {end}, {values} value bytes of {payload}"
            );
            Ok(elapsed)
        },
        mib_per_s(size),
    )?;
    Ok(Figure {
        workload: "consume_records".to_owned(),
        unit: "MiB/s",
        samples,
        note: "CRC-32C (crc-fast, the CRC seglog uses) and a minimal decode (offset, key, value borrowed) of the dataset's batches, already in memory, in one buffer".to_owned(),
    })
}

fn log_append(params: &Params) -> Result<Figure> {
    let shape = SHAPES[0];
    let batches = idempotent_batches(shape, shape.batches_for(params.append_mib))?;
    let path = params.dir.join("log_append.log");
    let total: u64 = batches.iter().map(|b| b.len() as u64).sum();
    let samples = measure(
        params,
        || {
            let _ = std::fs::remove_file(&path);
            let mut file = File::create(&path)?;
            let started = Instant::now();
            for bytes in &batches {
                file.write_all(bytes)?;
            }
            let elapsed = started.elapsed();
            ensure!(file.metadata()?.len() == total, "short write");
            drop(file);
            std::fs::remove_file(&path)?;
            Ok(elapsed)
        },
        mib_per_s(shape.payload_bytes(batches.len())),
    )?;
    Ok(Figure {
        workload: "log_append".to_owned(),
        unit: "MiB/s",
        samples,
        note: "write_all of the producer's batch bytes".to_owned(),
    })
}

/// The `consume` group: `consume_sequential` and `consume_records` on one dataset.
pub(crate) fn run_consume(params: &Params) -> Result<Vec<Figure>> {
    let shape = SHAPES[0];
    let batches = kafka_batches(shape, shape.batches_for(params.dataset_mib))?;
    let end = batches.last().map_or(0, |(last, _)| last + 1);
    let bytes: Vec<Vec<u8>> = batches.into_iter().map(|(_, b)| b).collect();
    Ok(vec![
        consume_sequential(params, &bytes)?,
        consume_records(params, &bytes, end)?,
    ])
}

/// The `log_append` group.
pub(crate) fn run_log_append(params: &Params) -> Result<Vec<Figure>> {
    Ok(vec![log_append(params)?])
}
