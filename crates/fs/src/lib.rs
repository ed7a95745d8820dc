//! # seglog-fs
//!
//! The I/O seam: every file and directory operation of seglog's libraries goes through
//! [`FileSystem`] and [`File`], after raft-engine's `env` and lsm-tree's `fs`. It is the bottom
//! crate of the workspace: `seglog-mmap-index` and `seglog-segment` build on it.
//!
//! ```
//! use seglog_fs::{File, FileSystem, OpenMode, RealFs};
//!
//! # fn main() -> std::io::Result<()> {
//! let dir = tempfile::tempdir()?;
//! let fs = RealFs;
//! let path = dir.path().join("00000000000000000000.log");
//! let file = fs.open(&path, OpenMode::CreateNew)?;
//! file.write_all_at(b"record batches", 0)?; // positioned: no seek, no shared cursor
//! file.sync_data()?;
//! fs.sync_dir(dir.path())?; // the new name is durable once its directory is synced
//! let mut back = [0; 7];
//! file.read_exact_at(&mut back, 7)?;
//! assert_eq!(&back, b"batches");
//! assert_eq!(fs.read_dir(dir.path())?, [path]);
//! # Ok(())
//! # }
//! ```
//!
//! Unix only: it builds on `rustix` (positioned I/O, `flock`, `fallocate`, file descriptors for
//! mmap), and so does every seglog crate above it (`seglog-record-format` alone is portable).
//!
//! There are two implementations:
//! - [`RealFs`], the real files, a zero-cost pass-through to `std::fs` with positioned reads and writes;
//! - `sim::SimFs` (behind the `sim` feature, for tests), an in-memory file system that keeps a
//!   *live* and a *durable* image of every file and directory, so a test can simulate a power loss
//!   that drops every write not yet synced and tears the last write at any byte, and can inject
//!   `ENOSPC` or running out of file descriptors.
//!
//! The seam is generic (static dispatch), so the real path pays no virtual call.
//! Index files are opened, renamed and deleted through [`FileSystem::index_backing`]: on [`RealFs`]
//! the mmap-index crate maps the real files (their bytes never pass through this seam); on
//! `SimFs` they are files of the simulated file system ([`IndexStore`]), held in anonymous memory
//! and written back at flush, resize, trim and close, so a simulated crash reaches them too.
//! Reads of a real `.log` may bypass it too: [`File::map_fd`], the seam's one hook for
//! memory-mapping, hands the descriptor of a real file to map read-only, an optional accelerator
//! that `SimFs` does not offer.
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")
)]

#[cfg(not(unix))]
compile_error!("seglog-fs (and every seglog crate above it) is Unix-only");

mod dir_ops;
mod file_lock;
mod limits;
mod real;
#[cfg(any(test, feature = "sim"))]
pub mod sim;
mod store;

use std::fmt;
use std::io;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};

pub use dir_ops::DirEntry;
pub use file_lock::RealLock;
pub use limits::{MAX_MAP_COUNT_PATH, ProcessLimits, process_limits};
pub use real::{RealFile, RealFs};
pub use store::{Backing, IndexStore, WRITE_BACK_PAGE_SIZE};

/// How [`FileSystem::open`] treats an existing or missing file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create the file; fail with `AlreadyExists` if it exists. Read and write.
    CreateNew,
    /// Open the file, creating it if it is missing. Read and write.
    CreateOrOpen,
    /// Open an existing file for reading and writing; fail with `NotFound` if it is missing.
    Existing,
    /// Open an existing file for reading only.
    ReadOnly,
}

