//! The concurrency facade (tokio's `loom` pattern): std's `Arc` and `RwLock` normally, loom's
//! under `cfg(all(test, loom))`, so that the loom models check the code that ships. Code that a
//! model covers imports from `crate::loom::sync`, never from `std::sync`.
//!
//! The switch is `all(test, loom)`, not `loom` alone: loom is a dev-dependency (under
//! `[target.'cfg(loom)'.dev-dependencies]`), so a `--cfg loom` build of the library without tests
//! keeps std's types and still compiles.

#[cfg(not(all(test, loom)))]
pub(crate) mod sync {
    pub(crate) use std::sync::{Arc, RwLock, atomic};
}

#[cfg(all(test, loom))]
pub(crate) mod sync {
    pub(crate) use ::loom::sync::{Arc, RwLock, atomic};
}
