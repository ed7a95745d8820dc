//! The leader epoch cache of a reopened crash image against its log: its entries increase, none
//! starts at or past the log end (Kafka's loader truncates the cache there; an empty log keeps
//! its first epoch at its start, as Kafka's truncation from the start puts it back), and every batch
//! from the log start on that carries an epoch has it as the cache's epoch of its base offset
//! (the cache lost no entry: an assignment is synced before the records it covers are written).
//!
//! The log start is the one the workload asked for: a crash may lose the log start offset
//! checkpoint after the cache was truncated from the start (as in Kafka, whose loader truncates
//! the cache from the checkpointed log start only), and the records below it then reappear
//! without an epoch entry, as they do in Kafka.

use seglog_fs::sim::SimFs;
use seglog_log::{EpochEntry, PartitionLog};

/// Each batch from the log start: its base offset (at least the log start) and its epoch.
fn batch_epochs(log: &PartitionLog<SimFs>, from: i64) -> Result<Vec<(i64, i32)>, String> {
    let mut out = Vec::new();
    let mut next = log.log_start_offset().max(from);
    let mut buf = Vec::new();
    while next < log.log_end_offset() {
        let fetch = log
            .read(next, 1 << 20, seglog_log::Isolation::LogEnd, true)
            .map_err(|e| format!("read at {next}: {e}"))?;
        buf.clear();
        fetch
            .read_into(&mut buf)
            .map_err(|e| format!("read at {next}: {e}"))?;
        let mut advanced = next;
        for framed in seglog_record_format::batches(&buf) {
            let framed = framed.map_err(|e| format!("batch near {next}: {e}"))?;
            let b = framed.v2().map_err(|e| format!("batch near {next}: {e}"))?;
            if b.last_offset() >= next {
                out.push((b.base_offset().max(next), b.partition_leader_epoch()));
            }
            advanced = advanced.max(b.last_offset() + 1);
        }
        if advanced <= next {
            break;
        }
        next = advanced;
    }
    Ok(out)
}

/// Checks the cache of `log`, whose workload had moved the log start to `log_start`.
pub(super) fn check_epochs(log: &PartitionLog<SimFs>, log_start: i64) -> Result<(), String> {
    let entries = log.epoch_entries();
    let end = log.log_end_offset();
    for pair in entries.windows(2) {
        if let [a, b] = pair
            && (a.epoch >= b.epoch || a.start_offset >= b.start_offset)
        {
            return Err(format!("leader epochs do not increase: {entries:?}"));
        }
    }
    // Kafka's loader truncates the cache from the end, then from the log start: an empty log
    // (start = end) keeps its first epoch, moved to the log start.
    if let Some(EpochEntry { start_offset, .. }) = entries.last()
        && (*start_offset > end || (*start_offset == end && end != log.log_start_offset()))
    {
        return Err(format!(
            "a leader epoch starts at or past the log end {end} after load: {entries:?}"
        ));
    }
    for (base, epoch) in batch_epochs(log, log_start)? {
        if epoch >= 0 && log.epoch_for_offset(base) != Some(epoch) {
            return Err(format!(
                "the batch at {base} has leader epoch {epoch}, the cache says {:?}: {entries:?}",
                log.epoch_for_offset(base)
            ));
        }
    }
    Ok(())
}
