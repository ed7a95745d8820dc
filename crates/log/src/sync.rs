//! The synchronisation primitives the log's shared state uses: std's normally, loom's in
//! `cfg(loom)` model builds (tokio's facade pattern). Code that loom checks imports from here.

#[cfg(not(loom))]
pub(crate) use std::sync::{Arc, RwLock};

#[cfg(loom)]
pub(crate) use loom::sync::{Arc, RwLock};
