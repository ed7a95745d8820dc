//! What a partition-level lookup by time asks of each segment (Kafka's `UnifiedLog`
//! `fetchOffsetByTimestamp` over its `LogSegment`s), answered alike by the live segment
//! ([`LogSegment`]) and the read-only one ([`SegmentReader`]), so the partition-level algorithm is
//! written once.

use std::sync::Arc;

use seglog_fs::FileSystem;

use crate::error::Result;
use crate::reader::SegmentReader;
use crate::segment::LogSegment;
use crate::time_search::TimestampAndOffset;

/// A segment's time side.
pub trait SegmentTime {
    /// The largest batch max timestamp, or -1 (Kafka's `maxTimestampSoFar`).
    ///
    /// # Errors
    ///
    /// The segment cannot be read.
    fn max_timestamp_so_far(&self) -> Result<i64>;

    /// The largest record timestamp, or the `.log`'s modification time when there is none
    /// (Kafka's `largestTimestamp`).
    ///
    /// # Errors
    ///
    /// The segment cannot be read.
    fn largest_timestamp(&self) -> Result<i64>;

    /// Kafka's `LogSegment.findOffsetByTimestamp`.
    ///
    /// # Errors
    ///
    /// The segment cannot be read, or a batch on the way is corrupt.
    fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>>;
}

impl<F: FileSystem> SegmentTime for LogSegment<F> {
    fn max_timestamp_so_far(&self) -> Result<i64> {
        LogSegment::max_timestamp_so_far(self)
    }

    fn largest_timestamp(&self) -> Result<i64> {
        LogSegment::largest_timestamp(self)
    }

    fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        LogSegment::find_offset_by_timestamp(self, timestamp, starting_offset)
    }
}

impl<F: FileSystem> SegmentTime for SegmentReader<F> {
    fn max_timestamp_so_far(&self) -> Result<i64> {
        Ok(self.max_timestamp()?.map_or(-1, |m| m.timestamp))
    }

    fn largest_timestamp(&self) -> Result<i64> {
        match self.max_timestamp()? {
            Some(m) => Ok(m.timestamp),
            None => self.last_modified_ms(),
        }
    }

    fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        SegmentReader::find_offset_by_timestamp(self, timestamp, starting_offset)
    }
}

impl<S: SegmentTime + ?Sized> SegmentTime for Arc<S> {
    fn max_timestamp_so_far(&self) -> Result<i64> {
        S::max_timestamp_so_far(self)
    }

    fn largest_timestamp(&self) -> Result<i64> {
        S::largest_timestamp(self)
    }

    fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        S::find_offset_by_timestamp(self, timestamp, starting_offset)
    }
}

impl<S: SegmentTime + ?Sized> SegmentTime for &S {
    fn max_timestamp_so_far(&self) -> Result<i64> {
        S::max_timestamp_so_far(self)
    }

    fn largest_timestamp(&self) -> Result<i64> {
        S::largest_timestamp(self)
    }

    fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        S::find_offset_by_timestamp(self, timestamp, starting_offset)
    }
}
