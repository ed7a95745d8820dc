//! `seglog check` (verify a partition or a whole log directory, changing nothing) and
//! `seglog recover` (run unclean-shutdown recovery now).

use std::collections::BTreeMap;
use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use seglog_log::{FileSystem, OpenMode, RealFs};
use seglog_log::{
    LOG_START_OFFSET_CHECKPOINT, LogConfig, LogDir, LogDirOptions, OffsetCheckpoint,
    RECOVERY_POINT_CHECKPOINT, SystemClock, TopicPartition,
};
use seglog_mmap_index::{CorruptKind, IndexKind, OffsetIndex, Problem, TimeIndex, VerifyReport};
use seglog_record_format::Batch;
use seglog_segment::naming;
use seglog_segment::scan::{Scan, ScanEnd, scan_batches};

use crate::cli::Outcome;
use crate::common::{json_line, progress};

/// One problem found by `check`.
#[derive(Debug, Clone)]
pub(crate) struct Finding {
    file: PathBuf,
    position: Option<u64>,
    kind: &'static str,
    detail: String,
}

impl Finding {
    fn new(
        file: &Path,
        position: Option<u64>,
        kind: &'static str,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            file: file.to_path_buf(),
            position,
            kind,
            detail: detail.into(),
        }
    }
}

/// The partition directories under `path`: itself if it is one, else its `topic-N` children.
fn partitions(path: &Path) -> Result<Vec<PathBuf>> {
    if TopicPartition::parse_dir(path).is_ok() && path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut dirs = Vec::new();
    for entry in
        std::fs::read_dir(path).with_context(|| format!("{}: cannot list", path.display()))?
    {
        let entry = entry?.path();
        if entry.is_dir() && TopicPartition::parse_dir(&entry).is_ok() {
            dirs.push(entry);
        }
    }
    dirs.sort();
    Ok(dirs)
}

pub(crate) fn check(path: &Path, json: bool, out: &mut impl Write) -> Result<Outcome> {
    let dirs = partitions(path)?;
    if dirs.is_empty() && TopicPartition::parse_dir(path).is_err() && !path.join(".lock").exists() {
        anyhow::bail!(
            "{}: neither a partition directory (topic-N) nor a log directory",
            path.display()
        );
    }
    let mut findings = Vec::new();
    let mut segments = 0;
    let mut log_ends = BTreeMap::new();
    let bar = progress(dirs.len() as u64, "checking");
    for dir in &dirs {
        let (n, log_end) = check_partition(dir, &mut findings)?;
        segments += n;
        if let Ok((tp, _)) = TopicPartition::parse_dir(dir) {
            log_ends.insert(tp, log_end);
        }
        bar.inc(1);
    }
    bar.finish_and_clear();
    // Checkpoints live in the log directory.
    let log_dir = if dirs.len() == 1 && dirs.first().is_some_and(|d| d == path) {
        path.parent().map(Path::to_path_buf)
    } else {
        Some(path.to_path_buf())
    };
    if let Some(log_dir) = log_dir {
        check_checkpoints(&log_dir, &log_ends, &mut findings);
    }
    for f in &findings {
        if json {
            json_line(
                out,
                &serde_json::json!({
                    "type": "problem",
                    "file": f.file.display().to_string(),
                    "position": f.position,
                    "kind": f.kind,
                    "detail": f.detail,
                }),
            )?;
        } else {
            match f.position {
                Some(p) => writeln!(
                    out,
                    "{}: at byte {p}: {}: {}",
                    f.file.display(),
                    f.kind,
                    f.detail
                )?,
                None => writeln!(out, "{}: {}: {}", f.file.display(), f.kind, f.detail)?,
            }
        }
    }
    if json {
        json_line(
            out,
            &serde_json::json!({"type": "summary", "partitions": dirs.len(), "segments": segments, "problems": findings.len()}),
        )?;
    } else {
        writeln!(
            out,
            "checked {segments} segments in {} partitions: {} problems",
            dirs.len(),
            findings.len()
        )?;
    }
    Ok(if findings.is_empty() {
        Outcome::Clean
    } else {
        Outcome::Problems
    })
}

