//! The plain data of a log directory: its options, the scheduler's and the cleaner's settings,
//! and what opening it reports.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::config::LogConfig;
use crate::error::Error;
use crate::partition::LoadReport;
use crate::segment_limits::SegmentLimits;
use crate::setters::with_setters;
use crate::time::{SystemClock, Time};
use crate::topic_partition::TopicPartition;

/// A partition's own configuration overrides, in Kafka's properties format. Kafka keeps topic
/// configs in its metadata log; seglog keeps them beside the segments, where Kafka ignores them.
pub const PARTITION_CONFIG_FILE: &str = "seglog.properties";

/// How often the scheduler wakes up, and what it does: `Default` (Kafka's intervals), then the
/// `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct SchedulerConfig {
    /// `log.flush.scheduler.interval.ms`: how often logs past their `flush.ms` are flushed.
    pub flush_check_interval_ms: u64,
    /// `log.retention.check.interval.ms` (Kafka's default: 5 minutes).
    pub retention_check_interval_ms: u64,
    /// `log.flush.offset.checkpoint.interval.ms` (Kafka's default: 1 minute).
    pub checkpoint_interval_ms: u64,
    /// `log.cleaner.backoff.ms`: how often the cleaner looks for a log to compact (Kafka: 15 s).
    pub cleaner_backoff_ms: u64,
    /// `producer.id.expiration.check.interval.ms`: how often idle producers are expired
    /// (Kafka: 10 minutes).
    pub producer_id_expiration_check_interval_ms: u64,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            flush_check_interval_ms: 1_000,
            retention_check_interval_ms: 300_000,
            checkpoint_interval_ms: 60_000,
            cleaner_backoff_ms: 15_000,
            producer_id_expiration_check_interval_ms: 600_000,
        }
    }
}

with_setters!(SchedulerConfig {
    flush_check_interval_ms: u64 => with_flush_check_interval_ms,
    retention_check_interval_ms: u64 => with_retention_check_interval_ms,
    checkpoint_interval_ms: u64 => with_checkpoint_interval_ms,
    cleaner_backoff_ms: u64 => with_cleaner_backoff_ms,
    producer_id_expiration_check_interval_ms: u64 => with_producer_id_expiration_check_interval_ms,
});

/// Loading progress, reported while a log directory opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadProgress {
    /// How many partition logs the directory holds.
    pub total: usize,
    /// How many are loaded.
    pub done: usize,
    /// The one that just finished.
    pub partition: TopicPartition,
}

/// A progress callback.
pub type ProgressFn = dyn Fn(&LoadProgress) + Send + Sync;

/// Options for [`LogDir::open`](super::LogDir::open): `Default` (Kafka's defaults, the system
/// clock, two recovery threads, no progress callback, limits from the process's), then the
/// `with_*` setters.
#[non_exhaustive]
pub struct LogDirOptions {
    /// The configuration of partitions without their own `seglog.properties`.
    pub default_config: LogConfig,
    /// `num.recovery.threads.per.data.dir`: how many logs load at once (Kafka 4.0: 2).
    pub recovery_threads: usize,
    /// The clock.
    pub time: Arc<dyn Time>,
    /// Called after each partition log loads.
    pub progress: Option<Arc<ProgressFn>>,
    /// Recover every segment of every log, as after an unclean shutdown with no recovery point
    /// (what `seglog recover` does), whatever the marker and checkpoints say.
    pub recover_all: bool,
    /// Delete what recovery drops (a cut tail, the segments after it, a damaged `.swap`) instead
    /// of moving it to the partition's quarantine ([`QUARANTINE_DIR`](crate::QUARANTINE_DIR)).
    pub discard: bool,
    /// Partitions to recover from the segment holding the given offset on, as after an unclean
    /// shutdown with the recovery point there, whatever the marker and checkpoints say (what
    /// `seglog recover` asks for where `check` found a problem in a segment, from
    /// [`CheckReport::recover_from`](crate::inspect::CheckReport::recover_from)).
    pub recover_from: BTreeMap<TopicPartition, i64>,
    /// Remove the `-delete` directories a full open finds at once, instead of queueing them
    /// for `file.delete.delay.ms` as Kafka does: for an offline repair (`seglog recover`),
    /// which no reader of them can be waiting on.
    pub delete_dirs_at_open: bool,
    /// The mapping budget and descriptor cache shared by the directory's logs at the default
    /// caps (`seglog.max.segment.mappings`, `seglog.max.open.segment.files` at 0). Default: a
    /// new pair sized from the process's limits; give several directories of one process the
    /// same (a clone) to hold them all to those limits.
    pub limits: SegmentLimits,
}

