//! `seglog stats`: per-segment figures, totals, and the anomaly checks of the index-monitoring
//! scripts people run against Kafka (large or untrimmed indexes, zero tails, missing indexes).

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;

use anyhow::{Context, Result, bail};
use comfy_table::{CellAlignment, Table, presets};
use seglog_log::inspect::{
    LogDirView, PartitionView, Problem, Scan, ScanEnd, SegmentEntry, VerifyReport,
};
use seglog_log::record::Batch;
use seglog_log::{DirKind, RealFs, TopicPartition};

use crate::common::{Outcome, json_line, lib, partition_view};
use crate::human;

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

/// What one partition's figures add up to, for a log directory's grand total.
#[derive(Debug, Default)]
struct Totals {
    segments: usize,
    size: u64,
    records: u64,
    entries: u64,
    damaged: bool,
}

pub(crate) fn stats(
    dir: &Path,
    topics: &[String],
    json: bool,
    out: &mut impl Write,
) -> Result<Outcome> {
    let named = crate::common::named(dir)?;
    if TopicPartition::parse_dir(&named).is_ok() {
        if !topics.is_empty() {
            bail!(
                "{}: --topic picks partitions of a log directory, and this is one partition",
                dir.display()
            );
        }
        let totals = partition_stats(&partition_view(dir)?, json, false, out)?;
        return Ok(outcome(totals.damaged));
    }
    // A log directory: every live partition (or those of `topics`), in path order.
    let view = LogDirView::open(RealFs, &named).map_err(lib)?;
    let mut all = Totals::default();
    let mut partitions = 0;
    for part in view.partitions() {
        let Ok((tp, DirKind::Live)) = TopicPartition::parse_dir(part) else {
            continue;
        };
        if !topics.is_empty() && !topics.contains(&tp.topic) {
            continue;
        }
        if !json {
            if partitions > 0 {
                writeln!(out)?;
            }
            writeln!(out, "{tp} ({}):", part.display())?;
        }
        let t = partition_stats(&view.partition(part).map_err(lib)?, json, true, out)?;
        partitions += 1;
        all.segments += t.segments;
        all.size += t.size;
        all.records += t.records;
        all.entries += t.entries;
        all.damaged |= t.damaged;
    }
    if json {
        json_line(
            out,
            &serde_json::json!({"type": "log_dir_total", "partitions": partitions, "segments": all.segments,
                "size": all.size, "records": all.records, "index_entries": all.entries}),
        )?;
    } else {
        if partitions > 0 {
            writeln!(out)?;
        }
        writeln!(
            out,
            "log directory total: {partitions} partitions, {} segments, {} ({} bytes), {} records, {} index entries",
            all.segments,
            human::size(all.size),
            all.size,
            all.records,
            all.entries
        )?;
    }
    Ok(outcome(all.damaged))
}

fn outcome(damaged: bool) -> Outcome {
    if damaged {
        Outcome::Problems
    } else {
        Outcome::Clean
    }
}

