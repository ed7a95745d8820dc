//! [`FetchDataInfo::for_each_record`](super::FetchDataInfo::for_each_record) and
//! [`for_each_record_ref`](super::FetchDataInfo::for_each_record_ref): a fetch's records
//! decoded batch by batch straight from the segment's `.log` mapping (or from a copy when it is
//! not mapped), with errors that name the `.log` and the byte position; each record handed over
//! owned, or in one record reused from record to record.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, Batch, Record, RecordView, batches_from};
use seglog_segment::{FileRegion, LogSegment};

use crate::error::{Error, Result};

/// How a decoded record reaches the caller's callback.
pub(super) trait Sink<B> {
    /// A record of an uncompressed v2 batch, decoded in place.
    fn view(&mut self, view: &RecordView<'_>) -> ControlFlow<B>;
    /// A record of a compressed or legacy batch, decoded whole.
    fn owned(&mut self, record: Record) -> ControlFlow<B>;
}

/// Each record handed over owned: its key, value and headers copied into new buffers.
pub(super) struct Owned<F>(pub(super) F);

impl<B, F: FnMut(Record) -> ControlFlow<B>> Sink<B> for Owned<F> {
    #[inline]
    fn view(&mut self, view: &RecordView<'_>) -> ControlFlow<B> {
        (self.0)(view.to_record())
    }

    #[inline]
    fn owned(&mut self, record: Record) -> ControlFlow<B> {
        (self.0)(record)
    }
}

/// Each record copied into one [`Record`] whose key and value buffers are kept from record to
/// record (and a spare for each while it is null), then lent: no allocation per record once the
/// buffers have grown to the largest key and value.
pub(super) struct Reused<F> {
    record: Record,
    spare_key: Vec<u8>,
    spare_value: Vec<u8>,
    f: F,
}

impl<F> Reused<F> {
    pub(super) fn new(f: F) -> Self {
        Reused {
            record: Record::default(),
            spare_key: Vec::new(),
            spare_value: Vec::new(),
            f,
        }
    }
}

/// Sets `slot` to a copy of `bytes`, in the buffer it holds or in `spare`; a null parks the
/// buffer in `spare`.
#[inline]
fn refill(slot: &mut Option<Vec<u8>>, spare: &mut Vec<u8>, bytes: Option<&[u8]>) {
    match bytes {
        Some(bytes) => {
            let buf = slot.get_or_insert_with(|| std::mem::take(spare));
            buf.clear();
            buf.extend_from_slice(bytes);
        }
        None => {
            if let Some(buf) = slot.take() {
                *spare = buf;
            }
        }
    }
}

impl<B, F: FnMut(&Record) -> ControlFlow<B>> Sink<B> for Reused<F> {
    #[inline]
    fn view(&mut self, view: &RecordView<'_>) -> ControlFlow<B> {
        let record = &mut self.record;
        record.offset = view.offset();
        record.timestamp = view.timestamp();
        refill(&mut record.key, &mut self.spare_key, view.key());
        refill(&mut record.value, &mut self.spare_value, view.value());
        record.headers.clear();
        if view.header_count() > 0 {
            record
                .headers
                .extend(view.headers().map(|h| h.to_owned_header()));
        }
        (self.f)(&self.record)
    }

    #[inline]
    fn owned(&mut self, record: Record) -> ControlFlow<B> {
        (self.f)(&record)
    }
}

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
    mut f: impl Sink<B>,
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
fn decode_batch<B>(bytes: &[u8], at: usize, f: &mut impl Sink<B>) -> rf::Result<Step<B>> {
    let Some(framed) = batches_from(bytes, at).next().transpose()? else {
        return Ok(Step::End);
    };
    framed.validate()?;
    let batch = framed.decode()?;
    if let Batch::V2(v2) = &batch
        && !v2.is_compressed()
    {
        if let Some(b) = v2.records()?.try_for_each_view(|record| f.view(record))? {
            return Ok(Step::Stopped(b));
        }
    } else {
        for record in batch.to_records()? {
            if let ControlFlow::Break(b) = f.owned(record) {
                return Ok(Step::Stopped(b));
            }
        }
    }
    Ok(Step::Next(framed.next_position()))
}
