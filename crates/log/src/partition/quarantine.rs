//! The quarantine of a partition: where recovery puts what it drops instead of deleting it.
//!
//! Layout: `<partition>/seglog-quarantine/<n>/`, one numbered directory per recovery that dropped
//! data. It holds `plan.txt` (the plan, and how to put the data back), the dropped files under
//! their own names (later segments with their indexes, a damaged `.swap`), each cut tail as
//! `<segment>.log.cut-at-<position>` (the bytes from that position to the old end), a cut
//! segment's `.txnindex` as it was (when the cut drops entries of it), the stray entries named
//! like segment files (`123.log`, a directory `00000000000000000000.log`), and `done`
//! once every drop is durable. A recovery killed before `done` leaves its directory unfinished;
//! the next one carries on in it, so a killed and repeated recovery leaves what one uninterrupted
//! recovery leaves.

use std::path::{Path, PathBuf};

use seglog_fs::{File, FileSystem, OpenMode};

use super::recovery_plan::{QUARANTINE_DIR, RecoveryPlan};
use crate::error::{Error, Result};

const PLAN_FILE: &str = "plan.txt";
const DONE_FILE: &str = "done";
const COPY_CHUNK: u64 = 1 << 20;

/// How an operator puts the data back, for `plan.txt` and the command's summary.
pub const RESTORE_HINT: &str = "To put the data back, stop every writer of the partition, then: \
append each <segment>.log.cut-at-<position> file to the end of that segment's .log (which must \
still be <position> bytes long), move the other files back into the partition directory, and \
delete the index files of those segments (the next open rebuilds them). Recovery will cut the \
same damaged bytes again; putting them back is for repairing them by hand. A stray file or \
directory (named like a segment file, but not one) goes back under its own name, where plan.txt \
says it was; recovery would set it aside again.";

/// One recovery's directory in the quarantine.
#[derive(Debug)]
pub(crate) struct Quarantine<F: FileSystem> {
    fs: F,
    partition: PathBuf,
    dir: PathBuf,
}

fn incidents<F: FileSystem>(fs: &F, root: &Path) -> Result<Vec<(u64, PathBuf)>> {
    if !fs.is_dir(root) {
        return Ok(Vec::new());
    }
    let mut found: Vec<(u64, PathBuf)> = fs
        .read_dir(root)
        .map_err(|e| Error::io(root, e))?
        .into_iter()
        .filter_map(|p| {
            let n = p.file_name()?.to_str()?.parse::<u64>().ok()?;
            Some((n, p))
        })
        .collect();
    found.sort();
    Ok(found)
}

fn unfinished<F: FileSystem>(fs: &F, partition: &Path) -> Result<Option<PathBuf>> {
    let root = partition.join(QUARANTINE_DIR);
    Ok(incidents(fs, &root)?
        .pop()
        .map(|(_, dir)| dir)
        .filter(|dir| !fs.exists(&dir.join(DONE_FILE))))
}

fn sync_dir<F: FileSystem>(fs: &F, dir: &Path) -> Result<()> {
    fs.sync_dir(dir).map_err(|e| Error::io(dir, e))
}

/// Writes `bytes` to `path` durably: a temporary file, synced, renamed, the directory synced.
fn write_durably<F: FileSystem>(fs: &F, dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    let tmp = dir.join(format!("{name}.tmp"));
    let file = fs
        .open(&tmp, OpenMode::CreateOrOpen)
        .map_err(|e| Error::io(&tmp, e))?;
    file.set_len(0).map_err(|e| Error::io(&tmp, e))?;
    file.write_all_at(bytes, 0)
        .map_err(|e| Error::io(&tmp, e))?;
    file.sync_data().map_err(|e| Error::io(&tmp, e))?;
    drop(file);
    let path = dir.join(name);
    fs.rename(&tmp, &path).map_err(|e| Error::io(&tmp, e))?;
    sync_dir(fs, dir)
}

/// Deletes the file or directory `path` (a directory with everything in it), for `--discard`. An
/// entry is unlinked first, so a symlink goes alone and its target is never touched. Not durable
/// until the parent directory is synced; one already gone is no error.
pub(crate) fn remove_entry<F: FileSystem>(fs: &F, path: &Path) -> Result<()> {
    match fs.remove_file(path) {
        Ok(()) => return Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(_) if fs.is_dir(path) => {}
        Err(e) => return Err(Error::io(path, e)),
    }
    for entry in fs.read_dir(path).map_err(|e| Error::io(path, e))? {
        remove_entry(fs, &entry)?;
    }
    fs.remove_dir(path).map_err(|e| Error::io(path, e))
}

