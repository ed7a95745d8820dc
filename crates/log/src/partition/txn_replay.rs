//! Producer state replayed read-only from a `.log`, for judging a `.txnindex` without changing a
//! byte: the aborted transactions Kafka's recovery writes for a segment's valid batches (the
//! recovery plan and `check` compare them with the file).

use std::ops::ControlFlow;
use std::path::Path;

use seglog_fs::{File as _, FileSystem, OpenMode};
use seglog_segment::scan::{BatchHeader, scan_selected};
use seglog_segment::txn_index::AbortedTxn;
use seglog_segment::verify::{OffsetBounds, scan_verified};

use super::producer_load::{replay_header, replay_reads_body};
use super::valid_prefix::ValidPrefix;
use crate::error::{Error, Result};
use crate::producer::{ProducerStateManager, replay_batch};

/// The check reads the `.log` in chunks of this size, recovery's: a chunk still in L2 when its
/// CRC is computed (docs/perf/recovery.md).
const CHUNK: usize = 256 << 10;

/// The aborted transactions recovery writes for the valid batches of `log` (a segment at
/// `base`, followed by one at `next_base` if any) whose last offset is at least `from`, replayed
/// into `manager` (Kafka's `updateProducerState` per batch). `verified` is the valid prefix a
/// scan with recovery's rules and the same `next_base` has just found (the recovery plan's),
/// else the prefix is found here by that scan; a verified prefix whose batches with a producer
/// id are all data batches is not read at all (their headers were kept). On a batch producer state refuses, or a read failure: its byte position and
/// why.
pub(crate) fn replay_log<F: FileSystem>(
    fs: &F,
    manager: &mut ProducerStateManager<F>,
    (base, next_base): (i64, Option<i64>),
    log: &Path,
    from: i64,
    verified: Option<&ValidPrefix>,
) -> Result<Vec<AbortedTxn>, (u64, String)> {
    if let Some(replayed) = verified.and_then(|v| v.replay_without_reading(manager, from)) {
        return replayed.map_err(|(position, e)| (position, e.to_string()));
    }
    let io = |e: Error| (0, e.to_string());
    let file = fs
        .open(log, OpenMode::ReadOnly)
        .map_err(|e| io(Error::io(log, e)))?;
    let valid = if let Some(verified) = verified {
        verified.valid_bytes
    } else {
        let size = file.len().map_err(|e| io(Error::io(log, e)))?;
        let bounds = OffsetBounds {
            base_offset: base,
            next_base_offset: next_base,
        };
        scan_verified(&file, log, size, CHUNK, bounds, |_| Ok(()))
            .map_err(|e| io(e.into()))?
            .valid_bytes
    };
    let mut aborted = Vec::new();
    let mut refused = None;
    // Only the control batches with a producer id are read whole; the others replay from their
    // headers, as `recover_batch` replays them, and a legacy entry is skipped.
    let wanted = |h: &BatchHeader| h.last_offset >= from && replay_reads_body(h);
    scan_selected(&file, log, 0, valid, wanted, |h, framed| {
        if h.magic < 2 || h.last_offset < from {
            return Ok(ControlFlow::Continue(()));
        }
        let replayed = match framed.map(|f| f.v2()) {
            Some(Ok(batch)) => replay_batch(manager, &batch, &mut aborted),
            Some(Err(_)) => Ok(()),
            None => replay_header(manager, h),
        };
        if let Err(e) = replayed {
            refused = Some((h.position, e.to_string()));
            return Ok(ControlFlow::Break(()));
        }
        Ok(ControlFlow::Continue(()))
    })
    .map_err(|e| io(e.into()))?;
    match refused {
        Some(r) => Err(r),
        None => Ok(aborted),
    }
}

/// The bytes of the `.txnindex` at `path` (none if it does not exist).
///
/// # Errors
///
/// It exists and cannot be read.
pub(crate) fn txn_index_bytes<F: FileSystem>(fs: &F, path: &Path) -> Result<Vec<u8>> {
    if !fs.exists(path) {
        return Ok(Vec::new());
    }
    let file = fs
        .open(path, OpenMode::ReadOnly)
        .map_err(|e| Error::io(path, e))?;
    let len = usize::try_from(file.len().map_err(|e| Error::io(path, e))?).unwrap_or(usize::MAX);
    let mut bytes = vec![0; len];
    file.read_exact_at(&mut bytes, 0)
        .map_err(|e| Error::io(path, e))?;
    Ok(bytes)
}

/// The bytes recovery writes for `entries`.
pub(crate) fn entry_bytes(entries: &[AbortedTxn]) -> Vec<u8> {
    entries.iter().flat_map(AbortedTxn::to_bytes).collect()
}
