//! The time side of a segment: its max timestamp, modification time, and the lookup by timestamp
//! (Kafka's `findOffsetByTimestamp`) through the time index, whose search of the `.log` is
//! [`time_search`](crate::time_search)'s.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use seglog_mmap_index::TimestampOffset;
use seglog_record_format::NO_TIMESTAMP;

use super::{FileRegion, HEADER_WINDOW, LogSegment, MAX_NOT_LOADED};
use crate::error::{Error, Result};
use crate::scan::{BatchHeader, Scan, ScanEnd, scan_headers};
use crate::time_search::{TimestampAndOffset, first_in_batch, search_for_timestamp, with_buffers};
use seglog_fs::FileSystem;

impl<F: FileSystem> LogSegment<F> {
    /// The largest timestamp appended so far, or -1 (Kafka's `maxTimestampSoFar`). Takes no
    /// lock once the value is known (loaded from the time index or set by an append).
    pub fn max_timestamp_so_far(&self) -> Result<i64> {
        let published = self.max_timestamp.load(Ordering::Acquire);
        if published != MAX_NOT_LOADED {
            return Ok(published);
        }
        let mut w = self.writer.lock();
        Self::load_max_timestamp(&mut w)?;
        Ok(w.max_timestamp_and_offset.timestamp)
    }

    /// The last offset of the batch holding the largest timestamp (Kafka's
    /// `shallowOffsetOfMaxTimestampSoFar`).
    pub fn shallow_offset_of_max_timestamp_so_far(&self) -> Result<i64> {
        let mut w = self.writer.lock();
        Self::load_max_timestamp(&mut w)?;
        Ok(w.max_timestamp_and_offset.offset)
    }

    /// The largest record timestamp, if the segment has any (Kafka's `largestRecordTimestamp`).
    pub fn largest_record_timestamp(&self) -> Result<Option<i64>> {
        let ts = self.max_timestamp_so_far()?;
        Ok((ts >= 0).then_some(ts))
    }

    /// The largest record timestamp, or the `.log`'s modification time when there is none
    /// (Kafka's `largestTimestamp`, used by time retention and `offsetsForTimes`).
    pub fn largest_timestamp(&self) -> Result<i64> {
        match self.largest_record_timestamp()? {
            Some(ts) => Ok(ts),
            None => self.last_modified_ms(),
        }
    }

    /// The `.log`'s modification time.
    pub fn last_modified_ms(&self) -> Result<i64> {
        let path = self.path();
        self.fs
            .modified_ms(&path)
            .map_err(|e| Error::io(&*path, "stat", e))
    }

    /// Sets the modification time of the `.log` and of the index files that exist.
    pub fn set_last_modified_ms(&self, ms: i64) -> Result<()> {
        let w = self.writer.lock();
        self.fs
            .set_modified_ms(&self.path(), ms)
            .map_err(|e| Error::io(&*self.path(), "set mtime", e))?;
        for path in [w.offset_index.path(), w.time_index.path()] {
            if self.fs.exists(path) {
                self.fs
                    .set_modified_ms(path, ms)
                    .map_err(|e| Error::io(path, "set mtime", e))?;
            }
        }
        Ok(())
    }

    /// Kafka's `findOffsetByTimestamp`: the first record whose timestamp is at least `timestamp`
    /// and whose offset is at least `starting_offset`, found through the time index, then the
    /// offset index, then a scan that decompresses batches whose max timestamp qualifies.
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let ts_entry = self.time_reader()?.lookup(timestamp)?;
        let start = u64::from(
            self.offset_reader()?
                .lookup(ts_entry.offset.max(starting_offset))?
                .position,
        );
        self.search_for_timestamp(timestamp, start, starting_offset)
    }

    fn search_for_timestamp(
        &self,
        target: i64,
        from: u64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let path = self.path();
        with_buffers(|buf, scratch| {
            search_for_timestamp(
                &self.source(),
                &path,
                (from, self.size()),
                HEADER_WINDOW,
                (target, starting_offset),
                |h| self.first_record_at_or_after(h, buf, scratch, target, starting_offset),
            )
        })
    }

    /// Decodes the batch of `h`, in place in the `.log`'s mapping when it has it (else read into
    /// `buf`), and returns its first record with `timestamp >= target` and
    /// `offset >= starting_offset`; the records after it are not decoded.
    fn first_record_at_or_after(
        &self,
        h: &BatchHeader,
        buf: &mut Vec<u8>,
        scratch: &mut Vec<u8>,
        target: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let region = FileRegion {
            position: h.position,
            length: h.size,
        };
        let found = self.with_region(region, buf, |bytes| {
            first_in_batch(bytes, scratch, target, starting_offset)
        })?;
        found.map_err(|source| Error::Corrupt {
            path: self.log_path(),
            position: h.position,
            source,
        })
    }

    /// Kafka's `FileRecords.largestTimestampAfter`: the largest batch max timestamp from
    /// `position` on, with the last offset of its batch.
    pub(super) fn largest_timestamp_after(&self, position: u64) -> Result<TimestampOffset> {
        let path = self.path();
        let mut best = TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: -1,
        };
        let scan = scan_headers(
            &self.source(),
            &path,
            position,
            self.size(),
            HEADER_WINDOW,
            |h| {
                if h.max_timestamp > best.timestamp {
                    best = TimestampOffset {
                        timestamp: h.max_timestamp,
                        offset: h.last_offset,
                    };
                }
                Ok(ControlFlow::<()>::Continue(()))
            },
        )?;
        if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
            return Err(Error::Corrupt {
                path: PathBuf::clone(&path),
                position,
                source: error,
            });
        }
        Ok(best)
    }

    /// The max timestamp of the first batch, or `i64::MAX` when there is none with a timestamp
    /// (Kafka's `getFirstBatchTimestamp`, used by `max.compaction.lag.ms`).
    pub fn first_batch_timestamp(&self) -> Result<i64> {
        let first = self.first_batch_header()?;
        Ok(first
            .map(|h| h.max_timestamp)
            .filter(|ts| *ts >= 0)
            .unwrap_or(i64::MAX))
    }
}
