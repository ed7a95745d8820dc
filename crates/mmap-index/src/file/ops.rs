//! The operations on an open index file that change its mapping or its name: resize, reset,
//! flush, unmap, close (trim, sync), delete and rename.
#![forbid(unsafe_code)]

use std::path::Path;
use std::sync::atomic::Ordering;

use super::IndexFile;
use super::fs::{delete_if_exists, open_rw, rename};
use super::open::map;
use seglog_fs::File as _;

use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::map::{MmapMemory, Unpinned};

impl<E: Entry> IndexFile<E> {
    /// Kafka's `resize`: rounds down, returns false when the length is already right, else
    /// changes the file length and remaps. Growing extends the file before mapping; shrinking
    /// maps the smaller range, waits until the old mapping is unmapped, and only then shrinks
    /// the file, so no live mapping ever extends past the end of the file.
    pub(crate) fn resize(&mut self, new_size: u32) -> Result<bool> {
        self.check_writable()?;
        let rounded = super::round_down(u64::from(new_size), E::SIZE);
        if rounded == self.length {
            return Ok(false);
        }
        let needed = (self.entries() * E::SIZE) as u64;
        if rounded < needed {
            return Err(Error::ResizeBelowEntries {
                file: self.path.clone(),
                kind: E::KIND,
                new_size: rounded,
                entries: self.entries(),
            });
        }
        if let Some(store) = self.backing.store().cloned() {
            // The real path's steps on the store's file: growing sets the length first (it may
            // run out of space) and maps after; shrinking maps the smaller range first and cuts
            // the file after. The dirty pages inside the new length are written back on the way
            // (a kernel may write them at any time); those past it are dropped with the mapping.
            let len = usize::try_from(rounded).unwrap_or(0);
            let mut bytes = self.snapshot();
            bytes.resize(len, 0);
            let growing = rounded > self.length;
            if growing {
                store
                    .set_len(&self.path, rounded)
                    .map_err(|e| Error::io(&self.path, "set_len", e))?;
            }
            store
                .write_pages(&self.path, &bytes)
                .map_err(|e| Error::io(&self.path, "write", e))?;
            let mem = MmapMemory::anonymous(&bytes, true)
                .map_err(|e| Error::io(&self.path, "mmap", e))?;
            self.core.remap(mem, !growing);
            if !growing {
                store
                    .set_len(&self.path, rounded)
                    .map_err(|e| Error::io(&self.path, "set_len", e))?;
            }
            self.length = rounded;
            return Ok(true);
        }
        let file = open_rw(&self.path)?;
        if rounded > self.length {
            // The grown part is a hole: the new mapping views only the bytes allocated so far.
            file.set_len(rounded)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            self.length = rounded;
            let mem = map(&self.path, &file, rounded, true, &self.allocated)?;
            self.core.remap(mem, false);
        } else {
            // The cut frees the blocks past `rounded`: a later growth finds a hole there again.
            let cut = usize::try_from(rounded).unwrap_or(usize::MAX);
            self.allocated.fetch_min(cut, Ordering::AcqRel);
            let mem = map(&self.path, &file, rounded, true, &self.allocated)?;
            self.core.remap(mem, true);
            file.set_len(rounded)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            self.length = rounded;
        }
        Ok(true)
    }

    /// Kafka's `reset`: no entries, and the file back at `max_index_size`.
    pub(crate) fn reset(&mut self) -> Result<bool> {
        self.set_entries(0)?;
        self.resize(self.max_index_size)
    }

    /// `msync` of the mapping.
    pub(crate) fn flush(&self) -> Result<()> {
        if let Some(store) = self.backing.store() {
            if self.core.is_closed() {
                return Err(self.closed_error());
            }
            if self.read_only {
                return Ok(());
            }
            self.write_back()?;
            return store
                .sync(&self.path)
                .map_err(|e| Error::io(&self.path, "msync", e));
        }
        if self.read_only {
            // A private copy of the file (see `open_existing`): nothing to write.
            return if self.core.is_closed() {
                Err(self.closed_error())
            } else {
                Ok(())
            };
        }
        // An index its budget evicted is synced through the file instead (`fdatasync`):
        // unmapping kept its dirty pages in the page cache.
        match self.core.with_memory(MmapMemory::flush) {
            Ok(result) => result.map_err(|e| Error::io(&self.path, "msync", e)),
            Err(Unpinned::Closed) => Err(self.closed_error()),
            Err(Unpinned::Evicted) => open_rw(&self.path)?
                .sync_data()
                .map_err(|e| Error::io(&self.path, "fdatasync", e)),
        }
    }

    /// Kafka's `closeHandler`/`forceUnmap`: unmaps now (after in-flight lookups), no trim.
    pub(crate) fn unmap(&mut self) {
        self.core.close(true);
    }

    /// Kafka's `close`: trim to the valid entries, then unmap. Unlike Kafka we unmap first and
    /// trim after (no mapping is created just to be dropped), we never leave a mapping past
    /// the new end of file, and the file is synced (Kafka's is not). Closing twice is a no-op.
    pub(crate) fn close(&mut self) -> Result<()> {
        if self.core.is_closed() {
            return Ok(());
        }
        let valid = (self.entries() * E::SIZE) as u64;
        if let Some(store) = self.backing.store().cloned() {
            let mut bytes = self.snapshot();
            bytes.truncate(usize::try_from(valid).unwrap_or(0));
            self.core.close(true);
            if self.read_only {
                return Ok(());
            }
            // As on the real path: the dirty pages stay with the file (written back here), the
            // file is trimmed, and then synced.
            store
                .write_pages(&self.path, &bytes)
                .map_err(|e| Error::io(&self.path, "write", e))?;
            store
                .set_len(&self.path, valid)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            store
                .sync(&self.path)
                .map_err(|e| Error::io(&self.path, "fsync", e))?;
            self.length = valid;
            return Ok(());
        }
        self.core.close(true);
        if self.read_only {
            return Ok(());
        }
        let file = open_rw(&self.path)?;
        if self.length != valid {
            file.set_len(valid)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            self.length = valid;
        }
        // The trim and the entries must be durable before anything (a clean-shutdown marker)
        // says the file can be trusted: a power loss would otherwise leave the preallocated zero
        // tail, or entries never written back, which Kafka's sanity check does not see and a
        // clean load does not rebuild. The entries may be dirty even when there is nothing to
        // trim: a recovery rebuilds and trims an index without syncing it.
        file.sync_data()
            .map_err(|e| Error::io(&self.path, "fsync", e))?;
        Ok(())
    }

    /// Kafka's `deleteIfExists`: unmap, then delete; false when there was no file.
    pub(crate) fn delete(&mut self) -> Result<bool> {
        self.core.close(true);
        delete_if_exists(&self.backing, &self.path)
    }

    /// Kafka's `updateParentDir`: the file now lives in `dir` (its directory was renamed);
    /// nothing is touched on disk.
    pub(crate) fn update_parent_dir(&mut self, dir: &Path) {
        if let Some(name) = self.path.file_name() {
            self.path = dir.join(name);
            self.core.meta().path.write().clone_from(&self.path);
        }
    }

    /// Kafka's `renameTo`: renames the file; the new name is taken even when the rename fails,
    /// as Kafka does.
    pub(crate) fn rename(&mut self, to: &Path) -> Result<()> {
        // The shared name's write lock is held across the rename, so that a reader mapping the
        // file again (after an eviction) opens it under one name or the other, never in between.
        let mut shared = self.core.meta().path.write();
        let result = rename(&self.backing, &self.path, to);
        self.path = to.to_path_buf();
        *shared = to.to_path_buf();
        result
    }
}
