//! The hardware limit: what the same work costs with nothing but the system calls and an in-memory
//! search. Appends are a plain `write_all` loop of the exact bytes seglog appends (plus `sync_data`
//! every MiB); lookups are a `partition_point` over an in-memory array of the index entries; a read is
//! that search plus one `pread` of the fetch size; a timestamp lookup is the search over the batches'
//! largest timestamps plus one `pread` of the batch header found; recovery's floor is one sequential `read`
//! pass that checks every batch's CRC-32C, the least any recovery of v2 batches must do.

use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result, ensure};

use crate::{
    BASE_TIMESTAMP, FETCH_BYTES, FSYNC_EVERY, Figure, Params, SHAPES, Shape, kafka_batches,
    measure, mib_per_s, random_ops,
};

fn append_figure(params: &Params, shape: Shape, fsync: bool) -> Result<Figure> {
    let mib = if fsync {
        params.fsync_append_mib
    } else {
        params.append_mib
    };
    let batches = kafka_batches(shape, shape.batches_for(mib))?;
    let path = params.dir.join("append.log");
    let samples = measure(
        params,
        || {
            let _ = std::fs::remove_file(&path);
            let mut file =
                File::create(&path).with_context(|| format!("creating {}", path.display()))?;
            let mut unsynced = 0_u64;
            let started = Instant::now();
            for (_, bytes) in &batches {
                file.write_all(bytes)?;
                unsynced += bytes.len() as u64;
                if fsync && unsynced >= FSYNC_EVERY {
                    file.sync_data()?;
                    unsynced = 0;
                }
            }
            let elapsed = started.elapsed();
            let written: u64 = batches.iter().map(|(_, b)| b.len() as u64).sum();
            ensure!(
                file.metadata()?.len() == written,
                "the file holds {} of {written} bytes",
                file.metadata()?.len()
            );
            drop(file);
            std::fs::remove_file(&path)?;
            Ok(elapsed)
        },
        mib_per_s(shape.payload_bytes(batches.len())),
    )?;
    let suffix = if fsync { "_fsync_1m" } else { "" };
    Ok(Figure {
        workload: format!("append_{}{suffix}", shape.name),
        unit: "MiB/s",
        samples,
        note: "write_all of seglog's batch bytes; sync_data every MiB".to_owned(),
    })
}

/// One batch of the dataset: its last offset, its largest timestamp and where it starts.
struct Entry {
    last_offset: i64,
    max_timestamp: i64,
    position: u64,
}

/// The dataset written with `write_all` (and made durable, untimed), with an entry per batch.
fn dataset(params: &Params, shape: Shape) -> Result<(PathBuf, Vec<Entry>, u64, i64)> {
    let batches = kafka_batches(shape, shape.batches_for(params.dataset_mib))?;
    let path = params.dir.join("dataset.log");
    let mut entries = Vec::with_capacity(batches.len());
    {
        let mut file = File::create(&path)?;
        let mut position = 0_u64;
        for (last, bytes) in &batches {
            entries.push(Entry {
                last_offset: *last,
                max_timestamp: BASE_TIMESTAMP + last,
                position,
            });
            file.write_all(bytes)?;
            position += bytes.len() as u64;
        }
        file.sync_data()?;
    }
    let size = std::fs::metadata(&path)?.len();
    let next_offset = batches.last().map_or(0, |(last, _)| last + 1);
    Ok((path, entries, size, next_offset))
}

/// The `append` group: both page-cache shapes, then both with a `sync_data` every MiB.
pub(crate) fn run_append(params: &Params) -> Result<Vec<Figure>> {
    crate::append_group(params, append_figure)
}

