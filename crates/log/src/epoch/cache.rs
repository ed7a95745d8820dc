//! [`LeaderEpochCache`]: Kafka's `LeaderEpochFileCache` (`storage/internals/epoch`), the first
//! offset of each leader epoch of a partition, kept in its `leader-epoch-checkpoint`.

use std::collections::BTreeMap;
use std::path::Path;

use seglog_fs::FileSystem;

use crate::checkpoint::{EpochEntry, LeaderEpochCheckpoint};
use crate::error::{Error, Result};

/// Kafka's `UNDEFINED_EPOCH` (`OffsetsForLeaderEpochResponse`): no epoch.
pub const UNDEFINED_EPOCH: i32 = -1;
/// Kafka's `UNDEFINED_EPOCH_OFFSET`: no end offset.
pub const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// A partition's leader epochs (Kafka's `LeaderEpochFileCache`): each epoch with the first offset
/// written under it, epochs and offsets increasing, backed by the partition's
/// `leader-epoch-checkpoint`.
///
/// Flush rules, as Kafka's: an assignment that changes the cache writes the checkpoint at once
/// (temp file, fsync, rename, directory fsync), so the file never misses an entry; truncations
/// write it too. Kafka writes a truncation later, on its scheduler, and repairs the stale entries
/// a crash leaves at the next load (truncation from both ends); seglog writes it before
/// returning, which leaves fewer stale entries and is repaired by the same load.
#[derive(Debug)]
pub struct LeaderEpochCache<F: FileSystem> {
    checkpoint: LeaderEpochCheckpoint<F>,
    /// Epoch to start offset.
    epochs: BTreeMap<i32, i64>,
}

impl<F: FileSystem> LeaderEpochCache<F> {
    /// The cache of the partition directory `partition_dir`, loaded from its checkpoint as
    /// Kafka's constructor does: each entry assigned in the file's order (so entries that do not
    /// increase are dropped), nothing written. A missing file is an empty cache; a malformed one
    /// is [`Error::Checkpoint`] naming the line.
    pub fn load(fs: F, partition_dir: &Path) -> Result<Self> {
        let checkpoint = LeaderEpochCheckpoint::in_dir(fs, partition_dir);
        let mut cache = Self {
            epochs: BTreeMap::new(),
            checkpoint,
        };
        for entry in cache.checkpoint.read_as_written()? {
            cache.check_entry(entry)?;
            cache.assign_entry(entry);
        }
        Ok(cache)
    }

    /// The checkpoint file's path.
    pub fn checkpoint_path(&self) -> &Path {
        self.checkpoint.path()
    }

    /// Kafka's `assign(epoch, startOffset)`: records that `epoch` begins at `start_offset`,
    /// removing the entries it contradicts (an epoch at or above it, or a start offset at or
    /// past it), and writes the checkpoint if that changed anything. Nothing changes when the
    /// latest entry is this epoch at or before `start_offset`. Returns whether it changed.
    ///
    /// A negative epoch or offset is [`Error::InvalidRequest`] (Kafka's
    /// `IllegalArgumentException`), changing nothing.
    pub fn assign(&mut self, epoch: i32, start_offset: i64) -> Result<bool> {
        let entry = EpochEntry {
            epoch,
            start_offset,
        };
        self.check_entry(entry)?;
        if !self.assign_entry(entry) {
            return Ok(false);
        }
        self.write()?;
        Ok(true)
    }

    /// Kafka's `assign(List<EpochEntry>)`: each entry assigned in order, then one write of the
    /// checkpoint when any changed the cache (Kafka writes whenever `entries` is not empty: the
    /// same bytes). Every entry is checked before any is assigned. Returns whether it changed.
    pub fn assign_all(&mut self, entries: &[EpochEntry]) -> Result<bool> {
        for entry in entries {
            self.check_entry(*entry)?;
        }
        let mut changed = false;
        for entry in entries {
            changed |= self.assign_entry(*entry);
        }
        if changed {
            self.write()?;
        }
        Ok(changed)
    }

