//! Reading a partition directory's records from an offset, and the lookups `ListOffsets`
//! answers (log end offset, first offset at or after a time, largest timestamp), read-only.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{Batch, Record};
use seglog_segment::scan::{Scan, ScanEnd};

use super::partition::{PartitionView, SegmentEntry};
use crate::error::{Error, Result};

/// How [`PartitionView::for_each_record`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsRead<T> {
    /// The offset after the last whole batch read, where a follower polls again.
    pub next_offset: i64,
    /// The value the callback stopped the walk with, if it did.
    pub stopped: Option<T>,
}

/// A record and the timestamp it has: what a time lookup finds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FoundRecord {
    /// The record's offset.
    pub offset: i64,
    /// Its timestamp.
    pub timestamp: i64,
}

fn corrupt(segment: &SegmentEntry, position: u64, source: seglog_record_format::Error) -> Error {
    seglog_segment::Error::Corrupt {
        path: segment.log.clone(),
        position,
        source,
    }
    .into()
}

impl<F: FileSystem> PartitionView<F> {
    /// Where to start reading `target` in `segment`: the offset index's floor entry when the
    /// index is there and sane, else the start of the file.
    fn start_position(&self, segment: &SegmentEntry, target: i64) -> u64 {
        self.offset_index(segment.base_offset)
            .ok()
            .filter(|i| i.sanity_check().is_ok() && i.verify().is_ok_and(|r| r.is_clean()))
            .and_then(|i| i.lookup(target).ok())
            .map_or(0, |p| u64::from(p.position))
    }

    /// Calls `f` with every record at or after `from` (in offset order, with its batch) until
    /// it breaks. A batch that fails to decode or validate ends the walk with an error naming
    /// the file and byte position.
    pub fn for_each_record<T>(
        &self,
        from: i64,
        mut f: impl FnMut(&Record, &Batch<'_>) -> ControlFlow<T>,
    ) -> Result<RecordsRead<T>> {
        let segments = self.segments();
        let first = segments
            .iter()
            .rposition(|s| s.base_offset <= from)
            .unwrap_or(0);
        let mut next = from;
        for segment in segments.iter().skip(first) {
            let file = self.open_log(segment)?;
            let len = file.len().map_err(|e| Error::io(&segment.log, e))?;
            let start = if segment.base_offset <= from {
                self.start_position(segment, from)
            } else {
                0
            };
            let mut failed: Option<Error> = None;
            let mut stopped = None;
            let scan = file.batches(start, len, 4 << 20, |position, framed| {
                let decoded = match framed.decode().and_then(|d| d.validate().map(|()| d)) {
                    Ok(d) => d,
                    Err(e) => {
                        failed = Some(corrupt(segment, position, e));
                        return ControlFlow::Break(());
                    }
                };
                if decoded.last_offset() < from {
                    return ControlFlow::Continue(());
                }
                let records = match decoded.to_records() {
                    Ok(r) => r,
                    Err(e) => {
                        failed = Some(corrupt(segment, position, e));
                        return ControlFlow::Break(());
                    }
                };
                for record in records.iter().filter(|r| r.offset >= from) {
                    if let ControlFlow::Break(value) = f(record, &decoded) {
                        stopped = Some(value);
                        return ControlFlow::Break(());
                    }
                }
                next = next.max(decoded.last_offset() + 1);
                ControlFlow::Continue(())
            })?;
            if let Some(e) = failed {
                return Err(e);
            }
            if stopped.is_some() {
                return Ok(RecordsRead {
                    next_offset: next,
                    stopped,
                });
            }
            if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
                return Err(corrupt(segment, position, error));
            }
        }
        Ok(RecordsRead {
            next_offset: next,
            stopped: None,
        })
    }

    /// The log end offset: the offset after the last whole batch of the last segment.
    pub fn log_end_offset(&self) -> Result<i64> {
        let segments = self.segments();
        let Some(last) = segments.last() else {
            return Ok(0);
        };
        let file = self.open_log(last)?;
        let len = file.len().map_err(|e| Error::io(&last.log, e))?;
        let mut next = last.base_offset;
        let start = self.start_position(last, i64::MAX);
        let scan = file.batches(start, len, 4 << 20, |_, framed| {
            if let Ok(last_offset) = framed.last_offset() {
                next = last_offset + 1;
            }
            ControlFlow::<()>::Continue(())
        })?;
        if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
            return Err(corrupt(last, position, error));
        }
        Ok(next)
    }

    /// The first record from the log start offset on whose timestamp is at least `timestamp`
    /// (Kafka's `ListOffsets` by time), if any.
    pub fn offset_for_timestamp(&self, timestamp: i64) -> Result<Option<FoundRecord>> {
        let read = self.for_each_record(self.log_start_offset(), |r, _| {
            if r.timestamp >= timestamp {
                return ControlFlow::Break(FoundRecord {
                    offset: r.offset,
                    timestamp: r.timestamp,
                });
            }
            ControlFlow::Continue(())
        })?;
        Ok(read.stopped)
    }

    /// The first record carrying the largest timestamp, record level (KAFKA-16310), if any
    /// record has a timestamp.
    pub fn max_timestamp(&self) -> Result<Option<FoundRecord>> {
        let mut best: Option<FoundRecord> = None;
        self.for_each_record(self.log_start_offset(), |r, _| {
            if r.timestamp >= 0 && best.is_none_or(|b| r.timestamp > b.timestamp) {
                best = Some(FoundRecord {
                    offset: r.offset,
                    timestamp: r.timestamp,
                });
            }
            ControlFlow::<()>::Continue(())
        })?;
        Ok(best)
    }
}
