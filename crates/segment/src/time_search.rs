//! Kafka's search of a `.log` for a timestamp (`FileRecords.searchForTimestamp`), written once for
//! the live segment ([`LogSegment`](crate::LogSegment)) and the read-only one
//! ([`SegmentReader`](crate::SegmentReader)): from a byte position (the time index's floor entry,
//! through the offset index), the first batch whose max timestamp reaches the target and whose
//! last offset reaches the starting offset, then its first record that does.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::path::Path;

use seglog_record_format as rf;

use crate::error::{Error, Result};
use crate::scan::{BatchHeader, ReadSource, Scan, ScanEnd, scan_headers};

thread_local! {
    /// The batch and decompression buffers of this thread's lookups by timestamp, reused so
    /// that a lookup neither allocates nor zeroes the batch it copies (docs/perf/index.md).
    static LOOKUP_BUFFERS: RefCell<(Vec<u8>, Vec<u8>)> = const { RefCell::new((Vec::new(), Vec::new())) };
}

/// A buffer grown past this many bytes (a batch far above the usual sizes) is freed after the
/// lookup rather than kept for the thread's next one.
const KEEP_BUFFER_BYTES: usize = 1 << 20;

/// Runs `f` with this thread's lookup buffers, or with fresh ones if they are in use (a lookup
/// nested in another on the same thread cannot happen today, but must not panic).
pub(crate) fn with_buffers<R>(f: impl FnOnce(&mut Vec<u8>, &mut Vec<u8>) -> R) -> R {
    LOOKUP_BUFFERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut bufs) => {
            let (buf, scratch) = &mut *bufs;
            let result = f(buf, scratch);
            for b in [buf, scratch] {
                if b.capacity() > KEEP_BUFFER_BYTES {
                    *b = Vec::new();
                }
            }
            result
        }
        Err(_) => f(&mut Vec::new(), &mut Vec::new()),
    })
}

/// A record found by timestamp (Kafka's `TimestampAndOffset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampAndOffset {
    /// The record's timestamp.
    pub timestamp: i64,
    /// The record's offset.
    pub offset: i64,
    /// The batch's partition leader epoch, if it has one.
    pub leader_epoch: Option<i32>,
}

/// The first record at or after byte `from` (up to `end`) of the `.log` read through `source`
/// (named `path` in errors) whose timestamp is at least `target` and whose offset is at least
/// `starting_offset`: batches are skipped by their headers (`window` bytes read at a time), and
/// `first_record` decodes a batch whose header qualifies (see [`first_in_batch`]).
pub(crate) fn search_for_timestamp<S: ReadSource + ?Sized>(
    source: &S,
    path: &Path,
    (from, end): (u64, u64),
    window: usize,
    (target, starting_offset): (i64, i64),
    mut first_record: impl FnMut(&BatchHeader) -> Result<Option<TimestampAndOffset>>,
) -> Result<Option<TimestampAndOffset>> {
    let scan = scan_headers(source, path, from, end, window, |h| {
        if h.max_timestamp < target || h.last_offset < starting_offset {
            return Ok(ControlFlow::Continue(()));
        }
        Ok(first_record(&h)?.map_or(ControlFlow::Continue(()), ControlFlow::Break))
    })?;
    match scan {
        Scan::Stopped(found) => Ok(Some(found)),
        Scan::Ended(ScanEnd::Clean { .. }) => Ok(None),
        Scan::Ended(ScanEnd::Corrupt { position, error }) => Err(Error::Corrupt {
            path: path.to_path_buf(),
            position,
            source: error,
        }),
    }
}

/// The first record of the batch at the start of `bytes` with `timestamp >= target` and
/// `offset >= starting_offset` (`scratch` holds a compressed batch's records); errors are
/// relative to `bytes`.
pub(crate) fn first_in_batch(
    bytes: &[u8],
    scratch: &mut Vec<u8>,
    target: i64,
    starting_offset: i64,
) -> rf::Result<Option<TimestampAndOffset>> {
    let Some(framed) = rf::batches(bytes).next().transpose()? else {
        return Ok(None);
    };
    match framed.decode()? {
        rf::Batch::V2(batch) => {
            let epoch = batch.partition_leader_epoch();
            let leader_epoch = (epoch >= 0).then_some(epoch);
            for record in batch.records_with(scratch)? {
                let record = record?;
                if record.timestamp() >= target && record.offset() >= starting_offset {
                    return Ok(Some(TimestampAndOffset {
                        timestamp: record.timestamp(),
                        offset: record.offset(),
                        leader_epoch,
                    }));
                }
            }
            Ok(None)
        }
        rf::Batch::Legacy(batch) => {
            for record in batch.to_records()? {
                if record.timestamp >= target && record.offset >= starting_offset {
                    return Ok(Some(TimestampAndOffset {
                        timestamp: record.timestamp,
                        offset: record.offset,
                        leader_epoch: None,
                    }));
                }
            }
            Ok(None)
        }
    }
}
