//! Opening a partition log: Kafka's `LogLoader.load`, step by step, with a report of what it did.

use crate::loom::sync::Arc;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};

use parking_lot::{Condvar, Mutex};
use seglog_fs::FileSystem;
use seglog_segment::LogSegment;

use super::planner::{ScannedPlan, plan_partition_listed};
use super::quarantine::Quarantine;
use super::{Inner, LoadOptions, LoadReport, PartitionLog, SegmentMap, SyncState};
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::listing::{self, LoadListing, PartitionFile};
use crate::producer::{
    DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, DeferredSyncs, ProducerStateManager,
    ProducerStateManagerConfig,
};
use crate::segment_limits::SegmentLimits;
use crate::snapshot::SnapshotCell;
use crate::time::Time;
use crate::topic_partition::TopicPartition;

impl<F: FileSystem> PartitionLog<F> {
    /// Opens the partition log in `dir` (creating the directory if needed), running Kafka's loader
    /// steps in order: remove `.deleted` files; abort `.cleaned` and complete `.swap` replacements;
    /// delete orphan index files; rebuild a missing `.index`; after an unclean shutdown recover
    /// every segment from the one holding the recovery point, truncating at the first invalid byte
    /// and deleting all later segments; then resize the active segment's indexes.
    ///
    /// The directory's name gives the topic-partition (`topic-N`). Opening takes no lock on the
    /// directory: [`LogDir`](crate::LogDir) holds the `.lock` of the directory above it.
    ///
    /// ```
    /// use std::sync::Arc;
    ///
    /// use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock, TopicPartition};
    /// use seglog_fs::RealFs;
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let root = tempfile::tempdir()?;
    /// let dir = root.path().join("orders-0");
    /// let open = |options| {
    ///     PartitionLog::open(RealFs, &dir, LogConfig::default(), options, Arc::new(SystemClock))
    /// };
    /// let (log, report) = open(LoadOptions::default())?;
    /// assert_eq!(log.topic_partition(), &TopicPartition::new("orders", 0));
    /// assert_eq!((report.segments_loaded, report.log_end_offset), (1, 0)); // new and empty
    /// # let records = (0..3).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(b"v")));
    /// # let mut batch = Vec::new();
    /// # BatchBuilder::new().build(&BatchOptions::new(0, Compression::None), records, &mut batch)?;
    /// log.append_as_leader(&mut batch)?; // offsets 0..=2
    /// log.close()?;
    /// drop(log);
    ///
    /// // Without a clean shutdown, every segment from the recovery point on is scanned.
    /// let (log, report) = open(LoadOptions::default())?;
    /// assert_eq!((report.segments_scanned, report.log_end_offset), (1, 3));
    /// log.close()?;
    /// drop(log);
    ///
    /// // After a clean shutdown nothing is scanned, and everything counts as flushed.
    /// let (log, report) =
    ///     open(LoadOptions::default().with_had_clean_shutdown(true))?;
    /// assert_eq!((report.segments_scanned, log.log_end_offset()), (0, 3));
    /// assert_eq!(log.recovery_point(), 3);
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// At the default caps (`seglog.max.segment.mappings` and `seglog.max.open.segment.files`
    /// at 0) the log gets a mapping budget and a descriptor cache of its own, sized from the
    /// process's limits; see [`PartitionLog::open_with_limits`] to share them with other logs.
    pub fn open(
        fs: F,
        dir: &Path,
        config: LogConfig,
        options: LoadOptions,
        time: std::sync::Arc<dyn Time>,
    ) -> Result<(Self, LoadReport)> {
        let limits = SegmentLimits::from_process();
        Self::open_with_limits(fs, dir, config, options, time, &limits)
    }

    /// [`PartitionLog::open`], with the segments of a default cap (0) counting against the
    /// budget and cache of `limits`, shared with every other log opened with them (what a
    /// [`LogDir`](crate::LogDir) does). An explicit cap in `config` still gives the log its own.
    pub fn open_with_limits(
        fs: F,
        dir: &Path,
        config: LogConfig,
        options: LoadOptions,
        time: std::sync::Arc<dyn Time>,
        limits: &SegmentLimits,
    ) -> Result<(Self, LoadReport)> {
        let (log, report, syncs) =
            Self::open_deferring_syncs(fs, dir, config, options, time, limits)?;
        syncs.sync(&log.inner.fs, dir)?;
        Ok((log, report))
    }

