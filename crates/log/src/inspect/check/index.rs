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
            ("index_sanity", position, format!("{kind:?}"))
        }
        Problem::BaseOffsetRepeated { slot }
        | Problem::OffsetOutOfOrder { slot, .. }
        | Problem::TimestampOutOfOrder { slot, .. } => (
            "index_out_of_order",
            slot_byte(*slot),
            format!("{problem:?}"),
        ),
        other => ("index_out_of_order", None, format!("{other:?}")),
    };
    findings.push(Finding::new(path, position, kind, detail));
}

/// Checks both indexes of a segment against its batches.
pub(super) fn check_indexes<F: FileSystem>(
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
        for slot in 0..live {
            let entry = index.entry(slot).map_err(index_error)?;
            match by_position.get(&u64::from(entry.position)) {
                Some(last) if *last == entry.offset => {}
                found => findings.push(Finding::new(
                    &index_path,
                    Some(slot as u64 * 8),
                    "index_mismatch",
                    format!("entry {slot} says offset {} starts at byte {}, the log has {found:?} there", entry.offset, entry.position),
                )),
            }
        }
    } else if !batches.is_empty() {
        findings.push(Finding::new(
            &index_path,
            None,
            "missing_index",
            "the .index is missing; open or recover rebuilds it",
        ));
    }
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
        for slot in 0..live {
            let entry = index.entry(slot).map_err(index_error)?;
            match maxima.get(&entry.offset) {
                Some(max) if *max == entry.timestamp => {}
                found => findings.push(Finding::new(
                    &time_path,
                    Some(slot as u64 * 12),
                    "time_index_mismatch",
                    format!("entry {slot} says {} at offset {}, the log's running max there is {found:?}", entry.timestamp, entry.offset),
                )),
            }
        }
    }
    Ok(())
}