fn check_checkpoints(
    log_dir: &Path,
    log_ends: &BTreeMap<TopicPartition, i64>,
    findings: &mut Vec<Finding>,
) {
    for name in [RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT] {
        let path = log_dir.join(name);
        if !path.exists() {
            continue;
        }
        match OffsetCheckpoint::new(RealFs, &path).read() {
            Err(e) => findings.push(Finding::new(&path, None, "bad_checkpoint", e.to_string())),
            Ok(entries) => {
                for (tp, offset) in entries {
                    if let Some(end) = log_ends.get(&tp)
                        && offset > *end
                    {
                        findings.push(Finding::new(
                            &path,
                            None,
                            "checkpoint_ahead_of_log",
                            format!("{tp} at {offset}, but the log ends at {end}"),
                        ));
                    }
                }
            }
        }
    }
}

/// Checks one partition directory; returns the segments checked and the log end offset.
fn check_partition(dir: &Path, findings: &mut Vec<Finding>) -> Result<(usize, i64)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    files.sort();
    let mut logs = Vec::new();
    for file in &files {
        let name = file
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if [
            naming::DELETED_FILE_SUFFIX,
            naming::CLEANED_FILE_SUFFIX,
            naming::SWAP_FILE_SUFFIX,
        ]
        .iter()
        .any(|s| name.ends_with(s))
        {
            findings.push(Finding::new(
                file,
                None,
                "leftover_file",
                "an interrupted deletion, cleaning or swap; open or recover finishes it",
            ));
        } else if let Some(base) = name
            .strip_suffix(naming::LOG_FILE_SUFFIX)
            .and_then(naming::offset_from_file_name)
        {
            logs.push((base, file.clone()));
        } else if (name.ends_with(naming::INDEX_FILE_SUFFIX)
            || name.ends_with(naming::TIME_INDEX_FILE_SUFFIX))
            && naming::offset_from_file_name(name).is_some_and(|o| {
                !dir.join(format!(
                    "{}{}",
                    naming::file_prefix(o),
                    naming::LOG_FILE_SUFFIX
                ))
                .exists()
            })
        {
            findings.push(Finding::new(
                file,
                None,
                "orphan_index",
                "an index file without its .log",
            ));
        }
    }
    let mut previous_last = i64::MIN;
    let mut log_end = 0;
    let last = logs.len().saturating_sub(1);
    for (i, (base, log)) in logs.iter().enumerate() {
        if *base <= previous_last {
            findings.push(Finding::new(
                log,
                None,
                "overlapping_segment",
                format!("base offset {base} is not above the previous segment's last offset {previous_last}"),
            ));
        }
        let batches = check_log(*base, log, findings)?;
        if let Some((_, last_offset, _)) = batches.last() {
            previous_last = previous_last.max(*last_offset);
        }
        // An empty segment (a log truncated or emptied to its base) ends where it starts.
        log_end = log_end.max(*base).max(previous_last.saturating_add(1));
        check_indexes(dir, *base, &batches, i == last, findings)?;
    }
    Ok((logs.len(), log_end))
}

/// Walks a `.log`: framing, CRC, offsets. Returns (position, last offset, max timestamp) per batch.
fn check_log(base: i64, log: &Path, findings: &mut Vec<Finding>) -> Result<Vec<(u64, i64, i64)>> {
    let file = RealFs
        .open(log, OpenMode::ReadOnly)
        .with_context(|| format!("{}: cannot open", log.display()))?;
    let len = std::fs::metadata(log)?.len();
    let mut batches = Vec::new();
    let mut previous = base - 1;
    let scan = scan_batches(&file, log, 0, len, 8 << 20, |position, framed| {
        let decoded = match framed.decode() {
            Ok(d) => d,
            Err(e) => {
                return Ok(ControlFlow::Break(Finding::new(
                    log,
                    Some(position),
                    "corrupt_batch",
                    e.to_string(),
                )));
            }
        };
        if let Err(e) = decoded.validate() {
            return Ok(ControlFlow::Break(Finding::new(
                log,
                Some(position),
                "invalid_batch",
                e.to_string(),
            )));
        }
        let first = match decoded {
            Batch::V2(b) => b.base_offset(),
            Batch::Legacy(b) => b.last_offset(),
        };
        if first <= previous || decoded.last_offset() < first {
            return Ok(ControlFlow::Break(Finding::new(
                log,
                Some(position),
                "offsets_out_of_order",
                format!(
                    "batch {first}..={} follows offset {previous}",
                    decoded.last_offset()
                ),
            )));
        }
        previous = decoded.last_offset();
        batches.push((position, decoded.last_offset(), decoded.max_timestamp()));
        Ok(ControlFlow::Continue(()))
    })?;
    match scan {
        Scan::Stopped(finding) => findings.push(finding),
        Scan::Ended(ScanEnd::Corrupt { position, error }) => {
            findings.push(Finding::new(
                log,
                Some(position),
                "corrupt_batch",
                error.to_string(),
            ));
        }
        Scan::Ended(ScanEnd::Clean { position }) if position < len => {
            findings.push(Finding::new(
                log,
                Some(position),
                "torn_tail",
                format!("{} bytes after the last whole batch", len - position),
            ));
        }
        Scan::Ended(ScanEnd::Clean { .. }) => {}
    }
    Ok(batches)
}