/// One partition's table (or JSON lines, each naming the partition when `named`), its total,
/// anomalies and damage.
fn partition_stats(
    view: &PartitionView<RealFs>,
    json: bool,
    named: bool,
    out: &mut impl Write,
) -> Result<Totals> {
    let segments = view.segments();
    let mut anomalies = Vec::new();
    let mut damage = Vec::new();
    let mut all = Vec::new();
    let bar = crate::common::progress(segments.len() as u64, "reading segments");
    for (i, segment) in segments.iter().enumerate() {
        all.push(segment_stats(
            view,
            segment,
            &mut anomalies,
            &mut damage,
            i + 1 == segments.len(),
        )?);
        bar.inc(1);
    }
    bar.finish_and_clear();
    let tp = view.topic_partition();
    // In a log directory every JSON line says which partition it is about.
    let line = |mut value: serde_json::Value| {
        if named && let Some(map) = value.as_object_mut() {
            map.insert("topic".to_owned(), tp.topic.clone().into());
            map.insert("partition".to_owned(), tp.partition.into());
        }
        value
    };
    for s in &all {
        let interval = s.size.checked_div(s.index_entries).unwrap_or(0);
        let fill = ratio(s.index_entries, s.index_slots);
        if json {
            json_line(
                out,
                &line(serde_json::json!({
                    "type": "segment", "base_offset": s.base_offset, "size": s.size, "records": s.records,
                    "batches": s.batches, "index_entries": s.index_entries, "time_index_entries": s.time_entries,
                    "index_bytes": s.index_bytes, "avg_index_interval": interval, "index_fill_ratio": fill,
                    "min_timestamp": s.min_timestamp, "max_timestamp": s.max_timestamp,
                })),
            )?;
        }
    }
    let size: u64 = all.iter().map(|s| s.size).sum();
    let records: u64 = all.iter().map(|s| s.records).sum();
    let entries: u64 = all.iter().map(|s| s.index_entries).sum();
    if json {
        json_line(
            out,
            &line(
                serde_json::json!({"type": "total", "segments": all.len(), "size": size, "records": records, "index_entries": entries}),
            ),
        )?;
        for a in &anomalies {
            json_line(
                out,
                &line(serde_json::json!({"type": "anomaly", "detail": a})),
            )?;
        }
        for d in &damage {
            json_line(
                out,
                &line(serde_json::json!({"type": "damage", "detail": d})),
            )?;
        }
    } else {
        if !all.is_empty() {
            write_table(out, &all)?;
        }
        writeln!(
            out,
            "total: {} segments, {} ({size} bytes), {records} records, {entries} index entries",
            all.len(),
            human::size(size)
        )?;
        for a in &anomalies {
            writeln!(out, "anomaly: {a}")?;
        }
        for d in &damage {
            writeln!(out, "damage: {d}")?;
        }
    }
    Ok(Totals {
        segments: all.len(),
        size,
        records,
        entries,
        damaged: !damage.is_empty(),
    })
}

/// The segments' figures as a table, sizes and times readable.
fn write_table(out: &mut impl Write, all: &[SegmentStats]) -> Result<()> {
    let mut table = Table::new();
    table.load_preset(presets::NOTHING).set_header([
        "BASE OFFSET",
        "SIZE",
        "RECORDS",
        "BATCHES",
        "INDEX",
        "AVG INTERVAL",
        "FILL",
        "MIN TIMESTAMP",
        "MAX TIMESTAMP",
    ]);
    for s in all {
        let interval = s.size.checked_div(s.index_entries).unwrap_or(0);
        let fill = ratio(s.index_entries, s.index_slots);
        table.add_row([
            s.base_offset.to_string(),
            human::size(s.size),
            s.records.to_string(),
            s.batches.to_string(),
            s.index_entries.to_string(),
            human::size(interval),
            format!("{:.0}%", fill * 100.0),
            human::timestamp(s.min_timestamp),
            human::timestamp(s.max_timestamp),
        ]);
    }
    for i in 0..7 {
        if let Some(column) = table.column_mut(i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
    }
    for row in table.lines() {
        // The preset pads each cell by one space: the first column's is dropped.
        let row = row.strip_prefix(' ').unwrap_or(&row);
        writeln!(out, "{}", row.trim_end())?;
    }
    Ok(())
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
    /// A partition directory (topic-N), or a log directory (each of its partitions).
    dir: std::path::PathBuf,
    /// In a log directory, only these topics (repeatable, or comma-separated).
    #[arg(long, value_delimiter = ',', value_name = "TOPIC")]
    topic: Vec<String>,
    /// Print JSON Lines.
    #[arg(long)]
    json: bool,
}

impl StatsArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        stats(&self.dir, &self.topic, self.json, out)
    }
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog stats logs/events-0
  seglog stats logs/events-0 --json
  seglog stats logs --topic events

Sizes and times are printed readable (1.5 MiB, ISO-8601 in UTC); --json keeps bytes and epoch
milliseconds, and in a log directory each line names its topic and partition.

Anomalies (large or untrimmed indexes, a missing index) are listed and do not change the exit
status; a batch that cannot be framed is listed as damage, naming the file and byte.

Exit status: 0 when every segment was read to its end, 1 when damage was found, 2 on bad usage,
a missing path or an I/O failure.";
