//! Opening an index file: create and preallocate, or open an existing file read-write, and map
//! it; open an existing file read-only as a private copy (`pread`, never mapped); or load a
//! stored backing's file into anonymous memory.
#![forbid(unsafe_code)]

use std::io;
use std::os::fd::AsFd;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::IndexFile;
use super::fs::{create_new, load_existing, open_read, open_rw, remove_file};
use crate::budget::MappingBudget;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::map::MmapMemory;
use crate::raw::{Core, Remapper};
use seglog_fs::{Backing, File as _, IndexStore, RealFile};

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
        let created = create_new(path);
        let (file, newly_created) = match created {
            Ok(file) => (file, true),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => (open_rw(path)?, false),
            Err(e) => return Err(Error::io(path, "create", e)),
        };
        if newly_created {
            if (max_index_size as usize) < E::SIZE {
                // Kafka leaves the empty file behind; we do not.
                drop(file);
                let _ = remove_file(path);
                return Err(Error::InvalidMaxIndexSize {
                    file: path.to_path_buf(),
                    max_index_size,
                });
            }
            let length = super::round_down(u64::from(max_index_size), E::SIZE);
            if let Err(e) = file.set_len(length) {
                drop(file);
                let _ = remove_file(path);
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
    /// creating a missing file), its mapping counted against `budget` when one is given. `reset`
    /// on such an index resizes it to zero, as Kafka's `maxIndexSize = -1` does. `read_only` is
    /// Kafka's `writable = false`, for tools: the file is opened `O_RDONLY` and its bytes are
    /// read into private memory (a snapshot: see [`snapshot`]), never mapped, and every operation
    /// that would modify it fails with `ReadOnly`; `budget` does not apply to it.
    pub(crate) fn open_existing(
        backing: &Backing,
        path: &Path,
        base_offset: i64,
        read_only: bool,
        budget: Option<&MappingBudget>,
    ) -> Result<Self> {
        if let Some(store) = backing.store() {
            let bytes = load_existing(store.as_ref(), path)?;
            return Self::from_bytes(backing, path, &bytes, base_offset, 0, false, read_only);
        }
        if read_only {
            let (bytes, length) = snapshot(path, &open_read(path)?)?;
            return Self::from_snapshot(backing, path, &bytes, length, base_offset, 0, false, true);
        }
        Self::map_file(path, &open_rw(path)?, base_offset, 0, false, false, budget)
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
        let length = super::round_down(u64::from(max_index_size), E::SIZE);
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
        let length = bytes.len() as u64;
        Self::from_snapshot(
            backing,
            path,
            bytes,
            length,
            base_offset,
            max_index_size,
            newly_created,
            read_only,
        )
    }

    /// An index of `length` bytes over anonymous memory that starts with `bytes` and holds zeros
    /// after them (the file's hole tail, never touched).
    #[expect(
        clippy::too_many_arguments,
        reason = "the fields of the index, one each"
    )]
    fn from_snapshot(
        backing: &Backing,
        path: &Path,
        bytes: &[u8],
        length: u64,
        base_offset: i64,
        max_index_size: u32,
        newly_created: bool,
        read_only: bool,
    ) -> Result<Self> {
        let len = usize::try_from(length)
            .map_err(|_| Error::io(path, "mmap", io::Error::other("file too large to map")))?;
        let mem = MmapMemory::anonymous_with_len(bytes, len, !read_only)
            .map_err(|e| Error::io(path, "mmap", e))?;
        let entries = if newly_created { 0 } else { len / E::SIZE };
        Ok(Self {
            core: Core::new(mem, entries, base_offset, path.to_path_buf()),
            path: path.to_path_buf(),
            base_offset,
            max_index_size,
            length: len.max(bytes.len()) as u64,
            read_only,
            backing: backing.clone(),
            allocated: Arc::new(AtomicUsize::new(bytes.len())),
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
        // Only the bytes before the file's trailing hole are ever touched through the mapping
        // (a new file is all hole); appends allocate blocks before they write past them.
        let data_end = if newly_created {
            0
        } else {
            file.data_end().map_err(|e| Error::io(path, "lseek", e))?
        };
        let allocated = Arc::new(AtomicUsize::new(usize::try_from(data_end).unwrap_or(0)));
        let mem = map(path, file, length, !read_only, &allocated)?;
        let entries = if newly_created {
            0
        } else {
            usize::try_from(length).unwrap_or(usize::MAX) / E::SIZE
        };
        let writable = !read_only;
        let remap: Option<Remapper<MmapMemory>> = budget.map(|_| -> Remapper<MmapMemory> {
            let allocated = Arc::clone(&allocated);
            Box::new(move |path: &Path, words: usize| {
                let file = if writable {
                    open_rw(path)
                } else {
                    open_read(path)
                }
                .map_err(io::Error::other)?;
                let backed = allocated.load(Ordering::Acquire);
                MmapMemory::map(file.as_fd(), words * 4, writable, backed)
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
            allocated,
        })
    }
}

/// Maps `length` bytes of `file`, of which the first `allocated` have disk blocks.
pub(super) fn map(
    path: &Path,
    file: &RealFile,
    length: u64,
    writable: bool,
    allocated: &AtomicUsize,
) -> Result<MmapMemory> {
    let len = usize::try_from(length)
        .map_err(|_| Error::io(path, "mmap", io::Error::other("file too large to map")))?;
    let backed = allocated.load(Ordering::Acquire);
    MmapMemory::map(file.as_fd(), len, writable, backed).map_err(|e| Error::io(path, "mmap", e))
}

/// A read-only open's copy of the file, read with `pread` (never mapped: another process may
/// shrink, rewrite or delete the file while this one reads it, and a mapped page past a new end
/// of file is a `SIGBUS`): the bytes up to where its data ends (its tail past them is a hole,
/// zeros) and the file's length. A file cut while it is read ends the copy where the read found
/// its end, and that is then its length.
fn snapshot(path: &Path, file: &RealFile) -> Result<(Vec<u8>, u64)> {
    let length = file.len().map_err(|e| Error::io(path, "stat", e))?;
    let data_end = file
        .data_end()
        .map_err(|e| Error::io(path, "lseek", e))?
        .min(length);
    let mut bytes = vec![0_u8; usize::try_from(data_end).unwrap_or(0)];
    let mut filled = 0;
    while let Some(rest) = bytes.get_mut(filled..).filter(|rest| !rest.is_empty()) {
        match file.read_at(rest, filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(Error::io(path, "read", e)),
        }
    }
    if filled < bytes.len() {
        bytes.truncate(filled);
        return Ok((bytes, filled as u64));
    }
    Ok((bytes, length))
}