/// Reports an index problem at the byte where the offending entry starts (for a length that is
/// not a multiple of the entry size: where the partial entry starts).
fn index_problem(
    path: &Path,
    report: &VerifyReport,
    problem: &Problem,
    findings: &mut Vec<Finding>,
) {
    let entry_size = match report.kind {
        IndexKind::Offset => 8_u64,
        IndexKind::Time => 12,
    };
    let slot_byte = |slot: usize| Some(slot as u64 * entry_size);
    let last_entry = slot_byte(report.entries.saturating_sub(1));
    let (kind, position, detail) = match problem {
        Problem::ZeroTail { first_slot, slots } => (
            "index_zero_tail",
            slot_byte(*first_slot),
            format!("{slots} zero slots from slot {first_slot}: preallocated and never trimmed"),
        ),
        Problem::LastTimestampZero => (
            "index_zero_tail",
            last_entry,
            "the last timestamp is 0".to_owned(),
        ),
        Problem::Kafka(kind) => {
            let position = match kind {
                CorruptKind::LengthNotMultiple { length, .. } => Some(length - length % entry_size),
                _ => last_entry,
            };
            ("index_sanity", position, format!("{kind:?}"))
        }
        Problem::BaseOffsetRepeated { slot }
        | Problem::OffsetOutOfOrder { slot, .. }
        | Problem::TimestampOutOfOrder { slot, .. } => (
            "index_out_of_order",
            slot_byte(*slot),
            format!("{problem:?}"),
        ),
        other => ("index_out_of_order", None, format!("{other:?}")),
    };
    findings.push(Finding::new(path, position, kind, detail));
}

/// Checks both indexes of a segment against its batches.
fn check_indexes(
    dir: &Path,
    base: i64,
    batches: &[(u64, i64, i64)],
    active: bool,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    let index_path = naming::offset_index_file(dir, base, "");
    let by_position: BTreeMap<u64, i64> = batches.iter().map(|(p, o, _)| (*p, *o)).collect();
    if index_path.exists() {
        let index = OffsetIndex::open_read_only(&index_path, base)?;
        let report = index.verify()?;
        for problem in &report.problems {
            index_problem(&index_path, &report, problem, findings);
        }
        // A zero tail ends the real entries (Kafka's DumpLogSegments rule); an active segment's
        // index is preallocated, so its zero tail is expected.
        let zero_tail = report.problems.iter().find_map(|p| match p {
            Problem::ZeroTail { first_slot, .. } => Some(*first_slot),
            _ => None,
        });
        if active {
            findings.retain(|f| !(f.file == index_path && f.kind == "index_zero_tail"));
        }
        // An active segment's index that is zeros from slot 0 on was preallocated and never
        // written (a broker stopped before its first entry): it has no entries.
        let unwritten = active
            && zero_tail == Some(1)
            && index.entry(0)?.offset == base
            && index.entry(0)?.position == 0;
        let live = if unwritten {
            0
        } else {
            zero_tail.unwrap_or(report.entries)
        };
        for slot in 0..live {
            let entry = index.entry(slot)?;
            match by_position.get(&u64::from(entry.position)) {
                Some(last) if *last == entry.offset => {}
                found => findings.push(Finding::new(
                    &index_path,
                    Some(slot as u64 * 8),
                    "index_mismatch",
                    format!("entry {slot} says offset {} starts at byte {}, the log has {found:?} there", entry.offset, entry.position),
                )),
            }
        }
    } else if !batches.is_empty() {
        findings.push(Finding::new(
            &index_path,
            None,
            "missing_index",
            "the .index is missing; open or recover rebuilds it",
        ));
    }
    let time_path = naming::time_index_file(dir, base, "");
    if time_path.exists() {
        let index = TimeIndex::open_read_only(&time_path, base)?;
        let report = index.verify()?;
        // An active segment's preallocated zero tail is expected, and so is what follows from it:
        // Kafka's sanity rule reads the zero last slot as a last timestamp (0) below the first.
        let preallocated = report
            .problems
            .iter()
            .any(|p| matches!(p, Problem::ZeroTail { .. } | Problem::LastTimestampZero));
        for problem in &report.problems {
            let expected = match problem {
                Problem::ZeroTail { .. } | Problem::LastTimestampZero => true,
                Problem::Kafka(CorruptKind::LastTimestampBelowFirst {
                    last_timestamp: 0, ..
                }) => preallocated,
                _ => false,
            };
            if !(active && expected) {
                index_problem(&time_path, &report, problem, findings);
            }
        }
        let zero_tail = report.problems.iter().find_map(|p| match p {
            Problem::ZeroTail { first_slot, .. } => Some(*first_slot),
            _ => None,
        });
        let unwritten = active
            && zero_tail == Some(1)
            && index.entry(0)?.offset == base
            && index.entry(0)?.timestamp == 0;
        let live = if unwritten {
            0
        } else {
            zero_tail.unwrap_or(report.entries)
        };
        let mut running_max = -1_i64;
        let maxima: BTreeMap<i64, i64> = batches
            .iter()
            .map(|(_, last, ts)| {
                running_max = running_max.max(*ts);
                (*last, running_max)
            })
            .collect();
        for slot in 0..live {
            let entry = index.entry(slot)?;
            match maxima.get(&entry.offset) {
                Some(max) if *max == entry.timestamp => {}
                found => findings.push(Finding::new(
                    &time_path,
                    Some(slot as u64 * 12),
                    "time_index_mismatch",
                    format!("entry {slot} says {} at offset {}, the log's running max there is {found:?}", entry.timestamp, entry.offset),
                )),
            }
        }
    }
    Ok(())
}

