//! `dump` of a `.txnindex`: Kafka 4.4's `dumpTxnIndex`, one line per aborted transaction.
//!
//! As Kafka does, every entry is read before any is printed, so a file with an entry Kafka cannot
//! read prints no entry; seglog then reports the error (file and byte position) on stderr instead
//! of a stack trace. A missing file is reported as unreadable (Kafka prints nothing for it).

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result};
use seglog_log::inspect::TransactionIndex;
use seglog_log::{FileSystem, RealFs};

use super::base_offset_of;
use crate::common::Outcome;

pub(super) fn dump_txn_index(file: &Path, out: &mut impl Write) -> Result<Outcome> {
    let base = base_offset_of(file).map_err(|e| {
        anyhow::Error::new(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            e.to_string(),
        ))
    })?;
    if !RealFs.exists(file) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no such file",
        ))
        .with_context(|| format!("{}: cannot open", file.display()));
    }
    let index = TransactionIndex::open_read_only(RealFs, file, base)?;
    for txn in index.all_aborted_txns()? {
        writeln!(
            out,
            "version: 0 producerId: {} firstOffset: {} lastOffset: {} lastStableOffset: {}",
            txn.producer_id(),
            txn.first_offset(),
            txn.last_offset(),
            txn.last_stable_offset()
        )?;
    }
    Ok(Outcome::Clean)
}
