//! `consume --follow`'s wait for new records: woken by a change to a partition's `.log` files
//! (inotify, through the `notify` crate: a write, a new segment, a rename or removal), and
//! never waiting longer than the fallback poll, so a missed event (or a file system where
//! watching fails, such as some network mounts) costs at most one poll interval.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::Duration;

use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher as _};

/// The poll interval when the directories cannot be watched.
const UNWATCHED_POLL: Duration = Duration::from_millis(100);

/// Waits for a change in some directories.
pub(crate) struct Wake {
    /// Kept alive for its events; `None` when watching failed, leaving the poll alone.
    _watcher: Option<RecommendedWatcher>,
    changes: Receiver<()>,
    poll: Duration,
}

impl Wake {
    /// Watches `dirs` (each non-recursively); `poll` bounds every wait.
    pub(crate) fn new(dirs: &[PathBuf], poll: Duration) -> Self {
        let (tx, changes) = channel();
        let watcher = notify::recommended_watcher(move |event: notify::Result<Event>| {
            if event.is_ok_and(|e| news(&e)) {
                let _ = tx.send(());
            }
        })
        .ok()
        .and_then(|mut w| {
            dirs.iter()
                .all(|dir| w.watch(dir, RecursiveMode::NonRecursive).is_ok())
                .then_some(w)
        });
        // Unwatched, it polls as often as consume did before it watched.
        let poll = if watcher.is_some() {
            poll
        } else {
            poll.min(UNWATCHED_POLL)
        };
        Self {
            _watcher: watcher,
            changes,
            poll,
        }
    }

    /// Returns once a watched directory changed (at once if it did since the last call), or
    /// after `at_most` or the poll interval, whichever is shorter.
    pub(crate) fn wait(&self, at_most: Duration) {
        match self.changes.recv_timeout(at_most.min(self.poll)) {
            Ok(()) => while self.changes.try_recv().is_ok() {},
            Err(RecvTimeoutError::Timeout) => {}
            // No watcher holds the sender: a plain sleep.
            Err(RecvTimeoutError::Disconnected) => std::thread::sleep(at_most.min(self.poll)),
        }
    }
}

/// Whether `event` may bring records: a change to a `.log` file (a write, a new segment, a
/// rename or removal, `.log.deleted` and the cleaner's files included). Opening and reading
/// (ours included) change nothing, and the writer's index, time index, snapshot and checkpoint
/// writes come before or after its `.log` write: waking on them would read too early.
fn news(event: &Event) -> bool {
    !matches!(event.kind, EventKind::Access(_))
        && event.paths.iter().any(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.contains(".log"))
        })
}
