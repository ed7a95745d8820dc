//! # seglog-segment
//!
//! One Kafka log segment: `<20-digit base offset>.log` with its lazily opened `.index` and `.timeindex`
//! and its `.txnindex` (`txn_index`, created by the first aborted transaction),
//! following the lifecycle of Kafka's `LogSegment` (append, read, translate, time lookup, recover, truncate,
//! roll, flush).
//!
//! It builds on `seglog-record-format` (batch framing and validation), `seglog-mmap-index` (the two
//! sparse indexes) and `seglog-fs` (the I/O seam). It knows nothing about retention, compaction or the
//! segment list: that is `seglog-log`. Unix only, as `seglog-fs` is.
//!
//! ```
//! use seglog_fs::RealFs;
//! use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
//! use seglog_segment::{LogSegment, SegmentConfig};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let segment = LogSegment::open(RealFs, dir.path(), 100, SegmentConfig::default(), false, "", 0)?;
//! // One batch whose offsets (100..=102) are already assigned.
//! let records = (0..3).map(|i| NewRecord::new(i, 1_700_000_000_000 + i64::from(i), None, Some(b"v")));
//! let mut batch = Vec::new();
//! BatchBuilder::new().build(&BatchOptions::new(100, Compression::None), records, &mut batch)?;
//! segment.append(102, &batch)?;
//! assert_eq!(segment.read_next_offset()?, 103);
//! let found = segment.find_offset_by_timestamp(1_700_000_000_001, 100)?.expect("a record");
//! assert_eq!(found.offset, 101);
//! let fetch = segment.read_simple(101, 1 << 20)?.expect("data");
//! assert_eq!(fetch.offset_metadata.message_offset, 100); // the batch holding 101 starts at 100
//! # Ok(())
//! # }
//! ```
//!
//! All `.log` I/O goes through the `seglog-fs` seam (`seglog_fs::FileSystem`), so crash tests can
//! run the same code on its simulated file system (`seglog_fs::sim::SimFs`).
//! On the real file system, reads of the `.log` (batch headers for offset translation and
//! timestamp search, and `read_region`) come from a read-only memory mapping of it
//! (`seglog_mmap_index::MappedFile`, created on the first read) instead of `pread`; writes, fsync,
//! truncation and zero-copy transfers still use the seam, and the mapping is shrunk before any
//! truncation.
//! The index files are memory-mapped by `seglog-mmap-index` on the real file system; they are derived
//! data that recovery rebuilds from the `.log`.
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")
)]

mod descriptors;
mod error;
mod loom;
pub mod naming;
mod reader;
pub mod scan;
mod segment;
mod segment_time;
pub mod split;
mod time_search;
pub mod txn_index;
pub mod verify;

pub use descriptors::DescriptorCache;
pub use error::{Error, Result};
pub use reader::SegmentReader;
pub use seglog_mmap_index::MappingBudget;
pub use segment::{
    FetchData, FileRegion, IndexImage, LogOffsetMetadata, LogOffsetPosition, LogSegment,
    MAX_SEGMENT_SIZE, RecoveryReport, RecoveryStop, RollParams, SegmentConfig, SegmentScan,
    StopReason, TailWalk, TimestampAndOffset, scan_segment, walk_tail,
};
pub use segment_time::SegmentTime;
