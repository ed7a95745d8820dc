//! # seglog-segment
//!
//! One Kafka log segment: `<20-digit base offset>.log` with its lazily opened `.index` and `.timeindex`,
//! following the lifecycle of Kafka's `LogSegment` (append, read, translate, time lookup, recover, truncate,
//! roll, flush).
//!
//! It builds on `seglog-record-format` (batch framing and validation) and `seglog-mmap-index` (the two
//! sparse indexes). It knows nothing about retention, compaction or the segment list: that is `seglog-log`.
//!
//! All file I/O goes through the [`io`] seam, so crash tests can run the same code on [`io::SimFs`].
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")
)]

pub mod io;
