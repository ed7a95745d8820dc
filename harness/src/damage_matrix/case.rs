//! One case: a family, the codec of the batch it hits, what it does, what the judge must take as
//! the truth, and the mutation itself, applied to a fresh copy of the template.

use std::path::Path;

use anyhow::{Context, Result};

/// What decides the case's expected outcome.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Expect {
    /// The oracle's reading of the bytes (batches, records, index entries), with the documented
    /// recovery rules applied to it by the judge.
    Oracle,
    /// A state Kafka's loader accepts and tidies without touching a record: `check` exits 0 (a
    /// note), recover keeps every record.
    Note,
    /// A documented problem that holds no record: `check` exits 1, recover keeps every record.
    Problem,
}

impl Expect {
    pub(crate) const fn name(self) -> &'static str {
        match self {
            Self::Oracle => "oracle",
            Self::Note => "note",
            Self::Problem => "problem",
        }
    }
}

pub(crate) type Mutation = Box<dyn Fn(&Path, &Path) -> Result<()>>;

pub(crate) struct Case {
    pub(crate) family: &'static str,
    pub(crate) codec: &'static str,
    pub(crate) what: String,
    pub(crate) expect: Expect,
    /// Applied to (log directory, partition directory).
    pub(crate) mutate: Mutation,
}

impl Case {
    pub(crate) fn new(
        family: &'static str,
        codec: &'static str,
        what: String,
        expect: Expect,
        mutate: impl Fn(&Path, &Path) -> Result<()> + 'static,
    ) -> Self {
        Self {
            family,
            codec,
            what,
            expect,
            mutate: Box::new(mutate),
        }
    }
}

/// Reads `name` in the partition, changes it with `f`, writes it back.
pub(crate) fn edit(part: &Path, name: &str, f: impl FnOnce(&mut Vec<u8>)) -> Result<()> {
    let path = part.join(name);
    let mut bytes = std::fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
    f(&mut bytes);
    std::fs::write(&path, bytes).with_context(|| format!("writing {}", path.display()))
}

/// Flips bit `bit` (0 = the lowest bit of the last byte) of the big-endian field at `at..at+width`.
pub(crate) fn flip(bytes: &mut [u8], at: usize, width: usize, bit: usize) {
    let byte = at + width - 1 - bit / 8;
    if let Some(b) = bytes.get_mut(byte) {
        *b ^= 1 << (bit % 8);
    }
}
