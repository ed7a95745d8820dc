//! Rewriting one group of segments into a `.cleaned` segment, batch by batch (Kafka's
//! `cleanInto` and `filterTo`).

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{
    self as rf, Batch, BatchOptions, Header, NewRecord, TimestampType, write_empty_batch,
};
use seglog_segment::{LogSegment, naming};

use super::{CleanReport, Throttle, Work, corrupt, whole_segment_read};
use crate::error::Result;
use crate::loom::sync::Arc;
use crate::offset_map::{OffsetMap, key_hash};
use crate::partition::Inner;

impl<F: FileSystem> Inner<F> {
    /// Writes one `.cleaned` segment holding what `map` keeps of `group`.
    pub(super) fn clean_group(
        &self,
        group: &[Arc<LogSegment<F>>],
        map: &OffsetMap,
        now: i64,
        report: &mut CleanReport,
        throttle: &mut Throttle,
        work: &mut Work,
    ) -> Result<Arc<LogSegment<F>>> {
        let base = group.first().map_or(0, |s| s.base_offset());
        for path in [
            naming::log_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::offset_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::time_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
            naming::txn_index_file(&self.dir, base, naming::CLEANED_FILE_SUFFIX),
        ] {
            // A leftover of an earlier, interrupted cleaning.
            let _ = self.fs.remove_file(&path);
        }
        let cleaned = Arc::new(
            LogSegment::open(
                self.fs.clone(),
                &self.dir,
                base,
                self.segment_config(),
                false,
                naming::CLEANED_FILE_SUFFIX,
                now,
            )?
            .with_mapping_budget(self.mapping_budget.clone()),
        );
        match self.fill_cleaned(&cleaned, group, map, now, report, throttle, work) {
            Ok(()) => Ok(cleaned),
            Err(e) => {
                // Not left for the next cleaning or open to find: it is void.
                let _ = cleaned.delete();
                Err(e)
            }
        }
    }