impl Default for LogDirOptions {
    fn default() -> Self {
        Self {
            default_config: LogConfig::default(),
            recovery_threads: 2,
            time: Arc::new(SystemClock),
            progress: None,
            recover_all: false,
            discard: false,
            recover_from: BTreeMap::new(),
            delete_dirs_at_open: false,
            limits: SegmentLimits::from_process(),
        }
    }
}

with_setters!(LogDirOptions {
    default_config: LogConfig => with_default_config,
    recovery_threads: usize => with_recovery_threads,
    time: Arc<dyn Time> => with_time,
    progress: Option<Arc<ProgressFn>> => with_progress,
    recover_all: bool => with_recover_all,
    discard: bool => with_discard,
    recover_from: BTreeMap<TopicPartition, i64> => with_recover_from,
    delete_dirs_at_open: bool => with_delete_dirs_at_open,
    limits: SegmentLimits => with_limits,
});

impl LogDirOptions {
    /// The recovery point and clean-shutdown flag a partition loads with, from the ones the
    /// directory gives it (`checkpointed`, `clean`): lowered and unclean when
    /// [`recover_from`](Self::recover_from) names it.
    pub(crate) fn load_point(
        &self,
        tp: &TopicPartition,
        checkpointed: i64,
        clean: bool,
    ) -> (i64, bool) {
        match self.recover_from.get(tp) {
            Some(from) => (checkpointed.min(*from), false),
            None => (checkpointed, clean),
        }
    }
}

impl std::fmt::Debug for LogDirOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogDirOptions")
            .field("default_config", &self.default_config)
            .field("recovery_threads", &self.recovery_threads)
            .field("recover_from", &self.recover_from)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// What opening a log directory did and found. The changes it made: the clean-shutdown marker
/// deleted (when [`had_clean_shutdown`](Self::had_clean_shutdown)), the [`deleted_dirs`](Self::deleted_dirs),
/// and in each loaded partition what its [`LoadReport`] lists. Nothing else was written, and
/// nothing in [`failed`](Self::failed) or [`not_partitions`](Self::not_partitions) was touched.
#[derive(Debug, Default)]
pub struct LogDirReport {
    /// Whether the `.kafka_cleanshutdown` marker was there (it is deleted on open).
    pub had_clean_shutdown: bool,
    /// A checkpoint that could not be read and was treated as empty, as Kafka does.
    pub checkpoint_errors: Vec<String>,
    /// Partition directories pending deletion (`-delete`) that were removed (only by a full
    /// open, [`Scope::All`](super::Scope::All), and only with
    /// [`LogDirOptions::delete_dirs_at_open`] or a `file.delete.delay.ms` of 0).
    pub deleted_dirs: Vec<PathBuf>,
    /// Partition directories pending deletion (`-delete`) found by a full open and queued for
    /// deletion after `file.delete.delay.ms`, as Kafka's `LogManager` queues them (see
    /// [`LogDir::delete_due_dirs`](super::LogDir::delete_due_dirs)).
    pub pending_deletion: Vec<PathBuf>,
    /// `-stray` partition directories (a KRaft broker's replicas of partitions no longer
    /// assigned to it), found by a full open: left alone.
    pub stray_dirs: Vec<PathBuf>,
    /// Every future log's (`-future`, loaded by a full open) load report.
    pub futures: BTreeMap<TopicPartition, LoadReport>,
    /// Every loaded partition log's load report.
    pub logs: BTreeMap<TopicPartition, LoadReport>,
    /// Partition directories that failed to load (or, for a `-delete` one, to be removed), with
    /// the cause; they are not open, and the others are.
    pub failed: Vec<PartitionFailure>,
    /// Directories in the log directory whose names are not partitions' (`lost+found`): Kafka
    /// refuses such a log directory; seglog leaves them alone.
    pub not_partitions: Vec<PathBuf>,
}

/// A partition directory that failed to load.
#[derive(Debug)]
pub struct PartitionFailure {
    /// The partition.
    pub topic_partition: TopicPartition,
    /// Its directory.
    pub path: PathBuf,
    /// Why it failed.
    pub error: Error,
}

/// The log cleaner's settings (Kafka's `log.cleaner.*`): `Default`, then the `with_*` setters.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct CleanerSettings {
    /// `log.cleaner.dedupe.buffer.size`: the key map's memory budget (Kafka: 128 MiB).
    pub dedupe_buffer_bytes: usize,
    /// `log.cleaner.io.max.bytes.per.second`: `None` for no limit (Kafka's default).
    pub io_max_bytes_per_second: Option<f64>,
}

impl Default for CleanerSettings {
    fn default() -> Self {
        Self {
            dedupe_buffer_bytes: 128 * 1024 * 1024,
            io_max_bytes_per_second: None,
        }
    }
}

with_setters!(CleanerSettings {
    dedupe_buffer_bytes: usize => with_dedupe_buffer_bytes,
    io_max_bytes_per_second: Option<f64> => with_io_max_bytes_per_second,
});