    fn check_entry(&self, entry: EpochEntry) -> Result<()> {
        if entry.epoch < 0 || entry.start_offset < 0 {
            return Err(Error::InvalidRequest {
                partition: self.checkpoint.path().display().to_string(),
                reason: format!(
                    "Received invalid partition leader epoch entry EpochEntry(epoch={}, startOffset={})",
                    entry.epoch, entry.start_offset
                ),
            });
        }
        Ok(())
    }

    /// Kafka's `isUpdateNeeded` and `maybeTruncateNonMonotonicEntries`, without the write.
    fn assign_entry(&mut self, entry: EpochEntry) -> bool {
        let needed = self
            .latest_entry()
            .is_none_or(|l| entry.epoch != l.epoch || entry.start_offset < l.start_offset);
        if !needed {
            return false;
        }
        while let Some((&epoch, &start)) = self.epochs.last_key_value() {
            if epoch >= entry.epoch || start >= entry.start_offset {
                self.epochs.remove(&epoch);
            } else {
                break;
            }
        }
        self.epochs.insert(entry.epoch, entry.start_offset);
        true
    }

    /// Whether the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.epochs.is_empty()
    }

    /// The entries, epochs increasing.
    pub fn entries(&self) -> Vec<EpochEntry> {
        self.epochs.iter().map(|(e, o)| entry(*e, *o)).collect()
    }

    /// The latest entry (Kafka's `latestEntry`).
    pub fn latest_entry(&self) -> Option<EpochEntry> {
        self.epochs.last_key_value().map(|(e, o)| entry(*e, *o))
    }

    /// The latest epoch: the current leader's, still being written (Kafka's `latestEpoch`).
    pub fn latest_epoch(&self) -> Option<i32> {
        self.epochs.last_key_value().map(|(e, _)| *e)
    }

    /// The epoch before the latest (Kafka's `previousEpoch()`).
    pub fn previous_epoch(&self) -> Option<i32> {
        self.latest_epoch().and_then(|l| self.previous_epoch_of(l))
    }

    /// The earliest entry (Kafka's `earliestEntry`).
    pub fn earliest_entry(&self) -> Option<EpochEntry> {
        self.epochs.first_key_value().map(|(e, o)| entry(*e, *o))
    }

    /// The largest epoch below `epoch` (Kafka's `previousEpoch(int)`).
    pub fn previous_epoch_of(&self, epoch: i32) -> Option<i32> {
        self.previous_entry(epoch).map(|e| e.epoch)
    }

    /// The entry of the largest epoch below `epoch` (Kafka's `previousEntry`).
    pub fn previous_entry(&self, epoch: i32) -> Option<EpochEntry> {
        self.epochs
            .range(..epoch)
            .next_back()
            .map(|(e, o)| entry(*e, *o))
    }

    /// The smallest epoch above `epoch` (Kafka's `nextEpoch`).
    pub fn next_epoch(&self, epoch: i32) -> Option<i32> {
        let above = epoch.checked_add(1)?;
        self.epochs.range(above..).next().map(|(e, _)| *e)
    }

    /// The entry of `epoch` (Kafka's `epochEntry`).
    pub fn epoch_entry(&self, epoch: i32) -> Option<EpochEntry> {
        self.epochs.get(&epoch).map(|o| entry(epoch, *o))
    }

    /// Kafka's `endOffsetFor` (OffsetsForLeaderEpoch): the largest epoch at or below
    /// `requested` and the offset where it ended (the start of the next epoch, or `log_end` for
    /// the latest epoch). An epoch below every cached one answers itself with the first cached
    /// epoch's start; [`UNDEFINED_EPOCH`] or an epoch above every cached one answers
    /// `(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)`.
    pub fn end_offset_for(&self, requested: i32, log_end: i64) -> (i32, i64) {
        if requested == UNDEFINED_EPOCH {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        }
        if self.latest_epoch() == Some(requested) {
            return (requested, log_end);
        }
        let Some(higher) = requested
            .checked_add(1)
            .and_then(|above| self.epochs.range(above..).next())
        else {
            return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET);
        };
        match self.epochs.range(..=requested).next_back() {
            None => (requested, *higher.1),
            Some((floor, _)) => (*floor, *higher.1),
        }
    }

    /// Kafka's `truncateFromEnd`: removes every entry starting at or past `end_offset` (none
    /// when `end_offset` is negative) and writes the checkpoint if any went. Returns the removed
    /// entries, latest first.
    pub fn truncate_from_end(&mut self, end_offset: i64) -> Result<Vec<EpochEntry>> {
        let removed = truncate_from_end(&mut self.epochs, end_offset);
        if !removed.is_empty() {
            self.write()?;
        }
        Ok(removed)
    }

    /// Kafka's `truncateFromStart`: removes every entry starting at or before `start_offset`
    /// but the latest of them, which then starts at `start_offset` (an entry at `start_offset`
    /// is kept), and writes the checkpoint if anything changed. Returns the removed entries,
    /// earliest first.
    pub fn truncate_from_start(&mut self, start_offset: i64) -> Result<Vec<EpochEntry>> {
        let removed = truncate_from_start(&mut self.epochs, start_offset);
        // Kafka writes whenever an entry was removed, even the first one put back unchanged (an
        // entry at `start_offset`, as at every load): the same bytes, so seglog skips that write.
        let unchanged = matches!(removed.as_slice(), [only] if only.start_offset == start_offset);
        if !removed.is_empty() && !unchanged {
            self.write()?;
        }
        Ok(removed)
    }

    /// The epoch of the record at `offset`: the latest epoch starting at or before it (Kafka's
    /// `epochForOffset`).
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        self.epochs
            .iter()
            .take_while(|(_, start)| **start <= offset)
            .last()
            .map(|(e, _)| *e)
    }

    /// The entries of the offsets `[start_offset, end_offset)`, as the cache truncated at both
    /// ends would hold them (Kafka's `epochEntriesInRange`; a negative `start_offset` keeps the
    /// start). The cache is not changed.
    pub fn epoch_entries_in_range(&self, start_offset: i64, end_offset: i64) -> Vec<EpochEntry> {
        let mut copy = self.epochs.clone();
        if start_offset >= 0 {
            truncate_from_start(&mut copy, start_offset);
        }
        truncate_from_end(&mut copy, end_offset);
        copy.iter().map(|(e, o)| entry(*e, *o)).collect()
    }

    /// Removes every entry and writes the (empty) checkpoint (Kafka's `clearAndFlush`).
    pub fn clear_and_flush(&mut self) -> Result<()> {
        self.epochs.clear();
        self.write()
    }

    /// Removes every entry, writing nothing (Kafka's `clear`).
    pub fn clear(&mut self) {
        self.epochs.clear();
    }

    fn write(&self) -> Result<()> {
        self.checkpoint.write(&self.entries())
    }
}

fn entry(epoch: i32, start_offset: i64) -> EpochEntry {
    EpochEntry {
        epoch,
        start_offset,
    }
}

fn truncate_from_end(epochs: &mut BTreeMap<i32, i64>, end_offset: i64) -> Vec<EpochEntry> {
    let mut removed = Vec::new();
    if end_offset < 0 {
        return removed;
    }
    while let Some((&epoch, &start)) = epochs.last_key_value() {
        if start < end_offset {
            break;
        }
        epochs.remove(&epoch);
        removed.push(entry(epoch, start));
    }
    removed
}

fn truncate_from_start(epochs: &mut BTreeMap<i32, i64>, start_offset: i64) -> Vec<EpochEntry> {
    let mut removed = Vec::new();
    while let Some((&epoch, &start)) = epochs.first_key_value() {
        if start > start_offset {
            break;
        }
        epochs.remove(&epoch);
        removed.push(entry(epoch, start));
    }
    if let Some(last) = removed.last() {
        epochs.insert(last.epoch, start_offset);
    }
    removed
}