    /// Appends to `cleaned` what `map` keeps of `group`, then flushes it.
    #[expect(
        clippy::too_many_arguments,
        reason = "the cleaning's state, passed down"
    )]
    fn fill_cleaned(
        &self,
        cleaned: &LogSegment<F>,
        group: &[Arc<LogSegment<F>>],
        map: &OffsetMap,
        now: i64,
        report: &mut CleanReport,
        throttle: &mut Throttle,
        work: &mut Work,
    ) -> Result<()> {
        // The last batch of the group, if cleaning emptied it: kept empty at the end, so that the
        // cleaned segment still ends at the group's last offset.
        let mut emptied_last: Option<(i64, Vec<u8>)> = None;
        for segment in group {
            let scan = segment.scan_batches(0, |_, framed| {
                let batch = framed.decode().map_err(|e| corrupt(segment, &e))?;
                report.bytes_read += framed.size_in_bytes() as u64;
                throttle.account(framed.size_in_bytes() as u64);
                work.out.clear();
                let kept = self
                    .filter_batch(&batch, framed.bytes(), map, now, work, report)
                    .map_err(|e| corrupt(segment, &e))?;
                if kept {
                    cleaned.append(batch.last_offset(), &work.out)?;
                    report.bytes_written += work.out.len() as u64;
                    throttle.account(work.out.len() as u64);
                    emptied_last = None;
                } else {
                    emptied_last = Some((batch.last_offset(), std::mem::take(&mut work.out)));
                }
                Ok(ControlFlow::<()>::Continue(()))
            })?;
            whole_segment_read(segment, &scan)?;
        }
        if let Some((last_offset, empty)) = emptied_last {
            cleaned.append(last_offset, &empty)?;
            report.bytes_written += empty.len() as u64;
        }
        cleaned.on_become_inactive()?;
        cleaned.flush()?;
        if let Some(last) = group.last() {
            cleaned.set_last_modified_ms(last.last_modified_ms()?)?;
        }
        Ok(())
    }

    /// Kafka's `filterTo` for one batch. Returns true with the batch as kept in `work.out`
    /// (verbatim or rebuilt), or false with `work.out` holding the batch emptied of records (header
    /// only), for the caller to keep if it is the group's last.
    fn filter_batch(
        &self,
        batch: &Batch<'_>,
        bytes: &[u8],
        map: &OffsetMap,
        now: i64,
        work: &mut Work,
        report: &mut CleanReport,
    ) -> rf::Result<bool> {
        let v2 = match batch {
            Batch::V2(b) if !b.is_control() => *b,
            // Control batches and legacy entries are kept as they are (see the module doc).
            _ => {
                work.out.extend_from_slice(bytes);
                return Ok(true);
            }
        };
        let latest = map.latest_offset();
        let horizon = v2.delete_horizon_ms();
        let retain_deletes = horizon.is_none_or(|h| now < h);
        work.keep.clear();
        let mut tombstones = false;
        // Views borrow the batch, or the scratch buffer a compressed batch decompresses into.
        let views: Vec<rf::RecordView<'_>> = v2
            .records_with(&mut work.scratch)?
            .collect::<rf::Result<_>>()?;
        let count = views.len();
        work.hashes.clear();
        work.hashes.extend(views.iter().map(|r| match r.key() {
            Some(key) if r.offset() <= latest => key_hash(key),
            _ => 0,
        }));
        map.touch(work.hashes.iter().copied().filter(|h| *h != 0));
        for (r, hash) in views.iter().zip(&work.hashes) {
            let keep = if r.offset() > latest {
                true
            } else if r.key().is_none() {
                false
            } else {
                let newest = map.get(*hash).is_none_or(|l| r.offset() >= l);
                if newest && r.value().is_none() && !retain_deletes {
                    report.tombstones_removed += 1;
                }
                newest && (r.value().is_some() || retain_deletes)
            };
            work.keep.push(keep);
            tombstones |= keep && r.value().is_none();
        }
        let kept = work.keep.iter().filter(|k| **k).count();
        report.records_read += count as u64;
        report.records_kept += kept as u64;
        let needs_horizon = tombstones && horizon.is_none();
        if kept == count && !needs_horizon {
            work.out.extend_from_slice(bytes);
            return Ok(true);
        }
        let log_append = v2.timestamp_type() == TimestampType::LogAppendTime;
        let options = BatchOptions {
            base_offset: v2.base_offset(),
            partition_leader_epoch: v2.partition_leader_epoch(),
            producer_id: v2.producer_id(),
            producer_epoch: v2.producer_epoch(),
            base_sequence: v2.base_sequence(),
            transactional: v2.is_transactional(),
            control: false,
            timestamp_type: v2.timestamp_type(),
            log_append_time: if log_append { v2.max_timestamp() } else { -1 },
            delete_horizon_ms: tombstones.then(|| {
                horizon.unwrap_or_else(|| now.saturating_add(self.config.delete_retention_ms))
            }),
            compression: v2.compression()?,
            last_offset_delta: Some(v2.last_offset_delta()),
        };
        if kept == 0 {
            write_empty_batch(
                &options,
                v2.last_offset_delta(),
                v2.max_timestamp(),
                &mut work.out,
            )?;
            // A producer's last batch stays, emptied, so that its epoch and last sequence survive
            // (Kafka's `testLogCleanerRetainsProducerLastSequence`).
            let producers_last = v2.producer_id() != rf::NO_PRODUCER_ID
                && work.last_batch_of_producer.get(&v2.producer_id()) == Some(&v2.last_offset());
            return Ok(producers_last);
        }
        // Rebuilt from borrowed slices; headers go into one flat list sliced per record.
        let mut headers: Vec<Header<'_>> = Vec::new();
        let mut spans = Vec::with_capacity(kept);
        for (view, keep) in views.iter().zip(&work.keep) {
            if *keep {
                let start = headers.len();
                headers.extend(view.headers());
                spans.push((view, start..headers.len()));
            }
        }
        let base = v2.base_offset();
        let records = spans.iter().map(|(r, range)| {
            let delta = i32::try_from(r.offset() - base).unwrap_or(i32::MAX);
            NewRecord::new(delta, r.timestamp(), r.key(), r.value())
                .with_headers(headers.get(range.clone()).unwrap_or_default())
        });
        work.builder.build(&options, records, &mut work.out)?;
        Ok(true)
    }
}
