//! A segment's indexes opened read-only (Kafka's `writable = false`): through the file
//! system's index backing, so they map real files `PROT_READ` and are never written.

use std::path::Path;

use seglog_fs::FileSystem;
use seglog_mmap_index::{OffsetIndex, TimeIndex};

use crate::error::Result;

/// Opens the offset index at `path` (of the segment based at `base_offset`) read-only.
pub fn open_offset_index<F: FileSystem>(
    fs: &F,
    path: &Path,
    base_offset: i64,
) -> Result<OffsetIndex> {
    OffsetIndex::options(path, base_offset)
        .read_only()
        .backing(fs.index_backing())
        .open()
        .map_err(|e| seglog_segment::Error::from(e).into())
}

/// Opens the time index at `path` (of the segment based at `base_offset`) read-only.
pub fn open_time_index<F: FileSystem>(fs: &F, path: &Path, base_offset: i64) -> Result<TimeIndex> {
    TimeIndex::options(path, base_offset)
        .read_only()
        .backing(fs.index_backing())
        .open()
        .map_err(|e| seglog_segment::Error::from(e).into())
}