impl<F: FileSystem> Quarantine<F> {
    /// The directory for `plan`'s drops: the unfinished one a killed recovery left, else a new one
    /// numbered after the last. Its `plan.txt` is written (durably) before anything is moved.
    pub(crate) fn begin(fs: &F, partition: &Path, plan: &RecoveryPlan) -> Result<Self> {
        let root = partition.join(QUARANTINE_DIR);
        let dir = if let Some(dir) = unfinished(fs, partition)? {
            dir
        } else {
            let next = incidents(fs, &root)?.last().map_or(1, |(n, _)| n + 1);
            root.join(next.to_string())
        };
        if !fs.is_dir(&dir) {
            fs.create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            sync_dir(fs, &root)?;
            sync_dir(fs, partition)?;
        }
        if !fs.exists(&dir.join(PLAN_FILE)) {
            let text = format!(
                "What recovery of {} dropped (set aside here, not deleted):\n{plan}\n{RESTORE_HINT}\n",
                partition.display()
            );
            write_durably(fs, &dir, PLAN_FILE, text.as_bytes())?;
        }
        Ok(Self {
            fs: fs.clone(),
            partition: partition.to_path_buf(),
            dir,
        })
    }

    /// A recovery with nothing to drop finishes the directory a killed one left unfinished: that
    /// one got past its last drop, or the plan would drop something again.
    pub(crate) fn finish_unfinished(fs: &F, partition: &Path) -> Result<Option<PathBuf>> {
        let Some(dir) = unfinished(fs, partition)? else {
            return Ok(None);
        };
        write_durably(fs, &dir, DONE_FILE, b"")?;
        Ok(Some(dir))
    }

    /// This recovery's directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Moves `path` (a file or directory of the partition directory) in, by rename, under its own
    /// name. Not durable until [`Quarantine::sync`].
    pub(crate) fn move_in(&self, path: &Path) -> Result<PathBuf> {
        let name = path.file_name().unwrap_or_default();
        let to = self.dir.join(name);
        self.fs.rename(path, &to).map_err(|e| Error::io(path, e))?;
        Ok(to)
    }

    /// Makes the moves durable: this directory first, then the partition directory, so that a
    /// power loss in between leaves a moved file in both places, never in neither.
    pub(crate) fn sync(&self) -> Result<()> {
        sync_dir(&self.fs, &self.dir)?;
        sync_dir(&self.fs, &self.partition)
    }

    /// Copies the bytes of `log` from `position` to its end into `<name>.cut-at-<position>`, and
    /// makes the copy durable (the file, then the directory) before returning: only then may the
    /// caller cut them off.
    pub(crate) fn copy_tail(&self, log: &Path, position: u64) -> Result<PathBuf> {
        let name = log.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        self.copy_from(log, position, &format!("{name}.cut-at-{position}"))
    }

    /// Copies the whole of `path` in under its own name, durably, before the caller rewrites it
    /// (a cut segment's `.txnindex`).
    pub(crate) fn copy_whole(&self, path: &Path) -> Result<PathBuf> {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        self.copy_from(path, 0, name)
    }

    fn copy_from(&self, log: &Path, position: u64, name: &str) -> Result<PathBuf> {
        let to = self.dir.join(name);
        let from = self
            .fs
            .open(log, OpenMode::ReadOnly)
            .map_err(|e| Error::io(log, e))?;
        let size = from.len().map_err(|e| Error::io(log, e))?;
        let out = self
            .fs
            .open(&to, OpenMode::CreateOrOpen)
            .map_err(|e| Error::io(&to, e))?;
        out.set_len(0).map_err(|e| Error::io(&to, e))?;
        let mut buf = Vec::new();
        let mut at = position;
        while at < size {
            let len = usize::try_from((size - at).min(COPY_CHUNK)).unwrap_or(0);
            buf.resize(len, 0);
            from.read_exact_at(&mut buf, at)
                .map_err(|e| Error::io(log, e))?;
            out.write_all_at(&buf, at - position)
                .map_err(|e| Error::io(&to, e))?;
            at += len as u64;
        }
        out.sync_data().map_err(|e| Error::io(&to, e))?;
        sync_dir(&self.fs, &self.dir)?;
        Ok(to)
    }

    /// Marks the directory finished (durably): every drop of its recovery is done.
    pub(crate) fn finish(&self) -> Result<()> {
        write_durably(&self.fs, &self.dir, DONE_FILE, b"")
    }
}