pub(crate) fn recover(path: &Path, json: bool, out: &mut impl Write) -> Result<Outcome> {
    let (log_dir, only) = match crate::common::partition_of(path) {
        Ok((parent, tp)) if path.is_dir() => (parent, Some(tp)),
        _ => (path.to_path_buf(), None),
    };
    let dirs = partitions(path)?;
    let bar = Arc::new(progress(dirs.len() as u64, "recovering"));
    let bar_cb = Arc::clone(&bar);
    let options = LogDirOptions {
        default_config: LogConfig::default(),
        recovery_threads: 2,
        time: Arc::new(SystemClock),
        progress: Some(Arc::new(move |_| bar_cb.inc(1))),
        recover_all: true,
    };
    let (dir, report) =
        LogDir::open(RealFs, &log_dir, options).map_err(|e| anyhow::anyhow!("{e}"))?;
    bar.finish_and_clear();
    for (tp, load) in &report.logs {
        if only.as_ref().is_some_and(|o| o != tp) {
            continue;
        }
        let truncated: u64 = load.recovered.iter().map(|(_, r)| r.bytes_truncated).sum();
        let rebuilt = load.recovered.len();
        let leftovers =
            load.deleted_files.len() + load.aborted_files.len() + load.replaced_files.len();
        if json {
            json_line(
                out,
                &serde_json::json!({
                    "type": "recovered",
                    "partition": tp.to_string(),
                    "segments_scanned": load.segments_scanned,
                    "bytes_truncated": truncated,
                    "indexes_rebuilt": rebuilt,
                    "segments_deleted_after_corruption": load.deleted_after_corruption.len(),
                    "leftover_files_cleaned": leftovers + load.orphan_indexes.len(),
                    "log_end_offset": load.log_end_offset,
                }),
            )?;
        } else {
            writeln!(
                out,
                "{tp}: scanned {} segments, truncated {truncated} bytes, rebuilt the indexes of {rebuilt} segments, deleted {} later segments, cleaned {} leftover files; log end offset {}",
                load.segments_scanned,
                load.deleted_after_corruption.len(),
                leftovers + load.orphan_indexes.len(),
                load.log_end_offset
            )?;
            for (base, r) in &load.recovered {
                if let Some(stop) = &r.stop {
                    writeln!(
                        out,
                        "  segment {base}: cut at byte {}: {:?}",
                        stop.position, stop.reason
                    )?;
                }
            }
        }
    }
    // A clean close: indexes trimmed, checkpoints and the clean-shutdown marker written.
    dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Outcome::Clean)
}
