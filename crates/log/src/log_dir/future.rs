//! Future logs (Kafka's `LogManager.futureLogs`): a `topic-N.<id>-future` directory is the
//! target of a replica's move between log directories (`kafka-reassign-partitions`,
//! `AlterReplicaLogDirs`). It is loaded on open as a future log, kept apart from the current
//! logs (flushed and retained, never cleaned, as Kafka does), and promoted to the current log
//! by [`LogDir::promote_future`] (Kafka's `replaceCurrentWithFutureLog`).

use std::collections::BTreeMap;

use parking_lot::RwLock;
use seglog_fs::FileSystem;

use super::LogDir;
use super::load::load_one;
use crate::error::{Error, Result};
use crate::partition::{LoadOptions, PartitionLog};
use crate::topic_partition::TopicPartition;

/// The future logs of a log directory, each with the lock on its directory.
pub(super) type FutureLogs<F> =
    RwLock<BTreeMap<TopicPartition, (PartitionLog<F>, <F as FileSystem>::Lock)>>;

impl<F: FileSystem> LogDir<F> {
    /// The future log of `tp` (a `-future` directory loaded on open), if there is one.
    pub fn future_log(&self, tp: &TopicPartition) -> Option<PartitionLog<F>> {
        self.futures.read().get(tp).map(|(log, _)| log.clone())
    }

    /// Every future log.
    pub fn future_logs(&self) -> Vec<PartitionLog<F>> {
        self.futures
            .read()
            .values()
            .map(|(log, _)| log.clone())
            .collect()
    }

    /// Kafka's `replaceCurrentWithFutureLog` within this directory: the future log of `tp` is
    /// closed, its directory renamed `topic-N` (the current log of `tp`, if this directory
    /// holds one, is first renamed `-delete` and queued for deletion, see
    /// [`LogDir::delete_due_dirs`]), and loaded again as the current log, which is returned.
    /// Handles to the future log, and to the current log it replaces, must not be used
    /// afterwards. An error halfway (a rename refused) leaves both logs closed and out of this
    /// handle, their directories as far as the promotion got; the next open loads them so.
    ///
    /// Kafka promotes a future log when the replica's move caught up, and at start-up an
    /// abandoned one (its move's source gone) when the metadata assigns the partition to the
    /// future log's directory (`recoverAbandonedFutureLogs`); seglog has no metadata, so the
    /// caller decides. Fails with [`Error::PartitionUnavailable`] when there is no future log
    /// of `tp`.
    pub fn promote_future(&self, tp: &TopicPartition) -> Result<PartitionLog<F>> {
        let mut logs = self.logs.write();
        let Some((future, future_lock)) = self.futures.write().remove(tp) else {
            return Err(Error::PartitionUnavailable {
                path: self.path.join(tp.dir_name()),
                cause: "no future log of this partition in the log directory".into(),
            });
        };
        future.close()?;
        let from = future.dir().to_path_buf();
        // Closed just now: the load trusts it whole, from its own log start.
        let load = LoadOptions {
            recovery_point: future.recovery_point(),
            log_start_offset: future.log_start_offset(),
            had_clean_shutdown: true,
            discard: false,
            topic_id: future.topic_id(),
            high_watermark: None,
        };
        drop(future);
        if let Some(current) = logs.remove(tp) {
            current.close()?;
            let dir = current.dir().to_path_buf();
            drop(current);
            self.rename_to_delete(tp, &dir)?;
            self.partition_locks.lock().remove(tp);
            self.kept.lock().forget(tp);
        }
        let to = self.path.join(tp.dir_name());
        self.fs
            .rename(&from, &to)
            .map_err(|e| Error::io(&from, e))?;
        self.fs
            .sync_dir(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        drop(future_lock);
        let (log, _, lock) = load_one(
            &self.fs,
            &to,
            &self.default_config,
            load,
            &self.time,
            &self.limits,
        )?;
        self.partition_locks.lock().insert(tp.clone(), lock);
        logs.insert(tp.clone(), log.clone());
        Ok(log)
    }
}
