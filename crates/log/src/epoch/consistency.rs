//! A `leader-epoch-checkpoint` checked against the log it belongs to: what Kafka's loader would
//! drop or refuse when it loads the partition.

use std::fmt;

use crate::checkpoint::EpochEntry;

/// What is wrong with one entry of a `leader-epoch-checkpoint`, as [`check_epochs`] finds it.
/// `line` is the entry's line in the file (the first entry is on line 3, after the version and
/// the count).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum EpochProblem {
    /// A negative epoch or start offset (Kafka's cache refuses it when it loads the file).
    Negative {
        /// The entry's line.
        line: usize,
        /// The entry.
        entry: EpochEntry,
    },
    /// An epoch not above the one before it (Kafka's cache drops the entries before it).
    EpochNotIncreasing {
        /// The entry's line.
        line: usize,
        /// The entry.
        entry: EpochEntry,
        /// The entry before it.
        previous: EpochEntry,
    },
    /// A start offset not above the one before it (Kafka's cache drops the entries before it).
    OffsetNotIncreasing {
        /// The entry's line.
        line: usize,
        /// The entry.
        entry: EpochEntry,
        /// The entry before it.
        previous: EpochEntry,
    },
    /// An epoch that starts past the log end offset: its records are gone (a tail lost in a
    /// crash or cut by recovery). Kafka's loader truncates the cache to the log end.
    PastLogEnd {
        /// The entry's line.
        line: usize,
        /// The entry.
        entry: EpochEntry,
        /// The log end offset.
        log_end_offset: i64,
    },
}

impl EpochProblem {
    /// The line of the entry.
    pub fn line(&self) -> usize {
        match self {
            Self::Negative { line, .. }
            | Self::EpochNotIncreasing { line, .. }
            | Self::OffsetNotIncreasing { line, .. }
            | Self::PastLogEnd { line, .. } => *line,
        }
    }
}

impl fmt::Display for EpochProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Negative { entry, .. } => write!(
                f,
                "leader epoch entry {} {} is negative",
                entry.epoch, entry.start_offset
            ),
            Self::EpochNotIncreasing {
                entry, previous, ..
            } => write!(
                f,
                "leader epoch {} (from offset {}) does not follow epoch {} (from offset {}): epochs must increase",
                entry.epoch, entry.start_offset, previous.epoch, previous.start_offset
            ),
            Self::OffsetNotIncreasing {
                entry, previous, ..
            } => write!(
                f,
                "leader epoch {} starts at offset {}, not after epoch {}'s start {}: start offsets must increase",
                entry.epoch, entry.start_offset, previous.epoch, previous.start_offset
            ),
            Self::PastLogEnd {
                entry,
                log_end_offset,
                ..
            } => write!(
                f,
                "leader epoch {} starts at offset {}, past the log end offset {log_end_offset}",
                entry.epoch, entry.start_offset
            ),
        }
    }
}

/// The problems of `entries` (a checkpoint's entries in the file's order, as
/// [`LeaderEpochCheckpoint::read_as_written`](crate::LeaderEpochCheckpoint::read_as_written)
/// gives them) against a log ending at `log_end_offset`. An entry starting at the log end is
/// not a problem: a leader records its epoch there before its first append.
pub fn check_epochs(entries: &[EpochEntry], log_end_offset: i64) -> Vec<EpochProblem> {
    let mut problems = Vec::new();
    let mut previous: Option<EpochEntry> = None;
    for (i, entry) in entries.iter().copied().enumerate() {
        let line = i + 3;
        if entry.epoch < 0 || entry.start_offset < 0 {
            problems.push(EpochProblem::Negative { line, entry });
            continue;
        }
        if let Some(previous) = previous {
            if entry.epoch <= previous.epoch {
                problems.push(EpochProblem::EpochNotIncreasing {
                    line,
                    entry,
                    previous,
                });
            } else if entry.start_offset <= previous.start_offset {
                problems.push(EpochProblem::OffsetNotIncreasing {
                    line,
                    entry,
                    previous,
                });
            }
        }
        if entry.start_offset > log_end_offset {
            problems.push(EpochProblem::PastLogEnd {
                line,
                entry,
                log_end_offset,
            });
        }
        previous = Some(entry);
    }
    problems
}
