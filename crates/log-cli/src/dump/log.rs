//! `seglog dump` of a `.log` (or a KRaft snapshot): Kafka's `dumpLog`, its batches judged by
//! recovery's offset rules.

use std::io::Write;
use std::path::Path;

use anyhow::{Context, Result, bail};
use seglog_log::RealFs;
use seglog_log::inspect::{
    JudgedEnd, OffsetBounds, Scan, ScanEnd, SegmentLog, next_segment_base_offset,
};

use super::chunks::{self, Each, Format};
use super::{DumpOptions, KafkaStops, Reports, base_offset_of, java_path};
use crate::common::{Outcome, lib};

/// Kafka's first line for a `.log` (its base offset) or a KRaft snapshot (its end offset and
/// epoch); whether the file is a snapshot.
fn print_start(file: &Path, name: &str, out: &mut impl Write) -> Result<bool> {
    if let Some(stem) = name.strip_suffix(".checkpoint") {
        let (offset, epoch) = stem.split_once('-').unwrap_or((stem, "0"));
        let offset: i64 = offset
            .parse()
            .with_context(|| format!("{}: not a snapshot name", file.display()))?;
        let epoch: i32 = epoch
            .parse()
            .with_context(|| format!("{}: not a snapshot name", file.display()))?;
        writeln!(out, "Snapshot end offset: {offset}, epoch: {epoch}")?;
    } else {
        writeln!(out, "Log starting offset: {}", base_offset_of(file)?)?;
    }
    Ok(name.ends_with(".checkpoint"))
}

/// Kafka's `FileRecords.slice(0, maxBytes)` refuses a negative size, and the run stops there.
fn negative_max_bytes(file: &Path, max_bytes: i32, len: u64) -> Result<()> {
    if max_bytes >= 0 {
        return Ok(());
    }
    Err(KafkaStops(format!(
        "java.lang.IllegalArgumentException: Invalid size: {max_bytes} in read from FileRecords(size={len}, file={}, start=0, end={})",
        java_path::file_string(file),
        i32::MAX
    ))
    .into())
}

pub(super) fn dump_log(
    file: &Path,
    o: &DumpOptions,
    reports: &mut Reports,
    out: &mut impl Write,
) -> Result<Outcome> {
    let name = file
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let snapshot = print_start(file, name, out)?;
    let handle = SegmentLog::open(&RealFs, file)
        .with_context(|| format!("{}: cannot open", file.display()))?;
    let len = handle
        .len()
        .with_context(|| format!("{}: cannot stat", file.display()))?;
    negative_max_bytes(file, o.max_bytes, len)?;
    let max_bytes = u64::try_from(o.max_bytes).unwrap_or(0);
    let end = len.min(max_bytes);
    let format = Format {
        file,
        options: o,
        deep: o.deep_iteration || o.print_data_log,
        abs: &java_path::absolute(file),
    };
    // A segment's batches are judged as recovery and consume judge them, against each other and
    // the next segment in the same directory; a snapshot's offsets are not a segment's.
    let (scan, valid_bytes) = if snapshot {
        let scan =
            |each: &mut Each<'_>| match handle.batches(0, end, 8 << 20, |position, framed| {
                each(position, framed, false)
            }) {
                Ok(Scan::Stopped(e)) => Ok(JudgedEnd::Stopped(e)),
                Ok(Scan::Ended(e)) => Ok(JudgedEnd::Ended(e)),
                Err(e) => Err(e),
            };
        chunks::print(&format, scan, out, reports)?
    } else {
        let next_base_offset = next_segment_base_offset(&RealFs, file)
            .with_context(|| format!("{}: cannot list its directory", file.display()))?;
        let bounds = OffsetBounds {
            base_offset: base_offset_of(file)?,
            next_base_offset,
        };
        let scan = |each: &mut Each<'_>| handle.judged_batches(end, 8 << 20, bounds, each);
        chunks::print(&format, scan, out, reports)?
    };
    match scan
        .map_err(lib)
        .with_context(|| format!("{}: read failed", file.display()))?
    {
        // Only a writer that failed stops the scan, and that error is returned above.
        JudgedEnd::Stopped(()) | JudgedEnd::Ended(ScanEnd::Clean { .. }) => {}
        JudgedEnd::Damage(stop) => bail!("{}: {stop}", file.display()),
        JudgedEnd::Ended(ScanEnd::Corrupt { position, error }) => {
            bail!(
                "{}: corrupt batch at byte {position}: {error}",
                file.display()
            );
        }
    }
    let trailing = end - valid_bytes;
    if trailing > 0 && o.max_bytes == i32::MAX {
        writeln!(out, "Found {trailing} invalid bytes at the end of {name}")?;
    }
    Ok(Outcome::Clean)
}
