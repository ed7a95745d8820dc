//! [`SimFs`]: an in-memory file system for crash tests, after redb's `CrashBackend`.
//!
//! Every file has a *live* image (what reads see) and a *durable* image (what survives a power loss).
//! `sync_data` copies live to durable for one file. Names are durable separately: a creation, rename or
//! removal survives a crash only once its parent directory was synced with `sync_dir`. Directories
//! themselves are durable as soon as they are created.
//!
//! [`SimFs::crash`] returns the file system a machine would find after a power loss: durable names and
//! durable bytes only, optionally with the last unsynced write torn after any number of bytes.
//! Faults: a space limit (`ENOSPC`, after a short write) and an open-file limit (`EMFILE`).

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use parking_lot::Mutex;

use seglog_mmap_index::{Backing, IndexStore, WRITE_BACK_PAGE_SIZE};

use super::{File, FileSystem, OpenMode};

const ENOSPC: i32 = 28;
const EMFILE: i32 = 24;

/// What happens to the last unsynced write when [`SimFs::crash`] simulates a power loss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tear {
    /// Every unsynced write is lost.
    DropAll,
    /// Every unsynced write is lost, except the first `n` bytes of the most recent one.
    KeepPrefix(usize),
}

/// Counters of what the file system was asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SimStats {
    /// Calls to `write_all_at`.
    pub writes: u64,
    /// Bytes written.
    pub bytes_written: u64,
    /// Calls to `File::sync_data`.
    pub file_syncs: u64,
    /// Calls to `FileSystem::sync_dir`.
    pub dir_syncs: u64,
}

/// The in-memory, crash-simulating file system. Clones share the same state.
#[derive(Debug, Clone, Default)]
pub struct SimFs {
    state: Arc<Mutex<State>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    File(usize),
    Dir,
}

#[derive(Debug, Default, Clone)]
struct Node {
    live: Vec<u8>,
    durable: Vec<u8>,
    modified_ms: i64,
}

#[derive(Debug, Clone)]
struct LastWrite {
    node: usize,
    position: u64,
    bytes: Vec<u8>,
}

#[derive(Debug, Default)]
struct State {
    nodes: Vec<Node>,
    live: BTreeMap<PathBuf, Entry>,
    durable: BTreeMap<PathBuf, Entry>,
    last_write: Option<LastWrite>,
    space_limit: Option<u64>,
    open_limit: Option<usize>,
    open_files: usize,
    locks: std::collections::BTreeSet<PathBuf>,
    sync_latency: std::time::Duration,
    sync_hook: SyncHookSlot,
    stats: SimStats,
    events: u64,
    capture: Capture,
    captured: Vec<(u64, SimEvent, SimFs)>,
}

/// A file system event, as [`SimFs::set_capture`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SimEvent {
    /// A write of this many bytes (already applied: a crash image may tear it).
    Write(usize),
    /// A file's length set (about to be applied).
    SetLen,
    /// A file's data synced (about to be).
    FileSync,
    /// A directory synced (about to be).
    DirSync,
    /// A file created (about to be).
    Create,
    /// A file renamed (about to be).
    Rename,
    /// A file removed (about to be).
    Remove,
}

/// How [`SimFs::set_capture`] crashes at an event.
#[derive(Debug, Clone, Copy)]
pub struct CrashPoint {
    /// What happens to the last unsynced write.
    pub tear: Tear,
    /// Files (by live name) whose unsynced writes all survive, as if written back just before
    /// the power loss; `None` for none.
    pub written_back: Option<fn(&Path) -> bool>,
    /// Files whose unsynced state survives page by page, as the kernel writes back a shared
    /// mapping's dirty pages in any order; `None` for none. Takes precedence over the tear for
    /// these files (a page is kept or lost whole).
    pub pages: Option<Pages>,
}

