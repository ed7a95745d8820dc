//! Kafka's `UnifiedLog.fetchOffsetByTimestamp` for a timestamp or `MAX_TIMESTAMP`, over an
//! ordered list of segments: written once for the live log ([`PartitionLog`]'s
//! `LogSegment`s) and the read-only view ([`PartitionView`]'s `SegmentReader`s).
//!
//! [`PartitionLog`]: crate::PartitionLog
//! [`PartitionView`]: crate::inspect::PartitionView

use seglog_segment::{SegmentTime, TimestampAndOffset};

use crate::error::Result;

/// The special targets of [`PartitionLog::offset_for_timestamp`](crate::PartitionLog::offset_for_timestamp)
/// (Kafka's `ListOffsetsRequest`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOffset {
    /// `EARLIEST_TIMESTAMP` (-2): the log start offset.
    Earliest,
    /// `LATEST_TIMESTAMP` (-1): the log end offset (for a consumer: the high watermark, or the
    /// last stable offset under read_committed).
    Latest,
    /// `MAX_TIMESTAMP` (-3): the record with the largest timestamp (record level, KAFKA-16310).
    MaxTimestamp,
    /// The first record whose timestamp is at least this.
    Timestamp(i64),
}

/// The record with the largest timestamp (the first segment holding it, then its first record
/// carrying it), or the first record whose timestamp is at least the target's, at or after
/// `log_start`: the first segment whose largest timestamp (or `.log` modification time, when it
/// has none) reaches the target answers, as in Kafka. `segments` are oldest first; each is opened
/// only when the lookup reaches it. [`ListOffset::Earliest`] and [`ListOffset::Latest`] are the
/// caller's (no segment is read): `None`.
///
/// # Errors
///
/// A segment cannot be opened or read.
pub(crate) fn lookup_by_time<S: SegmentTime>(
    segments: impl IntoIterator<Item = Result<S>>,
    target: ListOffset,
    log_start: i64,
) -> Result<Option<TimestampAndOffset>> {
    match target {
        ListOffset::MaxTimestamp => {
            let mut best: Option<(i64, S)> = None;
            for segment in segments {
                let segment = segment?;
                let ts = segment.max_timestamp_so_far()?;
                if ts >= 0 && best.as_ref().is_none_or(|(b, _)| ts > *b) {
                    best = Some((ts, segment));
                }
            }
            match best {
                Some((ts, segment)) => Ok(segment.find_offset_by_timestamp(ts, log_start)?),
                None => Ok(None),
            }
        }
        ListOffset::Timestamp(ts) => {
            for segment in segments {
                let segment = segment?;
                if segment.largest_timestamp()? >= ts {
                    return Ok(segment.find_offset_by_timestamp(ts, log_start)?);
                }
            }
            Ok(None)
        }
        ListOffset::Earliest | ListOffset::Latest => Ok(None),
    }
}
