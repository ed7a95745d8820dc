//! [`LoomMemory`]: the plain-buffer stand-in for a mapping in the loom models.
#![forbid(unsafe_code)]

use crate::loom::{Arc, AtomicU32, AtomicUsize, Ordering};
use crate::map::{Memory, Word};

/// The "file": words that outlive every mapping of them, as page-cache pages do.
pub(super) struct LoomFile {
    words: Vec<AtomicU32>,
    /// Live mappings of this file.
    pub(super) mapped: AtomicUsize,
}

impl LoomFile {
    /// Word `index` of the file (the models write the "file" directly, as `pwrite` does).
    pub(super) fn word(&self, index: usize) -> &AtomicU32 {
        &self.words[index]
    }

    pub(super) fn new(words: usize) -> Arc<Self> {
        Arc::new(Self {
            words: (0..words).map(|_| AtomicU32::new(0)).collect(),
            mapped: AtomicUsize::new(0),
        })
    }
}

/// A "mapping": the first `words` words of a [`LoomFile`].
pub(super) struct LoomMemory {
    file: Arc<LoomFile>,
    words: usize,
}

impl LoomMemory {
    pub(super) fn map(file: &Arc<LoomFile>, words: usize) -> Self {
        file.mapped.fetch_add(1, Ordering::SeqCst);
        Self {
            file: Arc::clone(file),
            words,
        }
    }
}

impl Drop for LoomMemory {
    fn drop(&mut self) {
        self.file.mapped.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Word for AtomicU32 {
    fn load(&self) -> u32 {
        self.load(Ordering::Relaxed)
    }

    fn store(&self, value: u32) {
        self.store(value, Ordering::Relaxed);
    }
}

impl Memory for LoomMemory {
    type Word = AtomicU32;

    fn cells(&self) -> &[AtomicU32] {
        self.file.words.get(..self.words).unwrap_or_default()
    }
}
