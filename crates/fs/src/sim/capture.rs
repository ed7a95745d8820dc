//! What a test asks of [`SimFs`](super::SimFs) and reads from it: the events it reports, the
//! counters it keeps, and where and how to crash ([`CrashPoint`]: the [`Tear`] of the last
//! unsynced write, the files kept whole or [`Pages`] by page).

use std::path::Path;

/// What happens to the last unsynced write when [`SimFs::crash`](super::SimFs::crash) simulates
/// a power loss.
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
    /// Calls to `read_at`.
    pub reads: u64,
    /// Bytes read.
    pub bytes_read: u64,
}

/// A file system event, as [`SimFs::set_capture`](super::SimFs::set_capture) reports it.
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
    /// A file or directory renamed (about to be).
    Rename,
    /// A file or an empty directory removed (about to be).
    Remove,
}

/// How [`SimFs::set_capture`](super::SimFs::set_capture) crashes at an event.
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
/// update of its own), and each [`WRITE_BACK_PAGE_SIZE`](crate::WRITE_BACK_PAGE_SIZE)-byte page
/// inside it that differs from the synced content holds the synced bytes or the live ones, each
/// page on its own coin. Nothing is torn inside a page, and no length arises that no `set_len`
/// or write set.
#[derive(Debug, Clone, Copy)]
pub struct Pages {
    /// Which files, by a live or a durable name.
    pub files: fn(&Path) -> bool,
    /// Seeds the coins (splitmix64), so that an image is reproducible.
    pub seed: u64,
}

/// The capture hook of [`SimFs::set_capture`](super::SimFs::set_capture).
pub type CaptureFn = dyn FnMut(u64, SimEvent) -> Option<CrashPoint> + Send;

/// The installed capture hook, if any.
#[derive(Default)]
pub(super) struct Capture(pub(super) Option<Box<CaptureFn>>);

impl std::fmt::Debug for Capture {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Capture(on)"
        } else {
            "Capture(off)"
        })
    }
}

/// The hook of [`SimFs::set_sync_hook`](super::SimFs::set_sync_hook).
pub type SyncHook = dyn Fn() + Send + Sync;

/// Where the state keeps the sync hook (a `Debug` that says only whether one is set).
#[derive(Default, Clone)]
pub(super) struct SyncHookSlot(pub(super) Option<std::sync::Arc<SyncHook>>);

impl std::fmt::Debug for SyncHookSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "SyncHook(on)"
        } else {
            "SyncHook(off)"
        })
    }
}
