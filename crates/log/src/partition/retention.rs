//! Retention (Kafka's `UnifiedLog.deleteOldSegments`): log-start-offset breach, then size, then
//! time; never at or above the high watermark; deleted segments renamed `.deleted` and removed
//! after `file.delete.delay.ms`, with their producer snapshots (Kafka's
//! `deleteProducerSnapshots`); the producer state follows the new log start offset.

use crate::loom::sync::Arc;
use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_segment::LogSegment;

use super::PartitionLog;
use crate::error::Result;

/// What one retention pass deleted.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct RetentionReport {
    /// Segments below the log start offset.
    pub log_start_breached: Vec<i64>,
    /// Segments deleted to bring the log within `retention.bytes`.
    pub size_breached: Vec<i64>,
    /// Segments whose largest timestamp is older than `retention.ms`.
    pub time_breached: Vec<i64>,
}

impl RetentionReport {
    /// The number of segments deleted.
    pub fn total(&self) -> usize {
        self.log_start_breached.len() + self.size_breached.len() + self.time_breached.len()
    }
}

impl<F: FileSystem> PartitionLog<F> {
    /// Runs one retention pass in Kafka's order.
    pub fn delete_old_segments(&self) -> Result<RetentionReport> {
        let _writer = self.inner.writer.lock();
        let mut report = RetentionReport::default();
        let log_start = self.log_start_offset();
        report.log_start_breached = self.delete_segments(|segment, next| {
            let _ = segment;
            next.is_some_and(|n| n.base_offset() <= log_start)
        })?;
        let config = &*self.inner.config();
        if config.cleanup_policy.delete {
            let retention_bytes = config.retention_bytes;
            let size = self.size();
            if retention_bytes >= 0 && size >= retention_bytes.unsigned_abs() {
                let mut diff = size - retention_bytes.unsigned_abs();
                report.size_breached = self.delete_segments(|segment, _| {
                    if diff >= segment.size() {
                        diff -= segment.size();
                        true
                    } else {
                        false
                    }
                })?;
            }
            let retention_ms = config.retention_ms;
            if retention_ms >= 0 {
                let now = self.inner.time.now_ms();
                report.time_breached = self.delete_segments(|segment, _| {
                    segment
                        .largest_timestamp()
                        .is_ok_and(|ts| now.saturating_sub(ts) > retention_ms)
                })?;
            }
        }
        Ok(report)
    }

    /// Kafka's `deleteSegments(deletableSegments(predicate))`: oldest first, stop at the first
    /// segment that may not go. A segment may go when everything in it is below the high
    /// watermark and the predicate agrees; an empty active segment never goes. When every segment
    /// may go, the active one is rolled first so the log keeps one.
    fn delete_segments(
        &self,
        mut predicate: impl FnMut(&LogSegment<F>, Option<&LogSegment<F>>) -> bool,
    ) -> Result<Vec<i64>> {
        let inner = &self.inner;
        let segments = self.segments();
        let hw = self.high_watermark();
        let log_end = self.log_end_offset();
        let list: Vec<&Arc<LogSegment<F>>> = segments.values().collect();
        let mut deletable = Vec::new();
        for (i, segment) in list.iter().enumerate() {
            let next = list.get(i + 1).map(AsRef::as_ref);
            let upper_bound = next.map_or(log_end, LogSegment::base_offset);
            let is_last_and_empty = next.is_none() && segment.size() == 0;
            if hw >= upper_bound && !is_last_and_empty && predicate(segment, next) {
                deletable.push(Arc::clone(segment));
            } else {
                break;
            }
        }
        if deletable.is_empty() {
            return Ok(Vec::new());
        }
        if deletable.len() == list.len() {
            inner.roll(None)?;
        }
        let deleted: Vec<i64> = deletable.iter().map(|s| s.base_offset()).collect();
        let last_deleted = deleted.last().copied().unwrap_or(i64::MIN);
        // The log start offset moves to the base of the first remaining segment *before* the
        // segments leave the list (Kafka's order): a reader whose snapshot lacks them then also
        // sees the new start, and gets OffsetOutOfRange rather than later data.
        let new_start = inner.first_base_after(last_deleted);
        let old_start = inner
            .log_start_offset
            .fetch_max(new_start, Ordering::AcqRel);
        if old_start < new_start {
            inner.on_log_start_offset_incremented(new_start)?;
        }
        inner.swap_segments(|s| s.retain(|base, _| *base > last_deleted));
        for segment in deletable {
            let snapshot = inner
                .producer_state
                .lock()
                .remove_and_mark_snapshot_for_deletion(segment.base_offset())?;
            inner.schedule_delete_with_snapshot(segment, snapshot)?;
        }
        Ok(deleted)
    }
}

impl<F: FileSystem> super::Inner<F> {
    /// The base offset of the first segment above `base` (after a roll there always is one).
    fn first_base_after(&self, base: i64) -> i64 {
        let segments = self.segments.load();
        segments
            .range(base + 1..)
            .next()
            .map_or_else(|| self.log_end_offset.load(Ordering::Acquire), |(b, _)| *b)
    }
}
