//! Opening a partition log: Kafka's `LogLoader.load`, step by step, with a report of what it did.

use crate::loom::sync::Arc;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI64, Ordering};

use parking_lot::{Condvar, Mutex};
use seglog_fs::FileSystem;
use seglog_segment::{LogSegment, MappingBudget, RecoveryReport, naming};

use super::{Inner, PartitionLog, SegmentMap, SyncState};
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::listing::{self, FileKind, PartitionFile, file_name};
use crate::snapshot::SnapshotCell;
use crate::time::Time;
use crate::topic_partition::TopicPartition;

/// What the log directory knows about a partition when it opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LoadOptions {
    /// The checkpointed recovery point (0 when there is none).
    pub recovery_point: i64,
    /// The checkpointed log start offset (0 when there is none).
    pub log_start_offset: i64,
    /// Whether the log directory had a clean-shutdown marker.
    pub had_clean_shutdown: bool,
}

/// What [`PartitionLog::open`] did, step by step.
#[derive(Debug, Default)]
pub struct LoadReport {
    /// `*.deleted` files removed (step 1).
    pub deleted_files: Vec<PathBuf>,
    /// `*.cleaned` files, and `*.swap` files at or above the smallest cleaned offset, removed:
    /// an interrupted cleaning or split, aborted (step 1).
    pub aborted_files: Vec<PathBuf>,
    /// Files replaced by a completed swap, removed (step 3).
    pub replaced_files: Vec<PathBuf>,
    /// Base offsets of `.swap` segments renamed into place (step 4).
    pub completed_swaps: Vec<i64>,
    /// Index files without a `.log`, removed (step 5).
    pub orphan_indexes: Vec<PathBuf>,
    /// Segments whose `.index` was missing, rebuilt by recovery (step 5).
    pub rebuilt_missing_index: Vec<i64>,
    /// Segments recovered after an unclean shutdown, with what recovery did (step 6).
    pub recovered: Vec<(i64, RecoveryReport)>,
    /// Segments deleted because an earlier segment was truncated, or because their base offset
    /// lies below the end of the segment before them (step 6).
    pub deleted_after_corruption: Vec<i64>,
    /// How many segments were opened.
    pub segments_loaded: usize,
    /// How many segments had their `.log` scanned (recovered). After a clean shutdown: zero.
    pub segments_scanned: usize,
    /// The log end offset after loading.
    pub log_end_offset: i64,
    /// The recovery point after loading.
    pub recovery_point: i64,
    /// The log start offset after loading.
    pub log_start_offset: i64,
}

fn is_index_name(name: &str) -> bool {
    FileKind::of(name).is_index()
}

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
    ///     open(LoadOptions { had_clean_shutdown: true, ..LoadOptions::default() })?;
    /// assert_eq!((report.segments_scanned, log.log_end_offset()), (0, 3));
    /// assert_eq!(log.recovery_point(), 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn open(
        fs: F,
        dir: &Path,
        config: LogConfig,
        options: LoadOptions,
        time: std::sync::Arc<dyn Time>,
    ) -> Result<(Self, LoadReport)> {
        config.validate()?;
        let (tp, _) = TopicPartition::parse_dir(dir)?;
        fs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let mapping_budget = usize::try_from(config.max_segment_mappings)
            .ok()
            .map(MappingBudget::new);
        let inner = std::sync::Arc::new_cyclic(|me| Inner {
            me: me.clone(),
            fs,
            dir: dir.to_path_buf(),
            tp,
            config,
            time,
            segments: SnapshotCell::new(SegmentMap::new()),
            writer: Mutex::new(()),
            log_end_offset: AtomicI64::new(0),
            high_watermark: AtomicI64::new(0),
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
            background: Mutex::new(Vec::new()),
            roll_flush_inline: std::sync::atomic::AtomicBool::new(false),
            jitter_seed: AtomicI64::new(0x2545_F491_4F6C_DD1D),
            active_needs_resize: std::sync::atomic::AtomicBool::new(false),
            mapping_budget,
            superseded_deletes: std::sync::atomic::AtomicU64::new(0),
        });
        inner
            .last_flush_ms
            .store(inner.time.now_ms(), Ordering::Release);
        let mut report = LoadReport::default();
        inner.load(options, &mut report)?;
        Ok((Self { inner }, report))
    }
}

