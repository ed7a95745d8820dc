//! The check report: what `seglog check` finds in a partition or a whole log directory,
//! changing nothing. Each problem names the file and, where it is inside a file, the byte.

mod epochs;
mod index;
mod log;
mod producer;
mod quarantine;
mod records;
mod repair;
mod swap;
mod topic_ids;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::naming;

use super::log_dir::LogDirView;
use super::partition::PartitionView;
use crate::checkpoint::{LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT};
use crate::error::{Error, Result};
use crate::listing::{FileKind, PartitionFile};
use crate::topic_partition::{DirKind, TopicPartition};

pub use repair::Repair;

/// How much a [`Finding`] matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Severity {
    /// A state Kafka itself accepts at start-up and tidies without touching a record (a
    /// `.deleted` file a broker leaves when it stops before `file.delete.delay.ms`, an orphan
    /// index, a `-delete` directory, ...): reported, but the directory is healthy.
    Note,
    /// Damage or an interrupted write that recovery must repair.
    Problem,
}

impl Severity {
    /// `"note"` or `"problem"`, as `seglog check --json` prints it.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Problem => "problem",
        }
    }
}

impl std::fmt::Display for Severity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One thing found by [`LogDirView::check`]: one per cause, however many entries or bytes the
/// cause touches ([`count`](Self::count) says how many).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file (or directory) it is in.
    pub file: PathBuf,
    /// The byte of the file where it starts, when it is inside the file.
    pub position: Option<u64>,
    /// A stable name for the kind of finding (`torn_tail`, `index_mismatch`, `deleted_file`, ...).
    pub kind: &'static str,
    /// What is wrong, for a reader.
    pub detail: String,
    /// A problem, or a note about a state Kafka accepts.
    pub severity: Severity,
    /// How many entries (or files) the one cause affects; 1 for most kinds.
    pub count: u64,
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
            severity: Severity::Problem,
            count: 1,
        }
    }

    fn note(file: &Path, kind: &'static str, detail: impl Into<String>) -> Self {
        Self {
            severity: Severity::Note,
            ..Self::new(file, None, kind, detail)
        }
    }

    fn with_count(self, count: u64) -> Self {
        Self { count, ..self }
    }

    /// Whether this is a [`Severity::Problem`].
    pub fn is_problem(&self) -> bool {
        self.severity == Severity::Problem
    }
}

/// What [`LogDirView::check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// The live partition directories checked (a `-delete` directory is a note, not checked).
    pub partitions: usize,
    /// The segments checked.
    pub segments: usize,
    /// The problems and notes, in the order found.
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// Whether no problem was found (notes may have been).
    pub fn is_clean(&self) -> bool {
        self.problems() == 0
    }

    /// How many findings are problems.
    pub fn problems(&self) -> usize {
        self.findings.iter().filter(|f| f.is_problem()).count()
    }

    /// How many findings are notes.
    pub fn notes(&self) -> usize {
        self.findings.len() - self.problems()
    }
}

fn index_error(e: seglog_mmap_index::Error) -> Error {
    seglog_segment::Error::from(e).into()
}

impl<F: FileSystem> LogDirView<F> {
    /// Verifies every partition (framing, CRCs, offsets, both indexes against the batches,
    /// leftover and orphan files) and the log directory's checkpoints against the log ends.
    /// `on_partition` is called after each partition.
    pub fn check(&self, mut on_partition: impl FnMut()) -> Result<CheckReport> {
        let dirs = self.partitions();
        let mut findings = Vec::new();
        let mut segments = 0;
        let mut log_ends = BTreeMap::new();
        let mut checked = 0;
        let mut topic_ids = topic_ids::TopicIds::new();
        for dir in dirs {
            if matches!(TopicPartition::parse_dir(dir), Ok((_, DirKind::Delete))) {
                // Kafka neither loads nor recovers it: it deletes it at start-up.
                findings.push(Finding::note(
                    dir,
                    "pending_delete_dir",
                    "a deleted partition's directory (-delete); Kafka deletes it at its next start",
                ));
                on_partition();
                continue;
            }
            let partition = self.partition(dir)?;
            let (n, log_end) = check_partition(&partition, &mut findings)?;
            topic_ids::check_partition_metadata(&partition, &mut topic_ids, &mut findings);
            epochs::check_epoch_checkpoint(&partition, log_end, &mut findings);
            segments += n;
            checked += 1;
            log_ends.insert(partition.topic_partition().clone(), log_end);
            on_partition();
        }
        topic_ids::check_topic_ids(&topic_ids, &mut findings);
        if !self.is_partition() {
            for dir in crate::listing::not_partition_dirs(self.fs(), self.path()) {
                findings.push(Finding::new(
                    &dir,
                    None,
                    "not_a_partition",
                    "a directory whose name is not topic-N: Kafka refuses this log directory; seglog leaves it alone",
                ));
            }
        }
        // Checkpoints live in the log directory.
        if let Some(log_dir) = self.log_dir() {
            check_checkpoints(self.fs(), log_dir, &log_ends, &mut findings);
        }
        Ok(CheckReport {
            partitions: checked,
            segments,
            findings,
        })
    }
}

