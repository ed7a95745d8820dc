//! [`PartitionLog`]: one partition's log, a `topic-N` directory of segments (Kafka's `UnifiedLog`
//! and `LocalLog`).
//!
//! Concurrency: one appender at a time (appends, rolls, truncations and retention serialise on
//! the writer mutex) and any number of readers. A reader takes a snapshot of the segment list (an
//! `Arc` clone under a read lock held for nanoseconds) and reads through the segments' lock-free
//! paths, so reads never wait for appends or rolls. A segment removed by retention or truncation
//! is renamed `.deleted` at once, but its files are unlinked only after `file.delete.delay.ms`
//! *and* once no reader holds it.

mod aborted;
mod append;
mod clean;
mod epochs;
mod fetch_records;
mod flush;
mod index_sanity;
mod list_offsets;
mod load;
mod load_options;
mod load_recover;
mod load_report;
mod load_split;
mod load_steps;
mod planner;
mod producer_load;
mod quarantine;
mod read;
mod recovery_plan;
mod retention;
mod snapshot_plan;
mod stable_offsets;
mod topic_id;
pub(crate) mod txn_replay;
mod update_config;
mod valid_prefix;

use crate::loom::sync::Arc;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};

use parking_lot::{Condvar, Mutex};
use seglog_fs::{FileSystem, RealFs};
use seglog_segment::{DescriptorCache, LogSegment, MappingBudget, SegmentConfig, naming};

use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::producer::ProducerStateManager;
use crate::snapshot::{SnapshotCell, is_unreferenced};
use crate::time::Time;
use crate::topic_partition::TopicPartition;
use stable_offsets::StableOffsets;

pub use append::AppendInfo;
pub use clean::{CleanOptions, CleanReport, StopAfter};
pub use epochs::OffsetAndEpoch;
pub use list_offsets::ListOffset;
pub use load_options::LoadOptions;
pub use load_report::LoadReport;
pub use planner::plan_partition;
pub use quarantine::RESTORE_HINT;
pub use read::{FetchDataInfo, Isolation};
pub use recovery_plan::{
    BadSwap, Cut, DropReason, DroppedSegment, DroppedSnapshot, QUARANTINE_DIR, RecoveryPlan,
    Removal, SnapshotDrop, Split, SplitPiece, Stray,
};
pub use retention::RetentionReport;

/// The segments of a log, by base offset. Readers hold an `Arc` of one version; writers swap in
/// a new version.
pub(crate) type SegmentMap<F> = BTreeMap<i64, Arc<LogSegment<F>>>;

/// A partition log. Cheap to clone: clones share the same log.
#[derive(Debug)]
pub struct PartitionLog<F: FileSystem = RealFs> {
    inner: std::sync::Arc<Inner<F>>,
}

impl<F: FileSystem> Clone for PartitionLog<F> {
    fn clone(&self) -> Self {
        Self {
            inner: std::sync::Arc::clone(&self.inner),
        }
    }
}