    /// [`PartitionLog::open_with_limits`] with the syncs of the producer snapshots the open
    /// wrote still to make: the caller makes them ([`DeferredSyncs::sync`]) before it hands the
    /// log out, as a [`LogDir`](crate::LogDir) does for all its partitions at once.
    pub(crate) fn open_deferring_syncs(
        fs: F,
        dir: &Path,
        config: LogConfig,
        options: LoadOptions,
        time: std::sync::Arc<dyn Time>,
        limits: &SegmentLimits,
    ) -> Result<(Self, LoadReport, DeferredSyncs)> {
        config.validate()?;
        let (tp, _) = TopicPartition::parse_dir(dir)?;
        fs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let epochs = crate::epoch::LeaderEpochCache::load(fs.clone(), dir)?;
        let mapping_budget = limits.budget_for(config.max_segment_mappings);
        let descriptor_cache = limits.cache_for(config.max_open_segment_files);
        // The snapshots are listed by the load (`load_producer_state`), after its steps.
        let mut producer_state = ProducerStateManager::unlisted(
            fs.clone(),
            dir.to_path_buf(),
            tp.to_string(),
            DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
            ProducerStateManagerConfig::default(),
        );
        let syncs = DeferredSyncs::default();
        producer_state.defer_syncs(Some(syncs.clone()));
        let inner = std::sync::Arc::new_cyclic(|me| Inner {
            me: me.clone(),
            fs,
            dir: dir.to_path_buf(),
            tp,
            config: parking_lot::RwLock::new(std::sync::Arc::new(config)),
            time,
            segments: SnapshotCell::new(SegmentMap::new()),
            writer: Mutex::new(super::Writer::default()),
            log_end_offset: AtomicI64::new(0),
            stable: super::StableOffsets::new(),
            log_start_offset: AtomicI64::new(0),
            recovery_point: AtomicI64::new(0),
            last_flush_ms: AtomicI64::new(0),
            // The process that created these files may have died before syncing their names,
            // and a directory sync is the only way to know they are durable: the first flush
            // makes one.
            names_unsynced: std::sync::atomic::AtomicBool::new(true),
            pending_deletes: Mutex::new(Vec::new()),
            sync: Mutex::new(SyncState::default()),
            sync_done: Condvar::new(),
            linger_done: Condvar::new(),
            background: Mutex::new(super::append::RollFlushes::default()),
            roll_flush_inline: std::sync::atomic::AtomicBool::new(false),
            jitter_seed: AtomicI64::new(0x2545_F491_4F6C_DD1D),
            active_needs_resize: std::sync::atomic::AtomicBool::new(false),
            mapping_budget,
            descriptor_cache,
            superseded_deletes: std::sync::atomic::AtomicU64::new(0),
            producer_state: Mutex::new(producer_state),
            topic_id: Mutex::new(None),
            high_watermark_set: std::sync::atomic::AtomicBool::new(false),
            epochs: parking_lot::RwLock::new(epochs),
            leader_epoch: std::sync::atomic::AtomicI32::new(-1),
        });
        inner
            .last_flush_ms
            .store(inner.time.now_ms(), Ordering::Release);
        let mut report = LoadReport::default();
        inner.load(options, &mut report)?;
        // Snapshots taken from now on (rolls, flushes, close) sync as they are written.
        inner.producer_state.lock().defer_syncs(None);
        let log = Self { inner };
        log.initialize_topic_id(options.topic_id)?;
        if let Some(high_watermark) = options.high_watermark {
            log.set_high_watermark(high_watermark);
        }
        Ok((log, report, syncs))
    }
}

impl<F: FileSystem> Inner<F> {
    pub(super) fn list(&self) -> Result<Vec<PathBuf>> {
        let entries = listing::list(&self.fs, &self.dir).map_err(|e| Error::io(&self.dir, e))?;
        Ok(entries
            .into_iter()
            .filter(PartitionFile::may_be_segment_file)
            .map(PartitionFile::into_path)
            .collect())
    }

