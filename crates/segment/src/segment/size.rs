//! [`PublishedSize`]: the `.log`'s logical size, which readers load without the writer's lock.

use crate::loom::sync::atomic::{AtomicU64, Ordering};

/// The logical size of the `.log`. Only the writer changes it, under the writer's lock: after
/// writing the bytes below a larger size (append), or after cutting the file to a smaller one
/// (recovery, truncation). The store is a release and readers load with acquire, so every byte
/// below a size a reader sees was written before it looks: a size never runs ahead of its bytes.
/// A reader that loaded a size before a cut may find the file shorter; its read stops at the end.
#[derive(Debug)]
pub(super) struct PublishedSize(AtomicU64);

impl PublishedSize {
    pub(super) fn new(size: u64) -> Self {
        Self(AtomicU64::new(size))
    }

    /// The size for a reader: the bytes below it are written and visible to this thread.
    pub(super) fn load(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    /// The size for the writer, under the writer's lock: the last value it published itself.
    pub(super) fn load_by_writer(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Publishes `size` once the bytes below it are written, or once the file was cut to it.
    pub(super) fn publish(&self, size: u64) {
        self.0.store(size, Ordering::Release);
    }
}

// The loom models: compiled only in `cfg(loom)` test builds (`cargo xtask loom`).
#[cfg(all(test, loom))]
mod loom_size;
