//! The `.txnindex` file as Kafka 4.4's `TransactionIndex` holds it: a handle opened at
//! construction only if the file exists, else on the first write (creating the file), and the
//! channel's position, which is where appends go and where reads stop. No preallocation, no
//! mapping: plain positioned reads and writes through the seam.
//!
//! Unlike Kafka's, the handle holds a descriptor only while a write or cut may be unsynced: a
//! flush syncs and closes it, and a read of a synced file opens it for that read alone. So a
//! log of many segments with `.txnindex` files holds no descriptor per segment for them (the
//! `.log`'s are capped by the descriptor cache), and an open-file limit is never the bound.

use std::io;
use std::path::{Path, PathBuf};

use seglog_fs::{File, FileSystem, OpenMode};

use crate::error::{Error, Result};

/// The file and its open handle, if any.
#[derive(Debug)]
pub(super) struct TxnFile<F: FileSystem> {
    fs: F,
    path: PathBuf,
    read_only: bool,
    /// `None` until the file is opened, and again after `close`.
    handle: Option<Handle<F::File>>,
}

#[derive(Debug)]
struct Handle<H> {
    /// Open while a write or cut may be unsynced (and after a read-only open's first write
    /// attempt); `None` otherwise: a read opens the file for itself.
    file: Option<H>,
    /// Java's channel position: the file's length when opened, moved by writes and cuts.
    position: u64,
    /// Whether a write or a cut may not have been synced yet.
    unsynced: bool,
    /// The file was there at open and may hold bytes an earlier process wrote and never synced
    /// (an unclean stop, a recovery): the first flush syncs it, as Kafka's, whose channel is
    /// open from construction, does. Unlike `unsynced` it keeps no descriptor open.
    inherited: bool,
}

