//! Kafka's `ProducerStateManager`: the producers of one partition, its ongoing and unreplicated
//! transactions, the first unstable offset, expiry and the snapshot files.
//!
//! The partition drives it as Kafka's `UnifiedLog` does: per producer of an append,
//! [`prepare_update`](ProducerStateManager::prepare_update), then the batches and markers into the
//! [`ProducerAppendInfo`], then (once the append is written) [`update`](ProducerStateManager::update),
//! for each completed transaction [`last_stable_offset`](ProducerStateManager::last_stable_offset)
//! (the `.txnindex` entry's) and [`complete_txn`](ProducerStateManager::complete_txn), and
//! [`update_map_end_offset`](ProducerStateManager::update_map_end_offset); a snapshot on roll and
//! close, [`truncate_and_reload`](ProducerStateManager::truncate_and_reload) on open and truncation.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::FileSystem;

use super::append_info::{AppendOrigin, ProducerAppendInfo};
use super::config::ProducerStateManagerConfig;
use super::deferred_syncs::DeferredSyncs;
use super::entry::ProducerStateEntry;
use super::snapshot_file::{self, SnapshotFile};
use super::txn::{CompletedTxn, LogOffsetMetadata, TxnMetadata};
use crate::error::{Error, Result};

mod apply;

/// Kafka's `LATE_TRANSACTION_BUFFER_MS`: five minutes past the transaction timeout.
pub const LATE_TRANSACTION_BUFFER_MS: i64 = 5 * 60 * 1000;

/// One partition's producer state.
#[derive(Debug)]
pub struct ProducerStateManager<F: FileSystem> {
    fs: F,
    dir: PathBuf,
    /// Shared with every [`ProducerAppendInfo`] made.
    partition: Arc<str>,
    config: ProducerStateManagerConfig,
    max_transaction_timeout_ms: i32,
    producers: HashMap<i64, ProducerStateEntry>,
    /// Ongoing transactions by first offset.
    ongoing: BTreeMap<i64, TxnMetadata>,
    /// Completed transactions whose markers are above the high watermark, by first offset.
    unreplicated: BTreeMap<i64, TxnMetadata>,
    oldest_txn_last_timestamp: i64,
    snapshots: BTreeMap<i64, SnapshotFile>,
    last_map_offset: i64,
    last_snap_offset: i64,
    /// While a partition opens: where a synced snapshot's syncs go instead of being made.
    deferred: Option<DeferredSyncs>,
}

impl<F: FileSystem> ProducerStateManager<F> {
    /// The state manager of the partition in `dir` (named `partition`, `topic-N`), knowing the
    /// snapshot files there; the state itself is empty until
    /// [`truncate_and_reload`](Self::truncate_and_reload) loads it.
    ///
    /// # Errors
    ///
    /// The directory cannot be listed, or a snapshot's name is not an offset.
    pub fn new(
        fs: F,
        dir: impl Into<PathBuf>,
        partition: impl Into<String>,
        max_transaction_timeout_ms: i32,
        config: ProducerStateManagerConfig,
    ) -> Result<Self> {
        let dir = dir.into();
        let snapshots = load_snapshots(&fs, &dir)?;
        let manager = Self::unlisted(fs, dir, partition, max_transaction_timeout_ms, config);
        Ok(Self {
            snapshots,
            ..manager
        })
    }

    /// [`ProducerStateManager::new`] without listing the directory: it knows no snapshot until
    /// [`remove_stray_snapshots`](Self::remove_stray_snapshots) lists them (the partition's
    /// load, which lists them once, there).
    pub(crate) fn unlisted(
        fs: F,
        dir: PathBuf,
        partition: impl Into<String>,
        max_transaction_timeout_ms: i32,
        config: ProducerStateManagerConfig,
    ) -> Self {
        let snapshots = BTreeMap::new();
        Self {
            fs,
            dir,
            partition: Arc::from(partition.into()),
            config,
            max_transaction_timeout_ms,
            producers: HashMap::new(),
            ongoing: BTreeMap::new(),
            unreplicated: BTreeMap::new(),
            oldest_txn_last_timestamp: -1,
            snapshots,
            last_map_offset: 0,
            last_snap_offset: 0,
            deferred: None,
        }
    }

    /// From now on a synced snapshot ([`take_snapshot`](Self::take_snapshot)`(true)`) is written
    /// unsynced and its syncs left to `deferred` (an open's, see [`DeferredSyncs`]); `None`
    /// syncs them as they are written again.
    pub(crate) fn defer_syncs(&mut self, deferred: Option<DeferredSyncs>) {
        self.deferred = deferred;
    }

