//! `seglog dump --json`: the same walk as the text dump, as JSON Lines with stable field names.
//!
//! - batches: `{"type":"batch","file","base_offset","last_offset","count","position","size","magic",
//!   "compression","crc","crc_valid","timestamp_type","max_timestamp","producer_id","producer_epoch",
//!   "base_sequence","partition_leader_epoch","is_transactional","is_control"}`;
//! - records: `{"type":"record","offset","timestamp","key","value","headers":[{"key","value"}]}`, bytes
//!   in base64, null for null;
//! - index entries: `{"type":"index_entry","offset","position"}`;
//! - time index entries: `{"type":"time_index_entry","timestamp","offset"}`;
//! - leader epochs (a `leader-epoch-checkpoint`): `{"type":"leader_epoch","file","epoch","start_offset"}`;
//! - problems: `{"type":"problem","file","position","kind","detail"}`; a batch whose offsets its
//!   neighbours or the next segment's base offset make impossible is one (`impossible_offsets`),
//!   and its records are not printed.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use seglog_log::RealFs;
use seglog_log::inspect::{
    JudgedEnd, OffsetBounds, Scan, ScanEnd, SegmentLog, next_segment_base_offset,
    open_offset_index, open_time_index,
};
use seglog_log::record::Batch;

use super::{
    base_offset_of, codec_name, first_batch_at, max_record_timestamp, timestamp_type_name,
};
use crate::common::{Outcome, b64, is_io_failure, json_line, lib, message};

fn problem(
    out: &mut impl Write,
    file: &Path,
    position: Option<u64>,
    kind: &str,
    detail: &str,
) -> Result<()> {
    json_line(
        out,
        &serde_json::json!({"type": "problem", "file": file.display().to_string(), "position": position, "kind": kind, "detail": detail}),
    )
}

pub(crate) fn run(
    files: &[PathBuf],
    deep: bool,
    max_message_size: u32,
    out: &mut impl Write,
) -> Result<Outcome> {
    let mut outcome = Outcome::Clean;
    for file in files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let suffix = name.rsplit_once('.').map(|(_, s)| s);
        if let Some(s @ ("log" | "index" | "timeindex")) = suffix
            && let Err(e) = super::readable(file, &format!(".{s}"))
        {
            problem(out, file, None, "unreadable", &message(&e))?;
            outcome = Outcome::Failed;
            continue;
        }
        let result = match suffix {
            Some("log") => log(file, deep, out),
            Some("index") => index(file, max_message_size, out),
            Some("timeindex") => time_index(file, out),
            None if super::epoch_checkpoint::is_epoch_checkpoint(file) => {
                super::epoch_checkpoint::dump_json(file, out)
            }
            _ => problem(
                out,
                file,
                None,
                "unknown_file",
                "not a .log, .index or .timeindex file",
            )
            .map(|()| false),
        };
        match result {
            Ok(false) => {}
            Ok(true) => outcome = outcome.max(Outcome::Problems),
            Err(e) => {
                problem(out, file, None, "unreadable", &message(&e))?;
                let this = if is_io_failure(&e) {
                    Outcome::Failed
                } else {
                    Outcome::Problems
                };
                outcome = outcome.max(this);
            }
        }
    }
    Ok(outcome)
}

fn batch_json(file: &Path, batch: &Batch<'_>, position: u64) -> serde_json::Value {
    let common = serde_json::json!({
        "type": "batch",
        "file": file.display().to_string(),
        "position": position,
        "size": batch.size_in_bytes(),
        "compression": codec_name(batch),
        "max_timestamp": batch.max_timestamp(),
    });
    let mut v = common;
    let fields = match batch {
        Batch::V2(b) => serde_json::json!({
            "base_offset": b.base_offset(), "last_offset": b.last_offset(), "count": b.records_count(),
            "magic": b.magic(), "crc": b.crc(), "crc_valid": b.is_valid(),
            "timestamp_type": timestamp_type_name(Some(b.timestamp_type())),
            "producer_id": b.producer_id(), "producer_epoch": b.producer_epoch(), "base_sequence": b.base_sequence(),
            "partition_leader_epoch": b.partition_leader_epoch(), "is_transactional": b.is_transactional(),
            "is_control": b.is_control(), "delete_horizon_ms": b.delete_horizon_ms(),
        }),
        Batch::Legacy(b) => serde_json::json!({
            "base_offset": serde_json::Value::Null, "last_offset": b.last_offset(), "count": serde_json::Value::Null,
            "magic": b.magic(), "crc": b.crc(), "crc_valid": b.is_valid(),
            "timestamp_type": timestamp_type_name(b.timestamp_type()),
            "producer_id": -1, "producer_epoch": -1, "base_sequence": -1, "partition_leader_epoch": -1,
            "is_transactional": false, "is_control": false,
        }),
    };
    if let (Some(obj), serde_json::Value::Object(extra)) = (v.as_object_mut(), fields) {
        obj.extend(extra);
    }
    v
}

