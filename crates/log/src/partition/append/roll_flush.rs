//! The background flushes that rolls start, run one after the other on at most one thread per
//! partition. Kafka schedules each roll's "flush-log" task on its scheduler's fixed pool
//! (`background.threads`); a thread per roll would let a burst of rolls start thousands of
//! threads, each syncing the same segments (docs/perf/scale.md).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::thread::JoinHandle;

use crate::loom::sync::Arc;
use seglog_fs::FileSystem;
use seglog_segment::LogSegment;

/// One roll's flush: its producer snapshot synced, then every segment below `offset` flushed and
/// the recovery point moved to `offset`.
pub(in crate::partition) struct RollFlush<F: FileSystem> {
    pub(in crate::partition) offset: i64,
    pub(in crate::partition) rolled: Arc<LogSegment<F>>,
    pub(in crate::partition) snapshot: Option<PathBuf>,
}

/// The rolls' flushes (`T`: a [`RollFlush`]) not yet started, and the one thread that runs them.
pub(in crate::partition) struct RollFlushes<T> {
    /// Oldest first, in roll order.
    queue: VecDeque<T>,
    /// Whether a worker is draining the queue: it clears this, under the lock, when it finds the
    /// queue empty and is about to exit, so a roll that sees it set can leave its flush queued.
    running: bool,
    /// The last worker started; joined by `wait_for_background_flushes`.
    worker: Option<JoinHandle<()>>,
}

impl<T> std::fmt::Debug for RollFlushes<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RollFlushes")
            .field("queued", &self.queue.len())
            .field("running", &self.running)
            .finish_non_exhaustive()
    }
}

impl<T> Default for RollFlushes<T> {
    fn default() -> Self {
        Self {
            queue: VecDeque::new(),
            running: false,
            worker: None,
        }
    }
}

impl<T> RollFlushes<T> {
    /// Queues `flush`; returns true when no worker is running, so the caller must start one
    /// (and hand its handle to [`RollFlushes::started`]).
    pub(in crate::partition) fn push(&mut self, flush: T) -> bool {
        self.queue.push_back(flush);
        !std::mem::replace(&mut self.running, true)
    }

    /// Records the worker the caller started after [`RollFlushes::push`] returned true (having
    /// joined the previous one, which had left its loop).
    pub(in crate::partition) fn started(&mut self, worker: JoinHandle<()>) {
        self.worker = Some(worker);
    }

    /// The next flush for the worker, or `None`, after which the worker must exit.
    pub(in crate::partition) fn next(&mut self) -> Option<T> {
        let next = self.queue.pop_front();
        if next.is_none() {
            self.running = false;
        }
        next
    }

    /// The last worker started, for joining.
    pub(in crate::partition) fn take_worker(&mut self) -> Option<JoinHandle<()>> {
        self.worker.take()
    }
}

#[cfg(test)]
mod tests {
    use super::RollFlushes;

    /// One worker at a time: a push while one runs only queues; the worker takes the flushes in
    /// roll order, and the push after it found the queue empty starts the next worker.
    #[test]
    fn one_worker_drains_in_roll_order() {
        let mut flushes = RollFlushes::default();
        assert!(flushes.push(1), "the first roll starts a worker");
        assert!(!flushes.push(2), "a worker runs: queued only");
        assert_eq!(flushes.next(), Some(1));
        assert!(!flushes.push(3));
        assert_eq!(flushes.next(), Some(2));
        assert_eq!(flushes.next(), Some(3));
        assert_eq!(flushes.next(), None);
        assert!(
            flushes.push(4),
            "the worker left: the next roll starts another"
        );
        assert_eq!(flushes.next(), Some(4));
    }
}
