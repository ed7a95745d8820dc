//! A stand-in for an embedder's crate on `seglog-record-format` alone with no codec compiled
//! in; its test (`tests/no_codecs.rs`) builds and reads uncompressed batches and checks that a
//! batch in any codec is a clear error. This library is empty on purpose.
#![forbid(unsafe_code)]
