//! Producer state read back without changing a byte: the state at an offset is the latest
//! usable snapshot at or below it (corrupt ones passed over and left in place, as Kafka's
//! `loadFromSnapshot` passes them over), or none, then the batches after it replayed one by one
//! as recovery replays a segment. The recovery plan's `.txnindex` check, `check` and the offline
//! consumer's last stable offset start with [`producer_state_at`]; they and recovery's own replay
//! of a segment feed batches through [`replay_batch`].

use std::path::Path;

use seglog_fs::FileSystem;
use seglog_record_format::RecordBatch;
use seglog_segment::txn_index::AbortedTxn;

use super::config::{DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, ProducerStateManagerConfig};
use super::manager::ProducerStateManager;
use super::replay::recover_batch;
use super::snapshot_file::read_snapshot;
use crate::error::{Error, Result};

/// A manager of the partition in `dir` (named `partition`, `topic-N`) holding the producer state
/// at the latest of `snapshots` (offset and path, in any order) above `above` and at most `at`
/// that decodes, or, with none, empty at `empty_at`; and the offset its state ends at, from which
/// the caller replays the batches up to `at` with [`replay_batch`]. The manager only lists the
/// directory: a read-only replay never takes a snapshot or truncates.
///
/// # Errors
///
/// The directory cannot be listed, or a snapshot exists and cannot be read.
pub fn producer_state_at<'p, F: FileSystem>(
    fs: &F,
    dir: &Path,
    partition: String,
    snapshots: impl IntoIterator<Item = (i64, &'p Path)>,
    above: i64,
    at: i64,
    empty_at: i64,
) -> Result<(ProducerStateManager<F>, i64)> {
    let mut candidates: Vec<(i64, &Path)> = snapshots
        .into_iter()
        .filter(|(o, _)| *o > above && *o <= at)
        .collect();
    candidates.sort_unstable_by_key(|(o, _)| std::cmp::Reverse(*o));
    let mut manager = ProducerStateManager::new(
        fs.clone(),
        dir,
        partition,
        DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
        ProducerStateManagerConfig::default(),
    )?;
    for (offset, path) in candidates {
        match read_snapshot(fs, path) {
            Ok(entries) => {
                for entry in entries {
                    manager.load_producer_entry(entry);
                }
                manager.update_map_end_offset(offset);
                return Ok((manager, offset));
            }
            Err(Error::CorruptSnapshot { .. }) => {}
            Err(e) => return Err(e),
        }
    }
    manager.update_map_end_offset(empty_at);
    Ok((manager, empty_at))
}

/// One batch replayed into `manager` as recovery replays it (Kafka's
/// `LogSegment.updateProducerState`, through [`recover_batch`]); an aborted transaction it
/// completes goes to `aborted` with the last stable offset at its completion, as recovery writes
/// it to the segment's `.txnindex`.
///
/// # Errors
///
/// As [`recover_batch`]: the producer state refuses the batch, or its marker does not decode.
pub fn replay_batch<F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    batch: &RecordBatch<'_>,
    aborted: &mut Vec<AbortedTxn>,
) -> Result<()> {
    if let Some((txn, last_stable_offset)) = recover_batch(manager, batch)?
        && txn.is_aborted
    {
        aborted.push(AbortedTxn::new(
            txn.producer_id,
            txn.first_offset,
            txn.last_offset,
            last_stable_offset,
        ));
    }
    Ok(())
}