/// A file system: the namespace operations the segment and log layers need.
pub trait FileSystem: Clone + Send + Sync + fmt::Debug + 'static {
    /// The open-file handle type.
    type File: File;

    /// An exclusive advisory lock, released when dropped.
    type Lock: Send + Sync + fmt::Debug + 'static;

    /// Opens `path` as `mode` says.
    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<Self::File>;

    /// Whether `path` names an existing file or directory.
    fn exists(&self, path: &Path) -> bool;

    /// The length of the file `path` names, without keeping it open (`RealFs`: one `statx`).
    fn file_len(&self, path: &Path) -> io::Result<u64> {
        self.open(path, OpenMode::ReadOnly)?.len()
    }

    /// Whether `path` names an existing directory.
    fn is_dir(&self, path: &Path) -> bool;

    /// Renames the file or directory `from` to `to`, replacing `to` if it is a file (or, for a
    /// directory, an empty directory). A directory moves with everything inside it. Durable once
    /// the parent directories of both names are synced; a crash before that leaves the old name.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// Removes a file. Durable once the parent directory is synced.
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// Removes an empty directory; fails when it holds anything. Durable once the parent
    /// directory is synced.
    fn remove_dir(&self, dir: &Path) -> io::Result<()>;

    /// Lists the entries (files and directories) directly inside `dir`, sorted by path.
    fn read_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>>;

    /// Creates `dir` and its missing parents.
    fn create_dir_all(&self, dir: &Path) -> io::Result<()>;

    /// Makes the directory's entries (creations, renames, removals) durable.
    fn sync_dir(&self, dir: &Path) -> io::Result<()>;

    /// The file's last modification time in milliseconds since the Unix epoch.
    fn modified_ms(&self, path: &Path) -> io::Result<i64>;

    /// Sets the file's modification time, in milliseconds since the Unix epoch.
    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()>;

    /// Takes an exclusive advisory lock on `path` (created if missing) without waiting. Fails with
    /// `WouldBlock` when another holder (another process, or another handle in this one) has it.
    /// On the real file system it is both an `flock` and the POSIX record lock a Kafka broker
    /// takes on its log directory's `.lock`, so that the two exclude each other.
    fn try_lock(&self, path: &Path) -> io::Result<Self::Lock>;

    /// Takes an exclusive advisory lock on the existing directory `dir` itself, without waiting
    /// and without adding a file to it: whatever path, symlink or hard link reaches the
    /// directory, a second lock fails with `WouldBlock`. The default locks `dir`'s path with
    /// [`FileSystem::try_lock`], which suits a file system whose lock needs no file.
    fn try_lock_dir(&self, dir: &Path) -> io::Result<Self::Lock> {
        self.try_lock(dir)
    }

    /// The absolute path of `path` with every symlink resolved; `path` must exist. The default
    /// returns it unchanged (a file system without symlinks).
    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        Ok(path.to_path_buf())
    }

    /// Lists `dir` as [`FileSystem::read_dir`] does, saying of each entry whether it is a
    /// directory (a symlink counts as what it points to). The default asks
    /// [`FileSystem::is_dir`] of each entry; the real file system reads the kind from the
    /// directory listing itself, with no `stat` per entry.
    fn read_dir_kinds(&self, dir: &Path) -> io::Result<Vec<DirEntry>> {
        Ok(self
            .read_dir(dir)?
            .into_iter()
            .map(|path| DirEntry {
                is_dir: self.is_dir(&path),
                path,
            })
            .collect())
    }

    /// Where the indexes of segments on this file system keep their bytes: real files mapped
    /// shared (the default), or, for a simulated file system, files of that file system held in
    /// anonymous memory and written back at flush, resize, trim and close.
    fn index_backing(&self) -> Backing {
        Backing::Mapped
    }
}