impl<F: FileSystem> Inner<F> {
    fn list(&self) -> Result<Vec<PathBuf>> {
        let entries = listing::list(&self.fs, &self.dir).map_err(|e| Error::io(&self.dir, e))?;
        Ok(entries
            .into_iter()
            .filter(PartitionFile::may_be_segment_file)
            .map(PartitionFile::into_path)
            .collect())
    }

    fn remove(&self, path: &Path) -> Result<()> {
        match self.fs.remove_file(path) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(Error::io(path, e)),
        }
    }

    fn open_segment(&self, base: i64, suffix: &str, exists: bool) -> Result<LogSegment<F>> {
        Ok(LogSegment::open(
            self.fs.clone(),
            &self.dir,
            base,
            self.segment_config(),
            exists,
            suffix,
            self.time.now_ms(),
        )?
        .with_mapping_budget(self.mapping_budget.clone()))
    }

    fn load(&self, options: LoadOptions, report: &mut LoadReport) -> Result<()> {
        let listed = self.list()?;
        let swaps = self.remove_temp_files_and_collect_swaps(&listed, report)?;
        // Step 5 works from a listing of the directory as steps 1 to 4 leave it: the same one
        // when they removed and renamed nothing (the common case), else a new one.
        let changed = !(swaps.is_empty()
            && report.deleted_files.is_empty()
            && report.aborted_files.is_empty());
        self.complete_swaps(&swaps, report)?;
        let files = if changed { self.list()? } else { listed };
        let mut segments = self.load_segment_files(&files, options, report)?;
        let mut recovery_point = options.recovery_point;
        if options.had_clean_shutdown {
            Self::recover_damaged_active_segment(&segments, report)?;
        } else {
            self.recover_log(&mut segments, recovery_point, report)?;
        }
        // Kafka's deleteSegmentsIfLogStartGreaterThanLogEnd.
        if let Some(last) = segments.values().next_back()
            && last.read_next_offset()? < options.log_start_offset
        {
            for (_, segment) in std::mem::take(&mut segments) {
                segment.delete()?;
            }
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
        recovery_point = if options.had_clean_shutdown {
            log_end_offset
        } else {
            recovery_point.min(log_end_offset)
        };
        let first_base = segments.keys().next().copied().unwrap_or(0);
        let log_start_offset = options.log_start_offset.max(first_base);
        report.segments_loaded = segments.len();
        report.log_end_offset = log_end_offset;
        report.recovery_point = recovery_point;
        report.log_start_offset = log_start_offset;
        self.segments.store(segments);
        self.log_end_offset.store(log_end_offset, Ordering::Release);
        self.recovery_point.store(recovery_point, Ordering::Release);
        self.log_start_offset
            .store(log_start_offset, Ordering::Release);
        // Kafka reads the high watermark from replication-offset-checkpoint, which its replica
        // manager keeps. seglog has no replicas: what is on disk is what the log holds.
        self.high_watermark.store(log_end_offset, Ordering::Release);
        let mut sync = self.sync.lock();
        sync.synced_to = recovery_point;
        sync.in_flight_goal = recovery_point;
        Ok(())
    }

    /// After a clean shutdown Kafka rescans nothing, and its `readNextOffset` falls back to the
    /// base offset when the active segment's tail is torn: the segment's records stop being served
    /// and appends reuse their offsets, after the damaged bytes (where a later recovery cuts them
    /// off). A clean shutdown never leaves such a tail, so one found here is damage done since:
    /// the active segment is recovered (a walk from its last index entry finds out, so an
    /// undamaged open still reads no more than Kafka's).
    fn recover_damaged_active_segment(
        segments: &SegmentMap<F>,
        report: &mut LoadReport,
    ) -> Result<()> {
        if let Some((base, active)) = segments.iter().next_back()
            && !report.recovered.iter().any(|(b, _)| b == base)
            && !active.ends_at_batch_boundary()
        {
            report.segments_scanned += 1;
            let recovered = active.recover()?;
            report.recovered.push((*base, recovered));
        }
        Ok(())
    }

    /// Step 1: delete `.deleted`; abort `.cleaned` (and `.swap` files at or above the smallest
    /// cleaned offset, an interrupted split); return the remaining `.swap` files.
    fn remove_temp_files_and_collect_swaps(
        &self,
        listed: &[PathBuf],
        report: &mut LoadReport,
    ) -> Result<Vec<PathBuf>> {
        let mut cleaned = Vec::new();
        let mut swaps = Vec::new();
        for path in listed {
            let name = file_name(path);
            if name.ends_with(naming::DELETED_FILE_SUFFIX) && !name.ends_with(".checkpoint.deleted")
            {
                self.remove(path)?;
                report.deleted_files.push(path.clone());
            } else if name.ends_with(naming::CLEANED_FILE_SUFFIX) {
                cleaned.push(path.clone());
            } else if name.ends_with(naming::SWAP_FILE_SUFFIX) {
                swaps.push(path.clone());
            }
        }
        let min_cleaned = cleaned
            .iter()
            .filter_map(|p| naming::offset_from_file_name(file_name(p)))
            .min();
        if let Some(min_cleaned) = min_cleaned {
            let (abort, keep): (Vec<_>, Vec<_>) = swaps.into_iter().partition(|p| {
                naming::offset_from_file_name(file_name(p)).is_some_and(|o| o >= min_cleaned)
            });
            for path in abort {
                self.remove(&path)?;
                report.aborted_files.push(path);
            }
            swaps = keep;
        }
        for path in cleaned {
            self.remove(&path)?;
            report.aborted_files.push(path);
        }
        Ok(swaps)
    }

    /// Steps 2 to 4: delete what the swap segments replace, then rename them into place.
    fn complete_swaps(&self, swaps: &[PathBuf], report: &mut LoadReport) -> Result<()> {
        let swap_logs: Vec<i64> = swaps
            .iter()
            .filter(|p| {
                file_name(p).ends_with(&format!(
                    "{}{}",
                    naming::LOG_FILE_SUFFIX,
                    naming::SWAP_FILE_SUFFIX
                ))
            })
            .filter_map(|p| naming::offset_from_file_name(file_name(p)))
            .collect();
        if swap_logs.is_empty() {
            // Index files left as .swap without their log: drop the suffix-less leftovers' twins.
            for path in swaps {
                self.remove(path)?;
                report.aborted_files.push(path.clone());
            }
            return Ok(());
        }
        let mut min_swap = i64::MAX;
        let mut max_swap = i64::MIN;
        for base in &swap_logs {
            let segment = self.open_segment(*base, naming::SWAP_FILE_SUFFIX, true)?;
            min_swap = min_swap.min(*base);
            max_swap = max_swap.max(segment.read_next_offset()?);
        }
        for path in self.list()? {
            let name = file_name(&path);
            if name.ends_with(naming::SWAP_FILE_SUFFIX) {
                continue;
            }
            if let Some(offset) = naming::offset_from_file_name(name)
                && (min_swap..max_swap).contains(&offset)
                && (name.ends_with(naming::LOG_FILE_SUFFIX) || is_index_name(name))
            {
                self.remove(&path)?;
                report.replaced_files.push(path);
            }
        }
        for path in swaps {
            let name = file_name(path);
            let target = self
                .dir
                .join(name.strip_suffix(naming::SWAP_FILE_SUFFIX).unwrap_or(name));
            self.fs
                .rename(path, &target)
                .map_err(|e| Error::io(path, e))?;
        }
        self.sync_dir()?;
        report.completed_swaps = swap_logs;
        Ok(())
    }

    /// Step 5: open every `.log` (sorted by name), delete orphan index files, and recover
    /// segments whose `.index` is missing.
    fn load_segment_files(
        &self,
        files: &[PathBuf],
        options: LoadOptions,
        report: &mut LoadReport,
    ) -> Result<SegmentMap<F>> {
        let logs: BTreeMap<i64, PathBuf> = files
            .iter()
            .filter(|p| FileKind::of(file_name(p)) == FileKind::Log)
            .filter_map(|p| naming::offset_from_file_name(file_name(p)).map(|o| (o, p.clone())))
            .collect();
        for path in files {
            let name = file_name(path);
            if is_index_name(name)
                && naming::offset_from_file_name(name).is_none_or(|o| !logs.contains_key(&o))
            {
                self.remove(path)?;
                report.orphan_indexes.push(path.clone());
            }
        }
        // Whether a segment's index files exist, from the listing rather than a `stat` each:
        // nothing between the listing and these checks adds or removes a listed segment's
        // indexes (the orphans deleted above belong to no listed `.log`).
        let listed: HashSet<&str> = files.iter().map(|p| file_name(p)).collect();
        let exists = |path: PathBuf| listed.contains(file_name(&path));
        let mut segments = SegmentMap::new();
        for base in logs.keys() {
            let segment = self.open_segment(*base, "", true)?;
            let has_index = exists(naming::offset_index_file(&self.dir, *base, ""));
            if has_index && !exists(naming::time_index_file(&self.dir, *base, "")) {
                segment.resize_time_index(0)?;
            }
            if !has_index {
                let next_base = logs.range(base + 1..).next().map(|(b, _)| *b);
                let recovered = segment.recover_before(next_base)?;
                report.rebuilt_missing_index.push(*base);
                report.segments_scanned += 1;
                let _ = options;
                report.recovered.push((*base, recovered));
            }
            segments.insert(*base, Arc::new(segment));
        }
        Ok(segments)
    }

    /// Step 6 after an unclean shutdown: recover every segment from the one holding the recovery
    /// point; on the first truncation, delete every later segment and stop. A segment whose base
    /// offset is below the end of the one before it (a copied or misnamed file) is deleted on its
    /// own: its offsets are out of order from its first byte, and the segments after it are
    /// judged against the one before it. Kafka does not look for this; without the rule, recovery
    /// cut such a segment to empty and kept it, and the log end offset fell inside the previous
    /// segment (records there unreadable, their offsets handed out again).
    fn recover_log(
        &self,
        segments: &mut SegmentMap<F>,
        recovery_point: i64,
        report: &mut LoadReport,
    ) -> Result<()> {
        let start = segments
            .range(..=recovery_point)
            .next_back()
            .map_or(i64::MIN, |(b, _)| *b);
        let bases: Vec<i64> = segments.range(start..).map(|(b, _)| *b).collect();
        let mut truncated_at = None;
        let mut overlapping = Vec::new();
        // The segment below the recovery range is not rescanned; an unreadable end there is
        // not this rule's business.
        let mut previous_end = segments
            .range(..start)
            .next_back()
            .and_then(|(_, segment)| segment.read_next_offset().ok());
        for base in &bases {
            let Some(segment) = segments.get(base) else {
                continue;
            };
            if previous_end.is_some_and(|end| *base < end) {
                overlapping.push(*base);
                continue;
            }
            if report.recovered.iter().any(|(b, _)| b == base) {
                // Already rebuilt for a missing index.
                previous_end = Some(segment.read_next_offset()?);
                continue;
            }
            report.segments_scanned += 1;
            let next_base = segments.range(base + 1..).next().map(|(b, _)| *b);
            match segment.recover_before(next_base) {
                Ok(recovered) => {
                    let truncated = recovered.bytes_truncated > 0;
                    report.recovered.push((*base, recovered));
                    if truncated {
                        truncated_at = Some(*base);
                        break;
                    }
                    previous_end = Some(segment.read_next_offset()?);
                }
                Err(seglog_segment::Error::Index(e)) => {
                    // Kafka: "Found invalid offset during recovery. Deleting the corrupt segment and
                    // creating an empty one with starting offset B".
                    let _ = e;
                    segment.truncate_to(*base, self.time.now_ms())?;
                    truncated_at = Some(*base);
                    break;
                }
                Err(e) => return Err(e.into()),
            }
        }
        let later = truncated_at.map_or_else(Vec::new, |at| {
            segments.range(at + 1..).map(|(b, _)| *b).collect()
        });
        let doomed: std::collections::BTreeSet<i64> =
            overlapping.into_iter().chain(later).collect();
        for base in &doomed {
            if let Some(segment) = segments.remove(base) {
                segment.delete()?;
                report.deleted_after_corruption.push(*base);
            }
        }
        if !doomed.is_empty() {
            self.sync_dir()?;
        }
        Ok(())
    }
}