fn check_checkpoints<F: FileSystem>(
    fs: &F,
    log_dir: &Path,
    log_ends: &BTreeMap<TopicPartition, i64>,
    findings: &mut Vec<Finding>,
) {
    for name in [RECOVERY_POINT_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT] {
        let path = log_dir.join(name);
        if !fs.exists(&path) {
            continue;
        }
        match OffsetCheckpoint::new(fs.clone(), &path).read() {
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

/// The files Kafka's loader deletes at start-up without touching a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Leftover {
    /// `*.deleted`: a retention, cleaning or truncation renamed them; their delay had not passed.
    Deleted,
    /// `*.cleaned`: a cleaning's output that was never swapped in.
    Cleaned,
    /// An index whose `.log` is gone.
    OrphanIndex,
}

/// The note for the leftover files `paths` of the segment at `base`, named by its `.log`'s file
/// where there is one.
fn leftover_note(kind: Leftover, base: Option<i64>, paths: &[&Path]) -> Finding {
    let shown = paths
        .iter()
        .find(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains(naming::LOG_FILE_SUFFIX))
        })
        .or(paths.first())
        .copied()
        .unwrap_or_else(|| Path::new(""));
    let files = if paths.len() == 1 {
        String::new()
    } else {
        let names: Vec<&str> = paths
            .iter()
            .filter_map(|p| p.file_name().and_then(|n| n.to_str()))
            .collect();
        let segment = base.map_or_else(String::new, |b| format!(" of the segment at offset {b}"));
        format!("{} files{segment} ({}): ", paths.len(), names.join(", "))
    };
    let (name, what) = match kind {
        Leftover::Deleted => (
            "deleted_file",
            "scheduled for deletion by a retention, cleaning or truncation (file.delete.delay.ms had not passed); Kafka deletes such files at its next start",
        ),
        Leftover::Cleaned => (
            "cleaned_file",
            "the output of a cleaning that did not finish; Kafka deletes it at its next start, and the segments it was to replace are in place",
        ),
        Leftover::OrphanIndex => (
            "orphan_index",
            "an index without its .log (left by an interrupted deletion); it holds no records, and Kafka deletes it at its next start",
        ),
    };
    Finding::note(shown, name, format!("{files}{what}")).with_count(paths.len() as u64)
}

/// A stray entry named like a segment file, with what recover does with it.
fn stray_finding(file: &PartitionFile) -> Option<Finding> {
    let reason = file.stray_reason()?;
    let then = if file.is_set_aside() {
        "; recover sets it aside in the quarantine"
    } else {
        ""
    };
    Some(Finding::new(
        file.path(),
        None,
        "stray_file",
        format!("{reason}{then}"),
    ))
}

/// An empty segment whose base offset lies above the end of the ones before it: Kafka's loader
/// keeps it as it is and takes its base offset as the log end offset. Kafka makes such segments
/// itself: `truncateFullyAndStartAt` starts a log at any offset, and a follower rolls at the first
/// offset of a fetched batch, which lies above its log end when the leader's log was compacted.
fn gap_note(log: &Path, end: i64, base: i64) -> Finding {
    Finding::note(
        log,
        "empty_segment_after_gap",
        format!(
            "an empty segment at base offset {base}, above the end of the segments before it              ({end}): offsets {end}..={} hold no records and the log end offset is {base}; Kafka              loads it as it is",
            base - 1
        ),
    )
}

