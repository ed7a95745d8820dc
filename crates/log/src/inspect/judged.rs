//! A `.log` walked batch by batch under recovery's offset rules (`seglog_segment::verify`), for
//! readers that are handed one file rather than a partition (`seglog dump`): a batch reaches the
//! caller only once the batch after it (or the end) confirms its offsets, and a batch whose
//! offsets its neighbours or the next segment's base offset make impossible ends the walk as
//! damage, so its records are never shown as records.

use std::io;
use std::ops::ControlFlow;
use std::path::Path;

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, FramedBatch};
use seglog_segment::scan::{Scan, ScanEnd};
use seglog_segment::verify::{OffsetBounds, OffsetJudge, RecoveryStop, check_batch};

use super::segment_log::SegmentLog;
use crate::error::Result;
use crate::listing::{self, PartitionFile};

/// How [`SegmentLog::judged_batches`] ended.
#[derive(Debug)]
pub enum JudgedEnd<T> {
    /// The callback stopped the walk with this value.
    Stopped(T),
    /// A batch whose offsets cannot be right, at its byte position: nothing from it on was
    /// handed over.
    Damage(RecoveryStop),
    /// The walk reached the end of the range, or framing stopped it, as [`Scan::Ended`].
    Ended(ScanEnd),
}

/// The base offset of the next segment after `log` in its directory: the smallest `<offset>.log`
/// above `log`'s own base offset, as a partition's listing finds it. `None` when `log`'s name has
/// no base offset or no later segment exists.
pub fn next_segment_base_offset<F: FileSystem>(fs: &F, log: &Path) -> io::Result<Option<i64>> {
    let Some(own) = PartitionFile::new(log.to_path_buf()).base_offset() else {
        return Ok(None);
    };
    let dir = log
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    Ok(listing::list(fs, dir)?
        .iter()
        .filter_map(PartitionFile::log_base_offset)
        .filter(|&b| b > own)
        .min())
}

/// Why the inner walk stopped.
enum Stop<T> {
    Caller(T),
    Damage(RecoveryStop),
}

/// The batch held back until the judge confirms it: its position and a copy of its bytes, in a
/// buffer reused from batch to batch.
struct Held {
    position: Option<u64>,
    bytes: Vec<u8>,
}

impl Held {
    fn hold(&mut self, position: u64, bytes: &[u8]) {
        self.position = Some(position);
        self.bytes.clear();
        self.bytes.extend_from_slice(bytes);
    }

    /// Hands the batch held back (if any) to `f`; it passed its own checks.
    fn release<T>(
        &mut self,
        f: &mut impl FnMut(u64, FramedBatch<'_>, bool) -> ControlFlow<T>,
    ) -> ControlFlow<T> {
        let Some(position) = self.position.take() else {
            return ControlFlow::Continue(());
        };
        match rf::batches(&self.bytes).next() {
            Some(Ok(framed)) => f(position, framed, true),
            _ => ControlFlow::Continue(()),
        }
    }
}

impl<F: FileSystem> SegmentLog<F> {
    /// Walks the batches of `[0, end)` as [`SegmentLog::batches`] does, with the offset rules
    /// recovery and the partition read path apply (`bounds`: this segment's base offset and the
    /// next segment's). `f` gets each batch, in file order, once it is confirmed, and whether it
    /// passed its own checks (CRC, records that decode), so that a caller need not check its CRC
    /// again. A batch that fails them is not judged: the batch before it is released, then it
    /// is handed over as it is (with `false`), and judging goes on after it.
    pub fn judged_batches<T>(
        &self,
        end: u64,
        chunk: usize,
        bounds: OffsetBounds,
        mut f: impl FnMut(u64, FramedBatch<'_>, bool) -> ControlFlow<T>,
    ) -> Result<JudgedEnd<T>> {
        let mut judge = OffsetJudge::new(bounds);
        let mut held = Held {
            position: None,
            bytes: Vec::new(),
        };
        let mut scratch = Vec::new();
        let scan = self.batches(0, end, chunk, |position, framed| {
            let Ok((facts, legacy)) = check_batch(&framed, position, &mut scratch) else {
                if judge.finish().is_some() {
                    held.release(&mut f).map_break(Stop::Caller)?;
                }
                return f(position, framed, false).map_break(Stop::Caller);
            };
            match judge.push_across_overflow(facts, legacy) {
                Ok(confirmed) => {
                    if confirmed.is_some() {
                        held.release(&mut f).map_break(Stop::Caller)?;
                    }
                    held.hold(position, framed.bytes());
                    ControlFlow::Continue(())
                }
                Err(stop) => ControlFlow::Break(Stop::Damage(stop)),
            }
        })?;
        if let Scan::Stopped(Stop::Caller(value)) = scan {
            return Ok(JudgedEnd::Stopped(value));
        }
        // What the judge still holds (unless the damage is that batch) is good.
        if judge.finish().is_some()
            && let ControlFlow::Break(value) = held.release(&mut f)
        {
            return Ok(JudgedEnd::Stopped(value));
        }
        Ok(match scan {
            Scan::Stopped(Stop::Caller(value)) => JudgedEnd::Stopped(value),
            Scan::Stopped(Stop::Damage(stop)) => JudgedEnd::Damage(stop),
            Scan::Ended(e) => JudgedEnd::Ended(e),
        })
    }
}