impl<F: FileSystem> TxnFile<F> {
    /// Opens `path` if it exists (read-write, or read-only for an inspecting reader); `exists`
    /// says so when the caller knows (from a listing), else the file system is asked.
    pub(super) fn open(
        fs: F,
        path: PathBuf,
        read_only: bool,
        exists: Option<bool>,
    ) -> Result<Self> {
        let mut this = Self {
            fs,
            path,
            read_only,
            handle: None,
        };
        if exists.unwrap_or_else(|| this.fs.exists(&this.path)) {
            let mode = if read_only {
                OpenMode::ReadOnly
            } else {
                OpenMode::Existing
            };
            match this.open_handle(mode) {
                // Only the position is kept: reads open the file when they need it.
                Ok(()) => {
                    if let Some(h) = this.handle.as_mut() {
                        h.inherited = !read_only;
                    }
                    this.close_descriptor();
                }
                // Gone between the look and the open: as if it had never been there.
                Err(Error::Io { source, .. }) if source.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        Ok(this)
    }

    fn open_handle(&mut self, mode: OpenMode) -> Result<()> {
        let file = self
            .fs
            .open(&self.path, mode)
            .map_err(|e| Error::io(&self.path, "open", e))?;
        let position = file.len().map_err(|e| Error::io(&self.path, "stat", e))?;
        self.handle = Some(Handle {
            file: Some(file),
            position,
            unsynced: false,
            inherited: false,
        });
        Ok(())
    }

    fn mode(&self) -> OpenMode {
        if self.read_only {
            OpenMode::ReadOnly
        } else {
            OpenMode::Existing
        }
    }

    /// The handle's file, opened again (by path) if it holds no descriptor now.
    fn open_file(fs: &F, path: &Path, mode: OpenMode, h: &mut Handle<F::File>) -> Result<()> {
        if h.file.is_none() {
            let file = fs
                .open(path, mode)
                .map_err(|e| Error::io(path, "open", e))?;
            h.file = Some(file);
        }
        Ok(())
    }

    /// Drops the descriptor (keeping the position) unless a change may be unsynced.
    fn close_descriptor(&mut self) {
        if let Some(h) = self.handle.as_mut()
            && !h.unsynced
        {
            h.file = None;
        }
    }

    /// What [`TxnFile::read_exact`] reads through: the open descriptor, or the file opened for
    /// this reader alone. `None` with no handle.
    pub(super) fn reader(&self) -> Option<Result<TxnReader<'_, F::File>>> {
        let h = self.handle.as_ref()?;
        Some(match &h.file {
            Some(file) => Ok(TxnReader::Open(file)),
            None => self
                .fs
                .open(&self.path, OpenMode::ReadOnly)
                .map(TxnReader::Owned)
                .map_err(|e| Error::io(&self.path, "open", e)),
        })
    }

    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Where reads stop (Java's `channel.position()`), or `None` with no open handle, when
    /// Kafka's iterator yields nothing.
    pub(super) fn end(&self) -> Option<u64> {
        self.handle.as_ref().map(|h| h.position)
    }

    /// Whether a write or cut since the last [`TxnFile::flush`] may be unsynced.
    pub(super) fn is_unsynced(&self) -> bool {
        self.handle.as_ref().is_some_and(|h| h.unsynced)
    }

    /// Writes `bytes` at the position and moves it on, opening (creating) the file first if it
    /// has no handle (Kafka's `channel()`).
    pub(super) fn write(&mut self, bytes: &[u8]) -> Result<()> {
        if self.handle.is_none() {
            let mode = if self.read_only {
                OpenMode::ReadOnly
            } else {
                OpenMode::CreateOrOpen
            };
            self.open_handle(mode)?;
        }
        let mode = self.mode();
        let Some(h) = self.handle.as_mut() else {
            return Ok(());
        };
        Self::open_file(&self.fs, &self.path, mode, h)?;
        h.unsynced = true;
        let Some(file) = h.file.as_ref() else {
            return Ok(());
        };
        file.write_all_at(bytes, h.position)
            .map_err(|e| Error::io(&self.path, "write", e))?;
        h.position += bytes.len() as u64;
        Ok(())
    }

    /// Java's `FileChannel.truncate(size)`: cuts the file if it is longer (never extends it) and
    /// pulls the position back to `size` if it was past it. Nothing without a handle.
    pub(super) fn truncate(&mut self, size: u64) -> Result<()> {
        let mode = self.mode();
        let Some(h) = self.handle.as_mut() else {
            return Ok(());
        };
        // Without a descriptor the file was synced and ends at the position (writes and cuts
        // move both): nothing to cut unless `size` is below it.
        if h.file.is_some() || size < h.position {
            Self::open_file(&self.fs, &self.path, mode, h)?;
        }
        if let Some(file) = h.file.as_ref() {
            let len = file.len().map_err(|e| Error::io(&self.path, "stat", e))?;
            if size < len {
                h.unsynced = true;
                file.set_len(size)
                    .map_err(|e| Error::io(&self.path, "truncate", e))?;
            }
        }
        h.position = h.position.min(size);
        Ok(())
    }

    /// Kafka's `flush` (`force(true)`), if the file is open and a write, a cut or an earlier
    /// process may have left it unsynced; then its descriptor is closed.
    pub(super) fn flush(&mut self) -> Result<()> {
        let mode = self.mode();
        if let Some(h) = self.handle.as_mut()
            && (h.unsynced || h.inherited)
        {
            Self::open_file(&self.fs, &self.path, mode, h)?;
            if let Some(file) = h.file.as_ref() {
                file.sync_data()
                    .map_err(|e| Error::io(&self.path, "fsync", e))?;
            }
            h.unsynced = false;
            h.inherited = false;
        }
        self.close_descriptor();
        Ok(())
    }

    /// Kafka's `close`: drops the handle. A later write opens the file again.
    pub(super) fn close(&mut self) {
        self.handle = None;
    }

    /// Kafka's `deleteIfExists`: closes, then deletes; whether there was a file.
    pub(super) fn delete_if_exists(&mut self) -> Result<bool> {
        self.close();
        match self.fs.remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::io(&self.path, "delete", e)),
        }
    }

    /// Kafka's `renameTo`: moves the file if it exists (the open handle follows it); the new
    /// name is taken even if the move fails, as Kafka's `finally` does.
    pub(super) fn rename_to(&mut self, to: &Path) -> Result<()> {
        let result = if self.fs.exists(&self.path) {
            self.fs
                .rename(&self.path, to)
                .map_err(|e| Error::io(&self.path, "rename", e))
        } else {
            Ok(())
        };
        self.path = to.to_path_buf();
        result
    }

    /// Kafka's `updateParentDir`: the same file name in `dir` (after the directory was moved).
    pub(super) fn update_parent_dir(&mut self, dir: &Path) {
        if let Some(name) = self.path.file_name() {
            self.path = dir.join(name);
        }
    }
}

/// A `.txnindex` open for reading: the handle's own descriptor, or one opened for the reader.
#[derive(Debug)]
pub(super) enum TxnReader<'a, H> {
    Open(&'a H),
    Owned(H),
}

impl<H: File> TxnReader<'_, H> {
    /// Fills `buf` from `position` (Kafka's `Utils.readFully`, which fails at the end of file).
    pub(super) fn read_exact(&self, path: &Path, buf: &mut [u8], position: u64) -> Result<()> {
        let file = match self {
            Self::Open(file) => file,
            Self::Owned(file) => file,
        };
        file.read_exact_at(buf, position)
            .map_err(|e| Error::io(path, "read", e))
    }
}
