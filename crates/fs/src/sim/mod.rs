//! [`SimFs`]: an in-memory file system for crash tests, after redb's `CrashBackend`.
//!
//! Every file has a *live* image (what reads see) and a *durable* image (what survives a power loss).
//! `sync_data` copies live to durable for one file. Names are durable separately: a creation, rename or
//! removal survives a crash only once its parent directory was synced with `sync_dir`, for
//! directories as for files (a directory renamed or removed comes back after a crash before that
//! sync, with its files). Directories themselves are durable as soon as they are created.
//!
//! [`SimFs::crash`] returns the file system a machine would find after a power loss: durable names and
//! durable bytes only, optionally with the last unsynced write torn after any number of bytes.
//! Faults: a space limit (`ENOSPC`, after a short write), an open-file limit (`EMFILE`), and an
//! error for every change under a path ([`SimFs::set_path_fault`]).

mod capture;
mod crash;
mod faults;
mod file;
mod fs;
mod index_store;
mod names;
mod state;
#[cfg(test)]
mod tests;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;

pub use capture::{CaptureFn, CrashPoint, Pages, SimEvent, SimStats, SyncHook, Tear};
pub use faults::EIO;
pub use file::SimFile;
pub use fs::SimLock;

use capture::Capture;
use names::Entry;
use state::{EMFILE, State};

/// The in-memory, crash-simulating file system. Clones share the same state.
#[derive(Debug, Clone, Default)]
pub struct SimFs {
    state: Arc<Mutex<State>>,
}

impl SimFs {
    /// An empty file system.
    pub fn new() -> Self {
        Self::default()
    }

    /// The file system found after a power loss now: durable names and durable bytes only, with the
    /// last unsynced write kept or torn as `tear` says. The returned file system is independent of
    /// this one; handles opened on this one keep working on this one.
    #[must_use]
    pub fn crash(&self, tear: Tear) -> SimFs {
        self.crash_keeping(tear, |_| false)
    }

    /// [`SimFs::crash`], except that every file whose live name `written_back` accepts keeps all
    /// its unsynced writes, as if the kernel had written back every dirty page of that file just
    /// before the power loss (a kernel may write back any dirty page at any time). Names are
    /// still durable only once their directory was synced.
    #[must_use]
    pub fn crash_keeping(&self, tear: Tear, written_back: impl Fn(&Path) -> bool) -> SimFs {
        self.state.lock().image(tear, &written_back, None)
    }

    /// The file system a power loss at `point` leaves now (see [`CrashPoint`]).
    #[must_use]
    pub fn crash_at(&self, point: CrashPoint) -> SimFs {
        let written_back = point.written_back.unwrap_or(|_| false);
        self.state
            .lock()
            .image(point.tear, &written_back, point.pages)
    }

    /// Starts (or, with `None`, stops) capturing crash images: before every event (after it, for
    /// a write, so that the write can be torn) `decide` is asked with the event's number and
    /// kind, and when it returns a [`CrashPoint`] the image a power loss at that moment would
    /// leave is kept, for [`SimFs::take_captured`]. A test can so crash at every sync point and
    /// at any write inside a multi-step operation, and check each image afterwards.
    pub fn set_capture(&self, decide: Option<Box<CaptureFn>>) {
        self.state.lock().capture = Capture(decide);
    }

    /// The images captured since the last call, oldest first, with their event number and kind.
    pub fn take_captured(&self) -> Vec<(u64, SimEvent, SimFs)> {
        std::mem::take(&mut self.state.lock().captured)
    }

    /// The number of events (writes, length changes, syncs, creations, renames, removals) so far.
    pub fn events(&self) -> u64 {
        self.state.lock().events
    }

    /// Limits the total size of live files; a write past it writes what fits, then fails with
    /// `ENOSPC`. `None` removes the limit.
    pub fn set_space_limit(&self, bytes: Option<u64>) {
        self.state.lock().space_limit = bytes;
    }

    /// Limits the number of open handles; an open past it fails with `EMFILE`.
    pub fn set_open_limit(&self, files: Option<usize>) {
        self.state.lock().open_limit = files;
    }

    /// Makes every `sync_data` take at least `latency` (outside the file system's lock), as a
    /// disk would: tests of group commit need an fsync that costs something. Such a sync makes
    /// durable what the file held when it began; what is written while it runs stays unsynced.
    pub fn set_sync_latency(&self, latency: std::time::Duration) {
        self.state.lock().sync_latency = latency;
    }

    /// Calls `hook` (`None`: nothing) inside every `sync_data`, where a sync latency sleeps: after
    /// the sync took the image it makes durable, outside the file system's lock. A hook that
    /// blocks holds that sync in flight while other threads act, so a test can order a race
    /// without relying on timing.
    pub fn set_sync_hook(&self, hook: Option<Arc<SyncHook>>) {
        self.state.lock().sync_hook = capture::SyncHookSlot(hook);
    }

    /// Counters of the calls made so far.
    pub fn stats(&self) -> SimStats {
        self.state.lock().stats
    }

    /// The live bytes of `path`, if it names a file.
    pub fn live_bytes(&self, path: &Path) -> Option<Vec<u8>> {
        let state = self.state.lock();
        match state.live.get(path) {
            Some(Entry::File(node)) => state.nodes.get(*node).map(|n| n.live.clone()),
            _ => None,
        }
    }

    /// The path and length of the most recent write that no sync has covered yet: the write a
    /// crash with [`Tear::KeepPrefix`] tears. `None` when every write so far is durable.
    pub fn last_unsynced_write(&self) -> Option<(PathBuf, usize)> {
        let state = self.state.lock();
        let last = state.last_write.as_ref()?;
        let path = state
            .live
            .iter()
            .find(|(_, e)| **e == Entry::File(last.node))
            .map_or_else(PathBuf::new, |(p, _)| p.clone());
        Some((path, last.bytes.len()))
    }

    /// `fdatasync` of one file: its live bytes become durable, or, given the image the file
    /// had when a slow sync began, that image does.
    fn sync_node(&self, node: usize, began: Option<Vec<u8>>) -> io::Result<()> {
        let mut state = self.state.lock();
        state.fault_for_node(node)?;
        state.event(SimEvent::FileSync);
        state.stats.file_syncs += 1;
        let image = state.node_mut(node)?;
        let changed_since = match began {
            Some(began) if began != image.live => {
                // Written while the sync ran: the last write to this file came after it began.
                image.durable = began;
                true
            }
            _ => {
                image.durable.clone_from(&image.live);
                false
            }
        };
        if !changed_since && state.last_write.as_ref().is_some_and(|w| w.node == node) {
            state.last_write = None;
        }
        Ok(())
    }

    fn check_open_limit(&self) -> io::Result<()> {
        let state = self.state.lock();
        if state
            .open_limit
            .is_some_and(|limit| state.open_files >= limit)
        {
            return Err(io::Error::from_raw_os_error(EMFILE));
        }
        Ok(())
    }

    /// The total size of all live files, as the space limit counts it.
    pub fn used_bytes(&self) -> u64 {
        self.state.lock().live_bytes()
    }
}
