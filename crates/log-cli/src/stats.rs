//! `seglog stats`: per-segment figures, totals, and the anomaly checks of the index-monitoring
//! scripts people run against Kafka (large or untrimmed indexes, zero tails, missing indexes).

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;

use anyhow::{Context, Result};
use seglog_log::RealFs;
use seglog_log::inspect::{PartitionView, Problem, Scan, ScanEnd, SegmentEntry, VerifyReport};
use seglog_log::record::Batch;

use crate::common::{Outcome, json_line, lib, partition_view};

/// Kafka's default `segment.index.bytes`: an index file larger than this is an anomaly.
const LARGE_INDEX_BYTES: u64 = 10 * 1024 * 1024;

#[derive(Debug, Default)]
struct SegmentStats {
    base_offset: i64,
    size: u64,
    batches: u64,
    records: u64,
    index_entries: u64,
    index_bytes: u64,
    index_slots: u64,
    time_entries: u64,
    min_timestamp: Option<i64>,
    max_timestamp: Option<i64>,
}

/// Real entries: those before a zero tail.
fn real_entries(report: &VerifyReport) -> u64 {
    let tail = report.problems.iter().find_map(|p| match p {
        Problem::ZeroTail { first_slot, .. } => Some(*first_slot),
        _ => None,
    });
    tail.unwrap_or(report.entries) as u64
}

fn segment_stats(
    view: &PartitionView<RealFs>,
    segment: &SegmentEntry,
    anomalies: &mut Vec<String>,
    damage: &mut Vec<String>,
    active: bool,
) -> Result<SegmentStats> {
    let mut s = SegmentStats {
        base_offset: segment.base_offset,
        ..SegmentStats::default()
    };
    let file = view.open_log(segment).map_err(lib)?;
    s.size = file
        .len()
        .with_context(|| format!("{}: cannot stat", segment.log.display()))?;
    let scan = file
        .batches(0, s.size, 8 << 20, |_, framed| {
            s.batches += 1;
            if let Ok(batch) = framed.decode() {
                s.records += match &batch {
                    Batch::V2(b) => u64::try_from(b.records_count()).unwrap_or(0),
                    Batch::Legacy(b) => b.to_records().map_or(0, |r| r.len() as u64),
                };
                let ts = batch.max_timestamp();
                if ts >= 0 {
                    s.max_timestamp = Some(s.max_timestamp.map_or(ts, |m| m.max(ts)));
                    let first = match &batch {
                        Batch::V2(b) if !b.has_delete_horizon() && b.base_timestamp() >= 0 => {
                            b.base_timestamp()
                        }
                        _ => ts,
                    };
                    s.min_timestamp = Some(s.min_timestamp.map_or(first, |m| m.min(first)));
                }
            }
            ControlFlow::<()>::Continue(())
        })
        .map_err(lib)?;
    // The figures stop where the batches can no longer be framed: damage, not an anomaly.
    if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
        damage.push(format!(
            "{}: at byte {position}: {error} (the figures stop there)",
            segment.log.display()
        ));
    }
    let index_path = view.offset_index_path(segment.base_offset);
    match view.offset_index(segment.base_offset) {
        Ok(index) => {
            let report = index.verify()?;
            s.index_entries = real_entries(&report);
            s.index_bytes = report.length;
            s.index_slots = report.max_entries as u64;
            if report.length > LARGE_INDEX_BYTES {
                anomalies.push(format!(
                    "large index file: {} ({} bytes)",
                    index_path.display(),
                    report.length
                ));
            }
            if !active && report.has_zero_tail() {
                anomalies.push(format!(
                    "untrimmed index on an inactive segment: {} ({} of {} slots used; a crash before trimming)",
                    index_path.display(),
                    s.index_entries,
                    report.entries
                ));
            }
        }
        Err(_) if s.size > 0 => anomalies.push(format!(
            "missing or unreadable index: {}",
            index_path.display()
        )),
        Err(_) => {}
    }
    let time_path = view.time_index_path(segment.base_offset);
    if let Ok(index) = view.time_index(segment.base_offset) {
        let report = index.verify()?;
        s.time_entries = real_entries(&report);
        if !active
            && report
                .problems
                .iter()
                .any(|p| matches!(p, Problem::LastTimestampZero))
        {
            anomalies.push(format!(
                "time index ends in a zero timestamp (KAFKA-19200, KAFKA-10207): {}",
                time_path.display()
            ));
        }
    }
    Ok(s)
}

