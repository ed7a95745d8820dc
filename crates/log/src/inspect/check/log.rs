//! Checking a `.log`: framing, CRCs, offsets in order, and a torn tail.

use std::ops::ControlFlow;
use std::path::Path;

use seglog_fs::FileSystem;
use seglog_record_format::Batch;
use seglog_segment::scan::{Scan, ScanEnd};

use super::Finding;
use crate::error::{Error, Result};
use crate::inspect::segment_log::SegmentLog;

/// Walks a `.log`: framing, CRC, offsets. Returns (position, last offset, max timestamp) per batch.
pub(super) fn check_log<F: FileSystem>(
    fs: &F,
    base: i64,
    log: &Path,
    findings: &mut Vec<Finding>,
) -> Result<Vec<(u64, i64, i64)>> {
    let file = SegmentLog::open(fs, log).map_err(|source| Error::Unreadable {
        path: log.to_path_buf(),
        what: "cannot open",
        source,
    })?;
    let len = file.len().map_err(|e| Error::io(log, e))?;
    let mut batches = Vec::new();
    let mut previous = base - 1;
    let scan = file.batches(0, len, 8 << 20, |position, framed| {
        let decoded = match framed.decode() {
            Ok(d) => d,
            Err(e) => {
                return ControlFlow::Break(Finding::new(
                    log,
                    Some(position),
                    "corrupt_batch",
                    e.to_string(),
                ));
            }
        };
        if let Err(e) = decoded.validate() {
            return ControlFlow::Break(Finding::new(
                log,
                Some(position),
                "invalid_batch",
                e.to_string(),
            ));
        }
        let first = match decoded {
            Batch::V2(b) => b.base_offset(),
            Batch::Legacy(b) => b.last_offset(),
        };
        if first <= previous || decoded.last_offset() < first {
            return ControlFlow::Break(Finding::new(
                log,
                Some(position),
                "offsets_out_of_order",
                format!(
                    "batch {first}..={} follows offset {previous}",
                    decoded.last_offset()
                ),
            ));
        }
        previous = decoded.last_offset();
        batches.push((position, decoded.last_offset(), decoded.max_timestamp()));
        ControlFlow::Continue(())
    })?;
    match scan {
        Scan::Stopped(finding) => findings.push(finding),
        Scan::Ended(ScanEnd::Corrupt { position, error }) => {
            findings.push(Finding::new(
                log,
                Some(position),
                "corrupt_batch",
                error.to_string(),
            ));
        }
        Scan::Ended(ScanEnd::Clean { position }) if position < len => {
            findings.push(Finding::new(
                log,
                Some(position),
                "torn_tail",
                format!("{} bytes after the last whole batch", len - position),
            ));
        }
        Scan::Ended(ScanEnd::Clean { .. }) => {}
    }
    Ok(batches)
}
