//! Whether a segment's `.index` and `.timeindex` pass the checks a power loss can fail (Kafka's
//! sanity rules, a zero tail, a last timestamp of 0, offsets or timestamps out of order), read
//! read-only. The loader applies it to the segment just below the recovery point: a roll
//! appends to and trims the indexes of a segment that a flush may already have put below the
//! recovery point, and a power loss before those changes are synced leaves them torn in a
//! segment the recovery would otherwise not read (Kafka has the same window and skips the
//! check, so its index stays torn).

use std::path::Path;

use seglog_fs::{File as _, FileSystem, OpenMode};
use seglog_mmap_index::{OffsetIndex, Problem, TimeIndex};
use seglog_record_format::{MAX_TIMESTAMP_OFFSET, NO_TIMESTAMP};
use seglog_segment::naming;

use crate::error::{Error, Result};

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
        let report = index.verify().map_err(seglog_segment::Error::from)?;
        if report.problems == [Problem::LastTimestampZero] {
            // Alone, a last timestamp of 0 is torn only as a zeroed slot, (0, base offset), over
            // a first batch that has a later timestamp: records may carry timestamp 0 themselves.
            let last = index.last_entry();
            return Ok(last.offset == base && first_batch_max_timestamp(fs, dir, base)? > 0);
        }
        if !report.is_clean() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The max timestamp in the header of the segment's first batch (`NO_TIMESTAMP`, -1, when the
/// `.log` holds no whole header).
fn first_batch_max_timestamp<F: FileSystem>(fs: &F, dir: &Path, base: i64) -> Result<i64> {
    let path = naming::log_file(dir, base, "");
    let file = fs
        .open(&path, OpenMode::ReadOnly)
        .map_err(|e| Error::io(&path, e))?;
    let mut header = [0_u8; MAX_TIMESTAMP_OFFSET + 8];
    if file.read_exact_at(&mut header, 0).is_err() {
        return Ok(NO_TIMESTAMP);
    }
    let bytes: [u8; 8] = header
        .get(MAX_TIMESTAMP_OFFSET..)
        .and_then(|b| b.try_into().ok())
        .unwrap_or([0xff; 8]);
    Ok(i64::from_be_bytes(bytes))
}
