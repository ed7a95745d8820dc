//! # seglog-fuzz-targets
//!
//! The body of every fuzz target, written once and run by two drivers:
//!
//! - cargo-fuzz (libFuzzer, nightly): `fuzz/fuzz_targets/<name>.rs` is one line that calls
//!   [`Target::run`]; `cargo xtask fuzz` runs it when a nightly toolchain and cargo-fuzz are
//!   installed.
//! - [`stable`]: a proptest driver on the stable toolchain that feeds arbitrary bytes and
//!   structured mutations of the [`seeds`] (bit flips, overwrites with interesting integers,
//!   cuts, splices, CRC fix-ups so the damage reaches the record parser). `cargo xtask fuzz`
//!   falls back to it, and `cargo xtask ci` runs a short smoke of every target through it
//!   (`tests/smoke.rs`).
//!
//! A target fails by panicking: either the code under test panicked (decoding untrusted bytes
//! must never panic), or one of the target's own assertions found a broken invariant (recovery
//! keeps exactly a prefix of the input, an index lookup agrees with a linear scan, and so on).
//! Every input a fuzzer found is kept as a regression test in `tests/regressions.rs`.
//!
//! The targets:
//!
//! | target | input | what runs |
//! |---|---|---|
//! | `record_format` | a buffer of batches; its first byte also picks a codec | framing, CRC validation, v2 and legacy v0/v1 decoding, records, headers, control records, offset and timestamp search, in-place edits, every codec's decompressor |
//! | `index` | an 11-byte header (kind, open mode, base offset, size) and a `.index` or `.timeindex` file | open (writable, existing, read-only), lookups checked against a linear scan, entries, upper bounds, sanity check, verify, append, truncate, trim, resize, close, reopen |
//! | `segment_recover` | a `.log` file | `LogSegment::recover`, then invariants: exactly a valid prefix is kept, the indexes pass the sanity check, offsets translate to their batches, a second recovery changes nothing, the segment takes an append |
//! | `cli_dump` | a 6-byte header (flags, which files, two lengths), then `.log`, `.index` and `.timeindex` bytes | `seglog dump` in-process with the header's flags |
#![forbid(unsafe_code)]
#![allow(
    clippy::missing_panics_doc,
    reason = "a fuzz target reports a bug by panicking; every public function here may"
)]

mod cli_dump;
mod index;
mod record_format;
pub mod seeds;
mod segment_recover;
pub mod stable;

use std::cell::RefCell;
use std::path::{Path, PathBuf};

pub use cli_dump::cli_dump;
pub use index::index;
pub use record_format::record_format;
pub use segment_recover::segment_recover;

/// One fuzz target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// Batch and record decoding for every codec and the legacy formats.
    RecordFormat,
    /// Opening an index file from arbitrary bytes and looking entries up in it.
    Index,
    /// Recovering a segment from arbitrary `.log` bytes.
    SegmentRecover,
    /// Running `seglog dump` on arbitrary files.
    CliDump,
}

impl Target {
    /// Every target, in layering order.
    pub const ALL: [Target; 4] = [
        Target::RecordFormat,
        Target::Index,
        Target::SegmentRecover,
        Target::CliDump,
    ];

    /// The name of the target (and of its cargo-fuzz binary).
    pub fn name(self) -> &'static str {
        match self {
            Target::RecordFormat => "record_format",
            Target::Index => "index",
            Target::SegmentRecover => "segment_recover",
            Target::CliDump => "cli_dump",
        }
    }

    /// The target called `name`.
    pub fn from_name(name: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == name)
    }

    /// Runs the target's body on one input. Panics when it finds a bug.
    pub fn run(self, data: &[u8]) {
        match self {
            Target::RecordFormat => record_format(data),
            Target::Index => index(data),
            Target::SegmentRecover => segment_recover(data),
            Target::CliDump => cli_dump(data),
        }
    }
}

thread_local! {
    /// One scratch directory per thread, emptied before each input, so that an input's result
    /// never depends on the one before it.
    static SCRATCH: RefCell<Option<tempfile::TempDir>> = const { RefCell::new(None) };
}

/// Runs `f` in this thread's scratch directory, emptied first.
pub(crate) fn with_scratch_dir<T>(f: impl FnOnce(&Path) -> T) -> T {
    let dir: PathBuf = SCRATCH.with(|cell| {
        let mut slot = cell.borrow_mut();
        let dir = slot.get_or_insert_with(|| {
            // Memory-backed where the machine has it: recovery and close fsync, and on a disk
            // that would cost most of each input's time.
            let builder = tempfile::Builder::new().prefix("seglog-fuzz-").clone();
            builder
                .tempdir_in("/dev/shm")
                .or_else(|_| builder.tempdir())
                .expect("creating a scratch directory")
        });
        dir.path().to_path_buf()
    });
    for entry in std::fs::read_dir(&dir).expect("listing the scratch directory") {
        let path = entry.expect("listing the scratch directory").path();
        std::fs::remove_file(&path).expect("emptying the scratch directory");
    }
    f(&dir)
}