#[derive(Debug)]
pub(crate) struct Inner<F: FileSystem> {
    /// A weak handle on this log, for background tasks.
    me: std::sync::Weak<Inner<F>>,
    fs: F,
    dir: PathBuf,
    tp: TopicPartition,
    /// The configuration, replaced whole by `update_config`; each operation reads one snapshot.
    config: parking_lot::RwLock<std::sync::Arc<LogConfig>>,
    time: std::sync::Arc<dyn Time>,
    segments: SnapshotCell<SegmentMap<F>>,
    /// Serialises appends, rolls, truncations, flush bookkeeping and retention.
    writer: Mutex<Writer>,
    log_end_offset: AtomicI64,
    /// The high watermark and the first unstable offset, which readers take without a lock.
    stable: StableOffsets,
    log_start_offset: AtomicI64,
    recovery_point: AtomicI64,
    last_flush_ms: AtomicI64,
    /// Set when a roll creates a segment's files (and at open: an earlier process may have
    /// created some and died before syncing their names), cleared when a directory sync begins:
    /// the next flush then syncs the directory, so that a name is durable before records under
    /// it are acknowledged as durable. Kafka instead syncs it whenever it flushes a segment at or
    /// above the recovery point, taking those to be the new ones; a segment can be created below
    /// it (`tests/recreated_segment_name_durable.rs`), and one above it may be synced already.
    names_unsynced: std::sync::atomic::AtomicBool,
    /// Segments renamed `.deleted`, waiting for their delay and their last reader.
    pending_deletes: Mutex<Vec<PendingDelete<F>>>,
    /// Group commit of durable appends.
    sync: Mutex<SyncState>,
    sync_done: Condvar,
    /// Wakes a round's leader that lingers for the appenders the last round released.
    linger_done: Condvar,
    /// The flushes rolls started, run in order on at most one thread.
    background: Mutex<append::RollFlushes<append::RollFlush<F>>>,
    /// Run the flush after a roll on the rolling thread (see `set_roll_flush_inline`).
    roll_flush_inline: std::sync::atomic::AtomicBool,
    /// Random draws for the roll jitter.
    jitter_seed: AtomicI64,
    /// The active segment's indexes are still trimmed from the last close or recovery: resize
    /// them before the next append (Kafka's loader does it eagerly).
    active_needs_resize: std::sync::atomic::AtomicBool,
    /// `seglog.max.segment.mappings`: the budget every segment's mappings count against, the
    /// log's own or, at the default, shared with the other logs of its `SegmentLimits`.
    mapping_budget: Option<MappingBudget>,
    /// `seglog.max.open.segment.files`: the cap on the inactive segments' open `.log` files,
    /// owned or shared as the mapping budget.
    descriptor_cache: Option<DescriptorCache>,
    /// Numbers the `.deleted` names of queued segments moved aside (`schedule_delete`).
    superseded_deletes: std::sync::atomic::AtomicU64,
    /// Producer state (Kafka's `ProducerStateManager`), changed under the writer lock.
    producer_state: Mutex<ProducerStateManager<F>>,
    /// The topic id, once known (`partition.metadata`; see `topic_id.rs`).
    topic_id: Mutex<Option<crate::TopicId>>,
    /// Whether the high watermark is kept by someone: it was set (a replica manager's part, or
    /// the checkpointed one at open). A log directory checkpoints only these; the others read to
    /// their log end, as before seglog kept the file.
    high_watermark_set: std::sync::atomic::AtomicBool,
    /// The leader epoch cache (Kafka's `LeaderEpochFileCache`), changed under the writer lock.
    epochs: parking_lot::RwLock<crate::epoch::LeaderEpochCache<F>>,
    /// The epoch leader appends are stamped with (-1: none set, the batches keep theirs).
    leader_epoch: std::sync::atomic::AtomicI32,
}

/// What the writer lock guards beside the order of writes: the state a leader append reuses.
#[derive(Debug, Default)]
pub(crate) struct Writer {
    /// Rebuilds batches into the topic's codec (`compression.type`), keeping its compressor
    /// contexts from append to append.
    builder: seglog_record_format::BatchBuilder,
    /// The rebuilt batch, its buffer kept from append to append.
    rebuilt: Vec<u8>,
}

#[derive(Debug)]
struct PendingDelete<F: FileSystem> {
    due_ms: i64,
    segment: Arc<LogSegment<F>>,
    /// The producer snapshot at the segment's base offset, renamed `.deleted` with it (Kafka
    /// deletes it after the same delay).
    snapshot: Option<PathBuf>,
}

impl<F: FileSystem> PendingDelete<F> {
    fn delete(&self, fs: &F) -> Result<()> {
        self.segment.delete()?;
        match &self.snapshot {
            Some(path) => crate::producer::delete_if_exists(fs, path),
            None => Ok(()),
        }
    }
}

