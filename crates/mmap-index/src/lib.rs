//! # seglog-mmap-index
//!
//! Kafka's two sparse index files, `.index` (8-byte offset entries) and `.timeindex` (12-byte time
//! entries), memory-mapped, with lock-free lookups. This is the only crate that contains `unsafe`.
