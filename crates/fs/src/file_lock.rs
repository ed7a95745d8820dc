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

use crate::real::RealLock;

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

/// Creates `path` if needed and takes both locks, without waiting.
pub(crate) fn lock_file(path: &Path) -> io::Result<RealLock> {
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
    Ok(RealLock::held(file, key))
}

/// Forgets a held `.lock` (its `RealLock` is being dropped; the descriptor closes next).
pub(crate) fn release(key: (u64, u64)) {
    held().retain(|k| *k != key);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_in_this_process_is_refused_before_it_opens_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(".lock");
        let first = lock_file(&path).unwrap();
        let again = lock_file(&path).unwrap_err();
        assert_eq!(again.kind(), io::ErrorKind::WouldBlock);
        assert!(again.to_string().contains("this process"), "{again}");
        // Through a symlink too: the table is keyed by the file, not the name.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert_eq!(
            lock_file(&link).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        drop(first);
        let second = lock_file(&link).unwrap();
        drop(second);
        let m = fs::metadata(&path).unwrap();
        assert!(!held().contains(&(m.dev(), m.ino())), "released on drop");
    }
}
