//! The background scheduler: one thread that runs the flush checks, retention, checkpoints, the
//! cleaner and producer expiry at their intervals.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use seglog_fs::FileSystem;

use super::{LogDir, SchedulerConfig};
use crate::error::Result;

pub(super) struct Scheduler {
    stop: Arc<(Mutex<bool>, Condvar)>,
    handle: JoinHandle<()>,
}

impl<F: FileSystem> LogDir<F> {
    /// One pass of the background work: flush logs past `flush.ms`, delete files whose delay
    /// passed. Retention and checkpoints have their own cadence (see [`LogDir::start_scheduler`]).
    pub fn flush_due_logs(&self) -> Result<()> {
        let now = self.time.now_ms();
        for log in self.logs() {
            if now.saturating_sub(log.last_flush_ms()) >= log.config().flush_ms {
                log.flush()?;
            }
            log.delete_expired_files()?;
        }
        Ok(())
    }

    /// Runs retention on every log.
    pub fn run_retention(&self) -> Result<usize> {
        let mut deleted = 0;
        for log in self.logs() {
            deleted += log.delete_old_segments()?.total();
            deleted += log.delete_expired_files()?;
        }
        Ok(deleted)
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
                // Errors are retried on the next tick; a failing directory stays visible through
                // the foreground calls, which return them.
                let _ = dir.flush_due_logs();
                since_retention += config.flush_check_interval_ms;
                since_checkpoint += config.flush_check_interval_ms;
                if since_retention >= config.retention_check_interval_ms {
                    since_retention = 0;
                    let _ = dir.run_retention();
                }
                if since_checkpoint >= config.checkpoint_interval_ms {
                    since_checkpoint = 0;
                    let _ = dir.checkpoint();
                }
                since_producer_expiry += config.flush_check_interval_ms;
                if since_producer_expiry >= config.producer_id_expiration_check_interval_ms {
                    since_producer_expiry = 0;
                    dir.remove_expired_producers();
                }
                since_cleaner += config.flush_check_interval_ms;
                if since_cleaner >= config.cleaner_backoff_ms {
                    since_cleaner = 0;
                    // Clean while there is something to clean, one log at a time.
                    while let Ok(Some(_)) = dir.run_cleaner() {}
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
