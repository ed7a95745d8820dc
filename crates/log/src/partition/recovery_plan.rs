//! [`RecoveryPlan`]: what loading a partition changes, decided before anything changes, so that
//! a dry run can print it and the loader can carry it out in a crash-safe order. What the plan
//! drops (a cut tail, the segments after a cut, a damaged `.swap`) and the stray entries it sets
//! aside go to the partition's quarantine (see [`QUARANTINE_DIR`]) unless the caller asked to
//! discard them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

pub use crate::listing::QUARANTINE_DIR;
pub use seglog_segment::split::SplitPiece;

/// Why a file is removed: leftovers that Kafka's loader deletes too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Removal {
    /// A `*.deleted` file: a deletion that was already decided.
    Deleted,
    /// A `*.cleaned` file, or a `*.swap` at or above the smallest cleaned offset: an interrupted
    /// cleaning or split, aborted.
    Aborted,
    /// A file that a completed swap replaces.
    Replaced,
    /// An index file without its `.log`, or an index `.swap` without a `.log.swap`.
    Orphan,
    /// A `<offset>.snapshot.tmp`: a producer snapshot whose write did not finish (the snapshot
    /// is written again from the log).
    UnfinishedSnapshot,
}

impl fmt::Display for Removal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Deleted => "pending deletion",
            Self::Aborted => "an interrupted cleaning, aborted",
            Self::Replaced => "replaced by a completed swap",
            Self::Orphan => "an index without its .log",
            Self::UnfinishedSnapshot => "a producer snapshot whose write did not finish",
        })
    }
}

/// A `.log.swap` whose batches are damaged: set aside with its index swaps, so that the
/// segments it would replace stay and the partition opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadSwap {
    /// Its base offset.
    pub base_offset: i64,
    /// The `.swap` files of that base offset.
    pub files: Vec<PathBuf>,
    /// The bytes of the `.log.swap`.
    pub bytes: u64,
    /// Where and why its batches stop being valid, in words.
    pub reason: String,
}

/// A file or directory named like a segment file that is not one (`123.log`, a directory
/// `00000000000000000000.log`): Kafka never reads its bytes as a segment's, so it is no data of
/// the log; it is set aside whole, under its own name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stray {
    /// Where it is.
    pub path: PathBuf,
    /// Whether it is a directory.
    pub is_dir: bool,
    /// Its size (`None` for a directory, or a file that cannot be opened).
    pub bytes: Option<u64>,
    /// Why it is stray, in words.
    pub reason: &'static str,
}

/// Bytes cut off the end of a segment's `.log`: everything from the first invalid byte on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    /// The segment's base offset.
    pub base_offset: i64,
    /// The `.log` cut.
    pub log: PathBuf,
    /// The first byte not kept (the new size).
    pub position: u64,
    /// How many bytes are cut.
    pub bytes: u64,
    /// The first offset not kept: the records cut would have had this offset and later ones.
    pub next_offset: i64,
    /// Why the valid prefix ends there, in words.
    pub reason: String,
    /// Whether the segments after this one are dropped (Kafka's rule for the recovery range).
    pub drops_later_segments: bool,
    /// The segment's `.txnindex` entries whose ABORT marker is cut (all of them if the file does
    /// not read): recovery rewrites the index without them, after copying it to the quarantine.
    pub txn_entries_dropped: u64,
}

/// A segment whose offsets overflow its indexes (a legacy segment written before KAFKA-6264),
/// split into pieces as Kafka's `LocalLog.splitOverflowedSegment` does: each piece is a run of
/// its batches, based at the base offset of its first batch. The pieces are written as
/// `.cleaned` segments and swapped in with the compaction's `.cleaned` / `.swap` protocol, so a
/// split interrupted at any moment is aborted or completed by the next load. Nothing is dropped
/// by the split itself; damage after the overflow is cut as recovery cuts it (`cut`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// The segment's base offset.
    pub base_offset: i64,
    /// Its `.log`.
    pub log: PathBuf,
    /// The size of its `.log`.
    pub bytes: u64,
    /// The pieces, in offset order.
    pub pieces: Vec<SplitPiece>,
    /// Why it is split: the first batch that overflows, in words.
    pub reason: String,
    /// The bytes after the pieces, which recovery would cut (damage after the overflow): copied
    /// to the quarantine, not into a piece.
    pub cut: Option<Cut>,
}

impl Split {
    /// The offset after the last piece.
    pub fn next_offset(&self) -> i64 {
        self.pieces
            .last()
            .map_or(self.base_offset, |p| p.last_offset + 1)
    }
}

