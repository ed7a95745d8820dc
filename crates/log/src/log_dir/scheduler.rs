//! The background scheduler: one thread that runs the flush checks, retention, checkpoints, the
//! cleaner and producer expiry at their intervals.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use seglog_fs::FileSystem;

use super::{LogDir, SchedulerConfig, Work};
use crate::error::Result;

pub(super) struct Scheduler {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: JoinHandle<()>,
}

impl<F: FileSystem> LogDir<F> {
    /// One pass of the background work: flush logs past `flush.ms`, delete files whose delay
    /// passed. Retention and checkpoints have their own cadence (see [`LogDir::start_scheduler`]).
    ///
    /// A partition that fails is set aside ([`LogDir::failed_partitions`]) and the others are
    /// still flushed; the first such error is returned ([`Error::SetAside`](crate::Error::SetAside)). Partitions set
    /// aside before are skipped.
    pub fn flush_due_logs(&self) -> Result<()> {
        let now = self.time.now_ms();
        let mut failed = None;
        for log in self.logs() {
            let tp = log.topic_partition();
            if self.failures.is_offline(tp) {
                continue;
            }
            let flushed = if now.saturating_sub(log.last_flush_ms()) >= log.config().flush_ms {
                log.flush()
            } else {
                Ok(())
            };
            if let Err(error) = flushed.and_then(|()| log.delete_expired_files().map(drop)) {
                failed.get_or_insert(self.failures.record(tp, Work::Flush, error, now));
            }
        }
        failed.map_or(Ok(()), Err)
    }

    /// Runs retention on every log; the number of segment files deleted.
    ///
    /// A partition that fails is set aside ([`LogDir::failed_partitions`]) and retention goes
    /// on for the others (on a full disk, retention is what frees space); the first such error
    /// is returned ([`Error::SetAside`](crate::Error::SetAside)) instead of the count. Partitions set aside before are
    /// skipped.
    pub fn run_retention(&self) -> Result<usize> {
        let mut deleted = 0;
        let mut failed = None;
        for log in self.logs() {
            let tp = log.topic_partition();
            if self.failures.is_offline(tp) {
                continue;
            }
            let retained = log
                .delete_old_segments()
                .and_then(|report| Ok(report.total() + log.delete_expired_files()?));
            match retained {
                Ok(count) => deleted += count,
                Err(error) => {
                    let now = self.time.now_ms();
                    failed.get_or_insert(self.failures.record(tp, Work::Retention, error, now));
                }
            }
        }
        failed.map_or(Ok(deleted), Err)
    }

    /// Expires the idle producers of every log (Kafka's `PeriodicProducerExpirationCheck`).
    pub fn remove_expired_producers(&self) {
        let now = self.time.now_ms();
        for log in self.logs() {
            log.remove_expired_producers(now);
        }
    }

    /// Starts the background scheduler (one thread): flush checks, retention, checkpoints, the
    /// cleaner and producer expiry at their intervals. [`LogDir::close`] stops it and waits for it.
    pub fn start_scheduler(self: &Arc<Self>, config: SchedulerConfig) {
        let mut slot = self.scheduler.lock();
        if slot.is_some() {
            return;
        }
        let stop = Arc::new((Mutex::new(false), Condvar::new()));
        let me = Arc::downgrade(self);
        let stop_thread = Arc::clone(&stop);
        let handle = std::thread::spawn(move || {
            let tick = Duration::from_millis(config.flush_check_interval_ms.max(1));
            let mut since_retention = 0_u64;
            let mut since_checkpoint = 0_u64;
            let mut since_cleaner = 0_u64;
            let mut since_producer_expiry = 0_u64;
            loop {
                {
                    let (lock, cond) = &*stop_thread;
                    let mut stopped = lock.lock();
                    if !*stopped {
                        cond.wait_for(&mut stopped, tick);
                    }
                    if *stopped {
                        return;
                    }
                }
                let Some(dir) = me.upgrade() else { return };
                // A partition that fails is set aside and recorded (`failed_partitions`); the
                // others go on, so the errors returned here are known already.
                let _ = dir.flush_due_logs();
                // `-delete` directories whose delay passed (Kafka's `kafka-delete-logs` task);
                // a failure is logged, and the directory left for the next open.
                let _ = dir.delete_due_dirs();
                since_retention += config.flush_check_interval_ms;
                since_checkpoint += config.flush_check_interval_ms;
                if since_retention >= config.retention_check_interval_ms {
                    since_retention = 0;
                    let _ = dir.run_retention();
                }
                if since_checkpoint >= config.checkpoint_interval_ms {
                    since_checkpoint = 0;
                    dir.failures.checkpointed(dir.checkpoint());
                }
                since_producer_expiry += config.flush_check_interval_ms;
                if since_producer_expiry >= config.producer_id_expiration_check_interval_ms {
                    since_producer_expiry = 0;
                    dir.remove_expired_producers();
                }
                since_cleaner += config.flush_check_interval_ms;
                if since_cleaner >= config.cleaner_backoff_ms {
                    since_cleaner = 0;
                    // Clean while there is something to clean, one log at a time. A failed
                    // cleaning marks its partition uncleanable, so the next call picks another;
                    // at most one failure a log per tick.
                    let mut failures = 0;
                    loop {
                        match dir.run_cleaner() {
                            Ok(Some(_)) => {}
                            Ok(None) => break,
                            Err(_) => {
                                failures += 1;
                                if failures > dir.logs().len() {
                                    break;
                                }
                            }
                        }
                    }
                }
            }
        });
        *slot = Some(Scheduler { stop, handle });
    }

    pub(super) fn stop_scheduler(&self) {
        if let Some(scheduler) = self.scheduler.lock().take() {
            let (lock, cond) = &*scheduler.stop;
            *lock.lock() = true;
            cond.notify_all();
            let _ = scheduler.handle.join();
        }
    }
}