/// Checks one partition directory; returns the segments checked and the log end offset.
fn check_partition<F: FileSystem>(
    partition: &PartitionView<F>,
    findings: &mut Vec<Finding>,
) -> Result<(usize, i64)> {
    let dir = partition.dir();
    let mut logs = Vec::new();
    // Kafka's loader deletes `.swap` files at or above the lowest `.cleaned` offset (an
    // unfinished split) and completes the others.
    let min_cleaned = partition
        .files()
        .iter()
        .filter(|f| f.kind() == FileKind::Cleaned)
        .filter_map(|f| naming::offset_from_file_name(f.name()))
        .min();
    let has_log = |base: i64, suffix: &str| {
        partition.fs().exists(&dir.join(format!(
            "{}{}{suffix}",
            naming::file_prefix(base),
            naming::LOG_FILE_SUFFIX
        )))
    };
    let bad_swaps = swap::damaged_swaps(partition);
    let mut leftovers: Vec<(Leftover, &Path)> = Vec::new();
    for file in partition.files() {
        let path = file.path();
        let name = file.name();
        if file.is_quarantine() {
            findings.push(quarantine::quarantine_note(partition.fs(), path));
            continue;
        }
        if let Some(finding) = stray_finding(file) {
            findings.push(finding);
            continue;
        }
        let base = naming::offset_from_file_name(name);
        match file.kind() {
            FileKind::Deleted => leftovers.push((Leftover::Deleted, path)),
            FileKind::Cleaned => leftovers.push((Leftover::Cleaned, path)),
            FileKind::Swap if min_cleaned.is_some_and(|c| base.is_some_and(|b| b >= c)) => {
                findings.push(Finding::new(
                    path,
                    None,
                    "interrupted_swap",
                    "part of a segment split that did not finish (a .cleaned file at or below its offset); recover, or Kafka at start-up, deletes it",
                ));
            }
            // One finding per damaged swap, on its `.log.swap`, naming its index swaps.
            FileKind::Swap if base.is_some_and(|b| bad_swaps.contains_key(&b)) => {
                findings.extend(swap::damaged_swap_finding(partition, file, &bad_swaps));
            }
            FileKind::Swap => findings.push(Finding::new(
                path,
                None,
                "interrupted_swap",
                "a cleaned segment not yet renamed into place (a stop during the swap); recover, or Kafka at start-up, completes the swap",
            )),
            FileKind::OffsetIndex | FileKind::TimeIndex | FileKind::TxnIndex
                if base.is_some_and(|b| !has_log(b, "") && !has_log(b, naming::SWAP_FILE_SUFFIX)) =>
            {
                leftovers.push((Leftover::OrphanIndex, path));
            }
            _ => {
                if let Some(base) = file.log_base_offset() {
                    logs.push((base, path.to_path_buf()));
                }
            }
        }
    }
    // One note per segment and kind: a segment's .log, .index and .timeindex go together.
    let mut pending: BTreeMap<(Leftover, Option<i64>, &Path), Vec<&Path>> = BTreeMap::new();
    for (kind, path) in leftovers {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let base = naming::offset_from_file_name(name);
        let own = if base.is_some() { Path::new("") } else { path };
        pending.entry((kind, base, own)).or_default().push(path);
    }
    for ((kind, base, _), paths) in pending {
        findings.push(leftover_note(kind, base, &paths));
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
        let batches = log::check_log(partition.fs(), *base, log, findings)?;
        let next_base = logs.get(i + 1).map(|(b, _)| *b);
        records::check_records(partition.fs(), *base, next_base, log, findings)?;
        if i > 0 && batches.is_empty() && *base > log_end {
            findings.push(gap_note(log, log_end, *base));
        }
        if let Some((_, last_offset, _)) = batches.last() {
            previous_last = previous_last.max(*last_offset);
        }
        // An empty segment (a log truncated or emptied to its base) ends where it starts.
        log_end = log_end.max(*base).max(previous_last.saturating_add(1));
        index::check_indexes(partition, *base, &batches, i == last, findings)?;
    }
    producer::check_producer_files(partition, &logs, log_end, findings)?;
    Ok((logs.len(), log_end))
}
