//! The real file system: `std::fs` with positioned I/O, and `rustix` for `sendfile`
//! and directory fsync.

use std::fs;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::{File, FileSystem, OpenMode, allocate_by_rewriting, copy_range_buffered};
use crate::file_lock::RealLock;

/// The real file system.
#[derive(Debug, Clone, Copy, Default)]
pub struct RealFs;

/// An open real file.
#[derive(Debug)]
pub struct RealFile {
    file: fs::File,
}

impl RealFile {
    /// The underlying `std::fs::File`.
    pub fn as_std(&self) -> &fs::File {
        &self.file
    }
}

/// The descriptor, for `seglog-mmap-index` to map the file (see [`File::map_fd`]).
impl AsFd for RealFile {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }
}

impl FileSystem for RealFs {
    type File = RealFile;
    type Lock = RealLock;

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<RealFile> {
        let mut options = fs::OpenOptions::new();
        options.read(true);
        match mode {
            OpenMode::CreateNew => options.write(true).create_new(true),
            OpenMode::CreateOrOpen => options.write(true).create(true),
            OpenMode::Existing => options.write(true),
            OpenMode::ReadOnly => &mut options,
        };
        Ok(RealFile {
            file: options.open(path)?,
        })
    }

    fn exists(&self, path: &Path) -> bool {
        path.exists()
    }

    fn file_len(&self, path: &Path) -> io::Result<u64> {
        let meta = fs::metadata(path)?;
        if meta.is_dir() {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "a directory, not a file",
            ));
        }
        Ok(meta.len())
    }

    fn is_dir(&self, path: &Path) -> bool {
        path.is_dir()
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        fs::rename(from, to)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        fs::remove_file(path)
    }

    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        fs::remove_dir(dir)
    }

    fn read_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let mut entries = fs::read_dir(dir)?
            .map(|entry| entry.map(|e| e.path()))
            .collect::<io::Result<Vec<_>>>()?;
        // Every entry is `dir` joined with one name, so their bytes order them as their paths
        // order: a byte comparison, where `Path`'s own compares parsed components, which took a
        // third of opening a 10,000-segment partition.
        entries.sort_unstable_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
        Ok(entries)
    }

    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        fs::create_dir_all(dir)
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        fs::File::open(dir)?.sync_all()
    }

    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let modified = fs::metadata(path)?.modified()?;
        let since_epoch = modified.duration_since(UNIX_EPOCH).unwrap_or_default();
        Ok(i64::try_from(since_epoch.as_millis()).unwrap_or(i64::MAX))
    }

    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let millis = u64::try_from(ms).unwrap_or(0);
        let time = UNIX_EPOCH + Duration::from_millis(millis);
        fs::File::options()
            .write(true)
            .open(path)?
            .set_modified(time.max(SystemTime::UNIX_EPOCH))
    }

    fn try_lock(&self, path: &Path) -> io::Result<RealLock> {
        let (file, key) = crate::file_lock::lock_file(path)?;
        Ok(RealLock::held(file, key))
    }

    fn try_lock_dir(&self, dir: &Path) -> io::Result<RealLock> {
        crate::dir_ops::lock_dir(dir)
    }

    fn canonicalize(&self, path: &Path) -> io::Result<PathBuf> {
        fs::canonicalize(path)
    }

    fn read_dir_kinds(&self, dir: &Path) -> io::Result<Vec<crate::DirEntry>> {
        crate::dir_ops::read_dir_kinds(dir)
    }
}

impl File for RealFile {
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize> {
        self.file.read_at(buf, position)
    }

    fn write_all_at(&self, buf: &[u8], position: u64) -> io::Result<()> {
        self.file.write_all_at(buf, position)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.file.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.file.set_len(len)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.file.sync_data()
    }

