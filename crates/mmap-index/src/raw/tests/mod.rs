//! Loom models of the index core (run by `cargo xtask loom`). Loom cannot model a real `mmap`,
//! so the models drive the very same `Core`, `Reader` and `SwapCell` code over [`LoomMemory`],
//! a "file" of loom atomics of which each "mapping" is a bounded view. Dropping a view inside
//! the slot's loom `UnsafeCell` while a reader is inside it is reported by loom as a causality
//! violation: that is the use-after-unmap check.
#![forbid(unsafe_code)]

mod loom_append;
mod loom_evict;
mod loom_file;
mod loom_hazard;
mod loom_memory;
mod loom_remap;
