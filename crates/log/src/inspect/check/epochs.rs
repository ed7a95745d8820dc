//! Checking a partition's `leader-epoch-checkpoint` against its log: a malformed file (Kafka
//! fails the log directory), entries whose epochs or start offsets do not increase (Kafka's
//! cache drops them), a negative entry (Kafka's cache refuses it), an epoch starting past the
//! log end (its records are gone; Kafka's loader truncates the cache to the log end, as
//! `seglog recover` does).

use seglog_fs::{File, FileSystem, OpenMode};

use super::super::partition::PartitionView;
use super::Finding;
use crate::checkpoint::LeaderEpochCheckpoint;
use crate::epoch::{EpochProblem, check_epochs};

/// Checks the `leader-epoch-checkpoint` of `partition`, whose log ends at `log_end`.
pub(super) fn check_epoch_checkpoint<F: FileSystem>(
    partition: &PartitionView<F>,
    log_end: i64,
    findings: &mut Vec<Finding>,
) {
    let checkpoint = LeaderEpochCheckpoint::in_dir(partition.fs().clone(), partition.dir());
    let path = checkpoint.path();
    if !partition.fs().exists(path) {
        return;
    }
    let entries = match checkpoint.read_as_written() {
        Ok(entries) => entries,
        Err(e) => {
            findings.push(Finding::new(
                path,
                None,
                "bad_leader_epoch_checkpoint",
                format!("{e}; Kafka fails the log directory when it loads this partition"),
            ));
            return;
        }
    };
    let starts = line_starts(partition.fs(), path);
    for problem in check_epochs(&entries, log_end) {
        let kind = match problem {
            EpochProblem::PastLogEnd { .. } => "leader_epoch_past_log_end",
            _ => "leader_epoch_not_increasing",
        };
        let repair = match problem {
            EpochProblem::PastLogEnd { .. } => {
                "Kafka's loader, and recover, truncate the cache to the log end"
            }
            EpochProblem::Negative { .. } => "Kafka refuses the file when it loads this partition",
            _ => {
                "Kafka's cache drops the entries before it when it loads them, and so does seglog's; the file keeps them until the cache is next written, and recover leaves it as it is"
            }
        };
        let line = problem.line();
        let mut finding = Finding::new(
            path,
            None,
            kind,
            format!("line {line}: {problem}; {repair}"),
        );
        finding.position = starts.get(line.saturating_sub(1)).copied();
        findings.push(finding);
    }
}

/// The byte where each line of the file starts (empty if it cannot be read).
fn line_starts<F: FileSystem>(fs: &F, path: &std::path::Path) -> Vec<u64> {
    let Ok(file) = fs.open(path, OpenMode::ReadOnly) else {
        return Vec::new();
    };
    let len = file
        .len()
        .ok()
        .and_then(|l| usize::try_from(l).ok())
        .unwrap_or(0);
    let mut buf = vec![0; len];
    if file.read_exact_at(&mut buf, 0).is_err() {
        return Vec::new();
    }
    let mut starts = vec![0];
    starts.extend(
        buf.iter()
            .enumerate()
            .filter(|(_, b)| **b == b'\n')
            .map(|(i, _)| i as u64 + 1),
    );
    starts
}