/// The `segment` group: recovery's read-and-CRC pass over the dataset, then the lookups and reads on it.
pub(crate) fn run_segment(params: &Params) -> Result<Vec<Figure>> {
    let mut figures = Vec::new();
    let shape = SHAPES[0];
    let (path, entries, size, next_offset) = dataset(params, shape)?;
    figures.push(Figure {
        workload: "recovery".to_owned(),
        unit: "MiB/s",
        samples: measure(
            params,
            || {
                let started = Instant::now();
                let checked = read_and_check(&path)?;
                let elapsed = started.elapsed();
                ensure!(checked == size, "checked {checked} of {size} bytes");
                Ok(elapsed)
            },
            mib_per_s(size),
        )?,
        note: "one sequential read pass in 256 KiB chunks and the CRC-32C of every batch (no record decode, no index)".to_owned(),
    });
    // An index entry for every batch (each is larger than index.interval.bytes), as relative offset
    // and position, the way the .index holds them.
    let index: Vec<(u32, u32)> = entries
        .iter()
        .map(|e| {
            (
                (e.last_offset + 1 - shape.records_per_batch as i64) as u32,
                e.position as u32,
            )
        })
        .collect();
    figures.push(Figure {
        workload: "index_lookup".to_owned(),
        unit: "ns/op",
        samples: random_ops(params, params.lookups, next_offset as u64, |target| {
            let at = index.partition_point(|e| i64::from(e.0) <= target);
            let (offset, position) = index.get(at.wrapping_sub(1)).copied().unwrap_or((0, 0));
            ensure!(i64::from(offset) <= target, "floor above the target");
            Ok(u64::from(position))
        })?,
        note: format!(
            "partition_point over an in-memory array of {} entries",
            index.len()
        ),
    });
    let file = File::open(&path)?;
    let mut buf = vec![0_u8; FETCH_BYTES];
    figures.push(Figure {
        workload: "read_by_offset".to_owned(),
        unit: "ns/op",
        samples: random_ops(params, params.reads, next_offset as u64, |target| {
            let at = entries.partition_point(|e| e.last_offset < target);
            let entry = entries.get(at).context("offset past the end")?;
            let n = file.read_at(&mut buf, entry.position)?;
            ensure!(n > 0, "empty read");
            Ok(n as u64)
        })?,
        note: "partition_point over in-memory batch positions, then one pread of 17 KiB".to_owned(),
    });
    let mut header = [0_u8; 61];
    figures.push(Figure {
        workload: "lookup_by_timestamp".to_owned(),
        unit: "ns/op",
        samples: random_ops(params, params.reads, next_offset as u64, |target| {
            let ts = BASE_TIMESTAMP + target;
            let at = entries.partition_point(|e| e.max_timestamp < ts);
            let entry = entries.get(at).context("timestamp past the end")?;
            // The batch found is read, as a lookup must to find the record's offset in it.
            file.read_exact_at(&mut header, entry.position)?;
            let base = i64::from_be_bytes(header[..8].try_into()?);
            ensure!(
                base <= target && target <= entry.last_offset,
                "timestamp of {target} found batch {base}"
            );
            Ok(base as u64)
        })?,
        note: "partition_point over in-memory batch max timestamps, then one pread of the batch header found".to_owned(),
    });
    drop(file);
    std::fs::remove_file(&path)?;
    Ok(figures)
}

/// Reads the segment once in 256 KiB chunks (recovery's chunk) and checks the CRC-32C of every
/// batch in it, with the CRC seglog uses; returns the bytes checked. A batch that crosses a chunk
/// is moved to the front of the buffer, as a recovery's reader keeps it.
pub(crate) fn read_and_check(path: &std::path::Path) -> Result<u64> {
    const CHUNK: usize = 256 << 10;
    let mut file = File::open(path)?;
    let mut buf = vec![0_u8; CHUNK];
    let (mut filled, mut checked) = (0_usize, 0_u64);
    loop {
        if filled == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        let n = file.read(buf.get_mut(filled..).context("the read buffer")?)?;
        filled += n;
        let mut at = 0;
        while let Some(batch) = buf.get(at..filled).filter(|rest| rest.len() >= 61) {
            let field = |from: usize| -> Result<u32> {
                let bytes = batch.get(from..from + 4).context("a batch header")?;
                Ok(u32::from_be_bytes(bytes.try_into()?))
            };
            let len = 12 + field(8)? as usize;
            let Some(body) = batch.get(21..len) else {
                break;
            };
            ensure!(
                seglog_record_format::crc32c(body) == field(17)?,
                "CRC of the batch at {checked}"
            );
            at += len;
            checked += len as u64;
        }
        buf.copy_within(at..filled, 0);
        filled -= at;
        if n == 0 {
            ensure!(filled == 0, "{filled} bytes after the last batch");
            return Ok(checked);
        }
    }
}