/// An open file, addressed by position: no shared cursor, so readers on other threads need no lock.
pub trait File: Send + Sync + fmt::Debug + 'static {
    /// Reads up to `buf.len()` bytes at `position`; returns how many were read (0 at or past the end).
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize>;

    /// Writes all of `buf` at `position`, extending the file if needed.
    fn write_all_at(&self, buf: &[u8], position: u64) -> io::Result<()>;

    /// The file's current length in bytes.
    fn len(&self) -> io::Result<u64>;

    /// Whether the file is empty.
    fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Truncates or extends (with zeros) the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;

    /// Makes the file's data (and its length) durable, like `fdatasync`.
    fn sync_data(&self) -> io::Result<()>;

    /// Gives the bytes `offset..offset + len` (clamped to the file's length) disk blocks, without
    /// changing the file's length or content, so that a later write of them (through a shared
    /// mapping too, where a missing block is a `SIGBUS`) cannot fail for lack of space: that
    /// failure is this call's `ENOSPC`. The default reads the bytes and writes them back, which
    /// allocates on every file system; real files use `fallocate` (keeping the size), and fall
    /// back to that where the file system has no `fallocate`.
    fn allocate(&self, offset: u64, len: u64) -> io::Result<()> {
        allocate_by_rewriting(self, offset, len)
    }

    /// Where the file's last data ends: every byte from there to the end of the file is a hole
    /// (it reads as zeros and has no disk block). The default, the file's length, treats every
    /// byte as data.
    fn data_end(&self) -> io::Result<u64> {
        self.len()
    }

    /// Reads exactly `buf.len()` bytes at `position`, or fails with `UnexpectedEof`.
    fn read_exact_at(&self, mut buf: &mut [u8], mut position: u64) -> io::Result<()> {
        while !buf.is_empty() {
            match self.read_at(buf, position) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        format!("read past the end of the file at byte {position}"),
                    ));
                }
                Ok(n) => {
                    buf = buf.get_mut(n..).unwrap_or_default();
                    position += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The seam's one hook for memory-mapping: the descriptor of the real file behind this
    /// handle, if it can be mapped. The segment then maps the `.log` for reads (lazily, on the
    /// first read) through `seglog-mmap-index`. `None`, the default, keeps every read a positioned
    /// read through this trait, as on the simulated file system.
    fn map_fd(&self) -> Option<BorrowedFd<'_>> {
        None
    }

    /// Copies `len` bytes starting at `position` to the file or socket `out`, at `out`'s current
    /// position. Real files do it without passing the bytes through user space (`sendfile`,
    /// falling back to a buffer for an output it refuses); the default reads into a buffer and
    /// writes it out.
    /// Returns the bytes copied, which is less than `len` only at the end of this file.
    fn copy_range_to(&self, position: u64, len: u64, out: BorrowedFd<'_>) -> io::Result<u64> {
        copy_range_buffered(self, position, len, out)
    }
}

/// The portable path of [`File::allocate`]: reads the range (inside the file) and writes the
/// same bytes back, 64 KiB at a time; writing a hole's zeros gives it blocks.
pub(crate) fn allocate_by_rewriting<F: File + ?Sized>(
    file: &F,
    offset: u64,
    len: u64,
) -> io::Result<()> {
    const CHUNK: u64 = 64 * 1024;
    let end = offset.saturating_add(len).min(file.len()?);
    let mut buf = vec![0_u8; usize::try_from(len.clamp(1, CHUNK)).unwrap_or(1)];
    let mut position = offset;
    while position < end {
        let want = usize::try_from((end - position).min(CHUNK)).unwrap_or(buf.len());
        let chunk = buf.get_mut(..want).unwrap_or_default();
        file.read_exact_at(chunk, position)?;
        file.write_all_at(chunk, position)?;
        position += want as u64;
    }
    Ok(())
}

/// The portable path of [`File::copy_range_to`]: read into a buffer, write it out.
pub(crate) fn copy_range_buffered<F: File + ?Sized>(
    file: &F,
    mut position: u64,
    len: u64,
    out: BorrowedFd<'_>,
) -> io::Result<u64> {
    const CHUNK: u64 = 64 * 1024;
    let mut buf = vec![0_u8; usize::try_from(len.clamp(1, CHUNK)).unwrap_or(1)];
    let end = position.saturating_add(len);
    let mut copied = 0;
    while position < end {
        let want = usize::try_from((end - position).min(CHUNK)).unwrap_or(buf.len());
        let chunk = buf.get_mut(..want).unwrap_or_default();
        let n = file.read_at(chunk, position)?;
        if n == 0 {
            break;
        }
        let mut rest = chunk.get(..n).unwrap_or_default();
        while !rest.is_empty() {
            let written = rustix::io::write(out, rest)?;
            if written == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::WriteZero,
                    "output accepts no more bytes",
                ));
            }
            rest = rest.get(written..).unwrap_or_default();
        }
        position += n as u64;
        copied += n as u64;
    }
    Ok(copied)
}