pub(crate) fn stats(dir: &Path, json: bool, out: &mut impl Write) -> Result<Outcome> {
    let view = partition_view(dir)?;
    let segments = view.segments();
    let mut anomalies = Vec::new();
    let mut damage = Vec::new();
    let mut all = Vec::new();
    let bar = crate::common::progress(segments.len() as u64, "reading segments");
    for (i, segment) in segments.iter().enumerate() {
        all.push(segment_stats(
            &view,
            segment,
            &mut anomalies,
            &mut damage,
            i + 1 == segments.len(),
        )?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    if !json {
        writeln!(
            out,
            "{:>20} {:>12} {:>10} {:>10} {:>8} {:>12} {:>6} {:>15} {:>15}",
            "base_offset",
            "size",
            "records",
            "batches",
            "index",
            "avg_interval",
            "fill",
            "min_timestamp",
            "max_timestamp"
        )?;
    }
    for s in &all {
        let interval = s.size.checked_div(s.index_entries).unwrap_or(0);
        let fill = ratio(s.index_entries, s.index_slots);
        if json {
            json_line(
                out,
                &serde_json::json!({
                    "type": "segment", "base_offset": s.base_offset, "size": s.size, "records": s.records,
                    "batches": s.batches, "index_entries": s.index_entries, "time_index_entries": s.time_entries,
                    "index_bytes": s.index_bytes, "avg_index_interval": interval, "index_fill_ratio": fill,
                    "min_timestamp": s.min_timestamp, "max_timestamp": s.max_timestamp,
                }),
            )?;
        } else {
            let ts = |t: Option<i64>| t.map_or_else(|| "-".to_owned(), |t| t.to_string());
            writeln!(
                out,
                "{:>20} {:>12} {:>10} {:>10} {:>8} {:>12} {:>5.0}% {:>15} {:>15}",
                s.base_offset,
                s.size,
                s.records,
                s.batches,
                s.index_entries,
                interval,
                fill * 100.0,
                ts(s.min_timestamp),
                ts(s.max_timestamp)
            )?;
        }
    }
    let size: u64 = all.iter().map(|s| s.size).sum();
    let records: u64 = all.iter().map(|s| s.records).sum();
    let entries: u64 = all.iter().map(|s| s.index_entries).sum();
    if json {
        json_line(
            out,
            &serde_json::json!({"type": "total", "segments": all.len(), "size": size, "records": records, "index_entries": entries}),
        )?;
        for a in &anomalies {
            json_line(out, &serde_json::json!({"type": "anomaly", "detail": a}))?;
        }
        for d in &damage {
            json_line(out, &serde_json::json!({"type": "damage", "detail": d}))?;
        }
    } else {
        writeln!(
            out,
            "total: {} segments, {size} bytes, {records} records, {entries} index entries",
            all.len()
        )?;
        for a in &anomalies {
            writeln!(out, "anomaly: {a}")?;
        }
        for d in &damage {
            writeln!(out, "damage: {d}")?;
        }
    }
    Ok(if damage.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Problems
    })
}

/// `part / whole` as a fraction (0 when `whole` is 0); index slot counts fit `u32` (10 MiB / 8).
fn ratio(part: u64, whole: u64) -> f64 {
    let part = f64::from(u32::try_from(part).unwrap_or(u32::MAX));
    let whole = f64::from(u32::try_from(whole).unwrap_or(u32::MAX));
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// The flags of `seglog stats`.
#[derive(Debug, clap::Args)]
pub(crate) struct StatsArgs {
    /// A partition directory (topic-N).
    dir: std::path::PathBuf,
    /// Print JSON Lines.
    #[arg(long)]
    json: bool,
}

impl StatsArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        stats(&self.dir, self.json, out)
    }
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog stats logs/events-0
  seglog stats logs/events-0 --json

Anomalies (large or untrimmed indexes, a missing index) are listed and do not change the exit
status; a batch that cannot be framed is listed as damage, naming the file and byte.

Exit status: 0 when every segment was read to its end, 1 when damage was found, 2 on bad usage,
a missing path or an I/O failure.";
