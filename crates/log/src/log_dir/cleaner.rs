//! The log cleaner's side of a log directory (Kafka's `LogCleanerManager`): its settings, the
//! cleaner checkpoint (moved by a cleaning, lowered by a truncation, pruned by a deletion), the
//! choice of the log to compact next, and the partitions a failed cleaning made uncleanable.

use seglog_fs::FileSystem;

use super::{CleanerSettings, LogDir, Work};
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

    /// Changes the cleaner checkpoint entry of `tp` (`None` removes it), when `change` says so
    /// from the current entry.
    fn update_cleaner_checkpoint(
        &self,
        tp: &TopicPartition,
        change: impl FnOnce(Option<i64>) -> Option<Option<i64>>,
    ) -> Result<()> {
        let _guard = self.cleaner_checkpoint_lock.lock();
        let checkpoint = self.cleaner_checkpoint();
        let mut entries = checkpoint.read().unwrap_or_default();
        let Some(new) = change(entries.get(tp).copied()) else {
            return Ok(());
        };
        match new {
            Some(offset) => entries.insert(tp.clone(), offset),
            None => entries.remove(tp),
        };
        checkpoint.write(&entries)
    }

    /// Kafka's `maybeTruncateCheckpoint` after a truncation of a compacted `log`: its cleaner
    /// checkpoint entry comes down to the active segment's base offset when it was above.
    pub(super) fn truncate_cleaner_checkpoint(&self, log: &PartitionLog<F>) -> Result<()> {
        if !log.config().cleanup_policy.compact {
            return Ok(());
        }
        let Some(active_base) = log.segments().keys().next_back().copied() else {
            return Ok(());
        };
        self.update_cleaner_checkpoint(log.topic_partition(), |entry| {
            entry
                .is_some_and(|offset| offset > active_base)
                .then_some(Some(active_base))
        })
    }

    /// Kafka's `updateCheckpoints(partitionToRemove)` on a deletion: the entry of `tp` goes.
    pub(super) fn remove_cleaner_checkpoint(&self, tp: &TopicPartition) -> Result<()> {
        self.update_cleaner_checkpoint(tp, |entry| entry.map(|_| None))
    }

    /// Compacts the partition log of `tp` now, whatever its dirty ratio, and moves its cleaner
    /// checkpoint. `None` when there is no such log.
    ///
    /// A cleaning that fails marks the partition uncleanable ([`LogDir::failed_partitions`]):
    /// [`LogDir::run_cleaner`] skips it until [`LogDir::clear_failure`]; the error is returned
    /// as [`Error::SetAside`](crate::Error::SetAside). One that succeeds clears that mark.
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
        let cleaned = log.clean(&options).and_then(|report| {
            if !report.aborted {
                self.update_cleaner_checkpoint(tp, |_| Some(Some(report.end_offset)))?;
            }
            Ok(report)
        });
        match cleaned {
            Ok(report) => {
                self.failures.cleaned(tp);
                Ok(Some(report))
            }
            Err(error) => {
                let now = self.time.now_ms();
                Err(self.failures.record(tp, Work::Cleaning, error, now))
            }
        }
    }

    /// Kafka's `grabFilthiestCompactedLog` and one cleaning: among logs with `cleanup.policy`
    /// compact, the one with the highest dirty ratio above `min.cleanable.dirty.ratio` (strictly),
    /// or any with dirty bytes whose oldest dirty record is past `max.compaction.lag.ms`.
    ///
    /// Partitions set aside ([`LogDir::failed_partitions`]) are not considered. One whose dirty
    /// bytes cannot be reckoned is marked uncleanable and the others are (Kafka marks it and
    /// cleans nothing that round); a cleaning that fails marks its partition and returns the
    /// error ([`Error::SetAside`](crate::Error::SetAside)), so the next call picks another.
    pub fn run_cleaner(&self) -> Result<Option<(TopicPartition, CleanReport)>> {
        let now = self.time.now_ms();
        let mut best: Option<(f64, TopicPartition)> = None;
        for log in self.logs() {
            let tp = log.topic_partition();
            if !log.config().cleanup_policy.compact || self.failures.is_uncleanable(tp) {
                continue;
            }
            match self.cleanable_ratio(&log, now) {
                Ok(Some(ratio)) if best.as_ref().is_none_or(|(r, _)| ratio > *r) => {
                    best = Some((ratio, tp.clone()));
                }
                Ok(_) => {}
                Err(error) => {
                    self.failures.record(tp, Work::Cleaning, error, now);
                }
            }
        }
        let Some((_, tp)) = best else { return Ok(None) };
        Ok(self.compact(&tp)?.map(|report| (tp, report)))
    }

    /// The dirty ratio of `log` when it is eligible for cleaning now, else `None`.
    fn cleanable_ratio(&self, log: &PartitionLog<F>, now: i64) -> Result<Option<f64>> {
        let config = log.config();
        let first_dirty = self.first_dirty_offset(log);
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
        Ok(eligible.then_some(ratio))
    }
}
