//! The check report: what `seglog check` finds in a partition or a whole log directory,
//! changing nothing. Each problem names the file and, where it is inside a file, the byte.

mod index;
mod log;
mod records;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::naming;

use super::log_dir::LogDirView;
use super::partition::PartitionView;
use crate::checkpoint::{LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT};
use crate::error::{Error, Result};
use crate::listing::FileKind;
use crate::topic_partition::TopicPartition;

/// One problem found by [`LogDirView::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// The file it is in.
    pub file: PathBuf,
    /// The byte of the file where it starts, when it is inside the file.
    pub position: Option<u64>,
    /// A stable name for the kind of problem (`torn_tail`, `index_mismatch`, ...).
    pub kind: &'static str,
    /// What is wrong, for a reader.
    pub detail: String,
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

/// What [`LogDirView::check`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckReport {
    /// The partition directories checked.
    pub partitions: usize,
    /// The segments checked.
    pub segments: usize,
    /// The problems, in the order found.
    pub findings: Vec<Finding>,
}

impl CheckReport {
    /// Whether nothing was found.
    pub fn is_clean(&self) -> bool {
        self.findings.is_empty()
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
        for dir in dirs {
            let partition = self.partition(dir)?;
            let (n, log_end) = check_partition(&partition, &mut findings)?;
            segments += n;
            log_ends.insert(partition.topic_partition().clone(), log_end);
            on_partition();
        }
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
            partitions: dirs.len(),
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

/// Checks one partition directory; returns the segments checked and the log end offset.
fn check_partition<F: FileSystem>(
    partition: &PartitionView<F>,
    findings: &mut Vec<Finding>,
) -> Result<(usize, i64)> {
    let dir = partition.dir();
    let mut logs = Vec::new();
    for file in partition.files() {
        let path = file.path();
        let name = file.name();
        if let Some(reason) = file.stray_reason() {
            findings.push(Finding::new(path, None, "stray_file", reason));
        } else if file.kind().is_leftover() {
            findings.push(Finding::new(
                path,
                None,
                "leftover_file",
                "an interrupted deletion, cleaning or swap; open or recover finishes it",
            ));
        } else if let Some(base) = file.log_base_offset() {
            logs.push((base, path.to_path_buf()));
        } else if matches!(file.kind(), FileKind::OffsetIndex | FileKind::TimeIndex)
            && naming::offset_from_file_name(name).is_some_and(|o| {
                !partition.fs().exists(&dir.join(format!(
                    "{}{}",
                    naming::file_prefix(o),
                    naming::LOG_FILE_SUFFIX
                )))
            })
        {
            findings.push(Finding::new(
                path,
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
        let batches = log::check_log(partition.fs(), *base, log, findings)?;
        let next_base = logs.get(i + 1).map(|(b, _)| *b);
        records::check_records(partition.fs(), *base, next_base, log, findings)?;
        if let Some((_, last_offset, _)) = batches.last() {
            previous_last = previous_last.max(*last_offset);
        }
        // An empty segment (a log truncated or emptied to its base) ends where it starts.
        log_end = log_end.max(*base).max(previous_last.saturating_add(1));
        index::check_indexes(partition, *base, &batches, i == last, findings)?;
    }
    Ok((logs.len(), log_end))
}
