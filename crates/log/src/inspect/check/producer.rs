//! Checking the producer-state files of a partition: each `<offset>.snapshot` decodes (CRC,
//! version) and lies within the log, and each `.txnindex` holds byte for byte what Kafka's
//! recovery writes from the markers (the batches replayed read-only into a producer state held in
//! memory, from the snapshot at the first segment's base offset if one decodes, else from empty).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::txn_index::AbortedTxn;

use super::super::partition::PartitionView;
use super::super::txn_source::TxnTrust;
use super::Finding;
use crate::error::{Error, Result};
use crate::listing::FileKind;
use crate::partition::txn_replay::{entry_bytes, replay_log, txn_index_bytes};
use crate::producer::{ProducerStateManager, producer_state_at, read_snapshot};

/// The bytes of one `.txnindex` entry.
const ENTRY: usize = 34;

/// Checks the snapshots and `.txnindex` files of `partition`, whose segments are `logs` (base
/// offset and `.log`, ascending) and whose log ends at `log_end`.
pub(super) fn check_producer_files<F: FileSystem>(
    partition: &PartitionView<F>,
    logs: &[(i64, PathBuf)],
    log_end: i64,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    let first_base = logs.first().map_or(0, |(b, _)| *b);
    let log_start = partition.log_start_offset();
    for file in partition.files() {
        let Some(offset) = file.base_offset() else {
            continue;
        };
        match file.kind() {
            FileKind::SnapshotTemp => findings.push(Finding::note(
                file.path(),
                "unfinished_snapshot",
                "a producer snapshot whose write did not finish; recover removes it",
            )),
            FileKind::Snapshot => match read_snapshot(partition.fs(), file.path()) {
                Err(Error::CorruptSnapshot {
                    position, message, ..
                }) => {
                    // Derived data whose write was torn: Kafka deletes it at start-up and
                    // rebuilds the state from the log, no record touched; a note.
                    let mut note = Finding::note(
                        file.path(),
                        "corrupt_snapshot",
                        format!(
                            "{message}; Kafka deletes it at its next start and rebuilds producer state from the log (recover sets it aside)"
                        ),
                    );
                    note.position = Some(position);
                    findings.push(note);
                }
                Err(e) => return Err(e),
                Ok(entries) if offset > log_end => findings.push(Finding::new(
                    file.path(),
                    None,
                    "snapshot_past_log_end",
                    format!(
                        "producer snapshot at offset {offset} ({} producers), past the log end {log_end}; recover sets it aside",
                        entries.len()
                    ),
                )),
                Ok(_) if offset < log_start => findings.push(Finding::note(
                    file.path(),
                    "snapshot_below_log_start",
                    format!(
                        "producer snapshot at offset {offset}, below the log start {log_start}; Kafka deletes it at its next start"
                    ),
                )),
                Ok(_) => {}
            },
            _ => {}
        }
    }
    // The replay starts at the latest snapshot that decodes within the log and at or below the
    // first segment's base offset (one at the log start included), else empty there.
    let snapshots = partition
        .files()
        .iter()
        .filter(|f| f.kind() == FileKind::Snapshot)
        .filter_map(|f| f.base_offset().map(|o| (o, f.path())));
    let (manager, _) = producer_state_at(
        partition.fs(),
        partition.dir(),
        partition.topic_partition().to_string(),
        snapshots,
        log_start.saturating_sub(1),
        first_base.min(log_end),
        first_base,
    )?;
    check_txn_indexes(partition, logs, manager, findings)
}

/// Replays the segments in order into `manager` and compares each `.txnindex` with what
/// recovery writes.
fn check_txn_indexes<F: FileSystem>(
    partition: &PartitionView<F>,
    logs: &[(i64, PathBuf)],
    mut manager: ProducerStateManager<F>,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    let fs = partition.fs();
    let trust = TxnTrust::of(partition);
    for (i, (base, log)) in logs.iter().enumerate() {
        let next_base = logs.get(i + 1).map(|(b, _)| *b);
        let expected = match replay_log(fs, &mut manager, (*base, next_base), log, i64::MIN, None) {
            Ok(expected) => expected,
            Err((position, why)) => {
                findings.push(Finding::new(
                    log,
                    Some(position),
                    "producer_state_error",
                    format!("replaying producer state stops at this batch ({why}); the .txnindex files from here on are not checked"),
                ));
                return Ok(());
            }
        };
        let path = seglog_segment::naming::txn_index_file(partition.dir(), *base, "");
        let actual = txn_index_bytes(fs, &path)?;
        if let Some(mut finding) = compare(&path, &actual, &entry_bytes(&expected), &expected) {
            // Say which entries offline reads serve: the rule `consume` and `offsets` follow.
            match trust.judge(fs, &path, *base, next_base)? {
                Some(why) => {
                    let _ = write!(
                        finding.detail,
                        "; reads serve the markers' entries ({}), as Kafka's recovery does",
                        why.describe()
                    );
                }
                None => finding.detail.push_str(
                    "; Kafka serves this file as it is until a recovery rebuilds it, and so do reads",
                ),
            }
            findings.push(finding);
        }
    }
    Ok(())
}

/// One finding for a `.txnindex` that is not `want`: at the first entry that differs, counting
/// the entries that differ (missing, extra or changed).
fn compare(path: &Path, actual: &[u8], want: &[u8], expected: &[AbortedTxn]) -> Option<Finding> {
    if actual == want {
        return None;
    }
    let first = actual
        .iter()
        .zip(want)
        .position(|(a, w)| a != w)
        .unwrap_or(actual.len().min(want.len()));
    let entry = first / ENTRY;
    let entries = actual.len().div_ceil(ENTRY).max(want.len().div_ceil(ENTRY));
    let differing = (entry..entries)
        .filter(|i| actual.get(i * ENTRY..(i + 1) * ENTRY) != want.get(i * ENTRY..(i + 1) * ENTRY))
        .count();
    let found = actual
        .get(entry * ENTRY..)
        .and_then(AbortedTxn::read_from)
        .map_or_else(|| "nothing".to_owned(), |t| describe(&t));
    let detail = match expected.get(entry) {
        Some(t) => format!(
            "entry {entry} should be {} (from the markers), found {found}; recover rebuilds it",
            describe(t)
        ),
        None => format!(
            "entry {entry} is {found}, but the markers abort no further transaction in this segment; recover rebuilds it"
        ),
    };
    Some(
        Finding::new(
            path,
            Some((entry * ENTRY) as u64),
            "txn_index_mismatch",
            detail,
        )
        .with_count(differing as u64),
    )
}

fn describe(t: &AbortedTxn) -> String {
    format!(
        "(producerId {}, firstOffset {}, lastOffset {}, lastStableOffset {})",
        t.producer_id(),
        t.first_offset(),
        t.last_offset(),
        t.last_stable_offset()
    )
}
