//! `seglog check` (verify a partition or a whole log directory, changing nothing) and
//! `seglog recover` (run unclean-shutdown recovery now).

use std::io::Write;
use std::path::Path;
use std::sync::Arc;

use anyhow::Result;
use seglog_log::inspect::{self, LogDirView};
use seglog_log::{FileSystem as _, LogConfig, LogDir, LogDirOptions, RealFs, SystemClock};

use crate::common::{Outcome, json_line, lib, progress};

pub(crate) fn check(path: &Path, json: bool, out: &mut impl Write) -> Result<Outcome> {
    let view = LogDirView::open(RealFs, &crate::common::named(path)?).map_err(lib)?;
    let bar = progress(view.partitions().len() as u64, "checking");
    let report = view.check(|| bar.inc(1)).map_err(lib)?;
    bar.finish_and_clear();
    let findings = &report.findings;
    for f in findings {
        if json {
            json_line(
                out,
                &serde_json::json!({
                    "type": f.severity.name(),
                    "severity": f.severity.name(),
                    "file": f.file.display().to_string(),
                    "position": f.position,
                    "kind": f.kind,
                    "count": f.count,
                    "detail": f.detail,
                }),
            )?;
        } else {
            let note = if f.is_problem() { "" } else { "note: " };
            match f.position {
                Some(p) => writeln!(
                    out,
                    "{}: at byte {p}: {note}{}: {}",
                    f.file.display(),
                    f.kind,
                    f.detail
                )?,
                None => writeln!(out, "{}: {note}{}: {}", f.file.display(), f.kind, f.detail)?,
            }
        }
    }
    let segments = report.segments;
    let (problems, notes) = (report.problems(), report.notes());
    if json {
        json_line(
            out,
            &serde_json::json!({"type": "summary", "partitions": report.partitions, "segments": segments, "problems": problems, "notes": notes}),
        )?;
    } else {
        let notes = match notes {
            0 => String::new(),
            1 => ", 1 note (a state Kafka accepts)".to_owned(),
            n => format!(", {n} notes (states Kafka accepts)"),
        };
        writeln!(
            out,
            "checked {segments} segments in {} partitions: {problems} problems{notes}",
            report.partitions,
        )?;
    }
    Ok(if report.is_clean() {
        Outcome::Clean
    } else {
        Outcome::Problems
    })
}

pub(crate) fn recover(path: &Path, json: bool, out: &mut impl Write) -> Result<Outcome> {
    crate::common::target(path, crate::common::Use::Recover)?;
    let (log_dir, only) = match crate::common::partition_of(path) {
        Ok((parent, tp)) if RealFs.is_dir(path) => (parent, Some(tp)),
        _ => (path.to_path_buf(), None),
    };
    let dirs = inspect::partition_dirs(&RealFs, path).map_err(lib)?;
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
