//! Where an index's bytes live: a real file mapped shared ([`Backing::Mapped`], the default and
//! the only production path), or anonymous memory whose content is loaded from, and written back
//! to, an [`IndexStore`] ([`Backing::Stored`]), so that a simulated file system (this crate's
//! `sim::SimFs`) can hold index files too and a simulated power loss reaches them.
//! `seglog-mmap-index` implements both on top of these definitions.
//!
//! # The write-back model of a stored index
//! The anonymous memory plays the shared mapping, and the store's file plays the page cache
//! behind it, as the real path has them: the file's length changes only by an explicit
//! [`IndexStore::set_len`] (the real path's `ftruncate` at create, resize, trim and close), and
//! content reaches the file only as page writes ([`IndexStore::write_pages`]: each
//! [`WRITE_BACK_PAGE_SIZE`]-byte page that differs from the file is written on its own, inside the file's
//! length, as the kernel writes back a mapping's dirty pages). Pages are written back at these
//! points:
//! - `flush` (Kafka's `msync`): written back, then [`IndexStore::sync`]ed: durable;
//! - `resize`, `trim_to_valid_size`, `reset` and `close` (the latter synced, as the real
//!   `close` syncs the file): written back around the length change;
//! - dropping an index that was not closed (a process that exits without closing leaves its
//!   dirty pages to the kernel): written back, not synced.
//!
//! So after a simulated power loss an index holds its last synced content, or, for a crash that
//! keeps unsynced writes, a later length and any mix of later written-back pages: torn at page
//! granularity at most, never to a length the real path does not set. A real kernel can also
//! write back a dirty page between those points; the model does not produce that earlier state
//! (an index is derived data that recovery rebuilds, and the page it would write holds the same
//! bytes a later write-back writes).
#![forbid(unsafe_code)]

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// The granularity of a stored index's write-back: a page, as the kernel writes back a mapping.
pub const WRITE_BACK_PAGE_SIZE: usize = 4096;

/// The file operations a [`Backing::Stored`] index needs, by path. Implemented by a simulated
/// file system; errors are reported with the index's path and the operation's name.
pub trait IndexStore: Send + Sync + fmt::Debug + 'static {
    /// The file's whole content, or `None` when no file has that name.
    fn load(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;

    /// Creates the file with `len` zero bytes; fails with `AlreadyExists` if it exists.
    fn create(&self, path: &Path, len: u64) -> io::Result<()>;

    /// Writes back the pages of `bytes` (the mapping's content from byte 0) that differ from the
    /// file: one write per differing [`WRITE_BACK_PAGE_SIZE`]-byte page, never past the file's length (a
    /// mapping cannot reach past the end of its file), without syncing. The length is unchanged.
    fn write_pages(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;

    /// Sets the file's length (`ftruncate`: zeros when it grows), without syncing; no change when
    /// it is already `len`.
    fn set_len(&self, path: &Path, len: u64) -> io::Result<()>;

    /// Makes the file's content durable (`fdatasync`).
    fn sync(&self, path: &Path) -> io::Result<()>;

    /// Renames the file, replacing `to`.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes the file; `Ok(false)` when it did not exist.
    fn remove(&self, path: &Path) -> io::Result<bool>;

    /// Whether a file has that name.
    fn exists(&self, path: &Path) -> bool;
}

/// Where an index's bytes live. See the module documentation.
#[derive(Clone, Debug, Default)]
pub enum Backing {
    /// The real file at the index's path, memory-mapped shared.
    #[default]
    Mapped,
    /// Anonymous memory loaded from and written back to a store.
    Stored(Arc<dyn IndexStore>),
}

impl Backing {
    /// The store, for a stored backing.
    pub fn store(&self) -> Option<&Arc<dyn IndexStore>> {
        match self {
            Self::Mapped => None,
            Self::Stored(store) => Some(store),
        }
    }
}
