//! The `.log`'s read mapping: created on the first read, grown by `append`, shrunk before every
//! cut of the file, unmapped by `close` and `delete` (the rules are in the parent's documentation).

use std::os::fd::BorrowedFd;
use std::path::PathBuf;

use seglog_fs::{File, FileSystem};
use seglog_mmap_index::MappedFile;

use super::LogSegment;
use crate::error::{Error, Result};
use crate::scan::MappedLog;

impl<F: FileSystem> LogSegment<F> {
    /// The `.log`'s mapping, created on first use on a real file system; `None` on `SimFs`, after
    /// a failed `mmap`, and once closed or deleted before any read.
    fn mapped(&self) -> Option<&MappedFile> {
        if let Some(mapped) = self.mapped.get() {
            let map = mapped.as_ref()?;
            if map.is_evicted()
                && let Some(file) = self.log.map_fd()
            {
                // The budget took the mapping away: map it again (ahead of the published
                // length). A failure leaves it unmapped, and this read uses `pread`.
                let _ = map.remap(file);
            }
            return Some(map);
        }
        let file = self.log.map_fd()?;
        // Under the writer's lock: the size cannot change (appends, truncations and recovery
        // hold it) between reading it and publishing it as the mapping's length.
        let _w = self.writer.lock();
        self.mapped
            .get_or_init(|| MappedFile::open_in(file, self.size(), self.budget.as_ref()).ok())
            .as_ref()
    }

    /// What reads of the `.log` go through: the mapping when there is one, else `pread`.
    #[inline]
    pub(super) fn source(&self) -> MappedLog<'_, F::File> {
        MappedLog {
            file: &self.log,
            map: self.mapped(),
        }
    }

    /// The mapping if one was created (never creates one). Writer's lock held by the caller.
    pub(super) fn existing_mapping(&self) -> Option<(&MappedFile, BorrowedFd<'_>)> {
        let map = self.mapped.get()?.as_ref()?;
        Some((map, self.log.map_fd()?))
    }

    /// Whether this thread holds a loan of the `.log`'s bytes: it is inside a closure of
    /// [`with_region`](Self::with_region) on this segment that got the mapped bytes. A
    /// truncation, recovery, close or delete from there is refused ([`Error::LoanHeld`]).
    pub fn is_lent_by_this_thread(&self) -> bool {
        self.mapped
            .get()
            .and_then(Option::as_ref)
            .is_some_and(MappedFile::is_lent_by_this_thread)
    }

    /// [`Error::LoanHeld`] for `op` when this thread holds a loan of the `.log`'s bytes: `op`
    /// would wait for every loan to end, this thread's own caller included. Callers check this
    /// before changing anything, so a refused operation leaves the segment as it was.
    pub fn check_not_lent(&self, op: &'static str) -> Result<()> {
        if self.is_lent_by_this_thread() {
            return Err(self.loan_held(op));
        }
        Ok(())
    }

    fn loan_held(&self, op: &'static str) -> Error {
        Error::LoanHeld {
            path: PathBuf::clone(&self.path()),
            op,
        }
    }

    /// Called with the writer's lock held before any `set_len(len)` of the `.log`: lowers the
    /// mapping's published length and waits until no reader can touch a byte at or past `len`.
    /// Refused (for `op`) when this thread holds a loan of the `.log` and `len` cuts below the
    /// published length; callers that may cut check [`check_not_lent`](Self::check_not_lent)
    /// before changing anything, so this is their last line, not their check.
    pub(super) fn shrink_mapping(&self, len: u64, op: &'static str) -> Result<()> {
        if let Some((map, file)) = self.existing_mapping() {
            match map.shrink_to(file, len) {
                Ok(()) => {}
                Err(seglog_mmap_index::Error::LoanHeld) => return Err(self.loan_held(op)),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Called with the writer's lock held by `close` and `delete`: unmaps (waiting for reads
    /// inside), and makes sure no later read maps the file again. Refused (for `op`) when this
    /// thread holds a loan of the `.log` (see [`shrink_mapping`](Self::shrink_mapping)).
    pub(super) fn close_mapping(&self, op: &'static str) -> Result<()> {
        if let Some(map) = self.mapped.get_or_init(|| None) {
            match map.close() {
                Ok(()) => {}
                Err(seglog_mmap_index::Error::LoanHeld) => return Err(self.loan_held(op)),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }
}
