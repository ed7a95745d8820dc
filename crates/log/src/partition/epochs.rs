//! The partition's leader epochs (Kafka's `UnifiedLog.leaderEpochCache`): the epoch leader
//! appends are stamped with, the cache's assignments on append, its rebuild by recovery and its
//! truncation at load, and the queries (`OffsetsForLeaderEpoch`).

use std::ops::ControlFlow;
use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_record_format::NO_PARTITION_LEADER_EPOCH;

use super::valid_prefix::ValidPrefix;
use super::{Inner, PartitionLog, SegmentMap};
use crate::checkpoint::EpochEntry;
use crate::epoch::UNDEFINED_EPOCH_OFFSET;
use crate::error::Result;

/// An epoch's end offset (Kafka's `OffsetAndEpoch`, the answer to `OffsetsForLeaderEpoch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetAndEpoch {
    /// The end offset: the first offset after the epoch.
    pub offset: i64,
    /// The largest epoch at or below the one asked for.
    pub epoch: i32,
}

impl<F: FileSystem> PartitionLog<F> {
    /// Makes this log the leader of `epoch` (Kafka's `Partition.makeLeader`): leader appends are
    /// stamped with `epoch` from now on (the batches' `partitionLeaderEpoch`, outside their CRC),
    /// and the epoch is assigned the log end offset in the cache (`maybeAssignEpochStartOffset`),
    /// which writes `leader-epoch-checkpoint` when that changes it. Until this is called leader
    /// appends keep the producer's epoch (-1) and add no entry.
    ///
    /// A negative epoch is [`Error::InvalidRequest`](crate::Error::InvalidRequest), changing nothing.
    pub fn set_leader_epoch(&self, epoch: i32) -> Result<()> {
        let _writer = self.inner.writer.lock();
        self.inner
            .epochs
            .write()
            .assign(epoch, self.log_end_offset())?;
        self.inner.leader_epoch.store(epoch, Ordering::Release);
        Ok(())
    }

    /// The epoch leader appends are stamped with, if [`set_leader_epoch`](Self::set_leader_epoch)
    /// set one.
    pub fn leader_epoch(&self) -> Option<i32> {
        Some(self.inner.leader_epoch.load(Ordering::Acquire)).filter(|e| *e >= 0)
    }

    /// Kafka's `maybeAssignEpochStartOffset`: assigns `epoch` the start offset `start_offset` in
    /// the cache (see [`LeaderEpochCache::assign`](crate::LeaderEpochCache::assign)). Returns
    /// whether the cache changed.
    pub fn assign_epoch_start_offset(&self, epoch: i32, start_offset: i64) -> Result<bool> {
        let _writer = self.inner.writer.lock();
        self.inner.epochs.write().assign(epoch, start_offset)
    }

    /// The cache's entries, epochs increasing (Kafka's `epochEntries`).
    pub fn epoch_entries(&self) -> Vec<EpochEntry> {
        self.inner.epochs.read().entries()
    }

    /// The latest epoch in the cache (Kafka's `latestEpoch`).
    pub fn latest_epoch(&self) -> Option<i32> {
        self.inner.epochs.read().latest_epoch()
    }

    /// The epoch before the latest (Kafka's `previousEpoch`).
    pub fn previous_epoch(&self) -> Option<i32> {
        self.inner.epochs.read().previous_epoch()
    }

    /// The smallest cached epoch above `epoch` (Kafka's `nextEpoch`).
    pub fn next_epoch(&self, epoch: i32) -> Option<i32> {
        self.inner.epochs.read().next_epoch(epoch)
    }

    /// The epoch of the record at `offset` (Kafka's `epochForOffset`).
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        self.inner.epochs.read().epoch_for_offset(offset)
    }

    /// Kafka's `endOffsetForEpoch` (`OffsetsForLeaderEpoch`): the largest epoch at or below
    /// `epoch` and the offset where it ended (the log end offset for the latest epoch); `None`
    /// when the cache cannot tell (an undefined epoch, one above every cached epoch, an empty
    /// cache).
    pub fn end_offset_for_epoch(&self, epoch: i32) -> Option<OffsetAndEpoch> {
        let (found, offset) = self
            .inner
            .epochs
            .read()
            .end_offset_for(epoch, self.log_end_offset());
        (offset != UNDEFINED_EPOCH_OFFSET).then_some(OffsetAndEpoch {
            offset,
            epoch: found,
        })
    }
}

