//! A read-only view of a partition directory for `consume`, `offsets` and `stats`: it takes no
//! lock and changes nothing, so it can follow a log that another process is writing.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use seglog_log::{FileSystem, OpenMode, RealFile, RealFs};
use seglog_log::{LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint, TopicPartition};
use seglog_mmap_index::OffsetIndex;
use seglog_record_format::{Batch, Record};
use seglog_segment::naming;
use seglog_segment::scan::{Scan, ScanEnd, scan_batches};

/// One segment's `.log`.
#[derive(Debug, Clone)]
pub(crate) struct SegmentFile {
    pub(crate) base_offset: i64,
    pub(crate) path: PathBuf,
}

/// The segments of a partition directory, oldest first.
pub(crate) fn segments(dir: &Path) -> Result<Vec<SegmentFile>> {
    if TopicPartition::parse_dir(dir).is_err() {
        bail!(
            "{}: not a partition directory (its name must be topic-N)",
            dir.display()
        );
    }
    let mut out = Vec::new();
    for entry in
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?
    {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if let Some(base) = name
            .strip_suffix(naming::LOG_FILE_SUFFIX)
            .and_then(naming::offset_from_file_name)
        {
            out.push(SegmentFile {
                base_offset: base,
                path,
            });
        }
    }
    out.sort_by_key(|s| s.base_offset);
    Ok(out)
}

/// The log start offset: the checkpointed one if it is past the first segment, else the first base.
pub(crate) fn log_start_offset(dir: &Path, segments: &[SegmentFile]) -> i64 {
    let first = segments.first().map_or(0, |s| s.base_offset);
    let checkpointed = TopicPartition::parse_dir(dir).ok().and_then(|(tp, _)| {
        let log_dir = dir.parent()?;
        OffsetCheckpoint::new(RealFs, log_dir.join(LOG_START_OFFSET_CHECKPOINT))
            .read()
            .ok()?
            .get(&tp)
            .copied()
    });
    checkpointed.map_or(first, |c| c.max(first))
}

fn open(path: &Path) -> Result<RealFile> {
    RealFs
        .open(path, OpenMode::ReadOnly)
        .with_context(|| format!("{}: cannot open", path.display()))
}

/// Where to start reading `target` in `segment`: the offset index's floor entry when the index is
/// there and sane, else the start of the file.
fn start_position(dir: &Path, segment: &SegmentFile, target: i64) -> u64 {
    let index = naming::offset_index_file(dir, segment.base_offset, "");
    OffsetIndex::open_read_only(&index, segment.base_offset)
        .ok()
        .filter(|i| i.sanity_check().is_ok() && i.verify().is_ok_and(|r| r.is_clean()))
        .and_then(|i| i.lookup(target).ok())
        .map_or(0, |p| u64::from(p.position))
}

/// Calls `f` with every record at or after `from` (in offset order) until it breaks; returns the
/// offset after the last whole batch read, so a follower can poll again from there.
pub(crate) fn for_each_record(
    dir: &Path,
    from: i64,
    mut f: impl FnMut(&Record, &Batch<'_>) -> Result<ControlFlow<()>>,
) -> Result<(i64, bool)> {
    let segments = segments(dir)?;
    let first = segments
        .iter()
        .rposition(|s| s.base_offset <= from)
        .unwrap_or(0);
    let mut next = from;
    for segment in segments.iter().skip(first) {
        let file = open(&segment.path)?;
        let len = std::fs::metadata(&segment.path)?.len();
        let start = if segment.base_offset <= from {
            start_position(dir, segment, from)
        } else {
            0
        };
        let mut failed: Option<anyhow::Error> = None;
        let mut stopped = false;
        let scan = scan_batches(
            &file,
            &segment.path,
            start,
            len,
            4 << 20,
            |position, framed| {
                let decoded = match framed.decode().and_then(|d| d.validate().map(|()| d)) {
                    Ok(d) => d,
                    Err(e) => {
                        failed = Some(anyhow::anyhow!(
                            "{}: at byte {position}: {e}",
                            segment.path.display()
                        ));
                        return Ok(ControlFlow::Break(()));
                    }
                };
                if decoded.last_offset() < from {
                    return Ok(ControlFlow::Continue(()));
                }
                let records = match decoded.to_records() {
                    Ok(r) => r,
                    Err(e) => {
                        failed = Some(anyhow::anyhow!(
                            "{}: at byte {position}: {e}",
                            segment.path.display()
                        ));
                        return Ok(ControlFlow::Break(()));
                    }
                };
                for record in records.iter().filter(|r| r.offset >= from) {
                    match f(record, &decoded) {
                        Ok(ControlFlow::Continue(())) => {}
                        Ok(ControlFlow::Break(())) => {
                            stopped = true;
                            return Ok(ControlFlow::Break(()));
                        }
                        Err(e) => {
                            failed = Some(e);
                            return Ok(ControlFlow::Break(()));
                        }
                    }
                }
                next = next.max(decoded.last_offset() + 1);
                Ok(ControlFlow::Continue(()))
            },
        )?;
        if let Some(e) = failed {
            return Err(e);
        }
        if stopped {
            return Ok((next, true));
        }
        if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
            bail!("{}: at byte {position}: {error}", segment.path.display());
        }
    }
    Ok((next, false))
}

/// The log end offset: the offset after the last whole batch of the last segment.
pub(crate) fn log_end_offset(dir: &Path) -> Result<i64> {
    let segments = segments(dir)?;
    let Some(last) = segments.last() else {
        return Ok(0);
    };
    let file = open(&last.path)?;
    let len = std::fs::metadata(&last.path)?.len();
    let mut next = last.base_offset;
    let start = start_position(dir, last, i64::MAX);
    let scan = scan_batches(&file, &last.path, start, len, 4 << 20, |_, framed| {
        if let Ok(last_offset) = framed.last_offset() {
            next = last_offset + 1;
        }
        Ok(ControlFlow::<()>::Continue(()))
    })?;
    if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
        bail!("{}: at byte {position}: {error}", last.path.display());
    }
    Ok(next)
}
