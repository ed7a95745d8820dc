//! seglog's side: `LogSegment` append (with and without an fsync every MiB), recovery, offset index
//! lookups, reads by offset and lookups by timestamp on one segment, as Kafka's harness does them.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use seglog_fs::RealFs;
use seglog_mmap_index::OffsetIndex;
use seglog_segment::{LogSegment, SegmentConfig};

use crate::{
    BASE_TIMESTAMP, FETCH_BYTES, FSYNC_EVERY, Figure, Params, SHAPES, Shape, kafka_batches,
    measure, mib_per_s, random_ops,
};

/// Kafka's defaults: `index.interval.bytes` 4096, `segment.index.bytes` 10 MiB.
fn config() -> SegmentConfig {
    SegmentConfig::default()
}

/// A new, empty segment at offset 0 in a fresh `dir`, its indexes opened (outside any timing).
fn fresh_segment(dir: &Path) -> Result<LogSegment> {
    if dir.exists() {
        std::fs::remove_dir_all(dir).with_context(|| format!("removing {}", dir.display()))?;
    }
    std::fs::create_dir_all(dir)?;
    let seg = LogSegment::open(RealFs, dir, 0, config(), false, "", 0)?;
    seg.index_entries()?;
    Ok(seg)
}

fn append_figure(params: &Params, shape: Shape, fsync: bool) -> Result<Figure> {
    let mib = if fsync {
        params.fsync_append_mib
    } else {
        params.append_mib
    };
    let batches = kafka_batches(shape, shape.batches_for(mib))?;
    let dir = params.dir.join("append");
    let samples = measure(
        params,
        || {
            let seg = fresh_segment(&dir)?;
            let mut unsynced = 0_u64;
            let started = Instant::now();
            for (last, bytes) in &batches {
                seg.append(*last, bytes)?;
                unsynced += bytes.len() as u64;
                if fsync && unsynced >= FSYNC_EVERY {
                    // What seglog's partition log does for the active segment (`flush_up_to`): its
                    // data made durable; its indexes are rebuilt by recovery after a crash.
                    seg.flush_data()?;
                    unsynced = 0;
                }
            }
            let elapsed = started.elapsed();
            let appended: u64 = batches.iter().map(|(_, b)| b.len() as u64).sum();
            ensure!(
                seg.size() == appended,
                "the segment holds {} of {appended} bytes",
                seg.size()
            );
            seg.delete()?;
            Ok(elapsed)
        },
        mib_per_s(shape.payload_bytes(batches.len())),
    )?;
    let suffix = if fsync { "_fsync_1m" } else { "" };
    Ok(Figure {
        workload: format!("append_{}{suffix}", shape.name),
        unit: "MiB/s",
        samples,
        note: "LogSegment::append of prebuilt batches; flush_data() (fdatasync of the .log, as the log does for the active segment) every MiB"
            .to_owned(),
    })
}

/// Appends `dataset_mib` MiB of 1 KiB records in batches of 16 and makes it durable, untimed.
fn dataset(params: &Params) -> Result<(LogSegment, i64)> {
    let shape = SHAPES[0];
    let batches = kafka_batches(shape, shape.batches_for(params.dataset_mib))?;
    let seg = fresh_segment(&params.dir.join("dataset"))?;
    for (last, bytes) in &batches {
        seg.append(*last, bytes)?;
    }
    seg.flush()?;
    let next_offset = batches.last().map_or(0, |(last, _)| last + 1);
    Ok((seg, next_offset))
}

/// The `append` group: both page-cache shapes, then both with an fsync every MiB.
pub(crate) fn run_append(params: &Params) -> Result<Vec<Figure>> {
    crate::append_group(params, append_figure)
}

/// The `segment` group: recovery of the dataset segment, then the lookups and reads on it.
pub(crate) fn run_segment(params: &Params) -> Result<Vec<Figure>> {
    let mut figures = Vec::new();
    let (seg, next_offset) = dataset(params)?;
    let size = seg.size();
    figures.push(Figure {
        workload: "recovery".to_owned(),
        unit: "MiB/s",
        samples: measure(
            params,
            || {
                let started = Instant::now();
                let report = seg.recover()?;
                let elapsed = started.elapsed();
                ensure!(report.bytes_truncated == 0, "recovery truncated {report:?}");
                Ok(elapsed)
            },
            mib_per_s(size),
        )?,
        note: "LogSegment::recover: CRC of every batch, both indexes rebuilt".to_owned(),
    });
    // Recovery trimmed the offset index to its entries: open it as a reader would.
    let index = OffsetIndex::options(seg.offset_index_path(), 0)
        .read_only()
        .open()?;
    let reader = index.reader();
    figures.push(Figure {
        workload: "index_lookup".to_owned(),
        unit: "ns/op",
        samples: random_ops(params, params.lookups, next_offset as u64, |target| {
            let found = reader.lookup(target)?;
            ensure!(
                found.offset <= target,
                "index floor {found:?} above {target}"
            );
            Ok(u64::from(found.position))
        })?,
        note: format!(
            "OffsetIndex lookup of a random offset, {} entries",
            index.entries()
        ),
    });
    let mut buf = Vec::with_capacity(FETCH_BYTES);
    figures.push(Figure {
        workload: "read_by_offset".to_owned(),
        unit: "ns/op",
        samples: random_ops(params, params.reads, next_offset as u64, |target| {
            let Some(fetch) = seg.read(target, FETCH_BYTES as i64, Some(size), true)? else {
                bail!("offset {target} not found");
            };
            seg.read_region(fetch.region, &mut buf)?;
            ensure!(
                fetch.offset_metadata.message_offset <= target && buf.len() >= 61,
                "read of {target} returned {fetch:?}"
            );
            Ok(buf.len() as u64)
        })?,
        note: "LogSegment::read (index + batch header walk) and a copy of the 17 KiB region"
            .to_owned(),
    });
    figures.push(Figure {
        workload: "lookup_by_timestamp".to_owned(),
        unit: "ns/op",
        samples: random_ops(params, params.reads, next_offset as u64, |target| {
            let found = seg
                .find_offset_by_timestamp(BASE_TIMESTAMP + target, 0)?
                .context("timestamp not found")?;
            ensure!(
                found.offset == target,
                "timestamp of {target} found {found:?}"
            );
            Ok(found.offset as u64)
        })?,
        note: "LogSegment::find_offset_by_timestamp: time index, offset index, record scan"
            .to_owned(),
    });
    drop(index);
    seg.delete()?;
    Ok(figures)
}
