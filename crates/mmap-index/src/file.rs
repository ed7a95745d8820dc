//! The file side of an index, shared by both index types: create-and-preallocate or open, map,
//! resize with a remap, flush, close (trim, then a deterministic unmap), rename and delete.
//! Kafka's `AbstractIndex`, minus the entry semantics.

use std::io;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::{Backing, File, FileSystem, IndexStore, OpenMode, RealFile, RealFs};

use crate::MappingBudget;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::map::{MmapMemory, Unpinned};
use crate::raw::{Bound, Core, Gone, Reader, Remapper, View};

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
        let created = RealFs.open(path, OpenMode::CreateNew);
        let (file, newly_created) = match created {
            Ok(file) => (file, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (open_rw(path)?, false),
            Err(e) => return Err(Error::io(path, "create", e)),
        };
        if newly_created {
            if (max_index_size as usize) < E::SIZE {
                // Kafka leaves the empty file behind; we do not.
                drop(file);
                let _ = RealFs.remove_file(path);
                return Err(Error::InvalidMaxIndexSize {
                    file: path.to_path_buf(),
                    max_index_size,
                });
            }
            let length = round_down(u64::from(max_index_size), E::SIZE);
            if let Err(e) = file.set_len(length) {
                drop(file);
                let _ = RealFs.remove_file(path);
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
        let file = open_ro(path)?;
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
        file: &RealFile,
        base_offset: i64,
        max_index_size: u32,
        newly_created: bool,
        read_only: bool,
        budget: Option<&MappingBudget>,
    ) -> Result<Self> {
        let length = file.len().map_err(|e| Error::io(path, "stat", e))?;
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
                    open_ro(path)
                }
                .map_err(io::Error::other)?;
                MmapMemory::map(file.as_fd(), words * 4, writable)
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
                .write_pages(&self.path, &self.snapshot())
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

    /// The last entry, or [`Entry::absent`] when there is none.
    pub(crate) fn last_entry(&self) -> Result<E::Decoded> {
        let base = self.base_offset;
        self.view(|v| last_entry(v, base))
    }

    /// The entry with the largest key at most `target`, or [`Entry::absent`] (Kafka's lookup).
    #[inline]
    pub(crate) fn lookup(&self, target: i64) -> Result<E::Decoded> {
        match self.core.lookup_owned(target) {
            Some(found) => Ok(found),
            None => self.lookup_pinned(target),
        }
    }

    /// [`lookup`](Self::lookup) under a pin (an index under a mapping budget), mapping it again
    /// if it was evicted; or the error of a closed index. Out of line, so that the owned path
    /// inlines.
    #[inline(never)]
    fn lookup_pinned(&self, target: i64) -> Result<E::Decoded> {
        let base = self.base_offset;
        self.view(|v| v.floor(target).unwrap_or_else(|| E::absent(base)))
    }

    /// The `n`th entry, or `EntryOutOfRange`.
    pub(crate) fn entry(&self, n: usize) -> Result<E::Decoded> {
        let base = self.base_offset;
        self.view(|v| v.entry(n).map(|e| e.decode(base)))?
            .ok_or_else(|| Error::EntryOutOfRange {
                file: self.path.clone(),
                kind: E::KIND,
                slot: n,
                entries: self.entries(),
            })
    }

    /// The entry count that `truncate_to(offset)` leaves: Kafka's three cases, searching the
    /// entry's offset field.
    pub(crate) fn entries_below(&self, offset: i64) -> Result<usize> {
        let base = self.base_offset;
        self.view(
            |v| match v.slot_for(offset, E::OFFSET_FIELD, Bound::LargestLower) {
                None => 0,
                Some(slot) if v.entry(slot).is_some_and(|e| e.offset(base) == offset) => slot,
                Some(slot) => slot + 1,
            },
        )
    }

    /// Runs `f` on the writer's view, or fails with `Closed`.
    #[inline]
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

/// The last entry of a view, or [`Entry::absent`].
fn last_entry<E: Entry>(v: &View<'_, E, MmapMemory>, base: i64) -> E::Decoded {
    v.entries()
        .checked_sub(1)
        .and_then(|slot| v.entry(slot))
        .map_or_else(|| E::absent(base), |e| e.decode(base))
}

/// The file side of a read handle: lookups and entries with errors that name the file.
impl<E: Entry> Reader<E, MmapMemory> {
    /// The error for a view that could not be had.
    fn gone(&self, gone: Gone) -> Error {
        gone_error(&self.meta().path.read(), E::KIND, gone)
    }

    /// Runs `f` on a consistent view, with a `Closed` or `Io` error naming the file.
    pub(crate) fn read<R>(&self, f: impl FnOnce(&View<'_, E, MmapMemory>) -> R) -> Result<R> {
        self.view(f).map_err(|g| self.gone(g))
    }

    /// As [`IndexFile::lookup`].
    #[inline]
    pub(crate) fn lookup(&self, target: i64) -> Result<E::Decoded> {
        match self.lookup_mapped(target) {
            Some(found) => Ok(found),
            None => self.lookup_remapped(target),
        }
    }

    /// [`lookup`](Self::lookup) once the index was found evicted or closed: maps it again, or
    /// names the file in the error.
    #[cold]
    #[inline(never)]
    fn lookup_remapped(&self, target: i64) -> Result<E::Decoded> {
        let base = self.meta().base_offset;
        self.read(|v| v.floor(target).unwrap_or_else(|| E::absent(base)))
    }

    /// As [`IndexFile::entry`], out of the entries published so far.
    pub(crate) fn entry(&self, n: usize) -> Result<E::Decoded> {
        let base = self.meta().base_offset;
        let (found, entries) = self.read(|v| (v.entry(n).map(|e| e.decode(base)), v.entries()))?;
        found.ok_or_else(|| Error::EntryOutOfRange {
            file: self.meta().path.read().clone(),
            kind: E::KIND,
            slot: n,
            entries,
        })
    }

    /// The number of entries published so far (clamped to the current mapping).
    pub(crate) fn published_entries(&self) -> Result<usize> {
        self.entries().map_err(|g| self.gone(g))
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

pub(crate) fn open_rw(path: &Path) -> Result<RealFile> {
    RealFs
        .open(path, OpenMode::Existing)
        .map_err(|e| Error::io(path, "open", e))
}

fn open_ro(path: &Path) -> Result<RealFile> {
    RealFs
        .open(path, OpenMode::ReadOnly)
        .map_err(|e| Error::io(path, "open", e))
}

/// Renames an index file of `backing`.
pub(crate) fn rename(backing: &Backing, from: &Path, to: &Path) -> Result<()> {
    match backing.store() {
        Some(store) => store.rename(from, to),
        None => RealFs.rename(from, to),
    }
    .map_err(|e| Error::io(from, "rename", e))
}

/// Whether an index file of `backing` exists.
pub(crate) fn exists(backing: &Backing, path: &Path) -> bool {
    match backing.store() {
        Some(store) => store.exists(path),
        None => RealFs.exists(path),
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
    match RealFs.remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, "delete", e)),
    }
}

fn map(path: &Path, file: &RealFile, length: u64, writable: bool) -> Result<MmapMemory> {
    let len = usize::try_from(length)
        .map_err(|_| Error::io(path, "mmap", io::Error::other("file too large to map")))?;
    MmapMemory::map(file.as_fd(), len, writable).map_err(|e| Error::io(path, "mmap", e))
}

impl<E: Entry> Drop for IndexFile<E> {
    /// A stored index that was never closed leaves its content to the store, as a process that
    /// exits leaves its dirty pages to the kernel (not synced). Errors cannot be reported here.
    fn drop(&mut self) {
        let _ = self.write_back();
    }
}

/// The part of the public API both index types share, written once: the constructors, the
/// file operations (flush, close, unmap, delete, rename), truncation and resize, the accessors,
/// and the read handle's methods. Each body calls the generic [`IndexFile`] (or the read side of
/// [`Reader`]); only the entry type, the names and the docs differ. The index type must have
/// the fields `file: IndexFile<$entry>` and `last: $decoded` (the last entry,
/// re-read after every change of the entries), and its reader the field `inner`.
macro_rules! index_api {
    (
        index: $index:ident,
        reader: $reader:ident,
        entry: $entry:ty,
        decoded: $decoded:ty,
        size: $size:literal,
        key: $key:literal,
        absent: $absent:literal $(,)?
    ) => {
        impl $index {
            /// The size of one entry in bytes.
            pub const ENTRY_SIZE: usize = <$entry as $crate::entry::Entry>::SIZE;

            #[doc = concat!(
                "Opens the index at `path`, as Kafka's constructor does: a missing file is ",
                "created and preallocated to `floor(max_index_size / ", $size, ") * ", $size,
                "` bytes (an error if that is below one entry); an existing file is mapped ",
                "whole and every full slot counts as an entry."
            )]
            pub fn open(
                path: impl AsRef<std::path::Path>,
                base_offset: i64,
                max_index_size: u32,
            ) -> $crate::error::Result<Self> {
                Self::open_with(&::seglog_fs::Backing::Mapped, path, base_offset, max_index_size)
            }

            #[doc = concat!(
                "Opens an existing index and never creates one (a missing file is an `Io` error ",
                "with `NotFound`). Its `max_index_size` is 0, so [`", stringify!($index),
                "::reset`] resizes it to nothing."
            )]
            pub fn open_existing(path: impl AsRef<std::path::Path>, base_offset: i64) -> $crate::error::Result<Self> {
                Self::open_existing_with(&::seglog_fs::Backing::Mapped, path, base_offset)
            }

            /// Opens an existing index read-only (Kafka's `writable = false`, as
            /// `DumpLogSegments` uses): the file is opened `O_RDONLY` and mapped `PROT_READ`, so
            /// it also works on files and filesystems the process may not write. Lookups,
            /// `entry`, `sanity_check` and `verify` work; every operation that would modify the
            /// index fails with `ReadOnly`, and `close` only unmaps.
            pub fn open_read_only(path: impl AsRef<std::path::Path>, base_offset: i64) -> $crate::error::Result<Self> {
                Self::open_read_only_with(&::seglog_fs::Backing::Mapped, path, base_offset)
            }

            #[doc = concat!(
                "[`", stringify!($index), "::open`] on `backing`: a real mapped file, or a file ",
                "of an [`IndexStore`](seglog_fs::IndexStore) held in anonymous memory."
            )]
            pub fn open_with(
                backing: &::seglog_fs::Backing,
                path: impl AsRef<std::path::Path>,
                base_offset: i64,
                max_index_size: u32,
            ) -> $crate::error::Result<Self> {
                Self::open_budgeted(backing, path.as_ref(), base_offset, max_index_size, None)
            }

            #[doc = concat!(
                "As [`", stringify!($index), "::open`], with the mapping counted against ",
                "`budget`, which may unmap it while the index is not in use; the next lookup or ",
                "append maps it again."
            )]
            pub fn open_in(
                path: impl AsRef<std::path::Path>,
                base_offset: i64,
                max_index_size: u32,
                budget: &$crate::MappingBudget,
            ) -> $crate::error::Result<Self> {
                Self::open_budgeted(
                    &::seglog_fs::Backing::Mapped,
                    path.as_ref(),
                    base_offset,
                    max_index_size,
                    Some(budget),
                )
            }

            pub(crate) fn open_budgeted(
                backing: &::seglog_fs::Backing,
                path: &std::path::Path,
                base_offset: i64,
                max_index_size: u32,
                budget: Option<&$crate::MappingBudget>,
            ) -> $crate::error::Result<Self> {
                Self::from_file($crate::file::IndexFile::open(
                    backing,
                    path,
                    base_offset,
                    max_index_size,
                    budget,
                )?)
            }

            #[doc = concat!("[`", stringify!($index), "::open_existing`] on `backing`.")]
            pub fn open_existing_with(
                backing: &::seglog_fs::Backing,
                path: impl AsRef<std::path::Path>,
                base_offset: i64,
            ) -> $crate::error::Result<Self> {
                Self::from_file($crate::file::IndexFile::open_existing(
                    backing,
                    path.as_ref(),
                    base_offset,
                )?)
            }

            #[doc = concat!("[`", stringify!($index), "::open_read_only`] on `backing`.")]
            pub fn open_read_only_with(
                backing: &::seglog_fs::Backing,
                path: impl AsRef<std::path::Path>,
                base_offset: i64,
            ) -> $crate::error::Result<Self> {
                Self::from_file($crate::file::IndexFile::open_read_only(
                    backing,
                    path.as_ref(),
                    base_offset,
                )?)
            }

            fn from_file(file: $crate::file::IndexFile<$entry>) -> $crate::error::Result<Self> {
                let last = file.last_entry()?;
                Ok(Self { file, last })
            }

            #[doc = concat!(
                "Whether the index was opened with [`", stringify!($index), "::open_read_only`]."
            )]
            pub fn is_read_only(&self) -> bool {
                self.file.is_read_only()
            }

            #[doc = concat!(
                "The entry with the largest ", $key, " at most `target`, or ", $absent,
                " when there is none. Kafka's warm-section search."
            )]
            #[inline]
            pub fn lookup(&self, target: i64) -> $crate::error::Result<$decoded> {
                self.file.lookup(target)
            }

            /// The `n`th entry.
            pub fn entry(&self, n: usize) -> $crate::error::Result<$decoded> {
                self.file.entry(n)
            }

            /// Removes every entry whose offset is at least `offset` (Kafka's three cases,
            /// searching the entries' offsets). Truncating past the last entry changes nothing.
            /// The file keeps its length.
            pub fn truncate_to(&mut self, offset: i64) -> $crate::error::Result<()> {
                let entries = self.file.entries_below(offset)?;
                self.truncate_to_entries(entries)
            }

            /// Removes every entry.
            pub fn truncate(&mut self) -> $crate::error::Result<()> {
                self.truncate_to_entries(0)
            }

            fn truncate_to_entries(&mut self, entries: usize) -> $crate::error::Result<()> {
                self.file.set_entries(entries)?;
                self.last = self.file.last_entry()?;
                Ok(())
            }

            /// Removes every entry and resizes the file back to `max_index_size`.
            pub fn reset(&mut self) -> $crate::error::Result<()> {
                self.file.reset()?;
                self.last = self.file.last_entry()?;
                Ok(())
            }

            #[doc = concat!(
                "Resizes the file to `floor(new_size / ", $size, ") * ", $size, "` bytes and ",
                "remaps it; false when that is already its size. Re-reads the last entry, as ",
                "Kafka's `TimeIndex` does. Refuses to cut off entries."
            )]
            pub fn resize(&mut self, new_size: u32) -> $crate::error::Result<bool> {
                let resized = self.file.resize(new_size)?;
                if resized {
                    self.last = self.file.last_entry()?;
                }
                Ok(resized)
            }

            /// Shrinks the file to exactly its entries.
            pub fn trim_to_valid_size(&mut self) -> $crate::error::Result<bool> {
                self.resize(u32::try_from(self.size_in_bytes()).unwrap_or(u32::MAX))
            }

            /// `msync` of the mapping.
            pub fn flush(&self) -> $crate::error::Result<()> {
                self.file.flush()
            }

            /// Trims the file to its entries, unmaps it and syncs it (entries and length),
            /// deterministically: when this returns, the mapping is gone (after any lookup
            /// already inside it finished). Later operations fail with `Closed`; closing again
            /// does nothing.
            pub fn close(&mut self) -> $crate::error::Result<()> {
                self.file.close()
            }

            /// Unmaps without trimming (Kafka's `closeHandler`/`forceUnmap`).
            pub fn unmap(&mut self) {
                self.file.unmap();
            }

            /// Unmaps and deletes the file; false when it did not exist.
            pub fn delete(&mut self) -> $crate::error::Result<bool> {
                self.file.delete()
            }

            /// Renames the file. As in Kafka, the index takes the new name even if the rename
            /// fails.
            pub fn rename(&mut self, to: impl AsRef<std::path::Path>) -> $crate::error::Result<()> {
                self.file.rename(to.as_ref())
            }

            /// Records that the file now lives in `dir` (its directory was renamed); no I/O.
            pub fn update_parent_dir(&mut self, dir: impl AsRef<std::path::Path>) {
                self.file.update_parent_dir(dir.as_ref());
            }

            /// A cheap, cloneable, `Send + Sync` read handle whose lookups take no lock.
            pub fn reader(&self) -> $reader {
                $reader {
                    inner: self.file.reader(),
                }
            }

            /// The number of entries.
            pub fn entries(&self) -> usize {
                self.file.entries()
            }

            /// The number of slots of the current mapping.
            pub fn max_entries(&self) -> usize {
                self.file.max_entries()
            }

            /// Whether `offset` can be stored relative to the base offset.
            pub fn can_append_offset(&self, offset: i64) -> bool {
                $crate::file::relative(self.base_offset(), offset).is_some()
            }

            /// `offset - base_offset` as stored, or `OffsetOverflow`.
            pub fn relative_offset(&self, offset: i64) -> $crate::error::Result<u32> {
                self.file.relative_offset(offset)
            }

            /// The segment's base offset.
            pub fn base_offset(&self) -> i64 {
                self.file.base_offset()
            }

            #[doc = concat!(
                "The maximum size given at open (0 for [`", stringify!($index),
                "::open_existing`])."
            )]
            pub fn max_index_size(&self) -> u32 {
                self.file.max_index_size()
            }

            /// The file length as of the last open or resize.
            pub fn length(&self) -> u64 {
                self.file.length()
            }

            /// The bytes used by entries.
            pub fn size_in_bytes(&self) -> u64 {
                (self.entries() * Self::ENTRY_SIZE) as u64
            }

            /// The file's current name.
            pub fn path(&self) -> &std::path::Path {
                self.file.path()
            }

            /// Whether the file is mapped now (false after close, and for a zero-length file).
            pub fn is_mapped(&self) -> bool {
                self.file.is_mapped()
            }

            /// Whether the index was closed, unmapped or deleted.
            pub fn is_closed(&self) -> bool {
                self.file.is_closed()
            }
        }

        impl std::fmt::Debug for $reader {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($reader))
                    .field("path", &self.path())
                    .finish_non_exhaustive()
            }
        }

        impl $reader {
            /// Whether the index is mapped now: false once closed, and while its mapping budget
            /// has it unmapped (the next lookup maps it again).
            pub fn is_mapped(&self) -> bool {
                self.inner.is_mapped()
            }

            #[doc = concat!("As [`", stringify!($index), "::lookup`].")]
            #[inline]
            pub fn lookup(&self, target: i64) -> $crate::error::Result<$decoded> {
                self.inner.lookup(target)
            }

            #[doc = concat!("As [`", stringify!($index), "::entry`].")]
            pub fn entry(&self, n: usize) -> $crate::error::Result<$decoded> {
                self.inner.entry(n)
            }

            /// The number of entries published so far.
            pub fn entries(&self) -> $crate::error::Result<usize> {
                self.inner.published_entries()
            }

            /// The segment's base offset.
            pub fn base_offset(&self) -> i64 {
                self.inner.meta().base_offset
            }

            /// The file's current name.
            pub fn path(&self) -> std::path::PathBuf {
                self.inner.meta().path.read().clone()
            }
        }
    };
}

pub(crate) use index_api;
