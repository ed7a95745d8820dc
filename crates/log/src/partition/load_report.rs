//! What a partition's load did, step by step ([`LoadReport`]).

use std::path::PathBuf;

use seglog_segment::RecoveryReport;

use super::recovery_plan::RecoveryPlan;

/// What [`PartitionLog::open`](crate::PartitionLog::open) did, step by step.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// `*.deleted` files removed (step 1).
    pub deleted_files: Vec<PathBuf>,
    /// `*.cleaned` files, and `*.swap` files at or above the smallest cleaned offset, removed:
    /// an interrupted cleaning or split, aborted (step 1).
    pub aborted_files: Vec<PathBuf>,
    /// Files replaced by a completed swap, removed (step 3).
    pub replaced_files: Vec<PathBuf>,
    /// Base offsets of `.swap` segments renamed into place (step 4).
    pub completed_swaps: Vec<i64>,
    /// Index files without a `.log`, removed (step 5).
    pub orphan_indexes: Vec<PathBuf>,
    /// Segments whose `.index` was missing, rebuilt by recovery (step 5).
    pub rebuilt_missing_index: Vec<i64>,
    /// Segments recovered after an unclean shutdown, with what recovery did (step 6).
    pub recovered: Vec<(i64, RecoveryReport)>,
    /// Segments split because their offsets overflow their indexes (KAFKA-6264): each one's
    /// base offset and its pieces' (step 6, before the pieces are recovered).
    pub splits: Vec<(i64, Vec<i64>)>,
    /// Segments dropped because an earlier segment was truncated, or because their base offset
    /// lies below the end of the segment before them (step 6): moved to the quarantine, or with
    /// [`LoadOptions::discard`](crate::LoadOptions::discard) deleted.
    pub deleted_after_corruption: Vec<i64>,
    /// The plan the load carried out: everything it changed, decided before the first change.
    pub plan: RecoveryPlan,
    /// The quarantine directory that holds what this load dropped or set aside (`None`: nothing
    /// was, or it was discarded).
    pub quarantine: Option<PathBuf>,
    /// What each dropped file and stray entry became: its path in the quarantine (`None` when
    /// discarded). Cut tails are listed under their `.log`.
    pub moved: Vec<(PathBuf, Option<PathBuf>)>,
    /// How many segments were opened.
    pub segments_loaded: usize,
    /// How many segments had their `.log` scanned (recovered). After a clean shutdown: zero.
    pub segments_scanned: usize,
    /// The log end offset after loading.
    pub log_end_offset: i64,
    /// The recovery point after loading.
    pub recovery_point: i64,
    /// The log start offset after loading.
    pub log_start_offset: i64,
    /// Segments whose `.txnindex` was not what recovery writes, rebuilt (their other indexes
    /// were valid).
    pub rebuilt_txn_indexes: Vec<i64>,
    /// Producer snapshots matching no segment, removed as Kafka's `removeStraySnapshots` does
    /// (the latest one above every segment is kept).
    pub snapshots_removed: Vec<PathBuf>,
    /// Snapshots found corrupt after the plan was made, deleted as Kafka does (the plan
    /// quarantines the ones it sees).
    pub corrupt_snapshots_deleted: Vec<String>,
    /// Leader epoch entries recovery added to `leader-epoch-checkpoint` from the recovered
    /// batches' `partitionLeaderEpoch` (entries the checkpoint had lost).
    pub epochs_rebuilt: Vec<crate::checkpoint::EpochEntry>,
    /// Leader epoch entries the load removed from `leader-epoch-checkpoint` (past the log end,
    /// or before the log start: such an entry is listed as it was, and kept starting at the log
    /// start).
    pub epochs_truncated: Vec<crate::checkpoint::EpochEntry>,
}