#[derive(Debug, Default)]
struct SyncState {
    /// Every offset below this is durable.
    synced_to: i64,
    /// The largest offset a running flush round will make durable.
    in_flight_goal: i64,
    /// How many flush rounds are running.
    rounds_in_flight: u32,
    /// How many fsync rounds group commit ran.
    rounds: u64,
    /// Threads inside `sync_up_to`.
    in_sync: u32,
    /// Durable appenders between entering `append_durable` and reaching `sync_up_to`.
    appending: u32,
    /// Threads the last round released that have not come back to `append_durable` since.
    returning: u32,
    /// A round's leader waits for `returning` and `appending` to drain before taking its goal.
    lingering: bool,
    /// A moving average of a round's flush time, which bounds the linger.
    average_round: std::time::Duration,
    /// A linger bound set by a test in place of the wall-clock one (see
    /// [`PartitionLog::set_group_commit_linger`]).
    linger_override: Option<std::time::Duration>,
    /// How many truncations lowered the log end offset. A flush or round that began before one
    /// must not raise the recovery point or `synced_to` when it ends: what it synced may since
    /// have been cut and written again, unsynced, at the same offsets.
    truncations: u64,
}

impl<F: FileSystem> PartitionLog<F> {
    /// The partition's directory.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    /// The topic-partition.
    pub fn topic_partition(&self) -> &TopicPartition {
        &self.inner.tp
    }

    /// The configuration (a snapshot: [`PartitionLog::update_config`] replaces it whole).
    pub fn config(&self) -> std::sync::Arc<LogConfig> {
        self.inner.config()
    }

    /// The offset the next appended record gets (Kafka's log end offset).
    pub fn log_end_offset(&self) -> i64 {
        self.inner.log_end_offset.load(Ordering::Acquire)
    }

    /// The first offset readers may read.
    pub fn log_start_offset(&self) -> i64 {
        self.inner.log_start_offset.load(Ordering::Acquire)
    }

    /// The high watermark: reads with [`Isolation::HighWatermark`] stop below it, and retention
    /// never deletes at or above it.
    pub fn high_watermark(&self) -> i64 {
        self.inner.stable.high_watermark()
    }

    /// The last stable offset (Kafka's `lastStableOffset`): the first offset of the oldest
    /// undecided transaction, or the high watermark if that is lower. read_committed reads stop
    /// below it.
    pub fn last_stable_offset(&self) -> i64 {
        self.inner.stable.last_stable_offset()
    }

    /// How many producer ids the log keeps state for (Kafka's `producerIdCount` gauge).
    pub fn producer_id_count(&self) -> usize {
        self.inner.producer_state.lock().active_producers().len()
    }

    /// Sets the high watermark, clamped to `[log start, log end]` as Kafka does; transactions
    /// whose markers it passes become stable (Kafka's `onHighWatermarkUpdated` and
    /// `maybeIncrementFirstUnstableOffset`).
    pub fn set_high_watermark(&self, offset: i64) {
        // Under the producer state's lock, which an append holds from its new log end offset to
        // its new first unstable offset: the high watermark never covers an append whose
        // transaction is not yet counted.
        let mut state = self.inner.producer_state.lock();
        let clamped = offset.clamp(self.log_start_offset(), self.log_end_offset());
        self.inner.stable.set_high_watermark(clamped);
        self.inner.high_watermark_set.store(true, Ordering::Release);
        state.on_high_watermark_updated(clamped);
        self.inner.refresh_first_unstable_offset(&state);
    }

    /// Whether the high watermark was ever set ([`set_high_watermark`](Self::set_high_watermark),
    /// or a checkpointed one at open): [`LogDir::checkpoint`](crate::LogDir::checkpoint) writes
    /// the high watermarks of these logs only, so a log nobody replicates (whose high watermark
    /// is its log end at open and never moves) leaves no entry, and reads to its log end.
    pub fn high_watermark_is_set(&self) -> bool {
        self.inner.high_watermark_set.load(Ordering::Acquire)
    }

    /// Every offset below the recovery point is on stable storage; recovery after a crash starts
    /// at the segment holding it.
    pub fn recovery_point(&self) -> i64 {
        self.inner.recovery_point.load(Ordering::Acquire)
    }

