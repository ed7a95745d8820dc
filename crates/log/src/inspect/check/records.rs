//! Checking a `.log` as a consumer reads it and as recovery judges it: every record of every
//! batch decoded (compressed batches decompressed), and each batch's offsets judged against its
//! neighbours and the next segment's base offset (`seglog_segment::verify`). It reports what the
//! framing and CRC walk of `log.rs` cannot see: a CRC-valid batch whose records do not decode,
//! and the batch whose offsets are impossible (which may come before the one `log.rs` finds
//! out of order).

use std::path::Path;

use seglog_fs::{FileSystem, OpenMode};
use seglog_segment::split::plan_split;
use seglog_segment::verify::{OffsetBounds, StopReason, scan_verified};

use super::Finding;
use crate::error::{Error, Result};

/// Decodes every record of `log` (a segment at `base`, followed by one at `next_base` if any) and
/// adds one finding for the first batch recovery would cut that `log.rs` does not report.
pub(super) fn check_records<F: FileSystem>(
    fs: &F,
    base: i64,
    next_base: Option<i64>,
    log: &Path,
    findings: &mut Vec<Finding>,
) -> Result<()> {
    let file = fs
        .open(log, OpenMode::ReadOnly)
        .map_err(|source| Error::Unreadable {
            path: log.to_path_buf(),
            what: "cannot open",
            source,
        })?;
    let len = seglog_fs::File::len(&file).map_err(|e| Error::io(log, e))?;
    let bounds = OffsetBounds {
        base_offset: base,
        next_base_offset: next_base,
    };
    let scan = scan_verified(&file, log, len, 8 << 20, bounds, |_| Ok(()))?;
    let Some(mut stop) = scan.stop else {
        return Ok(());
    };
    if matches!(stop.reason, StopReason::OffsetOverflow { .. }) {
        // What recovery does there: split the segment, or, when the batch after the
        // overflowing one disproves its base offset, cut at the damage the split's walk names.
        let walk = plan_split(&file, log, len, 8 << 20, bounds)?;
        if !walk.splits(base) {
            let Some(damage) = walk.stop else {
                return Ok(());
            };
            stop = damage;
        }
    }
    let kind = match &stop.reason {
        // Framing, CRC, offsets going backwards and torn tails are `log.rs`'s findings.
        StopReason::Invalid(e) if is_reported_by_log(e) => return Ok(()),
        StopReason::Invalid(_) => "undecodable_records",
        StopReason::ContradictedByNext { .. } => "damaged_base_offset",
        StopReason::PastNextSegment { .. } => "offsets_past_next_segment",
        StopReason::OffsetOverflow { .. } => "offset_overflow",
        _ => return Ok(()),
    };
    if kind == "damaged_base_offset" {
        // The batch after it, which `log.rs` finds out of order, is the valid one: one cause,
        // one problem, and the right batch named.
        findings.retain(|f| {
            f.file != log || f.kind != "offsets_out_of_order" || f.position <= Some(stop.position)
        });
    }
    let mut head = [0_u8; 8];
    let base_offset = seglog_fs::File::read_exact_at(&file, &mut head, stop.position).map_or_else(
        |_| "?".to_owned(),
        |()| i64::from_be_bytes(head).to_string(),
    );
    // Kafka's loader splits such a segment (KAFKA-6264) when it recovers it; so does seglog's.
    let remedy = if kind == "offset_overflow" {
        "; recovery splits the segment there, as Kafka's splitOverflowedSegment does"
    } else {
        ""
    };
    findings.push(Finding::new(
        log,
        Some(stop.position),
        kind,
        format!(
            "the batch at byte {} (base offset {base_offset}): {}{remedy}",
            stop.position, stop.reason
        ),
    ));
    Ok(())
}

/// Whether `log.rs` reports this error already: a checksum, or the framing and header sizes it
/// checks.
fn is_reported_by_log(e: &seglog_record_format::Error) -> bool {
    use seglog_record_format::{Error as E, Field};
    matches!(e, E::ChecksumMismatch { .. })
        || matches!(
            e.field(),
            Some(Field::LogOverhead | Field::Size | Field::Magic | Field::Header)
        )
}