impl<F: FileSystem> Inner<F> {
    /// The epoch a leader append stamps, if one is set.
    pub(super) fn stamp_epoch(&self) -> Option<i32> {
        Some(self.leader_epoch.load(Ordering::Acquire)).filter(|e| *e >= 0)
    }

    /// Kafka's append step "update the epoch cache with the epoch stamped onto the message by
    /// the leader": each batch's `(partitionLeaderEpoch, baseOffset)` assigned, in order. A batch
    /// without an epoch (-1, which Kafka's cache refuses and its leaders never write) adds none.
    /// The caller holds the writer lock.
    pub(super) fn assign_batch_epochs(
        &self,
        epochs: impl Iterator<Item = (i32, i64)>,
    ) -> Result<()> {
        let mut cache = None;
        for (epoch, base_offset) in epochs {
            if epoch == NO_PARTITION_LEADER_EPOCH || epoch < 0 {
                continue;
            }
            let cache = cache.get_or_insert_with(|| self.epochs.write());
            if cache.latest_epoch() == Some(epoch) {
                continue;
            }
            cache.assign(epoch, base_offset)?;
        }
        Ok(())
    }

    /// Kafka's `LogSegment.recover` epoch step, for each segment of `bases` still in `segments`
    /// (in order): each v2 batch with an epoch above the cache's latest assigns it its base
    /// offset. A segment whose valid prefix the plan's scan found (`valid`, and still its size)
    /// gives its rising epochs from that scan, without a read of its `.log`; another has its
    /// batch headers walked. One checkpoint write for all of them. Returns the entries added.
    pub(super) fn rebuild_epochs(
        &self,
        segments: &SegmentMap<F>,
        bases: &[i64],
        valid: &std::collections::BTreeMap<i64, ValidPrefix>,
    ) -> Result<Vec<EpochEntry>> {
        let mut cache = self.epochs.write();
        let mut latest = cache.latest_epoch();
        let mut found = Vec::new();
        let mut rising = |epoch: i32, start_offset: i64| {
            if epoch >= 0 && latest.is_none_or(|l| epoch > l) {
                latest = Some(epoch);
                found.push(EpochEntry {
                    epoch,
                    start_offset,
                });
            }
        };
        for base in bases {
            let Some(segment) = segments.get(base) else {
                continue;
            };
            if let Some(prefix) = valid.get(base).filter(|p| p.valid_bytes == segment.size()) {
                for (epoch, start) in prefix.leader_epochs.iter() {
                    rising(*epoch, *start);
                }
                continue;
            }
            segment.scan_batch_headers(0, |h| {
                if h.magic >= 2 {
                    rising(h.partition_leader_epoch, h.offset_field);
                }
                Ok(ControlFlow::<()>::Continue(()))
            })?;
        }
        let before = cache.entries();
        if !cache.assign_all(&found)? {
            return Ok(Vec::new());
        }
        Ok(cache
            .entries()
            .into_iter()
            .filter(|e| !before.contains(e))
            .collect())
    }

    /// The loader's last epoch steps: the cache truncated to the log end offset, and from the
    /// checkpointed log start offset (Kafka's `LogLoader.load`), or cleared when the load
    /// deleted every segment (`deleteSegmentsIfLogStartGreaterThanLogEnd`). Returns the entries
    /// removed or moved (an entry the log start moved is listed as it was).
    pub(super) fn truncate_epochs_at_load(
        &self,
        cleared: bool,
        log_end_offset: i64,
        log_start_checkpoint: i64,
    ) -> Result<Vec<EpochEntry>> {
        let mut cache = self.epochs.write();
        let before = cache.entries();
        if cleared {
            cache.clear_and_flush()?;
        } else {
            cache.truncate_from_end(log_end_offset)?;
            cache.truncate_from_start(log_start_checkpoint)?;
        }
        let after = cache.entries();
        Ok(before.into_iter().filter(|e| !after.contains(e)).collect())
    }

    /// The cache after a truncation to `offset` (Kafka's `truncateTo`).
    pub(super) fn truncate_epochs_from_end(&self, offset: i64) -> Result<()> {
        self.epochs.write().truncate_from_end(offset).map(drop)
    }

    /// The cache after the log start moved to `offset` (retention, DeleteRecords).
    pub(super) fn truncate_epochs_from_start(&self, offset: i64) -> Result<()> {
        self.epochs.write().truncate_from_start(offset).map(drop)
    }

    /// The cache emptied and written (Kafka's `truncateFullyAndStartAt`).
    pub(super) fn clear_epochs(&self) -> Result<()> {
        self.epochs.write().clear_and_flush()
    }
}
