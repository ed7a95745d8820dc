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

/// The flags of `seglog check`.
#[derive(Debug, clap::Args)]
pub(crate) struct CheckArgs {
    /// A partition directory (topic-N) or a log directory.
    dir: std::path::PathBuf,
    /// Print JSON Lines: {"type":"problem" or "note","severity","file","position","kind","count","detail"},
    /// then a summary.
    #[arg(long)]
    json: bool,
}

impl CheckArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        check(&self.dir, self.json, out)
    }
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog check /var/lib/kafka/orders-0
  seglog check --json /var/lib/kafka

Each problem is one line naming the file and byte. States Kafka itself accepts at start-up (the
.deleted files of a broker stopped before file.delete.delay.ms, an orphan index, a -delete
directory, ...) are listed as notes.

Exit status: 0 when no problem was found (notes do not count), 1 when problems were found, 2 on
bad usage or an I/O failure.";
