//! The concurrency facade (tokio's `loom/mod.rs` pattern): std's `sync::atomic` normally, loom's
//! under `cfg(all(test, loom))`, so that the loom models check the code that ships. An atomic a
//! model checks is named through here (`crate::loom::sync::atomic`), never through `std::sync`.
//!
//! The switch is `all(test, loom)`, not `loom` alone: loom is a dev-dependency, so a plain
//! `--cfg loom` build of the library keeps std's types. The models are compiled only in
//! `cfg(loom)` test builds, and `cargo xtask loom` runs them.

#[cfg(not(all(test, loom)))]
pub(crate) mod sync {
    pub(crate) mod atomic {
        pub(crate) use std::sync::atomic::{AtomicU64, Ordering};
    }
}

#[cfg(all(test, loom))]
pub(crate) mod sync {
    pub(crate) mod atomic {
        pub(crate) use ::loom::sync::atomic::{AtomicU64, Ordering};
    }
}
