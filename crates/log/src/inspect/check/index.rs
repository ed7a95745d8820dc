//! Checking a segment's `.index` and `.timeindex` against its batches.

use std::collections::BTreeMap;
use std::path::Path;

use seglog_fs::FileSystem;
use seglog_mmap_index::{CorruptKind, IndexKind, Problem, VerifyReport};

use super::{Finding, index_error};
use crate::error::Result;
use crate::inspect::partition::PartitionView;

/// Reports an index problem at the byte where the offending entry starts (for a length that is
/// not a multiple of the entry size: where the partial entry starts).
fn index_problem(
    path: &Path,
    report: &VerifyReport,
    problem: &Problem,
    findings: &mut Vec<Finding>,
) {
    let entry_size = match report.kind {
        IndexKind::Offset => 8_u64,
        IndexKind::Time => 12,
    };
    let slot_byte = |slot: usize| Some(slot as u64 * entry_size);
    let last_entry = slot_byte(report.entries.saturating_sub(1));
    let (kind, position, detail) = match problem {
        Problem::ZeroTail { first_slot, slots } => (
            "index_zero_tail",
            slot_byte(*first_slot),
            format!("{slots} zero slots from slot {first_slot}: preallocated and never trimmed"),
        ),
        Problem::LastTimestampZero => (
            "index_zero_tail",
            last_entry,
            "the last timestamp is 0".to_owned(),
        ),
        Problem::Kafka(kind) => {
            let position = match kind {
                CorruptKind::LengthNotMultiple { length, .. } => Some(length - length % entry_size),
                _ => last_entry,
            };
            ("index_sanity", position, sanity_text(kind))
        }
        Problem::BaseOffsetRepeated { slot } => (
            "index_out_of_order",
            slot_byte(*slot),
            format!(
                "entry {slot} repeats the base offset, though the entries after it are not all zero"
            ),
        ),
        Problem::OffsetOutOfOrder {
            slot,
            previous,
            offset,
            count,
        } => (
            "index_out_of_order",
            slot_byte(*slot),
            format!(
                "entry {slot} has offset {offset}, not above the previous entry's {previous} ({count} entries out of order)"
            ),
        ),
        Problem::TimestampOutOfOrder {
            slot,
            previous,
            timestamp,
            count,
        } => (
            "index_out_of_order",
            slot_byte(*slot),
            format!(
                "entry {slot} has timestamp {timestamp}, below the previous entry's {previous} ({count} entries out of order)"
            ),
        ),
        _ => (
            "index_unknown",
            None,
            "an index problem this version of seglog has no words for".to_owned(),
        ),
    };
    findings.push(Finding::new(path, position, kind, detail));
}

/// Kafka's sanity rule that failed, in words.
fn sanity_text(kind: &CorruptKind) -> String {
    match kind {
        CorruptKind::LastOffsetBelowBase {
            last_offset,
            base_offset,
        } => format!(
            "the last entry's offset {last_offset} is not above the base offset {base_offset} (Kafka's sanity check)"
        ),
        CorruptKind::LastTimestampBelowFirst {
            last_timestamp,
            first_timestamp,
        } => format!(
            "the last entry's timestamp {last_timestamp} is below the first entry's {first_timestamp} (Kafka's sanity check)"
        ),
        CorruptKind::LengthNotMultiple { length, entry_size } => {
            format!(
                "the length {length} is not a multiple of the entry size {entry_size} (Kafka's sanity check)"
            )
        }
        _ => "Kafka's sanity check fails".to_owned(),
    }
}

/// Entries of one index that disagree with the log, gathered into one finding per cause: those
/// past the log's last whole batch (a cut or torn tail: `past_end`), and the others.
#[derive(Default)]
struct Disagreeing {
    /// (slot, description) of the first entry past the end, and how many there are.
    past_end: Option<(usize, String)>,
    past_end_count: u64,
    /// The same for entries within the log that do not match it.
    other: Option<(usize, String)>,
    other_count: u64,
}

impl Disagreeing {
    fn past_end(&mut self, slot: usize, what: impl FnOnce() -> String) {
        self.past_end.get_or_insert_with(|| (slot, what()));
        self.past_end_count += 1;
    }

    fn other(&mut self, slot: usize, what: impl FnOnce() -> String) {
        self.other.get_or_insert_with(|| (slot, what()));
        self.other_count += 1;
    }

    /// One finding for each cause found, at the byte of its first entry.
    fn report(
        self,
        path: &Path,
        entry_size: u64,
        kinds: (&'static str, &'static str),
        findings: &mut Vec<Finding>,
    ) {
        let entries = |n: u64| {
            if n == 1 {
                "1 entry".to_owned()
            } else {
                format!("{n} entries")
            }
        };
        if let Some((slot, first)) = self.past_end {
            let n = self.past_end_count;
            findings.push(
                Finding::new(
                    path,
                    Some(slot as u64 * entry_size),
                    kinds.0,
                    format!("{} from entry {slot} on point past the log's last whole batch (a cut or torn tail): {first}; recover rebuilds the index", entries(n)),
                )
                .with_count(n),
            );
        }
        if let Some((slot, first)) = self.other {
            let n = self.other_count;
            findings.push(
                Finding::new(
                    path,
                    Some(slot as u64 * entry_size),
                    kinds.1,
                    format!(
                        "{} disagree with the log, the first: {first}; recover rebuilds the index",
                        entries(n)
                    ),
                )
                .with_count(n),
            );
        }
    }
}

/// Checks both indexes of a segment against its batches.
pub(super) fn check_indexes<F: FileSystem>(
    partition: &PartitionView<F>,
    base: i64,
    batches: &[(u64, i64, i64)],
    active: bool,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    check_offset_index(partition, base, batches, active, findings)?;
    check_time_index(partition, base, batches, active, findings)
}

