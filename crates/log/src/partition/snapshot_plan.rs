//! The recovery plan's view of producer state files, read-only: which `<offset>.snapshot` files
//! recovery sets aside (past the log end it leaves, or corrupt where Kafka's load would try them)
//! and whether a `.txnindex` passes Kafka's sanity check.

use std::collections::BTreeMap;
use std::path::Path;

use seglog_fs::{File as _, FileSystem, OpenMode};
use seglog_segment::txn_index::{ENTRY_SIZE, TransactionIndex};

use seglog_segment::naming;

use super::recovery_plan::{DroppedSnapshot, RecoveryPlan, SnapshotDrop};
use super::txn_replay::{entry_bytes, replay_log, txn_index_bytes};
use super::valid_prefix::ValidPrefix;
use crate::error::{Error, Result};
use crate::listing::{FileKind, PartitionFile};
use crate::producer::{producer_state_at, read_snapshot};

/// Why the `.txnindex` at `path` of the segment at `base` fails Kafka's `sanityCheck` (an entry
/// below the base offset, or of an unknown version), or `None` if it passes.
///
/// # Errors
///
/// The file cannot be read.
pub(super) fn txn_index_problem<F: FileSystem>(
    fs: &F,
    path: &Path,
    base: i64,
) -> Result<Option<String>> {
    let index = TransactionIndex::open_read_only(fs.clone(), path, base)?;
    match index.sanity_check() {
        Ok(()) => Ok(None),
        Err(e @ seglog_segment::Error::Io { .. }) => Err(e.into()),
        Err(e) => Ok(Some(e.to_string())),
    }
}

/// How many entries of the `.txnindex` at `path` (of the segment at `base`) have a last offset
/// (their ABORT marker's) at or past `offset`; all its whole entries if it does not read, none if
/// it does not exist.
///
/// # Errors
///
/// The file cannot be opened or its length read.
pub(super) fn txn_entries_from<F: FileSystem>(
    fs: &F,
    path: &Path,
    base: i64,
    offset: i64,
) -> Result<u64> {
    if !fs.exists(path) {
        return Ok(0);
    }
    let index = TransactionIndex::open_read_only(fs.clone(), path, base)?;
    match index.all_aborted_txns() {
        Ok(entries) => Ok(entries.iter().filter(|t| t.last_offset() >= offset).count() as u64),
        Err(e @ seglog_segment::Error::Io { .. }) => Err(e.into()),
        Err(_) => {
            let file = fs
                .open(path, OpenMode::ReadOnly)
                .map_err(|e| Error::io(path, e))?;
            let len = file.len().map_err(|e| Error::io(path, e))?;
            Ok(len / ENTRY_SIZE as u64)
        }
    }
}

