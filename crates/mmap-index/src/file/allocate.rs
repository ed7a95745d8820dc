//! Disk blocks before first writes: an index file is preallocated sparse (`set_len`, as Kafka
//! does), so the first store into a page through the mapping needs a block, and on a full disk
//! that store is a `SIGBUS`. Before an entry goes into a page past the allocated bytes, the next
//! [`ALLOCATION_CHUNK`] bytes get their blocks (`File::allocate`: `fallocate` keeping the size),
//! which turns a full disk into an error naming the file. The whole preallocated size is never
//! allocated up front: a new index costs no disk, as in Kafka.
#![forbid(unsafe_code)]

use std::io;
use std::sync::atomic::Ordering;

use super::IndexFile;
use super::fs::open_rw;
use crate::entry::Entry;
use crate::error::{Error, Result};
use crate::map::{MmapMemory, Unpinned};
use seglog_fs::File as _;

/// How many bytes one allocation covers: 8,192 offset-index entries, so one `open` and one
/// `fallocate` per 32 MiB of log at Kafka's default `index.interval.bytes` (4096), and at most
/// this much disk held ahead per index. docs/benchmarks.md has the measurement.
pub(crate) const ALLOCATION_CHUNK: usize = 64 * 1024;

impl<E: Entry> IndexFile<E> {
    /// Makes sure the next `additional` entries (at most the free slots) have disk blocks, so
    /// that appending them cannot fail for lack of space; nothing to do for a stored backing.
    pub(crate) fn reserve(&mut self, additional: usize) -> Result<()> {
        self.check_writable()?;
        let slots = (self.entries() + additional).min(self.max_entries());
        let end = slots * E::SIZE;
        let backed = match self.core.with_memory(MmapMemory::backed_bytes) {
            Ok(backed) => backed,
            Err(Unpinned::Closed) => return Err(self.closed_error()),
            Err(Unpinned::Evicted) => self.allocated.load(Ordering::Acquire),
        };
        if end <= backed {
            return Ok(());
        }
        let length = usize::try_from(self.length).unwrap_or(usize::MAX);
        let mut to = end.next_multiple_of(ALLOCATION_CHUNK).min(length).max(end);
        let file = open_rw(&self.path)?;
        let mut allocated = file.allocate(backed as u64, (to - backed) as u64);
        if allocated.as_ref().is_err_and(is_enospc) && to > end {
            // No room for a whole chunk: the slots needed may still fit (in the block that
            // already holds the last entries, say), so ask for them alone.
            to = end;
            allocated = file.allocate(backed as u64, (to - backed) as u64);
        }
        allocated.map_err(|e| Error::io(&self.path, "fallocate", e))?;
        self.allocated.fetch_max(to, Ordering::AcqRel);
        // An evicted mapping is mapped again with `allocated` viewed.
        // Through `with_memory_mut`, so that the writer's lookups see the words viewed now.
        let _ = self.core.with_memory_mut(|mem| mem.set_backed(to));
        Ok(())
    }

    /// A push that found no free slot, a read-only or closed index, or a slot without disk
    /// blocks: the error, or blocks for the slot (and the rest of its chunk) and the push again.
    #[cold]
    #[inline(never)]
    pub(super) fn push_unbacked(&mut self, entry: &E) -> Result<()> {
        self.check_writable()?;
        if self.entries() < self.max_entries() {
            self.reserve(1)?;
            if self.core.push(entry).map_err(|g| self.gone_error(g))? {
                return Ok(());
            }
        }
        Err(Error::IndexFull {
            file: self.path.clone(),
            kind: E::KIND,
            entries: self.entries(),
        })
    }
}

/// Whether `e` is `ENOSPC` (or a disk quota's `EDQUOT`).
fn is_enospc(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::StorageFull | io::ErrorKind::QuotaExceeded
    )
}