/// The plan's line for a split (without the cut after it).
impl fmt::Display for Split {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pieces: Vec<String> = self
            .pieces
            .iter()
            .map(|p| {
                format!(
                    "{} (offsets to {}, {} bytes)",
                    p.base_offset, p.last_offset, p.bytes
                )
            })
            .collect();
        write!(
            f,
            "split segment {} ({} bytes) into segments {}: {}",
            self.base_offset,
            self.bytes,
            pieces.join(", "),
            self.reason
        )
    }
}

/// Why a whole segment is dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DropReason {
    /// It comes after a segment that recovery cut (Kafka's rule).
    AfterCut {
        /// The base offset of the segment cut.
        cut_segment: i64,
    },
    /// Its base offset lies below the end of the segment before it.
    Overlapping {
        /// The offset the segment before it ends at (exclusive).
        previous_end: i64,
    },
}

/// A segment dropped whole, with its index files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedSegment {
    /// Its base offset.
    pub base_offset: i64,
    /// Its files (`.log` and the index files that exist).
    pub files: Vec<PathBuf>,
    /// The first offset of its first valid batch.
    pub first_offset: Option<i64>,
    /// The last offset of its last valid batch.
    pub last_offset: Option<i64>,
    /// The records of its valid batches.
    pub records: u64,
    /// The size of its `.log`.
    pub bytes: u64,
    /// Why.
    pub reason: DropReason,
}

/// Why a producer snapshot is set aside.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SnapshotDrop {
    /// Its offset is past the log end the plan leaves (Kafka's `truncateAndReload` deletes it).
    PastLogEnd {
        /// The log end offset after the plan.
        log_end_offset: i64,
    },
    /// It does not decode (Kafka deletes it and loads the next older snapshot).
    Corrupt {
        /// Where and why, in words.
        reason: String,
    },
}

/// A producer snapshot (`<offset>.snapshot`) recovery sets aside: moved to the quarantine, or
/// deleted with `--discard`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DroppedSnapshot {
    /// The file.
    pub path: PathBuf,
    /// The offset its name gives.
    pub offset: i64,
    /// Why.
    pub reason: SnapshotDrop,
}

/// What loading one partition changes, in the order the loader does it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RecoveryPlan {
    /// The partition directory.
    pub dir: PathBuf,
    /// Files removed, as Kafka's loader removes them.
    pub removed: Vec<(PathBuf, Removal)>,
    /// Stray entries set aside (first, before anything else changes).
    pub strays: Vec<Stray>,
    /// Swaps set aside.
    pub bad_swaps: Vec<BadSwap>,
    /// Base offsets of the `.swap` segments renamed into place.
    pub completed_swaps: Vec<i64>,
    /// Segments dropped whole.
    pub dropped: Vec<DroppedSegment>,
    /// Tails cut.
    pub cuts: Vec<Cut>,
    /// Segments split because their offsets overflow their indexes (KAFKA-6264).
    pub splits: Vec<Split>,
    /// Segments whose indexes are rebuilt (missing, or not what recovery would write).
    pub rebuilt_indexes: Vec<i64>,
    /// Segments whose `.log` is scanned.
    pub scanned: Vec<i64>,
    /// Producer snapshots set aside (past the log end the plan leaves, or corrupt), before any
    /// cut.
    pub dropped_snapshots: Vec<DroppedSnapshot>,
    /// Segments recovered because their `.txnindex` fails Kafka's sanity check, and why.
    pub corrupt_txn_indexes: Vec<(i64, String)>,
    /// The log end offset the plan leaves (`None` when the directory does not exist).
    pub log_end_offset: Option<i64>,
    /// The next segment's base offset each segment was judged against (`None` for the last):
    /// recovery bounds the segment's offsets by it, and carrying out the plan must judge alike.
    pub next_base_offsets: BTreeMap<i64, Option<i64>>,
    /// Of each segment scanned (not a `.swap`) and found valid to its end, holding no batch with
    /// a producer id: its size and the last offset of its last v2 batch. A producer-state replay
    /// of it only moves the state's end offset there, so carrying out the plan need not walk it
    /// again (while its size is the same).
    pub without_producer_ids: BTreeMap<i64, (u64, Option<i64>)>,
}

impl RecoveryPlan {
    /// Whether the plan changes nothing.
    pub fn is_empty(&self) -> bool {
        self.removed.is_empty()
            && self.strays.is_empty()
            && self.bad_swaps.is_empty()
            && self.completed_swaps.is_empty()
            && self.dropped.is_empty()
            && self.cuts.is_empty()
            && self.splits.is_empty()
            && self.rebuilt_indexes.is_empty()
            && self.dropped_snapshots.is_empty()
    }

    /// Whether the plan drops data (a cut tail, a dropped segment, a bad swap): what goes to the
    /// quarantine.
    pub fn drops_data(&self) -> bool {
        !(self.bad_swaps.is_empty()
            && self.dropped.is_empty()
            && self.cuts.is_empty()
            && self.splits.iter().all(|s| s.cut.is_none())
            && self.dropped_snapshots.is_empty())
    }