/// Checks the `.index` of a segment against its batches.
fn check_offset_index<F: FileSystem>(
    partition: &PartitionView<F>,
    base: i64,
    batches: &[(u64, i64, i64)],
    active: bool,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    let fs = partition.fs();
    let index_path = partition.offset_index_path(base);
    let by_position: BTreeMap<u64, i64> = batches.iter().map(|(p, o, _)| (*p, *o)).collect();
    if fs.exists(&index_path) {
        let index = partition.offset_index(base)?;
        let report = index.verify().map_err(index_error)?;
        for problem in &report.problems {
            index_problem(&index_path, &report, problem, findings);
        }
        // A zero tail ends the real entries (Kafka's DumpLogSegments rule); an active segment's
        // index is preallocated, so its zero tail is expected.
        let zero_tail = report.problems.iter().find_map(|p| match p {
            Problem::ZeroTail { first_slot, .. } => Some(*first_slot),
            _ => None,
        });
        if active {
            findings.retain(|f| !(f.file == index_path && f.kind == "index_zero_tail"));
        }
        // An active segment's index that is zeros from slot 0 on was preallocated and never
        // written (a broker stopped before its first entry): it has no entries.
        let unwritten = active
            && zero_tail == Some(1)
            && index.entry(0).map_err(index_error)?.offset == base
            && index.entry(0).map_err(index_error)?.position == 0;
        let live = if unwritten {
            0
        } else {
            zero_tail.unwrap_or(report.entries)
        };
        let last_start = batches.last().map(|(p, _, _)| *p);
        let mut disagreeing = Disagreeing::default();
        for slot in 0..live {
            let entry = index.entry(slot).map_err(index_error)?;
            let position = u64::from(entry.position);
            let says = || {
                format!(
                    "entry {slot} says offset {} starts at byte {position}",
                    entry.offset
                )
            };
            match by_position.get(&position) {
                Some(last) if *last == entry.offset => {}
                Some(last) => disagreeing.other(slot, || {
                    format!("{}, but the batch there ends at offset {last}", says())
                }),
                None if last_start.is_none_or(|l| position > l) => disagreeing.past_end(slot, says),
                None => {
                    disagreeing.other(slot, || format!("{}, but no batch starts there", says()));
                }
            }
        }
        disagreeing.report(
            &index_path,
            8,
            ("index_past_log_end", "index_mismatch"),
            findings,
        );
    } else if !batches.is_empty() {
        findings.push(Finding::note(
            &index_path,
            "missing_index",
            "no .index for a segment that holds records; Kafka rebuilds it from the .log at its next start (so does recover), and no record is missing",
        ));
    }
    Ok(())
}

/// Checks the `.timeindex` of a segment against its batches.
fn check_time_index<F: FileSystem>(
    partition: &PartitionView<F>,
    base: i64,
    batches: &[(u64, i64, i64)],
    active: bool,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    let fs = partition.fs();
    let time_path = partition.time_index_path(base);
    if fs.exists(&time_path) {
        let index = partition.time_index(base)?;
        let report = index.verify().map_err(index_error)?;
        // An active segment's preallocated zero tail is expected, and so is what follows from it:
        // Kafka's sanity rule reads the zero last slot as a last timestamp (0) below the first.
        let preallocated = report
            .problems
            .iter()
            .any(|p| matches!(p, Problem::ZeroTail { .. } | Problem::LastTimestampZero));
        for problem in &report.problems {
            let expected = match problem {
                Problem::ZeroTail { .. } | Problem::LastTimestampZero => true,
                Problem::Kafka(CorruptKind::LastTimestampBelowFirst {
                    last_timestamp: 0, ..
                }) => preallocated,
                _ => false,
            };
            if !(active && expected) {
                index_problem(&time_path, &report, problem, findings);
            }
        }
        let zero_tail = report.problems.iter().find_map(|p| match p {
            Problem::ZeroTail { first_slot, .. } => Some(*first_slot),
            _ => None,
        });
        let unwritten = active
            && zero_tail == Some(1)
            && index.entry(0).map_err(index_error)?.offset == base
            && index.entry(0).map_err(index_error)?.timestamp == 0;
        let live = if unwritten {
            0
        } else {
            zero_tail.unwrap_or(report.entries)
        };
        let mut running_max = -1_i64;
        let maxima: BTreeMap<i64, i64> = batches
            .iter()
            .map(|(_, last, ts)| {
                running_max = running_max.max(*ts);
                (*last, running_max)
            })
            .collect();
        let last_offset = batches.last().map(|(_, o, _)| *o);
        let mut disagreeing = Disagreeing::default();
        for slot in 0..live {
            let entry = index.entry(slot).map_err(index_error)?;
            let says = || {
                format!(
                    "entry {slot} says timestamp {} at offset {}",
                    entry.timestamp, entry.offset
                )
            };
            match maxima.get(&entry.offset) {
                Some(max) if *max == entry.timestamp => {}
                Some(max) => disagreeing.other(slot, || {
                    format!(
                        "{}, but the log's largest timestamp up to there is {max}",
                        says()
                    )
                }),
                None if last_offset.is_none_or(|l| entry.offset > l) => {
                    disagreeing.past_end(slot, says);
                }
                None => disagreeing.other(slot, || {
                    format!("{}, but no batch ends at that offset", says())
                }),
            }
        }
        disagreeing.report(
            &time_path,
            12,
            ("time_index_past_log_end", "time_index_mismatch"),
            findings,
        );
    } else if !batches.is_empty() {
        findings.push(Finding::note(
            &time_path,
            "missing_time_index",
            "no .timeindex for a segment that holds records; Kafka creates it empty at its next start (recover rebuilds it), and no record is missing",
        ));
    }
    Ok(())
}
