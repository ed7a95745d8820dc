//! `seglog recover`: plan, then act. The plan (per partition: bytes cut, segments dropped, files
//! removed, indexes rebuilt) comes first; `--dry-run` prints it and changes nothing. What recovery
//! drops goes to the partition's quarantine unless `--discard`; the summary says what went there
//! and how to put it back.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use seglog_log::inspect;
use seglog_log::{
    EpochEntry, FileSystem as _, LoadReport, LogConfig, LogDir, LogDirOptions, RESTORE_HINT,
    RealFs, RecoveryPlan, TopicPartition, plan_recovery,
};

use crate::common::{Outcome, json_line, lib, progress};
use crate::recover_check::{self, Diagnosis, diagnose};
use crate::recover_json::{all_cuts, path_str, plan_json};
use seglog_log::inspect::{CheckReport, Finding};

/// The flags of `seglog recover`.
#[derive(Debug, Clone, clap::Args)]
#[expect(
    clippy::struct_excessive_bools,
    reason = "one field per command-line flag"
)]
pub(crate) struct RecoverArgs {
    /// A partition directory (topic-N) or a log directory.
    pub(crate) dir: PathBuf,
    /// Print one JSON object per partition.
    #[arg(long)]
    pub(crate) json: bool,
    /// Print the plan (per partition: bytes cut, segments and records dropped, files removed,
    /// indexes rebuilt) and change nothing.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Delete what recovery drops instead of moving it to the partition's seglog-quarantine/.
    #[arg(long)]
    pub(crate) discard: bool,
    /// Scan every segment, whatever the clean-shutdown marker and the recovery points say.
    #[arg(long)]
    pub(crate) full: bool,
    /// A topic config for partitions without a seglog.properties, as key=value (repeatable),
    /// e.g. --config index.interval.bytes=4096 for a broker's directory.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub(crate) configs: Vec<String>,
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog recover --dry-run /var/lib/kafka/orders-0
  seglog recover /var/lib/kafka/orders-0
  seglog recover /var/lib/kafka --config index.interval.bytes=4096   # every partition
  seglog recover --full --discard logs/events-0

What is kept is Kafka's rule: the valid prefix of the first damaged segment from the recovery
point on; the segments after it are dropped. What is dropped (a cut tail, later segments, a
damaged .swap), and any stray entry named like a segment file that is not one (123.log, a
directory 00000000000000000000.log), is moved to <partition>/seglog-quarantine/<n>/ (a Kafka
broker ignores it), with a plan.txt saying what it is and how to put it back; --discard deletes
it instead. Recover first runs `seglog check`'s checks: a partition where they find a problem in
a segment (its batches, its .index, .timeindex or .txnindex) is recovered from that segment on,
as after an unclean shutdown, whatever the clean-shutdown marker says; each problem is listed
with what repairs it. Otherwise Kafka's rule: after a clean shutdown nothing is rescanned but a
damaged active segment; after an unclean one, the segments from the recovery point on; a valid
index is left alone. A killed recover, run again, ends as one uninterrupted run would.
Afterwards `seglog check` passes.

Exit status: 0 when the directory is healthy afterwards (nothing was needed, or it was
repaired; the summary lists every change); 1 when check found a problem recovery cannot repair
(a directory that is not a partition: listed, left as it is); with --dry-run, 0 when nothing
needs doing and 1 when recovery would change something (listed); 2 on bad usage or a failure.";

fn options(
    o: &RecoverArgs,
    bar: Option<Arc<crate::term::Progress>>,
    found: &Diagnosis,
) -> Result<LogDirOptions> {
    let pairs: Vec<(&str, &str)> = o
        .configs
        .iter()
        .map(|c| {
            c.split_once('=')
                .with_context(|| format!("--config {c}: expected key=value"))
        })
        .collect::<Result<_>>()?;
    let default_config = if pairs.is_empty() {
        LogConfig::default()
    } else {
        LogConfig::from_pairs(pairs).map_err(|e| anyhow::anyhow!("--config: {e}"))?
    };
    Ok(LogDirOptions::default()
        .with_default_config(default_config)
        .with_progress(bar.map(|bar| {
            let progress: Arc<seglog_log::ProgressFn> = Arc::new(move |_| bar.inc(1));
            progress
        }))
        // A check that could not finish leaves nothing to trust: every segment is recovered.
        .with_recover_all(o.full || found.failed.is_some())
        .with_recover_from(found.report.recover_from())
        .with_discard(o.discard)
        // An offline repair: a pending `-delete` directory goes at once (Kafka waits for
        // `file.delete.delay.ms` in case a reader still holds it; none can here).
        .with_delete_dirs_at_open(true))
}

/// Runs `seglog recover` on `path`, a partition directory or a log directory. Exit status: 0 when
/// the directory is healthy afterwards (nothing was needed, or it was repaired), with `--dry-run`
/// 0 when nothing needs doing and 1 when recovery would change something; 2 on failure.
pub(crate) fn recover(path: &Path, o: &RecoverArgs, out: &mut impl Write) -> Result<Outcome> {
    crate::common::target(path, crate::common::Use::Recover)?;
    let (log_dir, only) = match crate::common::partition_of(path) {
        Ok((parent, tp)) if RealFs.is_dir(path) => (parent, Some(tp)),
        _ => (path.to_path_buf(), None),
    };
    let selected = |tp: &TopicPartition| only.as_ref().is_none_or(|o| o == tp);
    // What `check` finds decides what is recovered beyond Kafka's rules (recover_check.rs).
    let found = diagnose(path)?;
    if let Some(why) = &found.failed {
        writeln!(
            out,
            "check could not finish ({why}): every segment is recovered, as with --full"
        )?;
    }
    let found = &found;
    if o.dry_run {
        let plan = plan_recovery(&RealFs, &log_dir, &options(o, None, found)?).map_err(lib)?;
        let mut changes = false;
        if only.is_none() {
            for dir in &plan.deleted_dirs {
                changes = true;
                print_deleted_dir(out, dir, o.json, true)?;
            }
        }
        let mut shown = Vec::new();
        for (tp, p) in plan.partitions.iter().filter(|(tp, _)| selected(tp)) {
            changes |= !p.is_empty()
                || recover_check::in_partition(&found.report, tp)
                    .next()
                    .is_some();
            print_partition(out, tp, p, None, o, true, &found.report)?;
            shown.push(tp.clone());
        }
        changes |= print_outside(out, &found.report, &shown, o.json)?;
        if changes && !o.json {
            writeln!(out, "dry run: nothing was changed")?;
        }
        return Ok(if changes {
            Outcome::Problems
        } else {
            Outcome::Clean
        });
    }
    let dirs = inspect::partition_dirs(&RealFs, path).map_err(lib)?;
    let bar = Arc::new(progress(dirs.len() as u64, "recovering"));
    let options = options(o, Some(Arc::clone(&bar)), found)?;
    // One partition given: it alone is opened, nothing else in its log directory is touched.
    let (dir, report) = if only.is_some() {
        let (dir, _, report) = LogDir::open_partition(RealFs, path, options).map_err(lib)?;
        (dir, report)
    } else {
        LogDir::open(RealFs, &log_dir, options).map_err(lib)?
    };
    bar.finish_and_clear();
    for removed in &report.deleted_dirs {
        print_deleted_dir(out, removed, o.json, false)?;
    }
    let mut quarantined = false;
    let mut shown = Vec::new();
    for (tp, load) in report.logs.iter().filter(|(tp, _)| selected(tp)) {
        quarantined |= load.quarantine.is_some();
        print_partition(out, tp, &load.plan, Some(load), o, false, &found.report)?;
        shown.push(tp.clone());
    }
    print_outside(out, &found.report, &shown, o.json)?;
    if quarantined && !o.json {
        writeln!(out, "{RESTORE_HINT}")?;
    }
    print_directory_outcome(&report, o.json, out)?;
    // A clean close: indexes trimmed, checkpoints and the clean-shutdown marker written.
    dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    if !report.failed.is_empty() {
        anyhow::bail!(
            "{} partitions could not be recovered (listed above); the others were",
            report.failed.len()
        );
    }
    let left = found.report.left_to_operator().count();
    if left > 0 {
        if !o.json {
            writeln!(
                out,
                "{left} problems that recovery cannot repair are left as they are (listed above); `seglog check` still reports them"
            )?;
        }
        return Ok(Outcome::Problems);
    }
    Ok(Outcome::Clean)
}

/// Prints the problems found outside the partitions printed (checkpoints, directories that are
/// not partitions); returns whether there were any.
fn print_outside(
    out: &mut impl Write,
    report: &CheckReport,
    shown: &[TopicPartition],
    json: bool,
) -> Result<bool> {
    let mut any = false;
    for finding in recover_check::outside(report, shown) {
        any = true;
        recover_check::print_finding(out, finding, json, "")?;
    }
    Ok(any)
}

/// What a recover could not do beyond the partitions it recovered: partitions that failed to
/// load, directories that are not partitions (left alone).
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

fn print_deleted_dir(out: &mut impl Write, dir: &Path, json: bool, dry_run: bool) -> Result<()> {
    if json {
        json_line(
            out,
            &serde_json::json!({"type": "deleted_dir", "dir": dir.display().to_string(), "dry_run": dry_run}),
        )
    } else {
        let verb = if dry_run { "would remove" } else { "removed" };
        writeln!(
            out,
            "{verb} {} (a partition pending deletion)",
            dir.display()
        )?;
        Ok(())
    }
}

fn print_partition(
    out: &mut impl Write,
    tp: &TopicPartition,
    plan: &RecoveryPlan,
    load: Option<&LoadReport>,
    o: &RecoverArgs,
    dry_run: bool,
    found: &CheckReport,
) -> Result<()> {
    let own: Vec<&Finding> = recover_check::in_partition(found, tp).collect();
    if o.json {
        return print_json(out, tp, plan, load, o, dry_run, &own);
    }
    let found = Found {
        own,
        elsewhere: !found.is_clean(),
    };
    print_text(out, tp, plan, load, o, dry_run, &found)
}

fn print_json(
    out: &mut impl Write,
    tp: &TopicPartition,
    plan: &RecoveryPlan,
    load: Option<&LoadReport>,
    o: &RecoverArgs,
    dry_run: bool,
    found: &[&Finding],
) -> Result<()> {
    let moved: &[(PathBuf, Option<PathBuf>)] = load.map_or(&[], |l| &l.moved);
    {
        let mut value = plan_json(plan);
        let fields = [
            (
                "type",
                serde_json::json!(if dry_run { "plan" } else { "recovered" }),
            ),
            ("partition", serde_json::json!(tp.to_string())),
            ("dry_run", serde_json::json!(dry_run)),
            ("discard", serde_json::json!(o.discard)),
            ("records_dropped", serde_json::json!(plan.records_dropped())),
            (
                "rebuilt_txn_indexes",
                serde_json::json!(load.map_or(&[][..], |l| &l.rebuilt_txn_indexes[..])),
            ),
            ("bytes_dropped", serde_json::json!(plan.bytes_dropped())),
            (
                "moved",
                serde_json::json!(
                    moved
                        .iter()
                        .map(|(from, to)| serde_json::json!({
                            "from": path_str(from),
                            "to": to.as_deref().map(path_str),
                        }))
                        .collect::<Vec<_>>()
                ),
            ),
            (
                "quarantine",
                serde_json::json!(load.and_then(|l| l.quarantine.as_deref()).map(path_str)),
            ),
            // What `check` found in the partition's files, and what repairs each.
            (
                "found",
                serde_json::json!(
                    found
                        .iter()
                        .map(|f| recover_check::finding_json(f))
                        .collect::<Vec<_>>()
                ),
            ),
            // The summary fields of earlier versions.
            ("segments_scanned", serde_json::json!(plan.scanned.len())),
            (
                "bytes_truncated",
                serde_json::json!(all_cuts(plan).map(|c| c.bytes).sum::<u64>()),
            ),
            (
                "indexes_rebuilt",
                serde_json::json!(plan.rebuilt_indexes.len()),
            ),
            (
                "segments_deleted_after_corruption",
                serde_json::json!(plan.dropped.len()),
            ),
            (
                "leftover_files_cleaned",
                serde_json::json!(plan.removed.len()),
            ),
            (
                "log_end_offset",
                serde_json::json!(load.map(|l| l.log_end_offset)),
            ),
            (
                "leader_epochs_rebuilt",
                epochs_json(load.map_or(&[][..], |l| &l.epochs_rebuilt[..])),
            ),
            (
                "leader_epochs_truncated",
                epochs_json(load.map_or(&[][..], |l| &l.epochs_truncated[..])),
            ),
        ];
        if let serde_json::Value::Object(map) = &mut value {
            for (k, v) in fields {
                map.insert(k.to_owned(), v);
            }
        }
        json_line(out, &value)
    }
}

/// What `check` found, as one partition's text shows it.
struct Found<'a> {
    /// The problems in the partition's files.
    own: Vec<&'a Finding>,
    /// Whether `check` found problems at all (here or elsewhere).
    elsewhere: bool,
}

