//! The file side of an index, shared by both index types: create-and-preallocate or open, map,
//! resize with a remap, flush, close (trim, then a deterministic unmap), rename and delete.
//! Kafka's `AbstractIndex`, minus the entry semantics.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::MappingBudget;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::map::{MmapMemory, Unpinned};
use crate::raw::{Core, Gone, Reader, Remapper, View};
use crate::store::{Backing, IndexStore};

/// `factor * (number / factor)`: Kafka's `roundDownToExactMultiple`.
pub(crate) fn round_down(number: u64, factor: usize) -> u64 {
    let factor = factor as u64;
    factor * (number / factor)
}

/// A mapped index file with entries of type `E`.
pub(crate) struct IndexFile<E: Entry> {
    core: Core<E, MmapMemory>,
    path: PathBuf,
    base_offset: i64,
    max_index_size: u32,
    /// The file length as of the last open or resize (Kafka's cached `length`).
    length: u64,
    /// Opened with `open_read_only`: mapped `PROT_READ`, every modification refused.
    read_only: bool,
    /// A real mapped file, or anonymous memory written back to a store.
    backing: Backing,
}

impl<E: Entry> IndexFile<E> {
    /// Kafka's constructor: creates and preallocates a missing file, or opens an existing one and
    /// takes `length / entry_size` entries from it without scanning.
    /// A mapped file's mapping counts against `budget` when one is given (a stored backing's
    /// anonymous memory never does).
    pub(crate) fn open(
        backing: &Backing,
        path: &Path,
        base_offset: i64,
        max_index_size: u32,
        budget: Option<&MappingBudget>,
    ) -> Result<Self> {
        if let Some(store) = backing.store() {
            return Self::open_stored(backing, store, path, base_offset, max_index_size);
        }
        let created = OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(path);
        let (file, newly_created) = match created {
            Ok(file) => (file, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (open_rw(path)?, false),
            Err(e) => return Err(Error::io(path, "create", e)),
        };
        if newly_created {
            if (max_index_size as usize) < E::SIZE {
                // Kafka leaves the empty file behind; we do not.
                drop(file);
                let _ = fs::remove_file(path);
                return Err(Error::InvalidMaxIndexSize {
                    file: path.to_path_buf(),
                    max_index_size,
                });
            }
            let length = round_down(u64::from(max_index_size), E::SIZE);
            if let Err(e) = file.set_len(length) {
                drop(file);
                let _ = fs::remove_file(path);
                return Err(Error::io(path, "set_len", e));
            }
        }
        Self::map_file(
            path,
            &file,
            base_offset,
            max_index_size,
            newly_created,
            false,
            budget,
        )
    }

    /// Opens an existing file only (Kafka's two-argument constructor, minus its side effect of
    /// creating a missing file). `reset` on such an index resizes it to zero, as Kafka's
    /// `maxIndexSize = -1` does.
    pub(crate) fn open_existing(backing: &Backing, path: &Path, base_offset: i64) -> Result<Self> {
        if let Some(store) = backing.store() {
            let bytes = load_existing(store.as_ref(), path)?;
            return Self::from_bytes(backing, path, &bytes, base_offset, 0, false, false);
        }
        let file = open_rw(path)?;
        Self::map_file(path, &file, base_offset, 0, false, false, None)
    }

    /// Opens an existing file read-only (Kafka's `writable = false`), for tools: the file is
    /// opened `O_RDONLY` and mapped `PROT_READ`, and every operation that would modify it fails
    /// with `ReadOnly`.
    pub(crate) fn open_read_only(backing: &Backing, path: &Path, base_offset: i64) -> Result<Self> {
        if let Some(store) = backing.store() {
            let bytes = load_existing(store.as_ref(), path)?;
            return Self::from_bytes(backing, path, &bytes, base_offset, 0, false, true);
        }
        let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        Self::map_file(path, &file, base_offset, 0, false, true, None)
    }

    /// `open` on a stored backing: the same steps, with the store's file.
    fn open_stored(
        backing: &Backing,
        store: &Arc<dyn IndexStore>,
        path: &Path,
        base_offset: i64,
        max_index_size: u32,
    ) -> Result<Self> {
        if let Some(bytes) = store.load(path).map_err(|e| Error::io(path, "open", e))? {
            return Self::from_bytes(
                backing,
                path,
                &bytes,
                base_offset,
                max_index_size,
                false,
                false,
            );
        }
        if (max_index_size as usize) < E::SIZE {
            return Err(Error::InvalidMaxIndexSize {
                file: path.to_path_buf(),
                max_index_size,
            });
        }
        let length = round_down(u64::from(max_index_size), E::SIZE);
        store
            .create(path, length)
            .map_err(|e| Error::io(path, "create", e))?;
        let zeros = vec![0_u8; usize::try_from(length).unwrap_or(0)];
        Self::from_bytes(
            backing,
            path,
            &zeros,
            base_offset,
            max_index_size,
            true,
            false,
        )
    }

    /// An index over anonymous memory holding `bytes` (a stored backing).
    fn from_bytes(
        backing: &Backing,
        path: &Path,
        bytes: &[u8],
        base_offset: i64,
        max_index_size: u32,
        newly_created: bool,
        read_only: bool,
    ) -> Result<Self> {
        let mem =
            MmapMemory::anonymous(bytes, !read_only).map_err(|e| Error::io(path, "mmap", e))?;
        let entries = if newly_created {
            0
        } else {
            bytes.len() / E::SIZE
        };
        Ok(Self {
            core: Core::new(mem, entries, base_offset, path.to_path_buf()),
            path: path.to_path_buf(),
            base_offset,
            max_index_size,
            length: bytes.len() as u64,
            read_only,
            backing: backing.clone(),
        })
    }

    fn map_file(
        path: &Path,
        file: &File,
        base_offset: i64,
        max_index_size: u32,
        newly_created: bool,
        read_only: bool,
        budget: Option<&MappingBudget>,
    ) -> Result<Self> {
        let length = file
            .metadata()
            .map_err(|e| Error::io(path, "stat", e))?
            .len();
        let mem = map(path, file, length, !read_only)?;
        let entries = if newly_created {
            0
        } else {
            usize::try_from(length).unwrap_or(usize::MAX) / E::SIZE
        };
        let writable = !read_only;
        let remap: Option<Remapper<MmapMemory>> = budget.map(|_| -> Remapper<MmapMemory> {
            Box::new(move |path: &Path, words: usize| {
                let file = if writable {
                    open_rw(path)
                } else {
                    File::open(path).map_err(|e| Error::io(path, "open", e))
                }
                .map_err(io::Error::other)?;
                MmapMemory::map(&file, words * 4, writable)
            })
        });
        Ok(Self {
            core: Core::with_budget(mem, entries, base_offset, path.to_path_buf(), remap, budget),
            path: path.to_path_buf(),
            base_offset,
            max_index_size,
            length,
            read_only,
            backing: Backing::Mapped,
        })
    }

    /// The current content, `length` bytes, as a write-back would write it (stored backing).
    fn snapshot(&self) -> Vec<u8> {
        let len = usize::try_from(self.length).unwrap_or(0);
        self.core
            .with_memory(|mem| mem.snapshot(len))
            .unwrap_or_default()
    }

    /// Writes the content back to the store (a stored backing; a no-op for a mapped file).
    fn write_back(&self) -> Result<()> {
        match self.backing.store() {
            Some(store) if !self.read_only && !self.core.is_closed() => store
                .store(&self.path, &self.snapshot())
                .map_err(|e| Error::io(&self.path, "write", e)),
            _ => Ok(()),
        }
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn base_offset(&self) -> i64 {
        self.base_offset
    }

    pub(crate) fn max_index_size(&self) -> u32 {
        self.max_index_size
    }

    pub(crate) fn length(&self) -> u64 {
        self.length
    }

    pub(crate) fn entries(&self) -> usize {
        self.core.entries()
    }

    pub(crate) fn max_entries(&self) -> usize {
        self.core.max_entries()
    }

    pub(crate) fn is_mapped(&self) -> bool {
        !self.core.is_closed()
            && self
                .core
                .with_memory(MmapMemory::is_mapped)
                .unwrap_or(false)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.core.is_closed()
    }

    pub(crate) fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Fails with `Closed` or `ReadOnly` unless the index may be modified.
    #[inline]
    pub(crate) fn check_writable(&self) -> Result<()> {
        if self.core.is_closed() {
            Err(self.closed_error())
        } else if self.read_only {
            Err(Error::ReadOnly {
                file: self.path.clone(),
                kind: E::KIND,
            })
        } else {
            Ok(())
        }
    }

    pub(crate) fn closed_error(&self) -> Error {
        Error::Closed {
            file: self.path.clone(),
            kind: E::KIND,
        }
    }

    /// The error for a view that could not be had.
    pub(crate) fn gone_error(&self, gone: Gone) -> Error {
        gone_error(&self.path, E::KIND, gone)
    }

    pub(crate) fn reader(&self) -> Reader<E, MmapMemory> {
        self.core.reader()
    }

    /// Runs `f` on the writer's view, or fails with `Closed`.
    pub(crate) fn view<R>(&self, f: impl FnOnce(&View<'_, E, MmapMemory>) -> R) -> Result<R> {
        self.core.view(f).map_err(|g| self.gone_error(g))
    }

    /// Kafka's `relativeOffset`.
    #[inline]
    pub(crate) fn relative_offset(&self, offset: i64) -> Result<u32> {
        relative(self.base_offset, offset).ok_or_else(|| Error::OffsetOverflow {
            file: self.path.clone(),
            offset,
        })
    }

    #[inline]
    pub(crate) fn push(&mut self, entry: &E) -> Result<()> {
        let pushed = self.core.push(entry).map_err(|g| self.gone_error(g))?;
        if pushed {
            Ok(())
        } else if self.core.is_closed() || self.read_only {
            self.check_writable()
        } else {
            Err(Error::IndexFull {
                file: self.path.clone(),
                kind: E::KIND,
                entries: self.entries(),
            })
        }
    }

    pub(crate) fn set_entries(&mut self, entries: usize) -> Result<()> {
        self.check_writable()?;
        self.core.set_entries(entries);
        Ok(())
    }

    /// Kafka's `resize`: rounds down, returns false when the length is already right, else
    /// changes the file length and remaps. Growing extends the file before mapping; shrinking
    /// maps the smaller range, waits until the old mapping is unmapped, and only then shrinks
    /// the file, so no live mapping ever extends past the end of the file.
    pub(crate) fn resize(&mut self, new_size: u32) -> Result<bool> {
        self.check_writable()?;
        let rounded = round_down(u64::from(new_size), E::SIZE);
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
            let len = usize::try_from(rounded).unwrap_or(0);
            let mut bytes = self.snapshot();
            bytes.resize(len, 0);
            // The file first (it may run out of space), then the memory, as for a real file.
            store
                .store(&self.path, &bytes)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            let mem = MmapMemory::anonymous(&bytes, true)
                .map_err(|e| Error::io(&self.path, "mmap", e))?;
            self.core.remap(mem, rounded < self.length);
            self.length = rounded;
            return Ok(true);
        }
        let file = open_rw(&self.path)?;
        if rounded > self.length {
            file.set_len(rounded)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            self.length = rounded;
            let mem = map(&self.path, &file, rounded, true)?;
            self.core.remap(mem, false);
        } else {
            let mem = map(&self.path, &file, rounded, true)?;
            self.core.remap(mem, true);
            file.set_len(rounded)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            self.length = rounded;
        }
        Ok(true)
    }

    /// Kafka's `trimToValidSize`.
    pub(crate) fn trim_to_valid_size(&mut self) -> Result<bool> {
        let size = u32::try_from(self.entries() * E::SIZE).unwrap_or(u32::MAX);
        self.resize(size)
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
    /// the new end of file, and the trim is synced (Kafka's is not). Closing twice is a no-op.
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
            store
                .store(&self.path, &bytes)
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
        if self.length != valid {
            let file = open_rw(&self.path)?;
            file.set_len(valid)
                .map_err(|e| Error::io(&self.path, "set_len", e))?;
            // The trim must be durable before anything (a clean-shutdown marker) says the file
            // can be trusted: a power loss would otherwise leave the preallocated zero tail,
            // which Kafka's sanity check does not see and a clean load does not rebuild.
            file.sync_data()
                .map_err(|e| Error::io(&self.path, "fsync", e))?;
            self.length = valid;
        }
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

/// The error for a view that could not be had: closed, or a failed remap after an eviction.
pub(crate) fn gone_error(path: &Path, kind: crate::IndexKind, gone: Gone) -> Error {
    match gone {
        Gone::Closed => Error::Closed {
            file: path.to_path_buf(),
            kind,
        },
        Gone::Remap(e) => Error::io(path, "mmap", e),
    }
}

/// `offset - base` if it fits Kafka's relative-offset range `0..=i32::MAX`.
pub(crate) fn relative(base_offset: i64, offset: i64) -> Option<u32> {
    let relative = offset.checked_sub(base_offset)?;
    if (0..=i64::from(i32::MAX)).contains(&relative) {
        u32::try_from(relative).ok()
    } else {
        None
    }
}

pub(crate) fn open_rw(path: &Path) -> Result<File> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, "open", e))
}

/// Renames an index file of `backing`.
pub(crate) fn rename(backing: &Backing, from: &Path, to: &Path) -> Result<()> {
    match backing.store() {
        Some(store) => store.rename(from, to),
        None => fs::rename(from, to),
    }
    .map_err(|e| Error::io(from, "rename", e))
}

/// Whether an index file of `backing` exists.
pub(crate) fn exists(backing: &Backing, path: &Path) -> bool {
    match backing.store() {
        Some(store) => store.exists(path),
        None => path.exists(),
    }
}

/// Loads an existing stored file; `NotFound` when it is missing.
fn load_existing(store: &dyn IndexStore, path: &Path) -> Result<Vec<u8>> {
    store
        .load(path)
        .map_err(|e| Error::io(path, "open", e))?
        .ok_or_else(|| {
            Error::io(
                path,
                "open",
                io::Error::new(io::ErrorKind::NotFound, "no such file"),
            )
        })
}

pub(crate) fn delete_if_exists(backing: &Backing, path: &Path) -> Result<bool> {
    if let Some(store) = backing.store() {
        return store.remove(path).map_err(|e| Error::io(path, "delete", e));
    }
    match fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, "delete", e)),
    }
}

fn map(path: &Path, file: &File, length: u64, writable: bool) -> Result<MmapMemory> {
    let len = usize::try_from(length)
        .map_err(|_| Error::io(path, "mmap", io::Error::other("file too large to map")))?;
    MmapMemory::map(file, len, writable).map_err(|e| Error::io(path, "mmap", e))
}

impl<E: Entry> Drop for IndexFile<E> {
    /// A stored index that was never closed leaves its content to the store, as a process that
    /// exits leaves its dirty pages to the kernel (not synced). Errors cannot be reported here.
    fn drop(&mut self) {
        let _ = self.write_back();
    }
}
