//! Failure isolation (Kafka's `LogDirFailureChannel` and the cleaner's uncleanable partitions,
//! scoped to one partition): a partition whose background flush or retention fails is set aside
//! from the background work, one whose cleaning fails is uncleanable, each with a record an
//! embedder reads ([`LogDir::failed_partitions`]) and a `log` line; every other partition goes
//! on. The records live as long as the handle, as Kafka's live as long as the broker process.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use seglog_fs::FileSystem;

use super::LogDir;
use crate::error::{Error, Work};
use crate::topic_partition::TopicPartition;

/// A partition the log directory's background work set aside, and why.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BackgroundFailure {
    /// The partition.
    pub topic_partition: TopicPartition,
    /// What failed first.
    pub work: Work,
    /// The error.
    pub error: Arc<Error>,
    /// When (the log directory's clock, milliseconds).
    pub at_ms: i64,
}

impl BackgroundFailure {
    /// Whether every background work skips the partition (a flush or retention failed: Kafka
    /// takes the log directory offline), rather than the cleaner alone (a cleaning failed: Kafka
    /// marks the partition uncleanable).
    pub fn is_offline(&self) -> bool {
        self.work != Work::Cleaning
    }
}

/// The failure records of a log directory.
#[derive(Debug)]
pub(super) struct Failures {
    /// The log directory, which the errors name.
    dir: PathBuf,
    partitions: Mutex<BTreeMap<TopicPartition, BackgroundFailure>>,
    checkpoint: Mutex<Option<Arc<Error>>>,
    /// Whether a flush or retention failed since the open: then no clean-shutdown marker is
    /// written, whatever was reset since (an fsync that failed once proves nothing when it
    /// later succeeds), and the next open recovers from the recovery points.
    io_failed: AtomicBool,
}

impl Failures {
    pub(super) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            partitions: Mutex::default(),
            checkpoint: Mutex::default(),
            io_failed: AtomicBool::new(false),
        }
    }

    /// Records that `work` failed on `tp` with `error`, logs it, and returns the error for the
    /// caller: [`Error::SetAside`]. A partition offline stays so with its first cause; an
    /// uncleanable one goes offline when a flush or retention fails.
    pub(super) fn record(&self, tp: &TopicPartition, work: Work, error: Error, now: i64) -> Error {
        let error = Arc::new(error);
        if work != Work::Cleaning {
            self.io_failed.store(true, Ordering::Release);
        }
        let mut partitions = self.partitions.lock();
        let replace = partitions
            .get(tp)
            .is_none_or(|old| !old.is_offline() && work != Work::Cleaning);
        if replace {
            if work == Work::Cleaning {
                log::warn!("{tp}: cleaning failed, the partition is marked uncleanable: {error}");
            } else {
                log::error!(
                    "{tp}: {work} failed, the partition is set aside from the log directory's \
                     background work until reset: {error}"
                );
            }
            partitions.insert(
                tp.clone(),
                BackgroundFailure {
                    topic_partition: tp.clone(),
                    work,
                    error: Arc::clone(&error),
                    at_ms: now,
                },
            );
        }
        Error::SetAside {
            path: self.dir.join(tp.dir_name()),
            work,
            source: error,
        }
    }

    /// Whether the background flush and retention skip `tp`.
    pub(super) fn is_offline(&self, tp: &TopicPartition) -> bool {
        self.partitions
            .lock()
            .get(tp)
            .is_some_and(BackgroundFailure::is_offline)
    }

    /// Whether the cleaner skips `tp`.
    pub(super) fn is_uncleanable(&self, tp: &TopicPartition) -> bool {
        self.partitions.lock().contains_key(tp)
    }

    /// Forgets `tp` (reset, or deleted).
    pub(super) fn clear(&self, tp: &TopicPartition) -> Option<BackgroundFailure> {
        self.partitions.lock().remove(tp)
    }

    /// Forgets an uncleanable mark of `tp` (a cleaning of it succeeded), not an offline one.
    pub(super) fn cleaned(&self, tp: &TopicPartition) {
        let mut partitions = self.partitions.lock();
        if partitions.get(tp).is_some_and(|f| !f.is_offline()) {
            partitions.remove(tp);
        }
    }

    pub(super) fn io_failed(&self) -> bool {
        self.io_failed.load(Ordering::Acquire)
    }

    /// Keeps the outcome of a background checkpoint: the error, logged, until one succeeds.
    pub(super) fn checkpointed(&self, result: crate::error::Result<()>) {
        let mut slot = self.checkpoint.lock();
        match result {
            Ok(()) => *slot = None,
            Err(error) => {
                log::error!("the log directory's checkpoints could not be written: {error}");
                *slot = Some(Arc::new(error));
            }
        }
    }
}

impl<F: FileSystem> LogDir<F> {
    /// The partitions the background work set aside ([`LogDir::start_scheduler`], or the calls
    /// it makes: [`LogDir::flush_due_logs`], [`LogDir::run_retention`], [`LogDir::run_cleaner`],
    /// [`LogDir::compact`], [`LogDir::close`]), with the error of each, in partition order.
    ///
    /// Kafka takes the whole log directory offline on an I/O error (`LogDirFailureChannel`)
    /// and marks a partition whose cleaning fails uncleanable; seglog scopes the first to the
    /// partition: a partition whose flush or retention failed is skipped by the background
    /// flush, retention and cleaner ([`BackgroundFailure::is_offline`]), one whose cleaning
    /// failed by the cleaner alone, and every other partition goes on. The embedder's own calls
    /// on the partition's [`PartitionLog`](crate::PartitionLog) are not refused; they return
    /// their errors as before. After a flush or retention failure [`LogDir::close`] writes no
    /// clean-shutdown marker, so the next open recovers.
    pub fn failed_partitions(&self) -> Vec<BackgroundFailure> {
        self.failures.partitions.lock().values().cloned().collect()
    }

    /// Resets `tp`: the background work takes it again (Kafka's `resumeCleaning` for an
    /// uncleanable partition; Kafka brings an offline log directory back only by a restart).
    /// Returns the record it cleared. Deleting the partition forgets it too.
    pub fn clear_failure(&self, tp: &TopicPartition) -> Option<BackgroundFailure> {
        self.failures.clear(tp)
    }

    /// The error of the last background checkpoint ([`LogDir::checkpoint`] from the scheduler),
    /// until one succeeds. The checkpoint files are the log directory's, not a partition's: a
    /// failure is the directory's, logged, and retried at the next interval.
    pub fn checkpoint_error(&self) -> Option<Arc<Error>> {
        self.failures.checkpoint.lock().clone()
    }
}