/// Files (memory-mapped ones, such as indexes) whose unsynced state a power loss keeps page by
/// page: the length is the last synced one or the live one (a length change is a metadata
/// update of its own), and each [`WRITE_BACK_PAGE_SIZE`]-byte page inside it that differs from
/// the synced content holds the synced bytes or the live ones, each page on its own coin.
/// Nothing is torn inside a page, and no length arises that no `set_len` or write set.
#[derive(Debug, Clone, Copy)]
pub struct Pages {
    /// Which files, by a live or a durable name.
    pub files: fn(&Path) -> bool,
    /// Seeds the coins (splitmix64), so that an image is reproducible.
    pub seed: u64,
}

/// splitmix64, for the coins of [`Pages`].
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The image of one file under [`Pages`]: the length from one coin, each page from another.
fn paged_image(node: &Node, coins: &mut u64) -> Vec<u8> {
    let live_length = splitmix(coins) & 1 == 1;
    let len = if live_length {
        node.live.len()
    } else {
        node.durable.len()
    };
    let mut image = node.durable.clone();
    image.resize(len, 0);
    for start in (0..len).step_by(WRITE_BACK_PAGE_SIZE) {
        let end = start.saturating_add(WRITE_BACK_PAGE_SIZE).min(len);
        if start >= node.live.len() {
            // Cut from the live file: no page of the live file to write back.
            break;
        }
        // The live page, zero past the live end (the kernel writes a partial last page with
        // zeros past the end of the file).
        let mut page: Vec<u8> = node
            .live
            .get(start..end.min(node.live.len()))
            .unwrap_or_default()
            .to_vec();
        page.resize(end - start, 0);
        if image.get(start..end) != Some(&page[..])
            && splitmix(coins) & 1 == 1
            && let Some(dst) = image.get_mut(start..end)
        {
            dst.copy_from_slice(&page);
        }
    }
    image
}

/// The capture hook of [`SimFs::set_capture`].
pub type CaptureFn = dyn FnMut(u64, SimEvent) -> Option<CrashPoint> + Send;

#[derive(Default)]
struct Capture(Option<Box<CaptureFn>>);

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Capture(on)"
        } else {
            "Capture(off)"
        })
    }
}

/// The hook of [`SimFs::set_sync_hook`].
pub type SyncHook = dyn Fn() + Send + Sync;

#[derive(Default, Clone)]
struct SyncHookSlot(Option<Arc<SyncHook>>);

impl std::fmt::Debug for SyncHookSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "SyncHook(on)"
        } else {
            "SyncHook(off)"
        })
    }
}

impl State {
    fn image(
        &self,
        tear: Tear,
        written_back: &dyn Fn(&Path) -> bool,
        pages: Option<Pages>,
    ) -> SimFs {
        let state = self;
        let mut kept = vec![false; state.nodes.len()];
        for (path, entry) in &state.live {
            if let Entry::File(node) = *entry
                && written_back(path)
                && let Some(flag) = kept.get_mut(node)
            {
                *flag = true;
            }
        }
        let mut paged = vec![false; state.nodes.len()];
        if let Some(pages) = pages {
            for (path, entry) in state.live.iter().chain(&state.durable) {
                if let Entry::File(node) = *entry
                    && (pages.files)(path)
                    && let Some(flag) = paged.get_mut(node)
                {
                    *flag = true;
                }
            }
        }
        let mut coins = pages.map_or(0, |p| p.seed);
        let mut nodes: Vec<Node> = state
            .nodes
            .iter()
            .zip(kept.iter().zip(&paged))
            .map(|(n, (kept, paged))| {
                let image = if *kept {
                    n.live.clone()
                } else if *paged {
                    paged_image(n, &mut coins)
                } else {
                    n.durable.clone()
                };
                Node {
                    live: image.clone(),
                    durable: image,
                    ..*n
                }
            })
            .collect();
        if let (Tear::KeepPrefix(keep), Some(last)) = (tear, &state.last_write)
            && !kept.get(last.node).copied().unwrap_or(false)
            && !paged.get(last.node).copied().unwrap_or(false)
            && let Some(node) = nodes.get_mut(last.node)
        {
            let kept = last
                .bytes
                .get(..keep.min(last.bytes.len()))
                .unwrap_or_default();
            write_into(&mut node.live, last.position, kept);
            node.durable.clone_from(&node.live);
        }
        let fresh = State {
            nodes,
            live: state.durable.clone(),
            durable: state.durable.clone(),
            ..State::default()
        };
        SimFs {
            state: Arc::new(Mutex::new(fresh)),
        }
    }

