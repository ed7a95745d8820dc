//! # seglog-segment
//!
//! One Kafka log segment: `<20-digit base offset>.log` with its lazily opened `.index` and `.timeindex`,
//! following the lifecycle of Kafka's `LogSegment` (append, read, translate, time lookup, recover, truncate,
//! roll, flush).
//!
//! It builds on `seglog-record-format` (batch framing and validation) and `seglog-mmap-index` (the two
//! sparse indexes). It knows nothing about retention, compaction or the segment list: that is `seglog-log`.
//!
//! All `.log` I/O goes through the [`io`] seam, so crash tests can run the same code on [`io::SimFs`].
//! The index files are memory-mapped by `seglog-mmap-index` on the real file system; they are derived
//! data that recovery rebuilds from the `.log`.
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")
)]

mod error;
pub mod io;
pub mod naming;
pub mod scan;
mod segment;

pub use error::{Error, Result};
pub use segment::{
    FetchData, FileRegion, LogOffsetMetadata, LogOffsetPosition, LogSegment, MAX_SEGMENT_SIZE,
    RecoveryReport, RecoveryStop, RollParams, SegmentConfig, StopReason, TimestampAndOffset,
};
