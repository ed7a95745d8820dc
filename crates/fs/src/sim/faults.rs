//! Errors injected on demand for the calls that change files under a path
//! ([`SimFs::set_path_fault`]): a disk region that fails, as one partition's directory on a
//! failing or read-only mount, while the rest of the file system works.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use super::SimFs;

/// `EIO`, the error a failing disk gives.
pub const EIO: i32 = 5;

/// The injected faults: each path prefix and the OS error its calls fail with.
#[derive(Debug, Default)]
pub(super) struct Faults(BTreeMap<PathBuf, i32>);

impl Faults {
    pub(super) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The error for a change to `path`, if a fault covers it.
    pub(super) fn for_path(&self, path: &Path) -> io::Result<()> {
        match self.0.iter().find(|(under, _)| path.starts_with(under)) {
            Some((_, errno)) => Err(io::Error::from_raw_os_error(*errno)),
            None => Ok(()),
        }
    }
}

impl SimFs {
    /// Makes every call that changes a file or directory at or under `under` fail with the OS
    /// error `errno` ([`EIO`], say), before it changes anything: writes, length changes,
    /// allocations and syncs through open handles, creations, renames (from or to such a path),
    /// removals and directory syncs. Reads, listings and opens of existing files still work.
    /// `None` removes the fault on `under`.
    pub fn set_path_fault(&self, under: &Path, errno: Option<i32>) {
        let mut state = self.state.lock();
        match errno {
            Some(errno) => state.faults.0.insert(under.to_path_buf(), errno),
            None => state.faults.0.remove(under),
        };
    }
}