    /// Counts an event and captures an image if the capture hook asks for one.
    fn event(&mut self, kind: SimEvent) {
        self.events += 1;
        let number = self.events;
        let Some(decide) = self.capture.0.as_mut() else {
            return;
        };
        if let Some(point) = decide(number, kind) {
            let image = match point.written_back {
                Some(keep) => self.image(point.tear, &keep, point.pages),
                None => self.image(point.tear, &|_| false, point.pages),
            };
            self.captured.push((number, kind, image));
        }
    }

    fn live_bytes(&self) -> u64 {
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

    fn parent_exists(&self, path: &Path) -> bool {
        match path.parent() {
            None => true,
            Some(p) if p.as_os_str().is_empty() => true,
            Some(p) => self.live.get(p) == Some(&Entry::Dir),
        }
    }

    fn node_mut(&mut self, node: usize) -> io::Result<&mut Node> {
        self.nodes
            .get_mut(node)
            .ok_or_else(|| io::Error::other("simfs: dangling file handle"))
    }
}

fn now_ms() -> i64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
}

fn not_found(path: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::NotFound,
        format!("{}: no such file", path.display()),
    )
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
        self.state.lock().sync_hook = SyncHookSlot(hook);
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

fn write_into(image: &mut Vec<u8>, position: u64, bytes: &[u8]) {
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

/// An exclusive lock on a [`SimFs`] path, released when dropped.
#[derive(Debug)]
pub struct SimLock {
    fs: SimFs,
    path: PathBuf,
}

impl Drop for SimLock {
    fn drop(&mut self) {
        self.fs.state.lock().locks.remove(&self.path);
    }
}

impl FileSystem for SimFs {
    type File = SimFile;
    type Lock = SimLock;

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<SimFile> {
        let mut state = self.state.lock();
        if state
            .open_limit
            .is_some_and(|limit| state.open_files >= limit)
        {
            return Err(io::Error::from_raw_os_error(EMFILE));
        }
        let node = match (state.live.get(path).copied(), mode) {
            (Some(Entry::Dir), _) => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    path.display().to_string(),
                ));
            }
            (Some(Entry::File(_)), OpenMode::CreateNew) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    path.display().to_string(),
                ));
            }
            (Some(Entry::File(node)), _) => node,
            (None, OpenMode::Existing | OpenMode::ReadOnly) => return Err(not_found(path)),
            (None, OpenMode::CreateNew | OpenMode::CreateOrOpen) => {
                if !state.parent_exists(path) {
                    return Err(not_found(path.parent().unwrap_or(path)));
                }
                state.event(SimEvent::Create);
                let node = state.nodes.len();
                state.nodes.push(Node {
                    modified_ms: now_ms(),
                    ..Node::default()
                });
                state.live.insert(path.to_path_buf(), Entry::File(node));
                node
            }
        };
        state.open_files += 1;
        Ok(SimFile {
            fs: self.clone(),
            node,
            writable: mode != OpenMode::ReadOnly,
        })
    }

    fn exists(&self, path: &Path) -> bool {
        self.state.lock().live.contains_key(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.state.lock().live.get(path) == Some(&Entry::Dir)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        let entry = state
            .live
            .get(from)
            .copied()
            .ok_or_else(|| not_found(from))?;
        if entry == Entry::Dir {
            return Err(io::Error::other("simfs renames files only"));
        }
        if !state.parent_exists(to) {
            return Err(not_found(to));
        }
        state.event(SimEvent::Rename);
        state.live.remove(from);
        state.live.insert(to.to_path_buf(), entry);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        match state.live.get(path) {
            Some(Entry::File(_)) => {
                state.event(SimEvent::Remove);
                state.live.remove(path);
                Ok(())
            }
            Some(Entry::Dir) => Err(io::Error::new(io::ErrorKind::IsADirectory, "a directory")),
            None => Err(not_found(path)),
        }
    }

    fn read_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let state = self.state.lock();
        if state.live.get(dir) != Some(&Entry::Dir) {
            return Err(not_found(dir));
        }
        Ok(state
            .live
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .cloned()
            .collect())
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        for ancestor in dir.ancestors().filter(|a| !a.as_os_str().is_empty()) {
            match state.live.get(ancestor) {
                Some(Entry::File(_)) => {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "a file is in the way",
                    ));
                }
                Some(Entry::Dir) => {}
                None => {
                    state.live.insert(ancestor.to_path_buf(), Entry::Dir);
                    state.durable.insert(ancestor.to_path_buf(), Entry::Dir);
                }
            }
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        if state.live.get(dir) != Some(&Entry::Dir) {
            return Err(not_found(dir));
        }
        state.event(SimEvent::DirSync);
        state.stats.dir_syncs += 1;
        state.durable.retain(|p, _| p.parent() != Some(dir));
        let children: Vec<(PathBuf, Entry)> = state
            .live
            .iter()
            .filter(|(p, _)| p.parent() == Some(dir))
            .map(|(p, e)| (p.clone(), *e))
            .collect();
        state.durable.extend(children);
        Ok(())
    }

    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let state = self.state.lock();
        match state.live.get(path) {
            Some(Entry::File(node)) => Ok(state.nodes.get(*node).map_or(0, |n| n.modified_ms)),
            Some(Entry::Dir) => Ok(0),
            None => Err(not_found(path)),
        }
    }

    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let mut state = self.state.lock();
        match state.live.get(path).copied() {
            Some(Entry::File(node)) => {
                state.node_mut(node)?.modified_ms = ms;
                Ok(())
            }
            _ => Err(not_found(path)),
        }
    }

    /// Index files live in this file system too: anonymous memory loaded from and written back
    /// to it, so a crash reaches them (see `seglog_mmap_index::Backing`).
    fn index_backing(&self) -> Backing {
        Backing::Stored(Arc::new(self.clone()))
    }

    fn try_lock(&self, path: &Path) -> io::Result<SimLock> {
        if !FileSystem::exists(self, path) {
            drop(self.open(path, OpenMode::CreateOrOpen)?);
        }
        let mut state = self.state.lock();
        if !state.locks.insert(path.to_path_buf()) {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("{} is locked", path.display()),
            ));
        }
        Ok(SimLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        })
    }
}