/// Epoch entries as `epoch@start, ...`.
fn epochs_text(entries: &[EpochEntry]) -> String {
    let all: Vec<String> = entries
        .iter()
        .map(|e| format!("{}@{}", e.epoch, e.start_offset))
        .collect();
    all.join(", ")
}

fn epochs_json(entries: &[EpochEntry]) -> serde_json::Value {
    serde_json::json!(
        entries
            .iter()
            .map(|e| serde_json::json!({"epoch": e.epoch, "start_offset": e.start_offset}))
            .collect::<Vec<_>>()
    )
}

fn print_text(
    out: &mut impl Write,
    tp: &TopicPartition,
    plan: &RecoveryPlan,
    load: Option<&LoadReport>,
    o: &RecoverArgs,
    dry_run: bool,
    found: &Found<'_>,
) -> Result<()> {
    let moved: &[(PathBuf, Option<PathBuf>)] = load.map_or(&[], |l| &l.moved);
    let rebuilt_txn: &[i64] = load.map_or(&[], |l| &l.rebuilt_txn_indexes);
    let epochs_rebuilt: &[EpochEntry] = load.map_or(&[], |l| &l.epochs_rebuilt);
    let epochs_truncated: &[EpochEntry] = load.map_or(&[], |l| &l.epochs_truncated);
    // Never "nothing" beside a problem `check` reports.
    let nothing = plan.is_empty()
        && rebuilt_txn.is_empty()
        && epochs_rebuilt.is_empty()
        && epochs_truncated.is_empty()
        && found.own.is_empty();
    let head = match (nothing, dry_run, found.elsewhere) {
        // A problem outside the partition's files (a checkpoint) is listed after the partitions.
        (true, true, true) => "its files need no recovery".to_owned(),
        (true, false, true) => "its files needed no recovery".to_owned(),
        (true, true, false) => "nothing to recover".to_owned(),
        (false, true, _) => "recovery would".to_owned(),
        (true, false, false) => "nothing needed recovery".to_owned(),
        (false, false, _) => "recovered".to_owned(),
    };
    let end = load.map_or_else(String::new, |l| {
        format!(" (log end offset {})", l.log_end_offset)
    });
    let colon = if nothing { "" } else { ":" };
    writeln!(out, "{tp}: {head}{end}{colon}")?;
    for finding in &found.own {
        recover_check::print_finding(out, finding, false, "  ")?;
    }
    for line in plan.to_string().lines() {
        writeln!(out, "  {line}")?;
    }
    for base in rebuilt_txn {
        writeln!(
            out,
            "  rebuilt the .txnindex of segment {base}: it was not what the transaction markers give"
        )?;
    }
    if !epochs_rebuilt.is_empty() {
        writeln!(
            out,
            "  leader-epoch-checkpoint: added {} from the recovered batches (epoch@start offset)",
            epochs_text(epochs_rebuilt)
        )?;
    }
    if !epochs_truncated.is_empty() {
        writeln!(
            out,
            "  leader-epoch-checkpoint: removed {} (past the log end, or before the log start)",
            epochs_text(epochs_truncated)
        )?;
    }
    for (from, to) in moved {
        match to {
            Some(to) => writeln!(out, "  moved {} -> {}", from.display(), to.display())?,
            None => writeln!(out, "  deleted {} (--discard)", from.display())?,
        }
    }
    let whither = match (
        load.and_then(|l| l.quarantine.as_deref()),
        dry_run,
        o.discard,
    ) {
        (Some(q), _, _) => format!("set aside in {}", q.display()),
        (None, _, true) => "deleted (--discard)".to_owned(),
        (None, true, false) => format!(
            "to be set aside in {}",
            plan.dir.join(seglog_log::QUARANTINE_DIR).display()
        ),
        (None, false, false) => "set aside".to_owned(),
    };
    if !plan.strays.is_empty() {
        writeln!(
            out,
            "  strays: {} entries named like segment files that are not segments (Kafka never reads their bytes); {whither}",
            plan.strays.len(),
        )?;
    }
    if plan.drops_data() {
        writeln!(
            out,
            "  dropped: {} segments ({} records), {} cut tails, {} swaps, {} producer snapshots; {} bytes {whither}",
            plan.dropped.len(),
            plan.records_dropped(),
            plan.cuts.len(),
            plan.bad_swaps.len(),
            plan.dropped_snapshots.len(),
            plan.bytes_dropped()
        )?;
    }
    Ok(())
}

impl RecoverArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> Result<Outcome> {
        recover(&self.dir, self, out)
    }
}
