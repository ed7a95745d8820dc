//! `seglog dump` of `.index` and `.timeindex` files: each entry, checked against the `.log`
//! beside it as Kafka's tool checks it.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use seglog_log::RealFs;
use seglog_log::inspect::{Scan, SegmentLog, open_offset_index, open_time_index};

use super::java_path::{absolute, file_string};
use super::reports::OverMaxMessageSize;
use super::{DumpOptions, Reports, base_offset_of, first_batch_at, max_record_timestamp};
use crate::common::{Outcome, lib};

/// The `.log` beside an index file: same directory, same base offset.
fn log_beside(file: &Path, base_offset: i64) -> PathBuf {
    file.with_file_name(format!(
        "{}.log",
        seglog_log::naming::file_prefix(base_offset)
    ))
}

pub(super) fn dump_index(
    file: &Path,
    o: &DumpOptions,
    reports: &mut Reports,
    out: &mut impl Write,
) -> Result<Outcome> {
    let base = base_offset_of(file)?;
    let log_path = log_beside(file, base);
    let log = SegmentLog::open(&RealFs, &log_path)
        .with_context(|| format!("{}: cannot open", log_path.display()))?;
    let index = open_offset_index(&RealFs, file, base)?;
    if index.entries() == 0 {
        writeln!(out, "{} is empty.", file_string(file))?;
        return Ok(Outcome::Clean);
    }
    if o.index_sanity_check {
        index.sanity_check()?;
        writeln!(out, "{} passed sanity check.", file_string(file))?;
        return Ok(Outcome::Clean);
    }
    let abs = absolute(file);
    for i in 0..index.entries() {
        let entry = index.entry(i)?;
        // An untrimmed index left by a crash has a zero tail: stop at the first such entry.
        if entry.offset == base && i > 0 {
            break;
        }
        let first = first_batch_at(
            &log,
            u64::from(entry.position),
            u64::from(o.max_message_size),
        )?;
        let log_offset = first.last_offset.unwrap_or(-1);
        if let Some(size) = first.over {
            reports
                .over_max_message_size
                .entry(abs.clone())
                .or_insert(OverMaxMessageSize {
                    offset: entry.offset,
                    position: entry.position,
                    size,
                    max_message_size: o.max_message_size,
                });
        }
        if log_offset != entry.offset {
            reports
                .index_mismatches
                .entry(abs.clone())
                .or_default()
                .insert(entry.offset, log_offset);
        }
        if !o.verify_index_only {
            writeln!(out, "offset: {} position: {}", entry.offset, entry.position)?;
        }
    }
    Ok(Outcome::Clean)
}

pub(super) fn dump_time_index(
    file: &Path,
    o: &DumpOptions,
    reports: &mut Reports,
    out: &mut impl Write,
) -> Result<Outcome> {
    let base = base_offset_of(file)?;
    let log_path = log_beside(file, base);
    let log = SegmentLog::open(&RealFs, &log_path)
        .with_context(|| format!("{}: cannot open", log_path.display()))?;
    let index_path =
        file.with_file_name(format!("{}.index", seglog_log::naming::file_prefix(base)));
    let offset_index = open_offset_index(&RealFs, &index_path, base).ok();
    let time_index = open_time_index(&RealFs, file, base)?;
    if o.index_sanity_check {
        time_index.sanity_check()?;
        writeln!(out, "{} passed sanity check.", file_string(file))?;
        return Ok(Outcome::Clean);
    }
    let abs = absolute(file);
    let log_len = log.len()?;
    let mut prev_timestamp = -1_i64;
    let mut scratch = Vec::new();
    for i in 0..time_index.entries() {
        let entry = time_index.entry(i)?;
        if entry.offset == base && i > 0 {
            break;
        }
        let position = match &offset_index {
            Some(index) => u64::from(index.lookup(entry.offset)?.position),
            None => 0,
        };
        // The first batch from there whose last offset reaches the entry's offset.
        let found = log
            .batches(position, log_len, 1 << 20, |_, framed| {
                let Ok(last) = framed.last_offset() else {
                    return ControlFlow::Break((-1, Vec::new()));
                };
                if last >= entry.offset {
                    return ControlFlow::Break((last, framed.bytes().to_vec()));
                }
                ControlFlow::Continue(())
            })
            .map_err(lib)?;
        match found {
            Scan::Ended(_) => {
                reports
                    .shallow_not_found
                    .entry(abs.clone())
                    .or_default()
                    .push((entry.offset, -1));
            }
            Scan::Stopped((last, _)) if last != entry.offset => {
                reports
                    .shallow_not_found
                    .entry(abs.clone())
                    .or_default()
                    .push((entry.offset, last));
            }
            Scan::Stopped((_, bytes)) => {
                let max = max_record_timestamp(&bytes, &mut scratch)?;
                if max != entry.timestamp {
                    reports
                        .time_mismatches
                        .entry(abs.clone())
                        .or_default()
                        .push((entry.timestamp, max));
                }
                if prev_timestamp >= entry.timestamp {
                    reports
                        .out_of_order
                        .entry(abs.clone())
                        .or_default()
                        .push((entry.timestamp, prev_timestamp));
                }
            }
        }
        if !o.verify_index_only {
            writeln!(
                out,
                "timestamp: {} offset: {}",
                entry.timestamp, entry.offset
            )?;
        }
        prev_timestamp = entry.timestamp;
    }
    Ok(Outcome::Clean)
}
