//! The check `seglog recover` runs before it plans: the same findings `seglog check` reports,
//! each with what repairs it ([`Finding::repair`]). A problem inside a segment makes recover
//! recover its partition from that segment on, whatever the clean-shutdown marker and the
//! recovery point say; a problem the open repairs anyway needs nothing more; one recovery cannot
//! repair makes recover exit 1, naming it.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use seglog_log::inspect::{CheckReport, Finding, LogDirView, Repair};
use seglog_log::{RealFs, TopicPartition};

use crate::common::{json_line, lib, progress};

/// What the check found, or why it could not finish.
pub(crate) struct Diagnosis {
    /// The check's report (empty when it failed).
    pub(crate) report: CheckReport,
    /// Why the check could not finish: recover then recovers every segment, as `--full` does.
    pub(crate) failed: Option<String>,
}

/// Runs `seglog check`'s checks on `path`, changing nothing.
pub(crate) fn diagnose(path: &Path) -> Result<Diagnosis> {
    let view = LogDirView::open(RealFs, &crate::common::named(path)?).map_err(lib)?;
    let bar = progress(view.partitions().len() as u64, "checking");
    let result = view.check(|| bar.inc(1));
    bar.finish_and_clear();
    Ok(match result {
        Ok(report) => Diagnosis {
            report,
            failed: None,
        },
        Err(e) => Diagnosis {
            report: CheckReport::default(),
            failed: Some(e.to_string()),
        },
    })
}

/// The partition a finding is in (a live partition directory), if any.
pub(crate) fn partition_of(finding: &Finding) -> Option<TopicPartition> {
    let dir = finding.file.parent()?;
    match TopicPartition::parse_dir(dir) {
        Ok((tp, seglog_log::DirKind::Live)) => Some(tp),
        _ => None,
    }
}

/// How recover repairs a finding, in words and as `--json` names it.
fn repair_words(repair: Option<&Repair>) -> (&'static str, &'static str) {
    match repair {
        Some(Repair::RecoverFrom { .. }) => (
            "recover_segment",
            "repaired by recovering the segment (and the segments after it)",
        ),
        Some(Repair::Load) => ("open", "repaired by the open"),
        None => ("none", "a state Kafka accepts"),
        Some(_) => ("manual", "left as it is: recover cannot repair it"),
    }
}

/// A problem finding as `--json` shows it: `seglog check --json`'s fields and the repair
/// (`recover_segment`, `open` or `manual`).
pub(crate) fn finding_json(finding: &Finding) -> serde_json::Value {
    let (name, _) = repair_words(finding.repair().as_ref());
    serde_json::json!({
        "file": finding.file.display().to_string(),
        "position": finding.position,
        "kind": finding.kind,
        "count": finding.count,
        "detail": finding.detail,
        "repair": name,
    })
}

/// Prints one problem finding as recover acts on it: under its partition (`indent`), or at the
/// directory level.
pub(crate) fn print_finding(
    out: &mut impl Write,
    finding: &Finding,
    json: bool,
    indent: &str,
) -> Result<()> {
    if json {
        let mut value = finding_json(finding);
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("type".to_owned(), serde_json::json!("found"));
        }
        return json_line(out, &value);
    }
    let (_, words) = repair_words(finding.repair().as_ref());
    let at = finding
        .position
        .map_or_else(String::new, |p| format!(" at byte {p}"));
    writeln!(
        out,
        "{indent}check found {}{at}: {}: {words}",
        finding.file.display(),
        finding.kind
    )?;
    Ok(())
}

/// The problem findings in partition `tp`.
pub(crate) fn in_partition<'a>(
    report: &'a CheckReport,
    tp: &'a TopicPartition,
) -> impl Iterator<Item = &'a Finding> {
    report
        .findings
        .iter()
        .filter(move |f| f.is_problem() && partition_of(f).as_ref() == Some(tp))
}

/// The problem findings outside every partition recover prints (`shown`): checkpoints, a
/// directory that is not a partition, a `-future` directory.
pub(crate) fn outside<'a>(
    report: &'a CheckReport,
    shown: &'a [TopicPartition],
) -> impl Iterator<Item = &'a Finding> {
    report
        .findings
        .iter()
        .filter(move |f| f.is_problem() && partition_of(f).is_none_or(|tp| !shown.contains(&tp)))
}