/// An open [`SimFs`] file. It stays usable after its name is removed, as on Unix.
#[derive(Debug)]
pub struct SimFile {
    fs: SimFs,
    node: usize,
    writable: bool,
}

impl Drop for SimFile {
    fn drop(&mut self) {
        let mut state = self.fs.state.lock();
        state.open_files = state.open_files.saturating_sub(1);
    }
}

impl SimFile {
    fn check_writable(&self) -> io::Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "file opened read-only",
            ))
        }
    }
}

impl File for SimFile {
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize> {
        let mut state = self.fs.state.lock();
        let node = state.node_mut(self.node)?;
        let Ok(start) = usize::try_from(position) else {
            return Ok(0);
        };
        let available = node.live.get(start..).unwrap_or_default();
        let n = available.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), available.get(..n)) {
            dst.copy_from_slice(src);
        }
        Ok(n)
    }

    fn write_all_at(&self, buf: &[u8], position: u64) -> io::Result<()> {
        self.check_writable()?;
        let mut state = self.fs.state.lock();
        let used = state.live_bytes();
        let current_len = state.node_mut(self.node)?.live.len() as u64;
        let end = position.saturating_add(buf.len() as u64);
        let growth = end.saturating_sub(current_len);
        let mut take = buf.len();
        let mut out_of_space = false;
        if let Some(limit) = state.space_limit
            && used.saturating_add(growth) > limit
        {
            let room = limit.saturating_sub(used);
            let fits_end = current_len.saturating_add(room);
            take = usize::try_from(fits_end.saturating_sub(position))
                .unwrap_or(0)
                .min(buf.len());
            out_of_space = true;
        }
        let bytes = buf.get(..take).unwrap_or_default();
        let node = state.node_mut(self.node)?;
        write_into(&mut node.live, position, bytes);
        node.modified_ms = now_ms();
        state.stats.writes += 1;
        state.stats.bytes_written += bytes.len() as u64;
        if !bytes.is_empty() {
            state.last_write = Some(LastWrite {
                node: self.node,
                position,
                bytes: bytes.to_vec(),
            });
            state.event(SimEvent::Write(bytes.len()));
        }
        if out_of_space {
            return Err(io::Error::from_raw_os_error(ENOSPC));
        }
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let mut state = self.fs.state.lock();
        Ok(state.node_mut(self.node)?.live.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.check_writable()?;
        let mut state = self.fs.state.lock();
        let used = state.live_bytes();
        let current = state.node_mut(self.node)?.live.len() as u64;
        if let Some(limit) = state.space_limit
            && len > current
            && used + (len - current) > limit
        {
            return Err(io::Error::from_raw_os_error(ENOSPC));
        }
        let new_len = usize::try_from(len).map_err(|_| io::Error::other("length too large"))?;
        state.event(SimEvent::SetLen);
        let node = state.node_mut(self.node)?;
        node.live.resize(new_len, 0);
        node.modified_ms = now_ms();
        Ok(())
    }

    fn sync_data(&self) -> io::Result<()> {
        let (latency, hook, began) = {
            let mut state = self.fs.state.lock();
            let latency = state.sync_latency;
            let hook = state.sync_hook.0.clone();
            let began = if latency.is_zero() && hook.is_none() {
                None
            } else {
                Some(state.node_mut(self.node)?.live.clone())
            };
            (latency, hook, began)
        };
        if let Some(hook) = hook {
            hook();
        }
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        self.fs.sync_node(self.node, began)
    }
}

