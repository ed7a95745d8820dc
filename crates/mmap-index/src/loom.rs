//! The concurrency facade (tokio's pattern): std's atomics, `Arc`, `Mutex` and `UnsafeCell`
//! normally, loom's under `cfg(all(test, loom))` so that the loom models check the very code
//! that ships. Code in this crate never names `std::sync` for anything a model must see.
//!
//! The facade switches on `all(test, loom)`, not on `loom` alone: loom is a dev-dependency, so a
//! plain `--cfg loom` build of the library (no tests) keeps std's types and still compiles.
#![forbid(unsafe_code)]

#[cfg(not(all(test, loom)))]
mod imp {
    pub(crate) use std::sync::atomic::{AtomicUsize, Ordering, fence};
    pub(crate) use std::sync::{Arc, Mutex, MutexGuard};
    pub(crate) use std::thread::yield_now;

    /// `std::cell::UnsafeCell` with loom's closure-based API, so that the same code compiles
    /// against both. The closures receive raw pointers; dereferencing them is the caller's
    /// (documented) business.
    #[derive(Debug)]
    pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

    impl<T> UnsafeCell<T> {
        pub(crate) const fn new(value: T) -> Self {
            Self(std::cell::UnsafeCell::new(value))
        }

        #[expect(
            clippy::inline_always,
            reason = "a reader's lookup compiles into its caller (docs/perf/index.md, 2026-12-06)"
        )]
        #[inline(always)]
        pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
            f(self.0.get())
        }

        pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
            f(self.0.get())
        }
    }
}

#[cfg(all(test, loom))]
mod imp {
    pub(crate) use ::loom::cell::UnsafeCell;
    pub(crate) use ::loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering, fence};
    pub(crate) use ::loom::sync::{Arc, Mutex, MutexGuard};
    pub(crate) use ::loom::thread::yield_now;
}

pub(crate) use imp::*;
