//! What repairs each problem `check` finds: the one table `seglog recover` decides from, so that
//! a recover that exits 0 leaves nothing for `check` to report.
//!
//! Three answers. The loader's own steps repair some problems on every open, trusting a clean
//! shutdown or not (a `.swap` completed or set aside, a stray entry set aside, a producer snapshot
//! past the log end set aside, a checkpoint rewritten on close). Problems inside a segment (its
//! batches, its indexes, its `.txnindex`) are repaired by Kafka's recovery run from that segment
//! on: the first invalid batch cut, the later segments dropped, indexes that are not what recovery
//! writes rebuilt. The rest recovery leaves as it is, for an operator.

use std::collections::BTreeMap;
use std::path::Path;

use seglog_segment::naming;

use super::{CheckReport, Finding};
use crate::topic_partition::{DirKind, TopicPartition};

/// What repairs a problem [`Finding`] (see [`Finding::repair`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Repair {
    /// Any open of the partition or its log directory repairs it (Kafka's loader steps, or the
    /// checkpoints rewritten on close); nothing needs recovering.
    Load,
    /// Recovering the partition from the segment at `base_offset` on, as after an unclean
    /// shutdown with the recovery point there, repairs it. A `base_offset` of 0 recovers the
    /// partition from its first segment.
    RecoverFrom {
        /// The partition.
        partition: TopicPartition,
        /// The base offset of the segment the problem is in.
        base_offset: i64,
    },
    /// Recovery leaves it as it is (a directory that is not a partition, a directory the open
    /// does not load): an operator must act.
    Manual,
}

/// The problems in a segment's files (`.log`, `.index`, `.timeindex`, `.txnindex`), repaired by
/// recovering the segment.
const IN_SEGMENT: &[&str] = &[
    "corrupt_batch",
    "invalid_batch",
    "offsets_out_of_order",
    "torn_tail",
    "damaged_base_offset",
    "offsets_past_next_segment",
    "offset_overflow",
    "undecodable_records",
    "overlapping_segment",
    "producer_state_error",
    "index_mismatch",
    "index_out_of_order",
    "index_past_log_end",
    "index_sanity",
    "index_unknown",
    "index_zero_tail",
    "time_index_mismatch",
    "time_index_past_log_end",
    "txn_index_mismatch",
];

/// The problems the loader repairs on every open.
const ON_LOAD: &[&str] = &[
    "interrupted_swap",
    "damaged_swap",
    "stray_file",
    "snapshot_past_log_end",
    "bad_checkpoint",
    "checkpoint_ahead_of_log",
    "leader_epoch_past_log_end",
];

impl Finding {
    /// What repairs this finding; `None` for a note (a state Kafka accepts). A kind this table
    /// does not know is [`Repair::Manual`], so that a new kind of problem is never taken as
    /// repaired.
    pub fn repair(&self) -> Option<Repair> {
        if !self.is_problem() {
            return None;
        }
        if ON_LOAD.contains(&self.kind) {
            return Some(Repair::Load);
        }
        if !IN_SEGMENT.contains(&self.kind) {
            return Some(Repair::Manual);
        }
        let Some(dir) = self.file.parent() else {
            return Some(Repair::Manual);
        };
        match TopicPartition::parse_dir(dir) {
            Ok((partition, DirKind::Live)) => Some(Repair::RecoverFrom {
                partition,
                base_offset: segment_of(&self.file).unwrap_or(0),
            }),
            _ => Some(Repair::Manual),
        }
    }
}

/// The base offset of the segment a file belongs to, from its Kafka name.
fn segment_of(file: &Path) -> Option<i64> {
    naming::offset_from_file_name(file.file_name()?.to_str()?)
}

impl CheckReport {
    /// Per partition, the lowest segment a problem asks to recover from ([`Repair::RecoverFrom`]):
    /// what [`LogDirOptions::with_recover_from`](crate::LogDirOptions) takes.
    pub fn recover_from(&self) -> BTreeMap<TopicPartition, i64> {
        let mut from: BTreeMap<TopicPartition, i64> = BTreeMap::new();
        for finding in &self.findings {
            if let Some(Repair::RecoverFrom {
                partition,
                base_offset,
            }) = finding.repair()
            {
                let lowest = from.entry(partition).or_insert(base_offset);
                *lowest = (*lowest).min(base_offset);
            }
        }
        from
    }

    /// The problems recovery leaves as they are ([`Repair::Manual`]).
    pub fn left_to_operator(&self) -> impl Iterator<Item = &Finding> {
        self.findings
            .iter()
            .filter(|f| f.repair() == Some(Repair::Manual))
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::super::Severity;
    use super::*;

    fn problem(file: &str, kind: &'static str) -> Finding {
        Finding::new(&PathBuf::from(file), Some(0), kind, "")
    }

    #[test]
    fn a_problem_in_a_segment_recovers_from_the_lowest_segment() {
        let report = CheckReport {
            findings: vec![
                problem("L/t-0/00000000000000000100.log", "invalid_batch"),
                problem("L/t-0/00000000000000000050.index", "index_sanity"),
                problem("L/t-1/00000000000000000007.txnindex", "txn_index_mismatch"),
                problem(
                    "L/t-1/00000000000000000009.snapshot",
                    "snapshot_past_log_end",
                ),
            ],
            ..CheckReport::default()
        };
        let from = report.recover_from();
        assert_eq!(
            from.into_iter().collect::<Vec<_>>(),
            [
                (TopicPartition::new("t", 0), 50),
                (TopicPartition::new("t", 1), 7)
            ]
        );
        assert_eq!(report.left_to_operator().count(), 0);
    }

    #[test]
    fn notes_need_nothing_and_unknown_kinds_are_left_to_the_operator() {
        let mut note = problem("L/t-0/00000000000000000000.log", "index_sanity");
        note.severity = Severity::Note;
        assert_eq!(note.repair(), None);
        let unknown = problem("L/t-0/00000000000000000000.log", "something_new");
        assert_eq!(unknown.repair(), Some(Repair::Manual));
        let future = problem(
            "L/t-0.0123456789abcdef0123456789abcdef-future/00000000000000000000.log",
            "torn_tail",
        );
        assert_eq!(future.repair(), Some(Repair::Manual));
        let not_partition = problem("L/lost+found", "not_a_partition");
        assert_eq!(not_partition.repair(), Some(Repair::Manual));
    }
}