    /// Where synced snapshots' syncs go, if they are deferred.
    #[must_use]
    pub(crate) fn deferred_syncs(&self) -> Option<&DeferredSyncs> {
        self.deferred.as_ref()
    }

    /// The settings.
    #[must_use]
    pub fn config(&self) -> ProducerStateManagerConfig {
        self.config
    }
    /// The producers, by id.
    #[must_use]
    pub fn active_producers(&self) -> &HashMap<i64, ProducerStateEntry> {
        &self.producers
    }
    /// A producer's state.
    #[must_use]
    pub fn last_entry(&self, producer_id: i64) -> Option<&ProducerStateEntry> {
        self.producers.get(&producer_id)
    }
    /// No producer and no unreplicated transaction.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.producers.is_empty() && self.unreplicated.is_empty()
    }
    /// The offset up to which the state covers the log (exclusive).
    #[must_use]
    pub fn map_end_offset(&self) -> i64 {
        self.last_map_offset
    }
    /// Moves the covered end, after an append (Kafka's `updateMapEndOffset`).
    pub fn update_map_end_offset(&mut self, last_offset: i64) {
        self.last_map_offset = last_offset;
    }

    /// Whether the oldest open transaction has been idle past the transaction timeout plus
    /// [`LATE_TRANSACTION_BUFFER_MS`] (Kafka's `hasLateTransaction`).
    #[must_use]
    pub fn has_late_transaction(&self, now_ms: i64) -> bool {
        let last = self.oldest_txn_last_timestamp;
        last > 0
            && now_ms - last
                > i64::from(self.max_transaction_timeout_ms) + LATE_TRANSACTION_BUFFER_MS
    }

    /// The first offset of an undecided transaction, or of a decided one whose marker is above the
    /// high watermark, whichever is lower (Kafka's `firstUnstableOffset`).
    #[must_use]
    pub fn first_unstable_offset(&self) -> Option<LogOffsetMetadata> {
        let unreplicated = self.unreplicated.values().next().map(|t| t.first_offset);
        let undecided = self.ongoing.values().next().map(|t| t.first_offset);
        match (unreplicated, undecided) {
            (None, u) | (u, None) => u,
            (Some(r), Some(u)) => Some(if u.message_offset < r.message_offset {
                u
            } else {
                r
            }),
        }
    }

    /// The first offset of an undecided transaction (Kafka's `firstUndecidedOffset`).
    #[must_use]
    pub fn first_undecided_offset(&self) -> Option<i64> {
        self.ongoing
            .values()
            .next()
            .map(|t| t.first_offset.message_offset)
    }

    /// Forgets the completed transactions whose markers are below the high watermark.
    pub fn on_high_watermark_updated(&mut self, high_watermark: i64) {
        self.remove_unreplicated_transactions(high_watermark);
    }

    fn remove_unreplicated_transactions(&mut self, offset: i64) {
        self.unreplicated
            .retain(|_, t| t.last_offset.is_none_or(|l| l >= offset));
    }

    /// Starts validating an append of `producer_id` (Kafka's `prepareUpdate`).
    #[must_use]
    pub fn prepare_update(&self, producer_id: i64, origin: AppendOrigin) -> ProducerAppendInfo {
        let current = self.producers.get(&producer_id);
        ProducerAppendInfo::from_state(Arc::clone(&self.partition), producer_id, current, origin)
    }

    /// Takes over a validated append (Kafka's `update`).
    ///
    /// # Panics
    ///
    /// On the producer id -1, a caller's bug (Kafka's `IllegalArgumentException`).
    pub fn update(&mut self, info: &ProducerAppendInfo) {
        let slot = self.producers.entry(info.producer_id());
        let last_timestamp = apply::take_over(slot, info, &self.partition);
        self.start_transactions(info, last_timestamp);
    }

    fn update_oldest_txn_timestamp(&mut self) {
        self.oldest_txn_last_timestamp = self.ongoing.values().next().map_or(-1, |t| {
            self.producers
                .get(&t.producer_id)
                .map_or(-1, ProducerStateEntry::last_timestamp)
        });
    }

    /// The last stable offset to write in the `.txnindex` entry of `txn`: the first offset of the
    /// next open transaction of another producer, else just past the marker (Kafka's
    /// `lastStableOffset`). The transaction is completed by [`complete_txn`](Self::complete_txn).
    #[must_use]
    pub fn last_stable_offset(&self, txn: &CompletedTxn) -> i64 {
        self.ongoing
            .values()
            .find(|t| t.producer_id != txn.producer_id)
            .map_or(txn.last_offset + 1, |t| t.first_offset.message_offset)
    }

    /// Marks a transaction completed; it stays unstable until the high watermark passes its
    /// marker (Kafka's `completeTxn`).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidRequest`] with Kafka's message if no such transaction was started.
    pub fn complete_txn(&mut self, txn: &CompletedTxn) -> Result<()> {
        let Some(mut meta) = self.ongoing.remove(&txn.first_offset) else {
            return Err(Error::InvalidRequest {
                partition: self.partition.to_string(),
                reason: format!(
                    "Attempted to complete transaction CompletedTxn[producerId={}, firstOffset={}, lastOffset={}, isAborted={}] on partition {} which was not started",
                    txn.producer_id,
                    txn.first_offset,
                    txn.last_offset,
                    txn.is_aborted,
                    self.partition
                ),
            });
        };
        meta.last_offset = Some(txn.last_offset);
        self.unreplicated.insert(txn.first_offset, meta);
        self.update_oldest_txn_timestamp();
        Ok(())
    }

    fn is_expired(&self, now_ms: i64, e: &ProducerStateEntry) -> bool {
        e.current_txn_first_offset().is_none()
            && now_ms - e.last_timestamp() >= i64::from(self.config.producer_id_expiration_ms)
    }

    /// Drops the producers idle for `producer.id.expiration.ms` with no open transaction
    /// (Kafka's `removeExpiredProducers`).
    pub fn remove_expired_producers(&mut self, now_ms: i64) {
        let expiration = i64::from(self.config.producer_id_expiration_ms);
        self.producers.retain(|_, e| {
            !(e.current_txn_first_offset().is_none() && now_ms - e.last_timestamp() >= expiration)
        });
    }

    /// Adds a producer as a snapshot holds it (Kafka's `loadProducerEntry`).
    pub fn load_producer_entry(&mut self, entry: ProducerStateEntry) {
        let pid = entry.producer_id();
        if let Some(first) = entry.current_txn_first_offset() {
            self.ongoing.insert(
                first,
                TxnMetadata {
                    producer_id: pid,
                    first_offset: LogOffsetMetadata::offset(first),
                    last_offset: None,
                },
            );
        }
        self.producers.insert(pid, entry);
    }

    /// Loads the latest snapshot, deleting each corrupt one and trying the next older; with
    /// none, the state starts empty at `log_start_offset` (Kafka's `loadFromSnapshot`).
    /// Returns the corrupt snapshots deleted and why, for the load report.
    fn load_from_snapshot(&mut self, log_start_offset: i64, now_ms: i64) -> Result<Vec<Error>> {
        let mut dropped = Vec::new();
        while let Some((&offset, snapshot)) = self.snapshots.iter().next_back() {
            match snapshot_file::read_snapshot(&self.fs, &snapshot.path) {
                Ok(entries) => {
                    for e in entries {
                        if !self.is_expired(now_ms, &e) {
                            self.load_producer_entry(e);
                        }
                    }
                    self.last_snap_offset = offset;
                    self.last_map_offset = offset;
                    self.update_oldest_txn_timestamp();
                    return Ok(dropped);
                }
                Err(e @ Error::CorruptSnapshot { .. }) => {
                    dropped.push(e);
                    self.remove_and_delete_snapshot(offset)?;
                }
                Err(e) => return Err(e),
            }
        }
        self.last_snap_offset = log_start_offset;
        self.last_map_offset = log_start_offset;
        Ok(dropped)
    }

    /// Deletes the snapshots at or below the log start and past the log end, then, unless the
    /// state already ends at `log_end_offset`, reloads it from the latest remaining snapshot
    /// (Kafka's `truncateAndReload`). Returns the corrupt snapshots it deleted.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] on a snapshot that cannot be read or deleted.
    pub fn truncate_and_reload(
        &mut self,
        log_start_offset: i64,
        log_end_offset: i64,
        now_ms: i64,
    ) -> Result<Vec<Error>> {
        // By range, not by a scan of every snapshot: a recovery calls this once per segment, so
        // a scan made the unclean open of a 100,000-segment log quadratic.
        let above = (
            Bound::Excluded(log_end_offset.max(log_start_offset)),
            Bound::Unbounded,
        );
        let out_of_range: Vec<i64> = self
            .snapshots
            .range(..=log_start_offset)
            .chain(self.snapshots.range(above))
            .map(|(&o, _)| o)
            .collect();
        for o in out_of_range {
            self.remove_and_delete_snapshot(o)?;
        }
        if log_end_offset == self.last_map_offset {
            self.on_log_start_offset_incremented(log_start_offset);
            return Ok(Vec::new());
        }
        self.producers.clear();
        self.ongoing.clear();
        self.update_oldest_txn_timestamp();
        // The log end is at most the high watermark here, so no unreplicated transaction remains.
        self.unreplicated.clear();
        self.load_from_snapshot(log_start_offset, now_ms)
    }

    /// Forgets what is below a new log start (Kafka's `onLogStartOffsetIncremented`).
    pub fn on_log_start_offset_incremented(&mut self, log_start_offset: i64) {
        self.remove_unreplicated_transactions(log_start_offset);
        if self.last_map_offset < log_start_offset {
            self.last_map_offset = log_start_offset;
        }
        self.last_snap_offset = self.latest_snapshot_offset().unwrap_or(log_start_offset);
    }

    /// Empties the state and deletes every snapshot; the state starts at `offset`
    /// (Kafka's `truncateFullyAndStartAt`).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] on a snapshot that cannot be deleted.
    pub fn truncate_fully_and_start_at(&mut self, offset: i64) -> Result<()> {
        self.producers.clear();
        self.ongoing.clear();
        self.unreplicated.clear();
        let all: Vec<i64> = self.snapshots.keys().copied().collect();
        for o in all {
            self.remove_and_delete_snapshot(o)?;
        }
        self.last_snap_offset = 0;
        self.last_map_offset = offset;
        self.update_oldest_txn_timestamp();
        Ok(())
    }

    /// Empties the state and the snapshots it knows (deleting their files), then lists the
    /// snapshot files on disk again (Kafka's `truncateFullyAndReloadSnapshots`).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] on a snapshot that cannot be deleted, or a listing failure.
    pub fn truncate_fully_and_reload_snapshots(&mut self) -> Result<()> {
        self.truncate_fully_and_start_at(0)?;
        self.snapshots = load_snapshots(&self.fs, &self.dir)?;
        Ok(())
    }

    /// Writes a snapshot at the map end offset unless one exists there already (Kafka's
    /// `takeSnapshot(sync)`); returns its path if written.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] naming the file.
    pub fn take_snapshot(&mut self, sync: bool) -> Result<Option<PathBuf>> {
        if self.last_map_offset <= self.last_snap_offset {
            return Ok(None);
        }
        let path = snapshot_file::snapshot_path(&self.dir, self.last_map_offset);
        // Ascending producer id, so the same state always gives the same bytes.
        let mut entries: Vec<&ProducerStateEntry> = self.producers.values().collect();
        entries.sort_by_key(|e| e.producer_id());
        let now = sync && self.deferred.is_none();
        snapshot_file::write_snapshot(&self.fs, &path, entries.into_iter(), now)?;
        if let (true, Some(deferred)) = (sync, &self.deferred) {
            deferred.push(path.clone());
        }
        self.snapshots.insert(
            self.last_map_offset,
            SnapshotFile {
                offset: self.last_map_offset,
                path: path.clone(),
            },
        );
        self.last_snap_offset = self.last_map_offset;
        Ok(Some(path))
    }

    /// The offset of the latest snapshot.
    #[must_use]
    pub fn latest_snapshot_offset(&self) -> Option<i64> {
        self.snapshots.keys().next_back().copied()
    }
    /// The offset of the oldest snapshot.
    #[must_use]
    pub fn oldest_snapshot_offset(&self) -> Option<i64> {
        self.snapshots.keys().next().copied()
    }
    /// The snapshot at exactly `offset` (Kafka's `snapshotFileForOffset` / `fetchSnapshot`).
    #[must_use]
    pub fn snapshot_file_for_offset(&self, offset: i64) -> Option<&SnapshotFile> {
        self.snapshots.get(&offset)
    }
    /// The snapshots known, by offset.
    pub fn snapshot_files(&self) -> impl Iterator<Item = &SnapshotFile> {
        self.snapshots.values()
    }

    /// Deletes the snapshots below `offset` (Kafka's `deleteSnapshotsBefore`).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] on a snapshot that cannot be deleted.
    pub fn delete_snapshots_before(&mut self, offset: i64) -> Result<()> {
        let below: Vec<i64> = self.snapshots.range(..offset).map(|(&o, _)| o).collect();
        for o in below {
            self.remove_and_delete_snapshot(o)?;
        }
        Ok(())
    }

    /// Deletes the snapshots above `offset`, what a truncation of the log to `offset` leaves
    /// stale (Kafka does it through `truncateAndReload`'s range check).
    ///
    /// # Errors
    ///
    /// [`Error::Io`] on a snapshot that cannot be deleted.
    pub fn delete_snapshots_after(&mut self, offset: i64) -> Result<()> {
        let above: Vec<i64> = self
            .snapshots
            .range(offset + 1..)
            .map(|(&o, _)| o)
            .collect();
        for o in above {
            self.remove_and_delete_snapshot(o)?;
        }
        Ok(())
    }

    /// Forgets the snapshot at `offset` and renames it `<name>.deleted`, for deletion after
    /// `file.delete.delay.ms` with the segment of that base offset (Kafka's
    /// `removeAndMarkSnapshotForDeletion`). Returns the renamed file; none if there was no
    /// snapshot there or its file is gone already.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] on a rename failure other than the file being gone.
    pub fn remove_and_mark_snapshot_for_deletion(
        &mut self,
        offset: i64,
    ) -> Result<Option<PathBuf>> {
        let Some(snapshot) = self.snapshots.remove(&offset) else {
            return Ok(None);
        };
        let mut deleted = snapshot.path.clone().into_os_string();
        deleted.push(seglog_segment::naming::DELETED_FILE_SUFFIX);
        let deleted = PathBuf::from(deleted);
        match self.fs.rename(&snapshot.path, &deleted) {
            Ok(()) => Ok(Some(deleted)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(Error::io(&snapshot.path, e)),
        }
    }

    fn remove_and_delete_snapshot(&mut self, offset: i64) -> Result<()> {
        match self.snapshots.remove(&offset) {
            Some(s) => snapshot_file::delete_if_exists(&self.fs, &s.path),
            None => Ok(()),
        }
    }

    /// Deletes the snapshots that match no segment, except the latest stray one if it is above
    /// every segment (the one a clean shutdown writes at the log end) (Kafka's
    /// `removeStraySnapshots`). Returns the files deleted.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] on a listing or deletion failure.
    pub fn remove_stray_snapshots(&mut self, segment_base_offsets: &[i64]) -> Result<Vec<PathBuf>> {
        self.remove_stray_snapshots_listed(segment_base_offsets, None)
    }

    /// [`remove_stray_snapshots`](Self::remove_stray_snapshots) with the snapshot files a
    /// listing of the directory just found (by offset), or `None` to list them.
    pub(crate) fn remove_stray_snapshots_listed(
        &mut self,
        segment_base_offsets: &[i64],
        listed: Option<Vec<SnapshotFile>>,
    ) -> Result<Vec<PathBuf>> {
        let max_base = segment_base_offsets.iter().copied().max();
        // Sorted for a binary search: a log of N segments has about N snapshots.
        let mut bases = segment_base_offsets.to_vec();
        bases.sort_unstable();
        let mut snapshots = match listed {
            Some(listed) => listed.into_iter().map(|s| (s.offset, s)).collect(),
            None => load_snapshots(&self.fs, &self.dir)?,
        };
        let mut deleted = Vec::new();
        let mut latest_stray: Option<i64> = None;
        let offsets: Vec<i64> = snapshots.keys().copied().collect();
        for key in offsets {
            if bases.binary_search(&key).is_ok() {
                continue;
            }
            if let Some(prev) = latest_stray.replace(key)
                && let Some(s) = snapshots.remove(&prev)
            {
                snapshot_file::delete_if_exists(&self.fs, &s.path)?;
                deleted.push(s.path);
            }
        }
        if let (Some(stray), Some(max)) = (latest_stray, max_base)
            && stray < max
            && let Some(s) = snapshots.remove(&stray)
        {
            snapshot_file::delete_if_exists(&self.fs, &s.path)?;
            deleted.push(s.path);
        }
        self.snapshots = snapshots;
        Ok(deleted)
    }

    /// The partition directory.
    #[must_use]
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

fn load_snapshots<F: FileSystem>(fs: &F, dir: &Path) -> Result<BTreeMap<i64, SnapshotFile>> {
    Ok(snapshot_file::list_snapshot_files(fs, dir)?
        .into_iter()
        .map(|s| (s.offset, s))
        .collect())
}