    /// Whether the plan moves anything to the quarantine: data it drops, or stray entries.
    pub fn sets_aside(&self) -> bool {
        self.drops_data() || !self.strays.is_empty()
    }

    /// Whether carrying the plan out removes, renames or moves a file of the partition
    /// directory (cuts and index rebuilds change files in place, not the listing).
    pub(crate) fn changes_listing(&self) -> bool {
        !(self.removed.is_empty()
            && self.strays.is_empty()
            && self.bad_swaps.is_empty()
            && self.completed_swaps.is_empty()
            && self.dropped.is_empty()
            && self.splits.is_empty()
            && self.dropped_snapshots.is_empty())
    }

    /// The records of the segments dropped whole.
    pub fn records_dropped(&self) -> u64 {
        self.dropped.iter().map(|d| d.records).sum()
    }

    /// The bytes dropped: cut tails, dropped segments' `.log` files, bad swaps' `.log.swap`.
    pub fn bytes_dropped(&self) -> u64 {
        self.cuts.iter().map(|c| c.bytes).sum::<u64>()
            + self
                .splits
                .iter()
                .filter_map(|s| s.cut.as_ref())
                .map(|c| c.bytes)
                .sum::<u64>()
            + self.dropped.iter().map(|d| d.bytes).sum::<u64>()
            + self.bad_swaps.iter().map(|s| s.bytes).sum::<u64>()
    }
}

fn offsets(first: Option<i64>, last: Option<i64>) -> String {
    match (first, last) {
        (Some(first), Some(last)) => format!("offsets {first}..={last}"),
        _ => "no valid batch".to_owned(),
    }
}

/// One line per change, each naming its file; no line when the plan is empty.
impl fmt::Display for RecoveryPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (path, why) in &self.removed {
            writeln!(f, "remove {} ({why})", path.display())?;
        }
        for stray in &self.strays {
            let what = match (stray.is_dir, stray.bytes) {
                (true, _) => "a directory".to_owned(),
                (false, Some(bytes)) => format!("a file of {bytes} bytes"),
                (false, None) => "a file".to_owned(),
            };
            writeln!(
                f,
                "set aside the stray {} ({what}): {}",
                stray.path.display(),
                stray.reason
            )?;
        }
        for swap in &self.bad_swaps {
            writeln!(
                f,
                "set aside the swap at base offset {} ({} bytes): {}",
                swap.base_offset, swap.bytes, swap.reason
            )?;
        }
        for base in &self.completed_swaps {
            writeln!(f, "complete the swap at base offset {base}")?;
        }
        for d in &self.dropped {
            let why = match d.reason {
                DropReason::AfterCut { cut_segment } => {
                    format!("after the cut in segment {cut_segment}")
                }
                DropReason::Overlapping { previous_end } => {
                    format!(
                        "its base offset is below {previous_end}, where the segment before it ends"
                    )
                }
            };
            writeln!(
                f,
                "drop segment {} ({}, {} records, {} bytes): {why}",
                d.base_offset,
                offsets(d.first_offset, d.last_offset),
                d.records,
                d.bytes
            )?;
        }
        for snapshot in &self.dropped_snapshots {
            let why = match &snapshot.reason {
                SnapshotDrop::PastLogEnd { log_end_offset } => {
                    format!("its offset is past the log end {log_end_offset}")
                }
                SnapshotDrop::Corrupt { reason } => format!("corrupt: {reason}"),
            };
            writeln!(
                f,
                "set aside the producer snapshot {} (offset {}): {why}",
                snapshot.path.display(),
                snapshot.offset
            )?;
        }
        for split in &self.splits {
            writeln!(f, "{split}")?;
        }
        for cut in self
            .cuts
            .iter()
            .chain(self.splits.iter().filter_map(|s| s.cut.as_ref()))
        {
            writeln!(
                f,
                "cut {} at byte {} ({} bytes, offsets from {} on): {}",
                cut.log.display(),
                cut.position,
                cut.bytes,
                cut.next_offset,
                cut.reason
            )?;
            if cut.txn_entries_dropped > 0 {
                writeln!(
                    f,
                    "drop {} entries of the .txnindex of segment {} (aborted transactions whose markers are cut)",
                    cut.txn_entries_dropped, cut.base_offset
                )?;
            }
        }
        for base in &self.rebuilt_indexes {
            match self.corrupt_txn_indexes.iter().find(|(b, _)| b == base) {
                Some((_, why)) => writeln!(f, "rebuild the indexes of segment {base}: {why}")?,
                None => writeln!(f, "rebuild the indexes of segment {base}")?,
            }
        }
        Ok(())
    }
}
