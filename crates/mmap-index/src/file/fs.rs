//! The index files' file-system calls, one small helper each, all through the seam: real files
//! through [`RealFs`], or the [`IndexStore`] of a stored backing.
#![forbid(unsafe_code)]

use std::io;
use std::path::Path;

use seglog_fs::{Backing, FileSystem, IndexStore, OpenMode, RealFile, RealFs};

use crate::error::{Error, Result};

/// Creates `path` for reading and writing; fails with `AlreadyExists` when it exists.
pub(super) fn create_new(path: &Path) -> io::Result<RealFile> {
    RealFs.open(path, OpenMode::CreateNew)
}

/// Opens an existing file read-only (`O_RDONLY`).
pub(super) fn open_read(path: &Path) -> Result<RealFile> {
    RealFs
        .open(path, OpenMode::ReadOnly)
        .map_err(|e| Error::io(path, "open", e))
}

/// Removes a real file.
pub(super) fn remove_file(path: &Path) -> io::Result<()> {
    RealFs.remove_file(path)
}

/// Opens an existing file for reading and writing.
pub(crate) fn open_rw(path: &Path) -> Result<RealFile> {
    RealFs
        .open(path, OpenMode::Existing)
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
pub(super) fn load_existing(store: &dyn IndexStore, path: &Path) -> Result<Vec<u8>> {
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

/// Syncs an index file of `backing` that is not mapped here (its pages another mapping dirtied,
/// or this process's before a drop, are in the page cache); false when it does not exist.
pub(crate) fn sync_if_exists(backing: &Backing, path: &Path) -> Result<bool> {
    let synced = match backing.store() {
        Some(store) if !store.exists(path) => return Ok(false),
        Some(store) => store.sync(path),
        None => match RealFs.open(path, OpenMode::Existing) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(e) => Err(e),
            Ok(file) => seglog_fs::File::sync_data(&file),
        },
    };
    synced.map_err(|e| Error::io(path, "fdatasync", e))?;
    Ok(true)
}

pub(crate) fn delete_if_exists(backing: &Backing, path: &Path) -> Result<bool> {
    if let Some(store) = backing.store() {
        return store.remove(path).map_err(|e| Error::io(path, "delete", e));
    }
    match remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, "delete", e)),
    }
}
