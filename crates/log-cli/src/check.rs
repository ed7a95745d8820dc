//! `seglog check`: verify a partition or a whole log directory, changing nothing.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use seglog_log::RealFs;
use seglog_log::inspect::LogDirView;

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
