//! [`FetchDataInfo::for_each_record`](super::FetchDataInfo::for_each_record): a fetch's records
//! decoded batch by batch straight from the segment's `.log` mapping (or from a copy when it is
//! not mapped), with errors that name the `.log` and the byte position.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, Batch, Record, batches_from};
use seglog_segment::{FileRegion, LogSegment};

use crate::error::{Error, Result};

/// What decoding one batch came to.
enum Step<B> {
    /// The batch's records were all handed over; the next batch starts here (region-relative).
    Next(usize),
    /// No whole batch starts here: the end of the fetch.
    End,
    /// The callback stopped.
    Stopped(B),
}

/// Hands `f` the records of `region` of `segment`, one batch at a time: each batch is borrowed
/// from the mapping for as long as its records are decoded and handed over, or, once the
/// mapping cannot lend the region, decoded from a copy in `buf`.
pub(super) fn for_each_record<F: FileSystem, B>(
    segment: &LogSegment<F>,
    region: FileRegion,
    buf: &mut Vec<u8>,
    mut f: impl FnMut(Record) -> ControlFlow<B>,
) -> Result<Option<B>> {
    // Empty unless `with_region` had to copy the region into it.
    buf.clear();
    let mut at = 0;
    loop {
        let step = if buf.is_empty() {
            segment.with_region(region, buf, |bytes| decode_batch(bytes, at, &mut f))?
        } else {
            decode_batch(buf, at, &mut f)
        };
        match step {
            Ok(Step::Next(next)) => at = next,
            Ok(Step::End) => return Ok(None),
            Ok(Step::Stopped(b)) => return Ok(Some(b)),
            Err(e) => {
                let position = region.position;
                let at = e.position().unwrap_or(0);
                return Err(Error::Segment(seglog_segment::Error::Corrupt {
                    path: segment.log_path(),
                    position: position.saturating_add(at),
                    source: e.offset_by(position),
                }));
            }
        }
    }
}

/// Decodes the batch at `at` of `bytes` (the fetch's region), its CRC checked first, as
/// [`records`](crate::record::records) does, and hands `f` its records in order. On an error,
/// `f` has had the batch's records before it. Errors are relative to `bytes`.
///
/// The loop is written out rather than run through `records`: its per-record state machine
/// made `consume_records` about 15% slower in CPU time (docs/perf/consume.md).
fn decode_batch<B>(
    bytes: &[u8],
    at: usize,
    f: &mut impl FnMut(Record) -> ControlFlow<B>,
) -> rf::Result<Step<B>> {
    let Some(framed) = batches_from(bytes, at).next().transpose()? else {
        return Ok(Step::End);
    };
    framed.validate()?;
    let batch = framed.decode()?;
    if let Batch::V2(v2) = &batch
        && !v2.is_compressed()
    {
        for record in v2.records()? {
            if let ControlFlow::Break(b) = f(record?.to_record()) {
                return Ok(Step::Stopped(b));
            }
        }
    } else {
        for record in batch.to_records()? {
            if let ControlFlow::Break(b) = f(record) {
                return Ok(Step::Stopped(b));
            }
        }
    }
    Ok(Step::Next(framed.next_position()))
}