/// Returns whether problems were found.
fn log(file: &Path, deep: bool, out: &mut impl Write) -> Result<bool> {
    let bounds = OffsetBounds {
        base_offset: base_offset_of(file)?,
        next_base_offset: next_segment_base_offset(&RealFs, file)
            .with_context(|| format!("{}: cannot list its directory", file.display()))?,
    };
    let handle = SegmentLog::open(&RealFs, file)
        .with_context(|| format!("{}: cannot open", file.display()))?;
    let len = handle.len()?;
    let mut valid = 0_u64;
    let mut failed: Option<(u64, String)> = None;
    let scan = handle.judged_batches(len, 8 << 20, bounds, |position, framed, _| {
        let batch = match framed.decode() {
            Ok(b) => b,
            Err(e) => {
                failed = Some((position, e.to_string()));
                return ControlFlow::Break(());
            }
        };
        let line = batch_json(file, &batch, position);
        let mut write = || -> Result<()> {
            json_line(out, &line)?;
            if deep {
                for r in batch.to_records()? {
                    let headers: Vec<serde_json::Value> = r
                        .headers
                        .iter()
                        .map(|h| serde_json::json!({"key": String::from_utf8_lossy(&h.key), "value": b64(h.value.as_deref())}))
                        .collect();
                    json_line(
                        out,
                        &serde_json::json!({"type": "record", "offset": r.offset, "timestamp": r.timestamp,
                            "key": b64(r.key.as_deref()), "value": b64(r.value.as_deref()), "headers": headers}),
                    )?;
                }
            }
            Ok(())
        };
        if let Err(e) = write() {
            failed = Some((position, message(&e)));
            return ControlFlow::Break(());
        }
        valid = position + framed.size_in_bytes() as u64;
        ControlFlow::Continue(())
    })
    .map_err(lib)?;
    if let Some((position, detail)) = failed {
        problem(out, file, Some(position), "corrupt_batch", &detail)?;
        return Ok(true);
    }
    if let JudgedEnd::Damage(stop) = &scan {
        problem(
            out,
            file,
            Some(stop.position),
            "impossible_offsets",
            &stop.reason.to_string(),
        )?;
        return Ok(true);
    }
    if let JudgedEnd::Ended(ScanEnd::Corrupt { position, error }) = scan {
        problem(
            out,
            file,
            Some(position),
            "corrupt_batch",
            &error.to_string(),
        )?;
        return Ok(true);
    }
    if valid < len {
        problem(
            out,
            file,
            Some(valid),
            "invalid_bytes",
            &format!("{} invalid bytes at the end", len - valid),
        )?;
        return Ok(true);
    }
    Ok(false)
}

fn index(file: &Path, max_message_size: u32, out: &mut impl Write) -> Result<bool> {
    let base = base_offset_of(file)?;
    let log_path = file.with_file_name(format!("{}.log", seglog_log::naming::file_prefix(base)));
    let log = SegmentLog::open(&RealFs, &log_path)
        .with_context(|| format!("{}: cannot open", log_path.display()))?;
    let index = open_offset_index(&RealFs, file, base)?;
    let mut problems = false;
    for slot in 0..index.entries() {
        let entry = index.entry(slot)?;
        if entry.offset == base && slot > 0 {
            problem(
                out,
                file,
                Some(slot as u64 * 8),
                "zero_tail",
                "untrimmed index: the rest is zeros",
            )?;
            return Ok(true);
        }
        json_line(
            out,
            &serde_json::json!({"type": "index_entry", "offset": entry.offset, "position": entry.position}),
        )?;
        let first = first_batch_at(&log, u64::from(entry.position), u64::from(max_message_size))?;
        let log_offset = first.last_offset.unwrap_or(-1);
        if log_offset != entry.offset {
            problem(
                out,
                file,
                Some(slot as u64 * 8),
                "index_mismatch",
                &format!("index offset {}, log offset {log_offset}", entry.offset),
            )?;
            problems = true;
        }
    }
    Ok(problems)
}

fn time_index(file: &Path, out: &mut impl Write) -> Result<bool> {
    let base = base_offset_of(file)?;
    let log_path = file.with_file_name(format!("{}.log", seglog_log::naming::file_prefix(base)));
    let log = SegmentLog::open(&RealFs, &log_path)
        .with_context(|| format!("{}: cannot open", log_path.display()))?;
    let index_path =
        file.with_file_name(format!("{}.index", seglog_log::naming::file_prefix(base)));
    let offsets = open_offset_index(&RealFs, &index_path, base).ok();
    let index = open_time_index(&RealFs, file, base)?;
    let mut problems = false;
    let mut scratch = Vec::new();
    for slot in 0..index.entries() {
        let entry = index.entry(slot)?;
        if entry.offset == base && slot > 0 {
            problem(
                out,
                file,
                Some(slot as u64 * 12),
                "zero_tail",
                "untrimmed index: the rest is zeros",
            )?;
            return Ok(true);
        }
        json_line(
            out,
            &serde_json::json!({"type": "time_index_entry", "timestamp": entry.timestamp, "offset": entry.offset}),
        )?;
        let start = offsets
            .as_ref()
            .and_then(|o| o.lookup(entry.offset).ok())
            .map_or(0, |p| u64::from(p.position));
        let len = log.len()?;
        let scan = log
            .batches(start, len, 1 << 20, |_, framed| {
                match framed.last_offset() {
                    Ok(last) if last >= entry.offset => {
                        ControlFlow::Break(Some((last, framed.bytes().to_vec())))
                    }
                    Ok(_) => ControlFlow::Continue(()),
                    Err(_) => ControlFlow::Break(None),
                }
            })
            .map_err(lib)?;
        let found = match scan {
            Scan::Stopped(found) => found,
            Scan::Ended(_) => None,
        };
        let ok = match found {
            Some((last, bytes)) if last == entry.offset => {
                max_record_timestamp(&bytes, &mut scratch)? == entry.timestamp
            }
            _ => false,
        };
        if !ok {
            problem(
                out,
                file,
                Some(slot as u64 * 12),
                "time_index_mismatch",
                &format!(
                    "entry ({}, {}) does not match its batch",
                    entry.timestamp, entry.offset
                ),
            )?;
            problems = true;
        }
    }
    Ok(problems)
}
