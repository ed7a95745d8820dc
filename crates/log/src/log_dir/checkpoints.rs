//! The log directory's recovery-point, log-start-offset and high-watermark checkpoints: read
//! once on open, and written with the entries of the partitions this handle holds, keeping as
//! they were the entries of partitions it does not hold (outside its scope, or failed to load).
//!
//! `replication-offset-checkpoint` is Kafka's `ReplicaManager`'s (`checkpointHighWatermarks`):
//! every partition's high watermark, written at the checkpoint interval and on close. A log
//! opens with the high watermark it holds, clamped to its offsets; one without an entry opens
//! with the high watermark at its log end. seglog has no replica manager: only logs whose high
//! watermark was set (by the embedder, or from the file at open) have an entry written.

use std::collections::BTreeMap;
use std::path::Path;

use seglog_fs::FileSystem;

use super::{LogDir, LogDirReport, Scope};
use crate::checkpoint::{
    LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT, write_offset_checkpoints,
};
use crate::error::Result;
use crate::topic_partition::TopicPartition;

/// The checkpoint entries read on open.
#[derive(Debug, Default)]
pub(super) struct Kept {
    pub(super) recovery_points: BTreeMap<TopicPartition, i64>,
    pub(super) log_starts: BTreeMap<TopicPartition, i64>,
    pub(super) high_watermarks: BTreeMap<TopicPartition, i64>,
}

impl Kept {
    /// Forgets a partition this handle deleted.
    pub(super) fn forget(&mut self, tp: &TopicPartition) {
        self.recovery_points.remove(tp);
        self.log_starts.remove(tp);
        self.high_watermarks.remove(tp);
    }
}

pub(super) fn read_checkpoint<F: FileSystem>(
    fs: &F,
    path: &Path,
    report: &mut LogDirReport,
) -> BTreeMap<TopicPartition, i64> {
    match OffsetCheckpoint::new(fs.clone(), path).read() {
        Ok(entries) => entries,
        Err(e) => {
            // Kafka treats an unreadable recovery-point or log-start checkpoint as empty.
            report.checkpoint_errors.push(e.to_string());
            BTreeMap::new()
        }
    }
}

impl<F: FileSystem> LogDir<F> {
    /// Writes `recovery-point-offset-checkpoint` (every log's recovery point),
    /// `log-start-offset-checkpoint` (only logs whose start is past their first segment, as Kafka
    /// writes it) and `replication-offset-checkpoint` (the high watermark of every log whose
    /// high watermark is set, see [`PartitionLog::high_watermark_is_set`](crate::PartitionLog::high_watermark_is_set), as Kafka's
    /// `ReplicaManager` writes it). The entries of partitions this handle does not hold stay as they were read on
    /// open: every entry with [`Scope::Only`], those of partitions that failed to load with
    /// [`Scope::All`] (Kafka drops the entries of partitions that are gone).
    pub fn checkpoint(&self) -> Result<()> {
        let logs = self.logs();
        let mut recovery = BTreeMap::new();
        let mut starts = BTreeMap::new();
        let mut high_watermarks = BTreeMap::new();
        {
            let kept = self.kept.lock();
            let unavailable = self.unavailable.read();
            let keep = |tp: &TopicPartition| {
                !logs.iter().any(|l| l.topic_partition() == tp)
                    && (self.scope != Scope::All || unavailable.contains_key(tp))
            };
            for (tp, offset) in &kept.recovery_points {
                if keep(tp) {
                    recovery.insert(tp.clone(), *offset);
                }
            }
            for (tp, offset) in &kept.log_starts {
                if keep(tp) {
                    starts.insert(tp.clone(), *offset);
                }
            }
            for (tp, offset) in &kept.high_watermarks {
                if keep(tp) {
                    high_watermarks.insert(tp.clone(), *offset);
                }
            }
        }
        for log in &logs {
            let tp = log.topic_partition().clone();
            recovery.insert(tp.clone(), log.recovery_point());
            if log.high_watermark_is_set() {
                high_watermarks.insert(tp.clone(), log.high_watermark());
            }
            if log
                .segments()
                .keys()
                .next()
                .is_some_and(|first| log.log_start_offset() > *first)
            {
                starts.insert(tp, log.log_start_offset());
            }
        }
        // The renames made durable by one fsync of the directory, before anything (the
        // clean-shutdown marker) relies on them.
        write_offset_checkpoints(
            &self.fs,
            &[
                (&self.path.join(RECOVERY_POINT_CHECKPOINT), &recovery),
                (&self.path.join(LOG_START_OFFSET_CHECKPOINT), &starts),
                (
                    &self.path.join(REPLICATION_OFFSET_CHECKPOINT),
                    &high_watermarks,
                ),
            ],
        )
    }
}
