//! The lock on a log directory's `.lock` file: an `flock`, which excludes other seglog
//! processes and handles, and a POSIX record lock (`fcntl(F_SETLK)`) on the whole file, which
//! is what a Kafka broker takes there (Java's `FileChannel.tryLock`), so that seglog and a live
//! broker exclude each other both ways.
//!
//! A POSIX record lock belongs to the process and is released when the process closes *any*
//! descriptor of the file. So this process never opens a `.lock` it already holds: a
//! process-wide table of held files (device and inode, looked up by `stat` before any open)
//! refuses the second attempt before it can open, and close, the file.

use std::fs;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::Mutex;

use rustix::fs::FlockOperation;

/// An exclusive lock on a file or a directory, released when dropped: an `flock`, and on a
/// log directory's `.lock` file also the POSIX record lock a Kafka broker takes (this module's
/// doc).
#[derive(Debug)]
pub struct RealLock {
    _file: fs::File,
    /// The (device, inode) of a `.lock` file held with a POSIX lock.
    pub(crate) held: Option<(u64, u64)>,
}

impl RealLock {
    pub(crate) fn new(file: fs::File) -> Self {
        Self {
            _file: file,
            held: None,
        }
    }

    pub(crate) fn held(file: fs::File, key: (u64, u64)) -> Self {
        Self {
            _file: file,
            held: Some(key),
        }
    }
}

impl Drop for RealLock {
    fn drop(&mut self) {
        if let Some(key) = self.held {
            release(key);
        }
    }
}

/// The `.lock` files this process holds, as (device, inode).
static HELD: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

fn held() -> std::sync::MutexGuard<'static, Vec<(u64, u64)>> {
    HELD.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn would_block(path: &Path, by: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::WouldBlock,
        format!("{} is locked by {by}", path.display()),
    )
}

/// Creates `path` if needed and takes both locks, without waiting: the open file, and its
/// (device, inode) to [`release`] when the lock is dropped.
pub(crate) fn lock_file(path: &Path) -> io::Result<(fs::File, (u64, u64))> {
    let mut table = held();
    if let Ok(meta) = fs::metadata(path)
        && table.contains(&(meta.dev(), meta.ino()))
    {
        return Err(would_block(path, "this process (another handle)"));
    }
    let file = fs::File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)?;
    let key = {
        let meta = file.metadata()?;
        (meta.dev(), meta.ino())
    };
    match rustix::fs::flock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        Err(e) if e == rustix::io::Errno::WOULDBLOCK => {
            return Err(would_block(path, "another process or handle"));
        }
        Err(e) => return Err(e.into()),
    }
    match rustix::fs::fcntl_lock(&file, FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => {}
        // EAGAIN or EACCES, as POSIX allows either.
        Err(e) if e == rustix::io::Errno::AGAIN || e == rustix::io::Errno::ACCESS => {
            return Err(would_block(
                path,
                "another process with a POSIX lock on it (a running Kafka broker locks its log directory this way)",
            ));
        }
        Err(e) => return Err(e.into()),
    }
    table.push(key);
    Ok((file, key))
}

/// Forgets a held `.lock` (its `RealLock` is being dropped; the descriptor closes next).
pub(crate) fn release(key: (u64, u64)) {
    held().retain(|k| *k != key);
}
