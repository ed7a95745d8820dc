//! A stand-in for an embedder's crate: it depends on `seglog-log` alone, and its test
//! (`tests/tour.rs`) opens a log directory, appends, reads records, looks offsets up by time,
//! retains, compacts, closes and inspects read-only, naming nothing but `seglog_log` items.
//! This library is empty on purpose.
#![forbid(unsafe_code)]
