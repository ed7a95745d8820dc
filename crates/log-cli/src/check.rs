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
    let view = LogDirView::open(RealFs, path).map_err(lib)?;
    let bar = progress(view.partitions().len() as u64, "checking");
    let report = view.check(|| bar.inc(1)).map_err(lib)?;
    bar.finish_and_clear();
    let findings = &report.findings;
    for f in findings {
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
    let segments = report.segments;
    if json {
        json_line(
            out,
            &serde_json::json!({"type": "summary", "partitions": report.partitions, "segments": segments, "problems": findings.len()}),
        )?;
    } else {
        writeln!(
            out,
            "checked {segments} segments in {} partitions: {} problems",
            report.partitions,
            findings.len()
        )?;
    }
    Ok(if report.is_clean() {
        Outcome::Clean
    } else {
        Outcome::Problems
    })
}

pub(crate) fn recover(path: &Path, json: bool, out: &mut impl Write) -> Result<Outcome> {
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
    // One partition given: it alone is opened, nothing else in its log directory is touched.
    let (dir, report) = if only.is_some() {
        let (dir, _, report) = LogDir::open_partition(RealFs, path, options).map_err(lib)?;
        (dir, report)
    } else {
        LogDir::open(RealFs, &log_dir, options).map_err(lib)?
    };
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
    print_directory_outcome(&report, json, out)?;
    // A clean close: indexes trimmed, checkpoints and the clean-shutdown marker written.
    dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    if !report.failed.is_empty() {
        anyhow::bail!(
            "{} partitions could not be recovered (listed above); the others were",
            report.failed.len()
        );
    }
    Ok(Outcome::Clean)
}

/// What a recover did or could not do beyond the partitions it recovered: partitions that failed
/// to load, `-delete` directories removed, directories that are not partitions (left alone).
fn print_directory_outcome(
    report: &seglog_log::LogDirReport,
    json: bool,
    out: &mut impl Write,
) -> Result<()> {
    for failure in &report.failed {
        if json {
            json_line(
                out,
                &serde_json::json!({
                    "type": "failed",
                    "partition": failure.topic_partition.to_string(),
                    "path": failure.path,
                    "error": failure.error.to_string(),
                }),
            )?;
        } else {
            writeln!(
                out,
                "{}: not recovered: {}",
                failure.path.display(),
                failure.error
            )?;
        }
    }
    for removed in &report.deleted_dirs {
        if json {
            json_line(
                out,
                &serde_json::json!({"type": "removed_dir", "path": removed}),
            )?;
        } else {
            writeln!(
                out,
                "{}: removed (a partition pending deletion)",
                removed.display()
            )?;
        }
    }
    for stray in &report.not_partitions {
        if json {
            json_line(
                out,
                &serde_json::json!({"type": "not_a_partition", "path": stray}),
            )?;
        } else {
            writeln!(
                out,
                "{}: not a partition directory, left alone",
                stray.display()
            )?;
        }
    }
    Ok(())
}