/// Index files in a [`SimFs`]: loading, creating and resizing or trimming one opens the file, so
/// they count against the open-file limit and the space limit; `sync` (an `msync`) needs no
/// descriptor.
impl IndexStore for SimFs {
    fn load(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        self.check_open_limit()?;
        let state = self.state.lock();
        match state.live.get(path) {
            Some(Entry::File(node)) => Ok(state.nodes.get(*node).map(|n| n.live.clone())),
            Some(Entry::Dir) => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                path.display().to_string(),
            )),
            None => Ok(None),
        }
    }

    fn create(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = self.open(path, OpenMode::CreateNew)?;
        if let Err(e) = file.set_len(len) {
            drop(file);
            let _ = self.remove_file(path);
            return Err(e);
        }
        Ok(())
    }

    fn write_pages(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let file = self.open(path, OpenMode::Existing)?;
        let current = self.live_bytes(path).unwrap_or_default();
        let len = bytes.len().min(current.len());
        for start in (0..len).step_by(WRITE_BACK_PAGE_SIZE) {
            let end = start.saturating_add(WRITE_BACK_PAGE_SIZE).min(len);
            let (Some(page), Some(on_file)) = (bytes.get(start..end), current.get(start..end))
            else {
                continue;
            };
            if page != on_file {
                file.write_all_at(page, start as u64)?;
            }
        }
        Ok(())
    }

    fn set_len(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = self.open(path, OpenMode::Existing)?;
        if File::len(&file)? != len {
            File::set_len(&file, len)?;
        }
        Ok(())
    }

    fn sync(&self, path: &Path) -> io::Result<()> {
        let node = match self.state.lock().live.get(path) {
            Some(Entry::File(node)) => *node,
            _ => return Err(not_found(path)),
        };
        self.sync_node(node, None)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        FileSystem::rename(self, from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<bool> {
        match self.remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn exists(&self, path: &Path) -> bool {
        FileSystem::exists(self, path)
    }
}
