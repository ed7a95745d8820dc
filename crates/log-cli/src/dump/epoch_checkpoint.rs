//! `dump` of a partition's `leader-epoch-checkpoint` (Kafka's `DumpLogSegments` ignores it as an
//! unknown file): its version and entry count, then one `epoch: E startOffset: O` line per
//! entry, in the file's order; in `--json`, `{"type":"leader_epoch","file","epoch","start_offset"}`
//! per entry. A malformed file is an error naming the file and line.

use std::io::Write;
use std::path::Path;

use anyhow::Result;
use seglog_log::{FileSystem, RealFs};
use seglog_log::{LEADER_EPOCH_CHECKPOINT, LEADER_EPOCH_CHECKPOINT_VERSION, LeaderEpochCheckpoint};

use crate::common::Outcome;

/// Whether `file` is named as a partition's leader epoch checkpoint.
pub(super) fn is_epoch_checkpoint(file: &Path) -> bool {
    file.file_name().and_then(|n| n.to_str()) == Some(LEADER_EPOCH_CHECKPOINT)
}

/// The checkpoint's entries, as written; a missing file is an I/O error.
fn entries(file: &Path) -> Result<Vec<seglog_log::EpochEntry>> {
    if !RealFs.exists(file) {
        return Err(anyhow::Error::new(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("{}: cannot open: no such file", file.display()),
        )));
    }
    let dir = file.parent().unwrap_or_else(|| Path::new("."));
    Ok(LeaderEpochCheckpoint::in_dir(RealFs, dir).read_as_written()?)
}

pub(super) fn dump(file: &Path, out: &mut impl Write) -> Result<Outcome> {
    let entries = entries(file)?;
    writeln!(
        out,
        "leader epoch checkpoint version: {LEADER_EPOCH_CHECKPOINT_VERSION} entries: {}",
        entries.len()
    )?;
    for e in entries {
        writeln!(out, "epoch: {} startOffset: {}", e.epoch, e.start_offset)?;
    }
    Ok(Outcome::Clean)
}

pub(super) fn dump_json(file: &Path, out: &mut impl Write) -> Result<bool> {
    for e in entries(file)? {
        crate::common::json_line(
            out,
            &serde_json::json!({"type": "leader_epoch", "file": file.display().to_string(), "epoch": e.epoch, "start_offset": e.start_offset}),
        )?;
    }
    Ok(false)
}
