//! The `.log`'s read mapping: created on the first read, grown by `append`, shrunk before every
//! cut of the file, unmapped by `close` and `delete` (the rules are in the parent's documentation).

use std::cell::OnceCell;
use std::path::PathBuf;
use std::sync::Arc;

use seglog_fs::{File, FileSystem};
use seglog_mmap_index::MappedFile;

use super::LogSegment;
use crate::error::{Error, Result};
use crate::scan::ReadSource;

impl<F: FileSystem> LogSegment<F> {
    /// The `.log`'s mapping, created on first use on a real file system; `None` on `SimFs`, after
    /// a failed `mmap`, and once closed or deleted before any read.
    fn mapped(&self) -> Option<&MappedFile> {
        if let Some(mapped) = self.mapped.get() {
            let map = mapped.as_ref()?;
            if map.is_evicted()
                && let Ok(log) = self.log()
                && let Some(file) = log.map_fd()
            {
                // The budget took the mapping away: map it again (ahead of the published
                // length). A failure leaves it unmapped, and this read uses `pread`.
                let _ = map.remap(file);
            }
            return Some(map);
        }
        // The descriptor is needed only to map: the mapping holds the file by itself, so the
        // descriptor cache may close the `.log` afterwards and reads still need no system call.
        let log = self.log().ok()?;
        let file = log.map_fd()?;
        // Under the writer's lock: the size cannot change (appends, truncations and recovery
        // hold it) between reading it and publishing it as the mapping's length.
        let _w = self.writer.lock();
        self.mapped
            .get_or_init(|| MappedFile::open_in(file, self.size(), self.budget.as_ref()).ok())
            .as_ref()
    }

    /// What reads of the `.log` go through: the mapping when there is one, else `pread` (the
    /// descriptor is taken, and the file opened again if the cache closed it, only then).
    #[inline]
    pub(super) fn source(&self) -> MappedLog<'_, F> {
        MappedLog {
            segment: self,
            file: OnceCell::new(),
            map: self.mapped(),
        }
    }

    /// The mapping if one was created (never creates one). Writer's lock held by the caller.
    pub(super) fn existing_mapping(&self) -> Option<&MappedFile> {
        self.mapped.get()?.as_ref()
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

    /// Called with the writer's lock held before any `set_len(len)` of `log` (this segment's
    /// `.log`): lowers the mapping's published length and waits until no reader can touch a byte
    /// at or past `len` (unmaps instead when `log` cannot be mapped). Refused (for `op`) when this
    /// thread holds a loan of the `.log` and `len` cuts below the published length; callers that
    /// may cut check [`check_not_lent`](Self::check_not_lent) before changing anything, so this
    /// is their last line, not their check.
    pub(super) fn shrink_mapping(&self, log: &F::File, len: u64, op: &'static str) -> Result<()> {
        let Some(map) = self.existing_mapping() else {
            return Ok(());
        };
        let shrunk = match log.map_fd() {
            Some(file) => map.shrink_to(file, len),
            None => map.close(),
        };
        self.loan_refusal(shrunk, op)
    }

    /// Called with the writer's lock held by `close` and `delete`: unmaps (waiting for reads
    /// inside), and makes sure no later read maps the file again. Refused (for `op`) when this
    /// thread holds a loan of the `.log` (see [`shrink_mapping`](Self::shrink_mapping)).
    pub(super) fn close_mapping(&self, op: &'static str) -> Result<()> {
        match self.mapped.get_or_init(|| None) {
            Some(map) => self.loan_refusal(map.close(), op),
            None => Ok(()),
        }
    }

    /// The mapping's answer as this segment's: its refusal for a loan names the `.log`.
    fn loan_refusal(&self, result: seglog_mmap_index::Result<()>, op: &'static str) -> Result<()> {
        match result {
            Ok(()) => Ok(()),
            Err(seglog_mmap_index::Error::LoanHeld) => Err(self.loan_held(op)),
            Err(e) => Err(e.into()),
        }
    }
}

/// A `.log` read through its mapping when there is one: bytes below the mapping's published
/// length come from memory (no system call, no descriptor); anything else (past the mapping
/// while a remap is pending, a closed mapping, no mapping at all on `SimFs`) is a positioned
/// read of the file, whose descriptor is taken on the first such read and held to the end.
pub(super) struct MappedLog<'a, F: FileSystem> {
    pub(super) segment: &'a LogSegment<F>,
    pub(super) file: OnceCell<Arc<F::File>>,
    pub(super) map: Option<&'a MappedFile>,
}

impl<F: FileSystem> MappedLog<'_, F> {
    fn file(&self) -> std::io::Result<&F::File> {
        if let Some(file) = self.file.get() {
            return Ok(file);
        }
        let file = self.segment.log().map_err(std::io::Error::other)?;
        Ok(self.file.get_or_init(|| file))
    }
}

impl<F: FileSystem> ReadSource for MappedLog<'_, F> {
    #[inline]
    fn read_some_at(&self, buf: &mut [u8], position: u64) -> std::io::Result<usize> {
        if let Some(map) = self.map
            && let Some(n @ 1..) = map.read_at(position, buf)
        {
            return Ok(n);
        }
        self.file()?.read_at(buf, position)
    }

    #[inline]
    fn reads_are_cheap(&self) -> bool {
        self.map
            .is_some_and(|m| m.mapped_len() > 0 && !m.is_empty())
    }
}
