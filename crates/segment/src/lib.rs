//! # seglog-segment
//!
//! One Kafka log segment: `<20-digit base offset>.log` with its lazily opened `.index` and `.timeindex`,
//! following the lifecycle of Kafka's `LogSegment` (append, read, translate, time lookup, recover, truncate,
//! roll, flush).
//!
//! It builds on `seglog-record-format` (batch framing and validation) and `seglog-mmap-index` (the two
//! sparse indexes). It knows nothing about retention, compaction or the segment list: that is `seglog-log`.
//!
//! This crate is still empty: the segment issue fills it.
#![forbid(unsafe_code)]
