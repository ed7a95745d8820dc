//! # seglog-record-format
//!
//! What Kafka `.log` files hold: record batches v2 (read and write), legacy message sets v0/v1 (read),
//! CRC-32C, and the four codecs. It does no file I/O: it works on byte slices and writes into buffers.
#![forbid(unsafe_code)]