    pub(super) fn remove(&self, path: &Path) -> Result<()> {
        match self.fs.remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    pub(super) fn open_segment(
        &self,
        base: i64,
        suffix: &str,
        exists: bool,
    ) -> Result<LogSegment<F>> {
        Ok(LogSegment::open(
            self.fs.clone(),
            &self.dir,
            base,
            self.segment_config(),
            exists,
            suffix,
            self.time.now_ms(),
        )?
        .with_mapping_budget(self.mapping_budget.clone())
        .with_descriptor_cache(self.descriptor_cache.as_ref()))
    }

    /// Opens the existing segment at `base` (no suffix) whose `.txnindex` the listing found or
    /// not.
    pub(super) fn open_listed_segment(
        &self,
        base: i64,
        txn_index_exists: bool,
    ) -> Result<LogSegment<F>> {
        Ok(LogSegment::open_listed(
            self.fs.clone(),
            &self.dir,
            base,
            self.segment_config(),
            self.time.now_ms(),
            txn_index_exists,
        )?
        .with_mapping_budget(self.mapping_budget.clone())
        .with_descriptor_cache(self.descriptor_cache.as_ref()))
    }

    fn load(&self, options: LoadOptions, report: &mut LoadReport) -> Result<()> {
        let config = self.config();
        let interval = u32::try_from(config.index_interval_bytes).unwrap_or(0);
        let max_index_size = u32::try_from(config.segment_index_bytes).unwrap_or(0);
        let (plan, listed, valid) =
            plan_partition_listed(&self.fs, &self.dir, interval, max_index_size, options)?;
        let quarantine = if !plan.sets_aside() {
            Quarantine::finish_unfinished(&self.fs, &self.dir)?;
            None
        } else if options.discard {
            None
        } else {
            let q = Quarantine::begin(&self.fs, &self.dir, &plan)?;
            report.quarantine = Some(q.dir().to_path_buf());
            Some(q)
        };
        self.set_aside_strays(&plan, quarantine.as_ref(), report)?;
        self.remove_temp_files(&plan, quarantine.as_ref(), report)?;
        self.complete_swaps(&plan, report)?;
        self.drop_segments(&plan, quarantine.as_ref(), report)?;
        self.split_segments(&plan.splits, quarantine.as_ref(), report)?;
        // The plan's listing still holds when the plan removes, renames and drops nothing (a
        // clean open): no second read of a directory of many segments.
        let mut listed = if plan.changes_listing() {
            let files = listing::list(&self.fs, &self.dir).map_err(|e| Error::io(&self.dir, e))?;
            LoadListing::of(&files)
        } else {
            listed
        };
        // A recovery (or a cut) may take or drop snapshots: the producer state lists them again.
        if !plan.scanned.is_empty() || !plan.cuts.is_empty() || !plan.splits.is_empty() {
            listed.snapshots = None;
        }
        let mut segments = self.load_segment_files(&listed.segments, report)?;
        let scanned = ScannedPlan {
            plan: &plan,
            valid: &valid,
        };
        // The segments recovery walks (Kafka's `LogSegment.recover` assigns their epochs).
        let mut recovered: Vec<i64> = plan.scanned.clone();
        recovered.extend(&plan.rebuilt_indexes);
        recovered.sort_unstable();
        recovered.dedup();
        self.recover_segments(&mut segments, scanned, quarantine.as_ref(), options, report)?;
        report.epochs_rebuilt = self.rebuild_epochs(&segments, &recovered, &valid)?;
        if let Some(q) = &quarantine {
            q.finish()?;
        }
        report.segments_scanned = plan.scanned.len();
        report.plan = plan;
        // Kafka's deleteSegmentsIfLogStartGreaterThanLogEnd.
        let mut cleared = false;
        if let Some(last) = segments.values().next_back()
            && last.read_next_offset()? < options.log_start_offset
        {
            for (_, segment) in std::mem::take(&mut segments) {
                segment.delete()?;
            }
            cleared = true;
        }
        if segments.is_empty() {
            let start = options.log_start_offset.max(0);
            let segment = self.open_segment(start, "", false)?;
            segments.insert(start, Arc::new(segment));
            self.sync_dir()?;
        }
        let active = segments.values().next_back().map(Arc::clone);
        // Kafka resizes the active segment's (trimmed) indexes here; seglog does it on the first
        // append instead, so that opening a log maps no index at all.
        self.active_needs_resize.store(true, Ordering::Release);
        let log_end_offset = match &active {
            Some(active) => active.read_next_offset()?,
            None => 0,
        };
        let recovery_point = if options.had_clean_shutdown {
            log_end_offset
        } else {
            options.recovery_point.min(log_end_offset)
        };
        let first_base = segments.keys().next().copied().unwrap_or(0);
        let log_start_offset = options.log_start_offset.max(first_base);
        report.epochs_truncated =
            self.truncate_epochs_at_load(cleared, log_end_offset, options.log_start_offset)?;
        report.segments_loaded = segments.len();
        report.log_end_offset = log_end_offset;
        report.recovery_point = recovery_point;
        report.log_start_offset = log_start_offset;
        self.load_producer_state(
            &segments,
            log_start_offset,
            log_end_offset,
            options.had_clean_shutdown,
            listed.snapshots,
            report,
        )?;
        self.segments.store(segments);
        self.log_end_offset.store(log_end_offset, Ordering::Release);
        self.recovery_point.store(recovery_point, Ordering::Release);
        self.log_start_offset
            .store(log_start_offset, Ordering::Release);
        // Kafka reads the high watermark from replication-offset-checkpoint, which its replica
        // manager keeps. seglog has no replicas: what is on disk is what the log holds.
        self.stable.set_high_watermark(log_end_offset);
        let mut sync = self.sync.lock();
        sync.synced_to = recovery_point;
        sync.in_flight_goal = recovery_point;
        Ok(())
    }
}
