//! The scale log: `mib` MiB of 1 KiB x 16 batches appended as a leader to a fresh partition
//! (`scale_append`, one pass), then consumed whole in 1 MiB fetches sent zero-copy into a pipe
//! (`scale_consume_sequential`) and read at random offsets (`scale_read_random`). Each read checks
//! its answer. The log is as big as the size asks, so from some size on it no longer fits in the
//! page cache: that is the point.

#![allow(
    clippy::field_reassign_with_default,
    reason = "the options structs are becoming #[non_exhaustive]: a field is set on a default, never in a literal"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, ensure};
use seglog_log::record::batches;
use seglog_log::{Isolation, LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};

use crate::pipe_drain::Drain;
use crate::round_clock;
use crate::scale_params::{ScaleParams, segment_bytes};
use crate::{FETCH_BYTES, FETCH_MIB_BYTES, Figure, Rng, SHAPES, kafka_batches, ns_per_op};

const MIB: f64 = 1024.0 * 1024.0;
/// Batches copied per timed chunk of the append (16 MiB of values).
const CHUNK: usize = 1024;

fn samples_of(
    samples: usize,
    mut round: impl FnMut() -> Result<Duration>,
    convert: impl Fn(Duration) -> f64,
) -> Result<Vec<f64>> {
    (0..samples).map(|_| round().map(&convert)).collect()
}

pub(crate) fn run(p: &ScaleParams) -> Result<Vec<Figure>> {
    let shape = SHAPES[0];
    let dir = p.dir.join("scale-log").join("bench-0");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    let mut config = LogConfig::default();
    config.segment_bytes = segment_bytes(p.mib);
    let (log, _) = PartitionLog::open(
        RealFs,
        &dir,
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .with_context(|| format!("opening {}", dir.display()))?;
    // A producer's batch (base offset 0, no producer id), copied CHUNK times outside the timing:
    // append_as_leader assigns offsets in place.
    let (_, template) = kafka_batches(shape, 1)?
        .pop()
        .context("no template batch")?;
    let batch_len = template.len() as u64;
    let count = shape.batches_for(p.mib);
    let per = shape.records_per_batch as i64;
    let mut chunk: Vec<Vec<u8>> = vec![template.clone(); CHUNK.min(count)];
    let mut appended = 0_usize;
    let mut elapsed = Duration::ZERO;
    while appended < count {
        let n = CHUNK.min(count - appended);
        for batch in chunk.iter_mut().take(n) {
            batch.copy_from_slice(&template);
        }
        let started = Instant::now();
        for (i, batch) in chunk.iter_mut().take(n).enumerate() {
            let info = log.append_as_leader(batch)?;
            let at = (appended + i) as i64 * per;
            ensure!(
                info.first_offset == at,
                "batch appended at {info:?}, not {at}"
            );
        }
        elapsed += started.elapsed();
        appended += n;
    }
    let end = log.log_end_offset();
    let size = log.size();
    ensure!(
        end == count as i64 * per && size == count as u64 * batch_len,
        "log end {end}, {size} bytes after {count} batches"
    );
    log.flush()?;
    log.set_high_watermark(end);
    let segments = log.segment_count();
    let payload = shape.payload_bytes(count) as f64;
    let mut figures = vec![Figure {
        workload: "scale_append".to_owned(),
        unit: "MiB/s",
        samples: vec![payload / MIB / elapsed.as_secs_f64()],
        note: format!(
            "PartitionLog::append_as_leader of {count} batches of 1 KiB x 16 (no producer id) into {segments} segments of at most {} MiB, page cache (flushed after the timing)",
            segment_bytes(p.mib) >> 20
        ),
    }];
    figures.push(Figure {
        workload: "scale_consume_sequential".to_owned(),
        unit: "MiB/s",
        samples: samples_of(
            p.samples,
            || consume(&p.dir, &log, batch_len, per, end, size),
            |d| size as f64 / MIB / d.as_secs_f64(),
        )?,
        note: "PartitionLog::read of 1 MiB fetches from offset 0 to the end, each sent with copy_to (sendfile) into a 1 MiB FIFO that a drainer process splices to /dev/null (as consume_sequential); straight after the append, so what the page cache still holds is read from memory".to_owned(),
    });
    figures.push(read_random(p, &log, end)?);
    log.close()?;
    drop(log);
    std::fs::remove_dir_all(p.dir.join("scale-log"))?;
    Ok(figures)
}

/// `reads` random reads by offset a sample, each checked to start with the batch holding it.
fn read_random(p: &ScaleParams, log: &PartitionLog, end: i64) -> Result<Figure> {
    let mut rng = Rng::new();
    let mut buf = Vec::with_capacity(FETCH_BYTES);
    Ok(Figure {
        workload: "scale_read_random".to_owned(),
        unit: "ns/op",
        samples: samples_of(
            p.samples,
            || {
                let started = Instant::now();
                for _ in 0..p.reads {
                    let target = rng.below(end as u64) as i64;
                    let fetch =
                        log.read(target, FETCH_BYTES as u32, Isolation::HighWatermark, true)?;
                    fetch.read_into(&mut buf)?;
                    let first = batches(&buf).next().context("empty read")??;
                    ensure!(
                        first.offset_field() <= target && first.last_offset()? >= target,
                        "read of {target} began with a batch at {}",
                        first.offset_field()
                    );
                }
                Ok(started.elapsed())
            },
            ns_per_op(p.reads),
        )?,
        note: format!(
            "PartitionLog::read of 17 KiB at a random offset, read_into, its first batch checked to hold the offset; wall time per read over {} reads",
            p.reads
        ),
    })
}

/// One whole pass from offset 0 (the next fetch from the last whole batch, every batch the same
/// length), checked: every byte of the log sent and drained.
fn consume(
    dir: &Path,
    log: &PartitionLog,
    batch_len: u64,
    per: i64,
    end: i64,
    size: u64,
) -> Result<Duration> {
    let drain = Drain::new(dir)?;
    let clock = round_clock();
    let started = clock();
    let (mut offset, mut whole) = (0_i64, 0_u64);
    while offset < end {
        let fetch = log.read(offset, FETCH_MIB_BYTES, Isolation::HighWatermark, true)?;
        ensure!(
            fetch.offset_metadata.message_offset == offset,
            "fetch at {offset} started at {:?}",
            fetch.offset_metadata
        );
        let n = fetch.copy_to(drain.fd())?;
        ensure!(n >= batch_len, "fetch at {offset}: {n} bytes sent");
        whole += n / batch_len * batch_len;
        offset += (n / batch_len) as i64 * per;
    }
    let (drained, elapsed) = drain.finish(&clock, started)?;
    ensure!(
        whole == size && offset == end && drained >= whole,
        "{whole} of {size} bytes in whole batches ({drained} drained), up to offset {offset} of {end}"
    );
    Ok(elapsed)
}
