//! # seglog-log
//!
//! The partition log (a `topic-N` directory of segments) and the log directory (many partition logs, the
//! checkpoints, the `.lock` file and the clean-shutdown marker), behaving as Kafka's `UnifiedLog`,
//! `LocalLog`, `LogLoader` and `LogManager` do.
//!
//! It builds on `seglog-segment`. This crate is still empty: the log issue fills it.
#![forbid(unsafe_code)]
