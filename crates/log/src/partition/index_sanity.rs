//! Whether a segment's `.index` and `.timeindex` pass the checks a power loss can fail (Kafka's
//! sanity rules, a zero tail, a last timestamp of 0, offsets or timestamps out of order), read
//! read-only. The loader applies it to the segment just below the recovery point: a roll
//! appends to and trims the indexes of a segment that a flush may already have put below the
//! recovery point, and a power loss before those changes are synced leaves them torn in a
//! segment the recovery would otherwise not read (Kafka has the same window and skips the
//! check, so its index stays torn).

use std::path::Path;

use seglog_fs::FileSystem;
use seglog_mmap_index::{OffsetIndex, TimeIndex};
use seglog_segment::naming;

use crate::error::Result;

/// Whether either index of the segment based at `base` in `dir` exists and fails `verify`.
pub(super) fn indexes_unsound<F: FileSystem>(fs: &F, dir: &Path, base: i64) -> Result<bool> {
    let offsets = naming::offset_index_file(dir, base, "");
    if fs.exists(&offsets) {
        let index = OffsetIndex::options(&offsets, base)
            .read_only()
            .backing(fs.index_backing())
            .open()
            .map_err(seglog_segment::Error::from)?;
        if !index
            .verify()
            .map_err(seglog_segment::Error::from)?
            .is_clean()
        {
            return Ok(true);
        }
    }
    let times = naming::time_index_file(dir, base, "");
    if fs.exists(&times) {
        let index = TimeIndex::options(&times, base)
            .read_only()
            .backing(fs.index_backing())
            .open()
            .map_err(seglog_segment::Error::from)?;
        if !index
            .verify()
            .map_err(seglog_segment::Error::from)?
            .is_clean()
        {
            return Ok(true);
        }
    }
    Ok(false)
}
