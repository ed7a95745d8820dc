//! `cli_recover`'s limit as a whole process: `seglog-bench-compare read-check <file>` reads a
//! segment once and checks the CRC-32C of every batch (the segment `recovery` limit's
//! `read_and_check`), the least any recovery of v2 batches does, and fails unless it checked
//! every byte of the file. It writes no index: the two index files of a 512 MiB segment are
//! about 1 MiB together, against the 512 MiB read.

use std::path::PathBuf;

use anyhow::{Context, Result, ensure};

use crate::limit::read_and_check;

/// Checks the file named by the first argument.
pub(crate) fn run(mut args: impl Iterator<Item = String>) -> Result<()> {
    let path = PathBuf::from(args.next().context("read-check needs a file")?);
    let len = std::fs::metadata(&path)
        .with_context(|| format!("{}", path.display()))?
        .len();
    let checked = read_and_check(&path)?;
    ensure!(
        checked == len,
        "{}: checked {checked} of {len} bytes",
        path.display()
    );
    Ok(())
}
