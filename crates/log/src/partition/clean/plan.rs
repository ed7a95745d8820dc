//! Planning a cleaning: the key map over the dirty range (Kafka's `buildOffsetMap`), and the
//! groups of segments each rewritten into one.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::Batch;
use seglog_segment::LogSegment;

use super::txn::{CleanedTxns, collect_aborted};
use super::{Throttle, batch_first_offset, corrupt, for_each_record, whole_segment_read};
use crate::error::Result;
use crate::loom::sync::Arc;
use crate::offset_map::{OffsetMap, key_hash};
use crate::partition::{Inner, SegmentMap};

/// Kafka's `buildOffsetMap`: the latest offset of every key from `start` up to `end`, stopping at a
/// batch boundary when the map is full (a later cleaning continues from there). Keys of aborted
/// transactions (known from the `.txnindex` files) and of control batches never enter the map;
/// their offsets still count as covered.
pub(super) fn build_offset_map<F: FileSystem>(
    segments: &SegmentMap<F>,
    start: i64,
    end: i64,
    budget: usize,
    throttle: &mut Throttle,
) -> Result<OffsetMap> {
    let mut map = OffsetMap::with_budget(budget);
    let floor = segments
        .range(..=start)
        .next_back()
        .map_or(i64::MIN, |(b, _)| *b);
    let dirty: Vec<(i64, &Arc<LogSegment<F>>)> =
        segments.range(floor..end).map(|(b, s)| (*b, s)).collect();
    let mut txns = CleanedTxns::default();
    txns.add_aborted(collect_aborted(segments, start, end)?);
    let mut scratch = Vec::new();
    let mut pending: Vec<(u128, i64)> = Vec::new();
    for (base, segment) in &dirty {
        let mut full = false;
        let scan = segment.scan_batches(0, |position, framed| {
            let batch = framed.decode().map_err(|e| corrupt(segment, &e))?;
            if batch.last_offset() < start {
                return Ok(ControlFlow::Continue(()));
            }
            let first = batch_first_offset(&batch);
            if first >= end {
                return Ok(ControlFlow::Break(()));
            }
            throttle.account(framed.size_in_bytes() as u64);
            if let Batch::V2(b) = &batch {
                let skip = if b.is_control() {
                    txns.on_control_batch_read(b, position, &mut scratch)
                        .map_err(|e| corrupt(segment, &e))?;
                    true
                } else {
                    txns.on_batch_read(b)
                };
                if skip {
                    map.advance_to(b.last_offset().min(end - 1));
                    return Ok(ControlFlow::Continue(()));
                }
                let count = usize::try_from(b.records_count()).unwrap_or(0);
                if map.len() > 0 && map.room() < count {
                    full = true;
                    return Ok(ControlFlow::Break(()));
                }
                map.fit_first_batch(count);
            }
            // Stop at the first key that does not fit: the map then covers exactly the records
            // before it (offsets increase within a batch), and the next cleaning starts there.
            pending.clear();
            for_each_record(&batch, &mut scratch, |offset, key, _| {
                if let Some(key) = key
                    && (start..end).contains(&offset)
                {
                    pending.push((key_hash(key), offset));
                }
            })
            .map_err(|e| corrupt(segment, &e))?;
            map.touch(pending.iter().map(|(hash, _)| *hash));
            let overflow = !pending.iter().all(|(hash, offset)| map.put(*hash, *offset));
            if overflow {
                full = true;
                return Ok(ControlFlow::Break(()));
            }
            map.advance_to(batch.last_offset().min(end - 1));
            Ok(ControlFlow::Continue(()))
        })?;
        whole_segment_read(segment, &scan)?;
        if full {
            break;
        }
        // Past a fully read segment, jump over any offset gap to the next segment of the log,
        // which may be the first uncleanable one (Kafka's `testCleaningBeyondMissingOffsets`).
        if let Some((next_base, _)) = segments.range(base + 1..).next() {
            map.advance_to((next_base - 1).min(end - 1));
        }
    }
    Ok(map)
}

/// Kafka's `groupSegmentsBySize`: consecutive segments below `end` whose logs fit `segment.bytes`,
/// whose indexes fit `segment.index.bytes`, and whose offsets span at most `i32::MAX`.
pub(super) fn group_segments<F: FileSystem>(
    inner: &Inner<F>,
    segments: &SegmentMap<F>,
    end: i64,
) -> Result<Vec<Vec<Arc<LogSegment<F>>>>> {
    let config = inner.config();
    let max_size = u64::try_from(config.segment_bytes).unwrap_or(0);
    let max_index = u64::try_from(config.segment_index_bytes).unwrap_or(0);
    let candidates: Vec<&Arc<LogSegment<F>>> = segments.range(..end).map(|(_, s)| s).collect();
    let mut groups = Vec::new();
    let mut i = 0;
    while let Some(first) = candidates.get(i) {
        let mut group = vec![Arc::clone(first)];
        let (o, t) = first.index_entries()?;
        let (mut size, mut offset_index, mut time_index) =
            (first.size(), o as u64 * 8, t as u64 * 12);
        i += 1;
        while let Some(next) = candidates.get(i) {
            let (o, t) = next.index_entries()?;
            let span = next.read_next_offset()? - 1 - first.base_offset();
            let fits = size + next.size() <= max_size
                && offset_index + o as u64 * 8 <= max_index
                && time_index + t as u64 * 12 <= max_index
                && span <= i64::from(i32::MAX);
            if !fits {
                break;
            }
            size += next.size();
            offset_index += o as u64 * 8;
            time_index += t as u64 * 12;
            group.push(Arc::clone(next));
            i += 1;
        }
        groups.push(group);
    }
    Ok(groups)
}