    fn allocate(&self, offset: u64, len: u64) -> io::Result<()> {
        let keep_size = rustix::fs::FallocateFlags::KEEP_SIZE;
        loop {
            match rustix::fs::fallocate(&self.file, keep_size, offset, len) {
                Ok(()) => return Ok(()),
                Err(rustix::io::Errno::INTR) => {}
                // No `fallocate` here (NFSv3, some FUSE file systems): write the bytes instead,
                // never skip, so that a full disk is still an error and not a later `SIGBUS`.
                Err(rustix::io::Errno::OPNOTSUPP | rustix::io::Errno::NOSYS) => {
                    return allocate_by_rewriting(self, offset, len);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }

    /// Walks the data regions with `SEEK_DATA`/`SEEK_HOLE`; a file system without them reports
    /// the whole file as data (`SEEK_HOLE` at the end), or refuses, and then the length is the
    /// answer. At most 64 regions are walked: past that the rest counts as data.
    fn data_end(&self) -> io::Result<u64> {
        use rustix::fs::{SeekFrom, seek};
        let len = self.len()?;
        let mut end = 0;
        let mut position = 0;
        for _ in 0..64 {
            let data = match seek(&self.file, SeekFrom::Data(position)) {
                Ok(data) => data,
                Err(rustix::io::Errno::NXIO) => return Ok(end),
                Err(_) => return Ok(len),
            };
            let Ok(hole) = seek(&self.file, SeekFrom::Hole(data)) else {
                return Ok(len);
            };
            end = hole.min(len);
            if hole >= len {
                return Ok(end);
            }
            position = hole;
        }
        Ok(len)
    }

    fn map_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.file.as_fd())
    }

    fn copy_range_to(&self, position: u64, len: u64, out: BorrowedFd<'_>) -> io::Result<u64> {
        // sendfile takes any output (sockets, pipes, regular files) and stops at the end of this
        // file, so a fetch costs one call: no length check first, and no copy_file_range tried
        // first (it fails on every socket and pipe, and a us between two fetches costs a
        // wake-up of the reader: docs/perf/consume.md section 5).
        let end = position.saturating_add(len);
        let mut offset = position;
        while offset < end {
            let chunk = usize::try_from(end - offset)
                .unwrap_or(usize::MAX)
                .min(1 << 30);
            match rustix::fs::sendfile(out, self.file.as_fd(), Some(&mut offset), chunk) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e == rustix::io::Errno::INTR => {}
                Err(
                    rustix::io::Errno::INVAL
                    | rustix::io::Errno::NOSYS
                    | rustix::io::Errno::OPNOTSUPP
                    | rustix::io::Errno::BADF,
                ) if offset == position => {
                    // sendfile does not apply to this output (one opened with O_APPEND, say).
                    return copy_range_buffered(self, position, len, out);
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(offset - position)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn blocks(file: &RealFile) -> u64 {
        file.as_std().metadata().unwrap().blocks()
    }

    #[test]
    fn allocate_gives_a_sparse_range_blocks_and_keeps_length_and_content() {
        let dir = tempfile::tempdir().unwrap();
        let file = RealFs
            .open(&dir.path().join("f"), OpenMode::CreateNew)
            .unwrap();
        file.set_len(1 << 20).unwrap();
        file.write_all_at(b"entries", 0).unwrap();
        let before = blocks(&file);
        assert!(file.data_end().unwrap() < 1 << 20, "the tail is a hole");
        file.allocate(4096, 64 * 1024).unwrap();
        assert!(
            blocks(&file) >= before + 128,
            "64 KiB is 128 blocks of 512 bytes"
        );
        assert_eq!(file.len().unwrap(), 1 << 20);
        let mut head = [0; 7];
        file.read_exact_at(&mut head, 0).unwrap();
        assert_eq!(&head, b"entries");
    }

    #[test]
    fn the_fallback_rewrites_the_range_inside_the_file_only() {
        let dir = tempfile::tempdir().unwrap();
        let file = RealFs
            .open(&dir.path().join("f"), OpenMode::CreateNew)
            .unwrap();
        file.set_len(256 * 1024).unwrap();
        file.write_all_at(b"kept", 8192).unwrap();
        let before = blocks(&file);
        // The range reaches past the end: only the bytes inside the file are written.
        allocate_by_rewriting(&file, 4096, 1 << 20).unwrap();
        assert_eq!(file.len().unwrap(), 256 * 1024);
        assert!(blocks(&file) >= before + 2 * (256 - 12));
        assert_eq!(file.data_end().unwrap(), 256 * 1024);
        let mut kept = [0; 4];
        file.read_exact_at(&mut kept, 8192).unwrap();
        assert_eq!(&kept, b"kept");
    }

    #[test]
    fn data_end_is_the_length_of_a_file_without_holes() {
        let dir = tempfile::tempdir().unwrap();
        let file = RealFs
            .open(&dir.path().join("f"), OpenMode::CreateNew)
            .unwrap();
        assert_eq!(file.data_end().unwrap(), 0);
        file.write_all_at(&[7; 10_000], 0).unwrap();
        assert_eq!(file.data_end().unwrap(), 10_000);
        file.set_len(1 << 20).unwrap();
        let end = file.data_end().unwrap();
        assert!((10_000..1 << 20).contains(&end), "{end}");
    }

    #[test]
    fn directories_are_renamed_with_their_files_and_removed_only_when_empty() {
        let root = tempfile::tempdir().unwrap();
        let (p, q) = (root.path().join("p"), root.path().join("q"));
        RealFs.create_dir_all(&p).unwrap();
        let file = RealFs.open(&p.join("a"), OpenMode::CreateNew).unwrap();
        file.write_all_at(b"aaa", 0).unwrap();
        assert!(RealFs.is_dir(&p) && !RealFs.is_dir(&p.join("a")));
        RealFs.rename(&p, &q).unwrap();
        RealFs.sync_dir(root.path()).unwrap();
        assert!(!RealFs.exists(&p));
        assert_eq!(RealFs.read_dir(&q).unwrap(), vec![q.join("a")]);
        assert_eq!(
            RealFs.remove_dir(&q).unwrap_err().kind(),
            io::ErrorKind::DirectoryNotEmpty
        );
        RealFs.remove_file(&q.join("a")).unwrap();
        RealFs.remove_dir(&q).unwrap();
        assert!(!RealFs.exists(&q));
    }

    #[test]
    fn a_second_lock_file_in_this_process_is_refused_before_it_opens_the_file() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let first = RealFs.try_lock(&path).unwrap();
        let again = RealFs.try_lock(&path).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::WouldBlock);
        assert!(again.to_string().contains("this process"), "{again}");
        // Through a symlink too: the table is keyed by the file, not the name.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(
            RealFs.try_lock(&link).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        drop(first);
        let second = RealFs.try_lock(&link).unwrap();
        let m = fs::metadata(&path).unwrap();
        assert_eq!(second.held, Some((m.dev(), m.ino())));
        drop(second);
        assert!(RealFs.try_lock(&path).is_ok(), "released on drop");
    }
}
