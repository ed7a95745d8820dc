//! Producer snapshot files on disk: Kafka's names (`<20-digit offset>.snapshot`), listing,
//! reading and writing through the seam.

use std::path::{Path, PathBuf};

use seglog_fs::{File, FileSystem, OpenMode};
use seglog_segment::naming;

use super::entry::ProducerStateEntry;
use super::snapshot_format;
use crate::error::{Error, Result};

/// Kafka's `LogFileUtils.PRODUCER_SNAPSHOT_FILE_SUFFIX`.
pub const SNAPSHOT_SUFFIX: &str = ".snapshot";

/// The snapshot file of `offset` in `dir` (Kafka's `producerSnapshotFile`).
#[must_use]
pub fn snapshot_path(dir: &Path, offset: i64) -> PathBuf {
    dir.join(format!("{offset:020}{SNAPSHOT_SUFFIX}"))
}

/// A snapshot file and the offset its name says (Kafka's `SnapshotFile`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotFile {
    /// The offset: the snapshot holds the state of every batch below it.
    pub offset: i64,
    /// The file.
    pub path: PathBuf,
}

/// The offset a snapshot's name gives: what precedes its first `.` (Kafka's `offsetFromFile`).
fn offset_from_name(path: &Path) -> Option<i64> {
    let name = naming::file_name(path);
    name.split('.').next()?.parse().ok()
}

/// The snapshot files of `dir` (regular files named `*.snapshot`), by offset (Kafka's
/// `listSnapshotFiles`). A missing directory has none.
///
/// # Errors
///
/// The directory cannot be listed, or a `*.snapshot` file's name does not start with an offset
/// (Kafka's loader throws on it as well).
pub fn list_snapshot_files<F: FileSystem>(fs: &F, dir: &Path) -> Result<Vec<SnapshotFile>> {
    if !fs.is_dir(dir) {
        return Ok(Vec::new());
    }
    let entries = fs.read_dir_kinds(dir).map_err(|e| Error::io(dir, e))?;
    let mut out = Vec::new();
    for entry in entries {
        let is_snapshot = naming::file_name(&entry.path).ends_with(SNAPSHOT_SUFFIX);
        if entry.is_dir || !is_snapshot {
            continue;
        }
        let offset = offset_from_name(&entry.path).ok_or_else(|| Error::CorruptSnapshot {
            path: entry.path.clone(),
            position: 0,
            message: "the file name does not start with an offset".to_owned(),
        })?;
        out.push(SnapshotFile {
            offset,
            path: entry.path,
        });
    }
    out.sort_by_key(|s| s.offset);
    Ok(out)
}

/// The entries of the snapshot file at `path` (Kafka's `readSnapshot`).
///
/// # Errors
///
/// [`Error::Io`] if it cannot be read; [`Error::CorruptSnapshot`] with Kafka's message and the
/// byte position if Kafka would refuse it.
pub fn read_snapshot<F: FileSystem>(fs: &F, path: &Path) -> Result<Vec<ProducerStateEntry>> {
    let io = |e| Error::io(path, e);
    let file = fs.open(path, OpenMode::ReadOnly).map_err(io)?;
    let len = usize::try_from(file.len().map_err(io)?).unwrap_or(usize::MAX);
    let mut bytes = vec![0; len];
    file.read_exact_at(&mut bytes, 0).map_err(io)?;
    snapshot_format::decode(&bytes).map_err(|c| Error::CorruptSnapshot {
        path: path.to_path_buf(),
        position: c.position,
        message: c.message,
    })
}

/// Writes `entries` to `path` as Kafka's `writeSnapshot` does, but atomically: the bytes go to
/// `<path>.tmp`, which is renamed over `path`; with `sync` the file is fsynced before the rename
/// and the directory after it (Kafka fsyncs when `sync` and writes in place).
///
/// # Errors
///
/// [`Error::Io`] naming the file.
pub fn write_snapshot<'a, F: FileSystem>(
    fs: &F,
    path: &Path,
    entries: impl ExactSizeIterator<Item = &'a ProducerStateEntry>,
    sync: bool,
) -> Result<()> {
    let bytes = snapshot_format::encode(entries);
    let mut tmp = path.to_path_buf().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let io = |e| Error::io(&tmp, e);
    // A temp file left by a crash is garbage: it was never renamed into place.
    let _ = fs.remove_file(&tmp);
    let file = fs.open(&tmp, OpenMode::CreateNew).map_err(io)?;
    file.write_all_at(&bytes, 0).map_err(io)?;
    if sync {
        file.sync_data().map_err(io)?;
    }
    drop(file);
    fs.rename(&tmp, path).map_err(|e| Error::io(path, e))?;
    if sync {
        flush_dir(fs, path)?;
    }
    Ok(())
}

/// Makes a snapshot written with `sync == false` durable (Kafka's `flushProducerStateSnapshot`).
///
/// # Errors
///
/// [`Error::Io`] naming the file.
pub fn flush_snapshot<F: FileSystem>(fs: &F, path: &Path) -> Result<()> {
    let file = fs
        .open(path, OpenMode::Existing)
        .map_err(|e| Error::io(path, e))?;
    file.sync_data().map_err(|e| Error::io(path, e))?;
    flush_dir(fs, path)
}

fn flush_dir<F: FileSystem>(fs: &F, path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) => fs.sync_dir(dir).map_err(|e| Error::io(dir, e)),
        None => Ok(()),
    }
}

/// Deletes a snapshot file if it is there (Kafka's `SnapshotFile.deleteIfExists`).
///
/// # Errors
///
/// [`Error::Io`] for a failure other than the file being gone.
pub fn delete_if_exists<F: FileSystem>(fs: &F, path: &Path) -> Result<()> {
    match fs.remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(Error::io(path, e)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kafkas() {
        assert_eq!(
            snapshot_path(Path::new("/d"), 42),
            PathBuf::from("/d/00000000000000000042.snapshot")
        );
        assert_eq!(
            offset_from_name(Path::new("/d/00000000000000000042.snapshot")),
            Some(42)
        );
        assert_eq!(offset_from_name(Path::new("/d/x.snapshot")), None);
    }
}