    /// A snapshot of the segment list.
    pub fn segments(&self) -> Arc<SegmentMap<F>> {
        self.inner.segments.load()
    }

    /// Whether every segment of `snapshot` is still in the log: false once retention, truncation
    /// or a cleaning's swap removed one, whose files may be gone and whose indexes closed.
    pub(crate) fn snapshot_is_current(&self, snapshot: &SegmentMap<F>) -> bool {
        let current = self.segments();
        snapshot
            .iter()
            .all(|(base, s)| current.get(base).is_some_and(|c| Arc::ptr_eq(c, s)))
    }

    /// The active (last) segment.
    pub fn active_segment(&self) -> Arc<LogSegment<F>> {
        self.inner.active()
    }

    /// The mapping budget (`seglog.max.segment.mappings`) of this log's segments, if it has one
    /// (at the default, shared with the other logs opened with the same
    /// [`SegmentLimits`](crate::SegmentLimits)).
    pub fn mapping_budget(&self) -> Option<&MappingBudget> {
        self.inner.mapping_budget.as_ref()
    }

    /// The descriptor cache (`seglog.max.open.segment.files`) of this log's segments, if it has
    /// a cap (at the default, shared as the mapping budget).
    pub fn descriptor_cache(&self) -> Option<&DescriptorCache> {
        self.inner.descriptor_cache.as_ref()
    }

    /// The number of segments.
    pub fn segment_count(&self) -> usize {
        self.inner.segments.load().len()
    }

    /// The total size of all segments in bytes.
    pub fn size(&self) -> u64 {
        self.segments().values().map(|s| s.size()).sum()
    }

    /// When the log was last flushed (milliseconds since the epoch).
    pub fn last_flush_ms(&self) -> i64 {
        self.inner.last_flush_ms.load(Ordering::Acquire)
    }

    /// How many fsync rounds durable appends ran (group commit shares one round among
    /// concurrent appenders).
    pub fn group_commit_rounds(&self) -> u64 {
        self.inner.sync.lock().rounds
    }

    /// Replaces the bound of a group-commit round's linger (half an average round, at most
    /// 1 ms) by `max`, for tests that must not depend on how soon a loaded machine schedules the
    /// appenders a round released.
    #[doc(hidden)]
    pub fn set_group_commit_linger(&self, max: std::time::Duration) {
        self.inner.sync.lock().linger_override = Some(max);
    }
}

impl<F: FileSystem> Inner<F> {
    fn active(&self) -> Arc<LogSegment<F>> {
        let segments = self.segments.load();
        // The loader guarantees at least one segment, and every writer keeps one.
        match segments.values().next_back() {
            Some(s) => Arc::clone(s),
            None => unreachable_no_segment(&self.tp),
        }
    }

    fn partition(&self) -> String {
        self.tp.to_string()
    }

    fn segment_config(&self) -> SegmentConfig {
        let seed = self
            .jitter_seed
            .fetch_add(0x9E37_79B9_7F4A_7C15_u64.cast_signed(), Ordering::Relaxed);
        let mut x = seed.cast_unsigned() ^ 0xD1B5_4A32_D192_ED03;
        x ^= x >> 33;
        x = x.wrapping_mul(0xFF51_AFD7_ED55_8CCD);
        x ^= x >> 33;
        let config = self.config();
        SegmentConfig::default()
            .with_index_interval_bytes(u32::try_from(config.index_interval_bytes).unwrap_or(0))
            .with_max_index_size(u32::try_from(config.segment_index_bytes).unwrap_or(0))
            .with_preallocate(config.preallocate)
            .with_initial_file_size(config.initial_file_size())
            .with_roll_jitter_ms(config.segment_jitter_from(x))
    }

    /// The current configuration.
    pub(crate) fn config(&self) -> std::sync::Arc<LogConfig> {
        std::sync::Arc::clone(&self.config.read())
    }

