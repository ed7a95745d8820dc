//! Shared by the log benches: idempotent producer batches, and a log of many one-batch segments
//! written straight through `LogSegment` (faster than appending), opened after a clean shutdown.

use std::path::Path;

use seglog_fs::RealFs;
use seglog_log::LoadOptions;
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_segment::{LogSegment, SegmentConfig};

/// `count` records of `size` bytes at base offset 0, of producer `producer_id` from sequence
/// `base_sequence`.
pub(crate) fn idempotent_batch(
    count: i32,
    size: usize,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
) -> Vec<u8> {
    let value = vec![b'v'; size];
    let records = (0..count).map(|i| {
        NewRecord::new(
            i,
            1_700_000_000_000 + i64::from(i),
            Some(b"key-0001"),
            Some(&value[..]),
        )
    });
    let mut options = BatchOptions::new(0, Compression::None);
    options.producer_id = producer_id;
    options.producer_epoch = producer_epoch;
    options.base_sequence = base_sequence;
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&options, records, &mut out)
        .unwrap();
    out
}

/// Segments at base offsets `0..count` in `dir`, one batch each (`batch(base)`, its base offset
/// set to `base`), closed as a roll leaves them; `after(base)` runs after each.
pub(crate) fn one_batch_segments(
    dir: &Path,
    count: i64,
    mut batch: impl FnMut(i64) -> Vec<u8>,
    mut after: impl FnMut(i64),
) {
    for base in 0..count {
        let seg =
            LogSegment::open(RealFs, dir, base, SegmentConfig::default(), false, "", 0).unwrap();
        let mut bytes = batch(base);
        seglog_record_format::set_base_offset(&mut bytes, base).unwrap();
        seg.append(base, &bytes).unwrap();
        seg.index_entries().unwrap();
        seg.close().unwrap();
        after(base);
    }
}

/// The load options after a clean shutdown of a log ending at `log_end`.
pub(crate) fn clean_shutdown(log_end: i64) -> LoadOptions {
    LoadOptions::default()
        .with_recovery_point(log_end)
        .with_log_start_offset(0)
        .with_had_clean_shutdown(true)
        .with_discard(false)
}
