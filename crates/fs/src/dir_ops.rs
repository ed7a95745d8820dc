//! Directory operations of the real file system that partition locking and listing need: a
//! `flock` on a directory's own descriptor, symlink resolution, and a listing that gives each
//! entry's kind from `readdir` (`d_type`) without a `stat`.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::file_lock::RealLock;

/// One entry of a directory listing, with whether it is a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's path: the listed directory joined with its name.
    pub path: PathBuf,
    /// Whether it is a directory (or a symlink to one).
    pub is_dir: bool,
}

/// `flock(LOCK_EX | LOCK_NB)` on the directory's descriptor: the lock belongs to the
/// directory's inode, so no other path to it, and no file deleted inside it, escapes it.
pub(crate) fn lock_dir(dir: &Path) -> io::Result<RealLock> {
    let file = fs::File::open(dir)?;
    if !file.metadata()?.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("{} is not a directory", dir.display()),
        ));
    }
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(RealLock::new(file)),
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => Err(io::Error::new(
            io::ErrorKind::WouldBlock,
            format!("{} is locked by another process or handle", dir.display()),
        )),
        Err(e) => Err(e.into()),
    }
}

/// The listing with each entry's kind; a symlink, or a file system that gives no `d_type`,
/// costs one `stat` of that entry.
pub(crate) fn read_dir_kinds(dir: &Path) -> io::Result<Vec<DirEntry>> {
    let mut entries = Vec::new();
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let path = entry.path();
        let is_dir = if kind.is_symlink() {
            path.is_dir()
        } else {
            kind.is_dir()
        };
        entries.push(DirEntry { path, is_dir });
    }
    // Byte order, as `RealFs::read_dir` sorts.
    entries.sort_unstable_by(|a, b| a.path.as_os_str().cmp(b.path.as_os_str()));
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FileSystem, OpenMode, RealFs};

    #[test]
    fn a_directory_lock_holds_through_every_path_and_a_file_lock_is_separate() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("t-0");
        RealFs.create_dir_all(&dir).unwrap();
        let link = root.path().join("link-0");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        let held = RealFs.try_lock_dir(&dir).unwrap();
        for path in [&dir, &link, &root.path().join("t-0/.")] {
            let err = RealFs.try_lock_dir(path).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::WouldBlock, "{}", path.display());
        }
        // Nothing was added to the directory.
        assert!(RealFs.read_dir(&dir).unwrap().is_empty());
        drop(held);
        let again = RealFs.try_lock_dir(&link).unwrap();
        drop(again);
        drop(RealFs.open(&dir.join("f"), OpenMode::CreateNew).unwrap());
        let err = RealFs.try_lock_dir(&dir.join("f")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotADirectory);
    }

    #[test]
    fn listing_kinds_follow_symlinks_and_canonicalize_resolves_them() {
        let root = tempfile::tempdir().unwrap();
        let real = root.path().join("real");
        RealFs.create_dir_all(&real.join("sub.log")).unwrap();
        drop(
            RealFs
                .open(&real.join("a.log"), OpenMode::CreateNew)
                .unwrap(),
        );
        std::os::unix::fs::symlink(real.join("sub.log"), real.join("link")).unwrap();
        let kinds: Vec<(String, bool)> = RealFs
            .read_dir_kinds(&real)
            .unwrap()
            .into_iter()
            .map(|e| {
                (
                    e.path.file_name().unwrap().to_string_lossy().into_owned(),
                    e.is_dir,
                )
            })
            .collect();
        assert_eq!(
            kinds,
            [
                ("a.log".to_owned(), false),
                ("link".to_owned(), true),
                ("sub.log".to_owned(), true)
            ]
        );
        let canonical_root = RealFs.canonicalize(root.path()).unwrap();
        assert_eq!(
            RealFs.canonicalize(&real.join("link")).unwrap(),
            canonical_root.join("real/sub.log")
        );
    }
}