    fn swap_segments(&self, f: impl FnOnce(&mut SegmentMap<F>)) {
        self.segments.update(f);
    }

    /// Renames a removed segment `.deleted` and queues its files for deletion.
    ///
    /// A segment still queued under the same base offset (a cleaned segment reuses the base
    /// offset, so the names, of the first segment it replaced) is renamed out of the way first,
    /// to `<name>.<n>.deleted`, which the loader removes like any `.deleted` file: otherwise this
    /// rename would replace its files, and deleting it once its readers leave would unlink this
    /// segment's files under this segment's readers.
    fn schedule_delete(&self, segment: Arc<LogSegment<F>>) -> Result<()> {
        self.schedule_delete_with_snapshot(segment, None)
    }

    /// [`Inner::schedule_delete`], the segment's producer snapshot (already renamed `.deleted`)
    /// deleted with it.
    fn schedule_delete_with_snapshot(
        &self,
        segment: Arc<LogSegment<F>>,
        snapshot: Option<PathBuf>,
    ) -> Result<()> {
        let base = segment.base_offset();
        {
            let pending = self.pending_deletes.lock();
            for old in pending.iter().filter(|p| p.segment.base_offset() == base) {
                let n = self.superseded_deletes.fetch_add(1, Ordering::Relaxed);
                old.segment.change_file_suffixes(
                    naming::DELETED_FILE_SUFFIX,
                    &format!(".{n}{}", naming::DELETED_FILE_SUFFIX),
                )?;
            }
        }
        segment.change_file_suffixes("", naming::DELETED_FILE_SUFFIX)?;
        let due_ms = self
            .time
            .now_ms()
            .saturating_add(self.config().file_delete_delay_ms);
        self.pending_deletes.lock().push(PendingDelete {
            due_ms,
            segment,
            snapshot,
        });
        Ok(())
    }

    /// Syncs the partition directory: every name created, renamed or removed before this call
    /// is durable once it returns.
    fn sync_dir(&self) -> Result<()> {
        // Cleared before the sync begins: a segment created after this point sets it again.
        self.names_unsynced.store(false, Ordering::Release);
        self.fs.sync_dir(&self.dir).map_err(|e| {
            self.names_unsynced.store(true, Ordering::Release);
            Error::io(&self.dir, e)
        })
    }
}

#[cold]
fn unreachable_no_segment(tp: &TopicPartition) -> ! {
    // An invariant, not an error: every code path that removes segments adds one first.
    panic!("partition log {tp} has no segment")
}

impl<F: FileSystem> PartitionLog<F> {
    /// Deletes the files of `.deleted` segments whose delay has passed and that no reader holds.
    /// Returns how many segments were deleted.
    pub fn delete_expired_files(&self) -> Result<usize> {
        let now = self.inner.time.now_ms();
        let mut pending = self.inner.pending_deletes.lock();
        let mut deleted = 0;
        let mut keep = Vec::with_capacity(pending.len());
        for p in pending.drain(..) {
            // Only our queue holds it: no reader can be reading it.
            if p.due_ms <= now && is_unreferenced(&p.segment) {
                p.delete(&self.inner.fs)?;
                deleted += 1;
            } else {
                keep.push(p);
            }
        }
        *pending = keep;
        Ok(deleted)
    }

    /// How many removed segments wait for deletion.
    pub fn pending_deletes(&self) -> usize {
        self.inner.pending_deletes.lock().len()
    }
}

/// The segments that may hold offsets in `[from, to)` (Kafka's `LogSegments.values(from, to)`).
pub(crate) fn range_overlapping<F: FileSystem>(
    segments: &SegmentMap<F>,
    from: i64,
    to: i64,
) -> impl Iterator<Item = (&i64, &Arc<LogSegment<F>>)> {
    let start = segments
        .range(..=from)
        .next_back()
        .map_or(i64::MIN, |(base, _)| *base);
    segments
        .range(start..)
        .take_while(move |(base, _)| from < to && **base < to)
}
