//! The state behind a [`SimFs`](super::SimFs) and its clones: the files' live and durable
//! bytes, the names, the last unsynced write, the fault limits and the counters.

use std::collections::{BTreeMap, BTreeSet};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::SimFs;
use super::capture::{Capture, SimEvent, SimStats, SyncHookSlot};
use super::faults::Faults;
use super::names::{DurableNames, Entry};

pub(super) const ENOSPC: i32 = 28;
pub(super) const EMFILE: i32 = 24;

/// One file's bytes: what reads see, and what survives a power loss.
#[derive(Debug, Default, Clone)]
pub(super) struct Node {
    pub(super) live: Vec<u8>,
    pub(super) durable: Vec<u8>,
    pub(super) modified_ms: i64,
}

/// The most recent write no sync has covered: the one a crash may tear.
#[derive(Debug, Clone)]
pub(super) struct LastWrite {
    pub(super) node: usize,
    pub(super) position: u64,
    pub(super) bytes: Vec<u8>,
}

#[derive(Debug, Default)]
pub(super) struct State {
    pub(super) nodes: Vec<Node>,
    pub(super) live: BTreeMap<PathBuf, Entry>,
    pub(super) durable: DurableNames,
    /// The last directory identity handed out.
    pub(super) dirs: usize,
    pub(super) last_write: Option<LastWrite>,
    pub(super) space_limit: Option<u64>,
    pub(super) open_limit: Option<usize>,
    pub(super) open_files: usize,
    pub(super) faults: Faults,
    pub(super) locks: BTreeSet<PathBuf>,
    pub(super) sync_latency: Duration,
    pub(super) sync_hook: SyncHookSlot,
    pub(super) stats: SimStats,
    pub(super) events: u64,
    pub(super) capture: Capture,
    pub(super) captured: Vec<(u64, SimEvent, SimFs)>,
}

impl State {
    pub(super) fn live_bytes(&self) -> u64 {
        let mut seen = vec![false; self.nodes.len()];
        let mut total = 0;
        for entry in self.live.values() {
            if let Entry::File(node) = *entry
                && let (Some(flag), Some(n)) = (seen.get_mut(node), self.nodes.get(node))
                && !*flag
            {
                *flag = true;
                total += n.live.len() as u64;
            }
        }
        total
    }

    pub(super) fn parent_exists(&self, path: &Path) -> bool {
        match path.parent() {
            None => true,
            Some(p) if p.as_os_str().is_empty() => true,
            Some(p) => self.is_dir(p),
        }
    }

    pub(super) fn is_dir(&self, path: &Path) -> bool {
        matches!(self.live.get(path), Some(Entry::Dir(_)))
    }

    /// Whether the live directory `dir` holds anything.
    pub(super) fn has_children(&self, dir: &Path) -> bool {
        self.live.keys().any(|p| p.parent() == Some(dir))
    }

    /// A new directory identity.
    pub(super) fn new_dir(&mut self) -> Entry {
        self.dirs += 1;
        Entry::Dir(self.dirs)
    }

    pub(super) fn node_mut(&mut self, node: usize) -> io::Result<&mut Node> {
        self.nodes
            .get_mut(node)
            .ok_or_else(|| io::Error::other("simfs: dangling file handle"))
    }
}

pub(super) fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

pub(super) fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
}

pub(super) fn write_into(image: &mut Vec<u8>, position: u64, bytes: &[u8]) {
    let Ok(start) = usize::try_from(position) else {
        return;
    };
    let end = start.saturating_add(bytes.len());
    if image.len() < end {
        image.resize(end, 0);
    }
    if let Some(dst) = image.get_mut(start..end) {
        dst.copy_from_slice(bytes);
    }
}

impl State {
    /// The error for a change to the file `node` (through an open handle), if a fault covers
    /// one of its live names. A file whose names were all removed is never covered.
    pub(super) fn fault_for_node(&self, node: usize) -> io::Result<()> {
        if self.faults.is_empty() {
            return Ok(());
        }
        for (path, entry) in &self.live {
            if *entry == Entry::File(node) {
                self.faults.for_path(path)?;
            }
        }
        Ok(())
    }
}
