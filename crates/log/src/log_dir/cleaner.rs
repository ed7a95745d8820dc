//! The log cleaner's side of a log directory: its settings, the cleaner checkpoint, and the
//! choice of the log to compact next.

use seglog_fs::FileSystem;

use super::{CleanerSettings, LogDir};
use crate::checkpoint::{CLEANER_OFFSET_CHECKPOINT, OffsetCheckpoint};
use crate::error::Result;
use crate::partition::{CleanOptions, CleanReport, PartitionLog};
use crate::topic_partition::TopicPartition;

impl<F: FileSystem> LogDir<F> {
    /// Sets the cleaner's memory budget and I/O limit.
    pub fn set_cleaner_settings(&self, settings: CleanerSettings) {
        *self.cleaner.lock() = settings;
    }

    fn cleaner_checkpoint(&self) -> OffsetCheckpoint<F> {
        OffsetCheckpoint::new(self.fs.clone(), self.path.join(CLEANER_OFFSET_CHECKPOINT))
    }

    /// Where the next cleaning of `log` starts (Kafka's `firstDirtyOffset`): the cleaner checkpoint,
    /// or the log start offset when there is none or it is out of the log's range.
    fn first_dirty_offset(&self, log: &PartitionLog<F>) -> i64 {
        let checkpointed = self
            .cleaner_checkpoint()
            .read()
            .ok()
            .and_then(|c| c.get(log.topic_partition()).copied());
        match checkpointed {
            Some(o) if o >= log.log_start_offset() && o <= log.log_end_offset() => o,
            _ => log.log_start_offset(),
        }
    }

    /// Compacts the partition log of `tp` now, whatever its dirty ratio, and moves its cleaner
    /// checkpoint. `None` when there is no such log.
    pub fn compact(&self, tp: &TopicPartition) -> Result<Option<CleanReport>> {
        let Some(log) = self.log(tp) else {
            return Ok(None);
        };
        let settings = *self.cleaner.lock();
        let options = CleanOptions {
            first_dirty_offset: self.first_dirty_offset(&log),
            dedupe_buffer_bytes: settings.dedupe_buffer_bytes,
            io_max_bytes_per_second: settings.io_max_bytes_per_second,
            uncleanable_offset: None,
        };
        let report = log.clean(&options)?;
        if !report.aborted {
            let checkpoint = self.cleaner_checkpoint();
            let mut entries = checkpoint.read().unwrap_or_default();
            entries.insert(tp.clone(), report.end_offset);
            checkpoint.write(&entries)?;
        }
        Ok(Some(report))
    }

    /// Kafka's `grabFilthiestCompactedLog` and one cleaning: among logs with `cleanup.policy`
    /// compact, the one with the highest dirty ratio above `min.cleanable.dirty.ratio` (strictly),
    /// or any with dirty bytes whose oldest dirty record is past `max.compaction.lag.ms`.
    pub fn run_cleaner(&self) -> Result<Option<(TopicPartition, CleanReport)>> {
        let now = self.time.now_ms();
        let mut best: Option<(f64, TopicPartition)> = None;
        for log in self.logs() {
            let config = log.config();
            if !config.cleanup_policy.compact {
                continue;
            }
            let first_dirty = self.first_dirty_offset(&log);
            let (_, dirty, ratio) = log.dirty_ratio(first_dirty)?;
            let mut overdue = false;
            if config.max_compaction_lag_ms < i64::MAX && dirty > 0 {
                let uncleanable = log.first_uncleanable_offset(first_dirty)?;
                for (base, segment) in log.segments().range(..uncleanable) {
                    if *base >= first_dirty || segment.read_next_offset()? > first_dirty {
                        let ts = segment.first_batch_timestamp()?;
                        overdue |= ts < now.saturating_sub(config.max_compaction_lag_ms);
                    }
                }
            }
            let eligible = (overdue && dirty > 0) || ratio > config.min_cleanable_dirty_ratio;
            if eligible && best.as_ref().is_none_or(|(r, _)| ratio > *r) {
                best = Some((ratio, log.topic_partition().clone()));
            }
        }
        let Some((_, tp)) = best else { return Ok(None) };
        Ok(self.compact(&tp)?.map(|report| (tp, report)))
    }
}