/// The snapshots among `live` to set aside: each past `log_end`, then, from the latest at or
/// below `log_end` and above `log_start` down, each corrupt one until one decodes (Kafka's
/// `loadFromSnapshot` deletes exactly those; seglog keeps them in the quarantine).
///
/// # Errors
///
/// A snapshot cannot be read.
pub(super) fn plan_snapshots<F: FileSystem>(
    fs: &F,
    live: &[PartitionFile],
    log_start: i64,
    log_end: i64,
) -> Result<Vec<DroppedSnapshot>> {
    let mut snapshots: Vec<(i64, &Path)> = live
        .iter()
        .filter(|f| f.kind() == FileKind::Snapshot)
        .filter_map(|f| f.base_offset().map(|o| (o, f.path())))
        .collect();
    snapshots.sort_unstable();
    let mut out = Vec::new();
    for (offset, path) in snapshots.iter().rev() {
        if *offset > log_end {
            out.push(DroppedSnapshot {
                path: path.to_path_buf(),
                offset: *offset,
                reason: SnapshotDrop::PastLogEnd {
                    log_end_offset: log_end,
                },
            });
            continue;
        }
        if *offset <= log_start {
            break;
        }
        match read_snapshot(fs, path) {
            Ok(_) => break,
            Err(Error::CorruptSnapshot {
                position, message, ..
            }) => out.push(DroppedSnapshot {
                path: path.to_path_buf(),
                offset: *offset,
                reason: SnapshotDrop::Corrupt {
                    reason: format!("at byte {position}: {message}"),
                },
            }),
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// The segments recovery scans, finds valid and would leave alone whose `.txnindex` is not what
/// the markers give (the loader then recovers them, rewriting it): the producer state replayed
/// read-only as the loader's rebuild finds it, from the latest usable snapshot above
/// `log_start` and at or below the first such segment (else from empty; one that cannot be read
/// fails the plan, as it would fail the load), through `segments`
/// (base offset and suffix on disk, ascending, the dropped ones left out). A segment's valid
/// prefix is taken from `verified` (the plan's scans: next base offset bounded by, valid prefix)
/// where that scan had the bounds the replay has, else scanned again.
///
/// # Errors
///
/// A snapshot or `.txnindex` cannot be read.
pub(super) fn txn_index_rewrites<F: FileSystem>(
    fs: &F,
    dir: &Path,
    live: &[PartitionFile],
    segments: &[(i64, &str)],
    plan: &RecoveryPlan,
    verified: &BTreeMap<i64, (Option<i64>, ValidPrefix)>,
    log_start: i64,
) -> Result<Vec<(i64, String)>> {
    let candidates: Vec<i64> = plan
        .scanned
        .iter()
        .copied()
        .filter(|b| !plan.rebuilt_indexes.contains(b) && segments.iter().any(|(s, _)| s == b))
        .filter(|b| !plan.splits.iter().any(|s| s.base_offset == *b))
        .collect();
    let (Some(&first), Some(&last)) = (candidates.iter().min(), candidates.iter().max()) else {
        return Ok(Vec::new());
    };
    let set_aside: Vec<&Path> = plan
        .dropped_snapshots
        .iter()
        .map(|s| s.path.as_path())
        .collect();
    let snapshots = live
        .iter()
        .filter(|f| f.kind() == FileKind::Snapshot && !set_aside.contains(&f.path()))
        .filter_map(|f| f.base_offset().map(|o| (o, f.path())));
    let name = dir
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
        .to_owned();
    let (mut manager, from) =
        producer_state_at(fs, dir, name, snapshots, log_start, first, log_start)?;
    let mut range = Vec::new();
    for (i, (base, suffix)) in segments.iter().enumerate() {
        let next_base = segments.get(i + 1).map(|(b, _)| *b);
        if next_base.is_some_and(|n| n <= from) {
            continue;
        }
        if *base > last {
            break;
        }
        let prefix = verified
            .get(base)
            .filter(|(next, _)| suffix.is_empty() && *next == next_base)
            .map(|(_, valid)| valid);
        range.push((*base, next_base, *suffix, prefix));
    }
    // When no segment of the range completes a transaction, recovery writes every `.txnindex`
    // of it empty, whatever the state: the replay would change nothing here.
    let replay = !range
        .iter()
        .all(|(.., prefix)| prefix.is_some_and(ValidPrefix::completes_no_transaction));
    let mut out = Vec::new();
    for (base, next_base, suffix, prefix) in range {
        let expected = if replay {
            let log = naming::log_file(dir, base, suffix);
            // A batch the replay refuses fails the load itself; the plan leaves that to it.
            let Ok(expected) = replay_log(fs, &mut manager, (base, next_base), &log, from, prefix)
            else {
                break;
            };
            expected
        } else {
            Vec::new()
        };
        if !candidates.contains(&base) {
            continue;
        }
        let txn = naming::txn_index_file(dir, base, "");
        if txn_index_bytes(fs, &txn)? != entry_bytes(&expected) {
            out.push((
                base,
                format!(
                    "its .txnindex ({}) is not what the transaction markers give",
                    txn.display()
                ),
            ));
        }
    }
    Ok(out)
}
