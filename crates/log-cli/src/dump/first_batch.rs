//! The first batch at an index entry's position, as the index checks read it.

use anyhow::Result;
use seglog_log::RealFs;
use seglog_log::inspect::SegmentLog;
use seglog_log::record::{self as rf, Batch};

/// The first batch at `position` in `log`, read whole however large it is (it must lie inside
/// the file): its bytes, `None` when no whole batch starts there. Kafka's tool reads only
/// `max_size` bytes and throws when the batch is larger; `FirstBatch::over` says so.
pub(crate) fn first_batch_at(
    log: &SegmentLog<RealFs>,
    position: u64,
    max_size: u64,
) -> Result<FirstBatch> {
    let len = log.len()?;
    if position >= len {
        return Ok(FirstBatch::default());
    }
    let available = len - position;
    let mut header = [0_u8; 12];
    let declared = if available >= 12 {
        log.read_exact_at(&mut header, position)?;
        let size = i32::from_be_bytes([header[8], header[9], header[10], header[11]]);
        u64::try_from(size).ok().map(|s| s + 12)
    } else {
        None
    };
    // The declared size only when it lies inside the file: a wild one reads no more than Kafka.
    let want = declared
        .filter(|&d| d <= available)
        .unwrap_or_else(|| available.min(max_size));
    let mut buf = vec![0; usize::try_from(want).unwrap_or(usize::MAX)];
    log.read_exact_at(&mut buf, position)?;
    let Some(framed) = rf::batches(&buf).next().transpose()? else {
        return Ok(FirstBatch::default());
    };
    let size = framed.size_in_bytes() as u64;
    Ok(FirstBatch {
        last_offset: Some(framed.last_offset().unwrap_or(-1)),
        over: (size > max_size).then_some(size),
    })
}

/// What `first_batch_at` found.
#[derive(Debug, Default)]
pub(crate) struct FirstBatch {
    /// The batch's last offset; `None` when no whole batch starts there.
    pub(crate) last_offset: Option<i64>,
    /// The batch's size when it is over the `max_size` Kafka's tool reads.
    pub(crate) over: Option<u64>,
}

/// The largest record timestamp of one batch (decompressing if needed).
pub(crate) fn max_record_timestamp(bytes: &[u8], scratch: &mut Vec<u8>) -> Result<i64> {
    let Some(framed) = rf::batches(bytes).next().transpose()? else {
        return Ok(-1);
    };
    let mut max = -1_i64;
    match framed.decode()? {
        Batch::V2(b) => {
            for r in b.records_with(scratch)? {
                max = max.max(r?.timestamp());
            }
        }
        Batch::Legacy(b) => {
            for r in b.records_with(scratch)? {
                max = max.max(r?.timestamp());
            }
        }
    }
    Ok(max)
}
