//! Where an index's bytes live: a real file mapped shared ([`Backing::Mapped`], the default and
//! the only production path), or anonymous memory whose content is loaded from, and written back
//! to, an [`IndexStore`] ([`Backing::Stored`]), so that a simulated file system (the segment
//! crate's `SimFs`) can hold index files too and a simulated power loss reaches them.
//!
//! # The write-back model of a stored index
//! The anonymous memory plays the page cache. Its content reaches the store only at these
//! points, each one a whole-file write ([`IndexStore::store`]):
//! - `flush` (Kafka's `msync`): written back, then [`IndexStore::sync`]ed: durable;
//! - `resize`, `trim_to_valid_size`, `reset` and `close` (which change the file length, as
//!   `ftruncate` does): written back at the new length, not synced;
//! - dropping an index that was not closed (a process that exits without closing leaves its
//!   dirty pages to the kernel): written back, not synced.
//!
//! So after a simulated power loss an index holds its last synced content, or, when the crash
//! keeps unsynced writes (a torn last write, or a file the crash treats as fully written back),
//! a later written-back content, possibly torn at any byte. A real kernel can do all of that; it
//! can also write back single dirty pages between those points, which this model does not
//! produce (an index is derived data that recovery rebuilds, and the pages it would write are
//! the same bytes a later write-back writes).

use std::fmt;
use std::io;
use std::path::Path;
use std::sync::Arc;

/// The file operations a [`Backing::Stored`] index needs, by path. Implemented by a simulated
/// file system; errors are reported with the index's path and the operation's name.
pub trait IndexStore: Send + Sync + fmt::Debug + 'static {
    /// The file's whole content, or `None` when no file has that name.
    fn load(&self, path: &Path) -> io::Result<Option<Vec<u8>>>;

    /// Creates the file with `len` zero bytes; fails with `AlreadyExists` if it exists.
    fn create(&self, path: &Path, len: u64) -> io::Result<()>;

    /// Makes `bytes` the file's whole content (its length too), without syncing.
    fn store(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;

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
    pub(crate) fn store(&self) -> Option<&Arc<dyn IndexStore>> {
        match self {
            Self::Mapped => None,
            Self::Stored(store) => Some(store),
        }
    }
}
