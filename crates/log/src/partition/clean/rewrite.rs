//! Rewriting one group of segments into a `.cleaned` segment, batch by batch (Kafka's
//! `cleanInto`, `filterTo` and the cleaner's `checkBatchRetention`), with the `.txnindex` of the
//! aborted transactions whose data remains.

use std::ops::ControlFlow;

use seglog_fs::FileSystem;
use seglog_record_format::{
    self as rf, Batch, BatchBuilder, BatchOptions, Header, NewRecord, RecordBatch, TimestampType,
    write_empty_batch,
};
use seglog_segment::txn_index::AbortedTxn;
use seglog_segment::{LogSegment, naming};

use super::txn::collect_aborted;
use super::{CleanReport, Throttle, Work, corrupt, whole_segment_read};
use crate::error::Result;
use crate::loom::sync::Arc;
use crate::offset_map::{OffsetMap, key_hash};
use crate::partition::{Inner, SegmentMap};

/// What one cleaning round rewrites with.
pub(super) struct Round<'a, F: FileSystem> {
    /// The segment list the round read (for the aborted transactions of its `.txnindex` files).
    pub segments: &'a SegmentMap<F>,
    pub map: &'a OffsetMap,
    pub now: i64,
}

/// Kafka's `BatchRetention`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retention {
    /// Dropped without looking at its records.
    Delete,
    /// Kept even if no record remains (header only).
    RetainEmpty,
    /// Dropped if no record remains.
    DeleteEmpty,
}

/// Kafka's `BatchRetentionResult`, and what the transaction state said on the way.
struct Check {
    retention: Retention,
    /// The records go too: aborted data, or a marker past its horizon with no data left.
    discard_records: bool,
    /// A marker whose transaction has no data left (Kafka's `containsMarkerForEmptyTxn`): it gets
    /// a delete horizon when first kept.
    marker_for_empty_txn: bool,
    index_entry: Option<AbortedTxn>,
}

/// What became of one batch.
struct Filtered {
    /// `work.out` holds the batch to append.
    keep: bool,
    /// An aborted transaction to record in the cleaned segment's `.txnindex`.
    index_entry: Option<AbortedTxn>,
}

impl<F: FileSystem> Inner<F> {
    /// Writes one `.cleaned` segment holding what `map` keeps of `group`.
    pub(super) fn clean_group(
        &self,
        group: &[Arc<LogSegment<F>>],
        round: &Round<'_, F>,
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
                round.now,
            )?
            .with_mapping_budget(self.mapping_budget.clone())
            .with_descriptor_cache(self.descriptor_cache.as_ref()),
        );
        match self.fill_cleaned(&cleaned, group, round, report, throttle, work) {
            Ok(()) => Ok(cleaned),
            Err(e) => {
                // Not left for the next cleaning or open to find: it is void.
                let _ = cleaned.delete();
                Err(e)
            }
        }
    }

    /// Appends to `cleaned` what the round keeps of `group`, then flushes it.
    fn fill_cleaned(
        &self,
        cleaned: &LogSegment<F>,
        group: &[Arc<LogSegment<F>>],
        round: &Round<'_, F>,
        report: &mut CleanReport,
        throttle: &mut Throttle,
        work: &mut Work,
    ) -> Result<()> {
        for (i, segment) in group.iter().enumerate() {
            // The aborted transactions of the whole segment, the cleaned `.txnindex` is rebuilt
            // from them (Kafka's `cleanSegments`).
            let upper = match group.get(i + 1) {
                Some(next) => next.base_offset(),
                None => segment.read_next_offset()?,
            };
            work.txns.add_aborted(collect_aborted(
                round.segments,
                segment.base_offset(),
                upper,
            )?);
            // The batch ending at the high watermark stays, even emptied, so that the last offset
            // is not lost (Kafka 4.4's `cleanInto`, KAFKA-17076).
            work.high_watermark = self.stable.high_watermark();
            let scan = segment.scan_batches(0, |position, framed| {
                let batch = framed.decode().map_err(|e| corrupt(segment, &e))?;
                report.bytes_read += framed.size_in_bytes() as u64;
                throttle.account(framed.size_in_bytes() as u64);
                work.out.clear();
                let filtered = self
                    .filter_batch(&batch, framed.bytes(), position, round, work, report)
                    .map_err(|e| corrupt(segment, &e))?;
                if let Some(txn) = filtered.index_entry {
                    cleaned.append_aborted_txn(txn)?;
                }
                if !filtered.keep && matches!(&batch, Batch::V2(b) if b.is_control()) {
                    report.markers_removed += 1;
                }
                if filtered.keep {
                    cleaned.append(batch.last_offset(), &work.out)?;
                    report.bytes_written += work.out.len() as u64;
                    throttle.account(work.out.len() as u64);
                }
                Ok(ControlFlow::<()>::Continue(()))
            })?;
            whole_segment_read(segment, &scan)?;
        }
        cleaned.on_become_inactive()?;
        cleaned.flush()?;
        if let Some(last) = group.last() {
            cleaned.set_last_modified_ms(last.last_modified_ms()?)?;
        }
        Ok(())
    }

    /// Kafka's `checkBatchRetention` for one batch: aborted data goes whole; a marker may go once
    /// its transaction has no data left and its delete horizon passed; a producer's last batch
    /// and the batch ending at the high watermark stay, emptied if need be.
    fn batch_retention(
        batch: &RecordBatch<'_>,
        position: u64,
        round: &Round<'_, F>,
        work: &mut Work,
    ) -> rf::Result<Check> {
        let control = batch.is_control();
        let (can_discard, index_entry) = if control {
            let outcome = work
                .txns
                .on_control_batch_read(batch, position, &mut work.scratch)?;
            (outcome.discardable, outcome.index_entry)
        } else {
            (work.txns.on_batch_read(batch), None)
        };
        // The delete horizon of a marker is the tombstones' (KIP-534).
        let discard_records = if control {
            can_discard && batch.delete_horizon_ms().is_some_and(|h| h <= round.now)
        } else {
            can_discard
        };
        let last_of_producer = batch.producer_id() > rf::NO_PRODUCER_ID
            && work
                .last_records
                .get(&batch.producer_id())
                .is_some_and(|last| last.is_batch(batch));
        let retention = if last_of_producer || batch.next_offset() == work.high_watermark {
            Retention::RetainEmpty
        } else if discard_records {
            Retention::Delete
        } else {
            Retention::DeleteEmpty
        };
        Ok(Check {
            retention,
            discard_records,
            marker_for_empty_txn: can_discard && control,
            index_entry,
        })
    }

    /// Kafka's `filterTo` for one batch: `work.out` gets the batch as kept (verbatim, rebuilt
    /// from its kept records, or emptied to its header).
    fn filter_batch(
        &self,
        batch: &Batch<'_>,
        bytes: &[u8],
        position: u64,
        round: &Round<'_, F>,
        work: &mut Work,
        report: &mut CleanReport,
    ) -> rf::Result<Filtered> {
        let v2 = match batch {
            Batch::V2(b) => *b,
            // Legacy entries are kept as they are (see the module doc).
            Batch::Legacy(_) => {
                work.out.extend_from_slice(bytes);
                return Ok(Filtered {
                    keep: true,
                    index_entry: None,
                });
            }
        };
        let check = Self::batch_retention(&v2, position, round, work)?;
        let control = v2.is_control();
        if check.discard_records && !control {
            report.aborted_records_removed += u64::try_from(v2.records_count()).unwrap_or(0);
        }
        let dropped = Filtered {
            keep: false,
            index_entry: check.index_entry,
        };
        if check.retention == Retention::Delete {
            return Ok(dropped);
        }
        let latest = round.map.latest_offset();
        let horizon = v2.delete_horizon_ms();
        let retain_deletes = horizon.is_none_or(|h| round.now < h);
        work.keep.clear();
        let mut tombstones = false;
        // Views borrow the batch, or the scratch buffer a compressed batch decompresses into.
        let views: Vec<rf::RecordView<'_>> = v2
            .records_with(&mut work.scratch)?
            .collect::<rf::Result<_>>()?;
        let count = views.len();
        work.hashes.clear();
        work.hashes.extend(views.iter().map(|r| match r.key() {
            Some(key) if !control && !check.discard_records && r.offset() <= latest => {
                key_hash(key)
            }
            _ => 0,
        }));
        round
            .map
            .touch(work.hashes.iter().copied().filter(|h| *h != 0));
        for (r, hash) in views.iter().zip(&work.hashes) {
            let keep = if check.discard_records {
                false
            } else if control || r.offset() > latest {
                true
            } else if r.key().is_none() {
                false
            } else {
                let newest = round.map.get(*hash).is_none_or(|l| r.offset() >= l);
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
        let needs_horizon = (tombstones || check.marker_for_empty_txn) && horizon.is_none();
        let keep = Filtered {
            keep: true,
            index_entry: check.index_entry,
        };
        if kept == count && count > 0 && !needs_horizon {
            work.out.extend_from_slice(bytes);
            return Ok(keep);
        }
        let delete_horizon_ms = if needs_horizon {
            Some(round.now.saturating_add(self.config().delete_retention_ms))
        } else {
            horizon
        };
        let options = kept_batch_options(&v2, delete_horizon_ms)?;
        if kept == 0 {
            if check.retention != Retention::RetainEmpty {
                return Ok(dropped);
            }
            // Kept empty: a producer's last batch keeps its epoch and last sequence (Kafka's
            // `testLogCleanerRetainsProducerLastSequence`), the round's last its last offset.
            write_empty_batch(
                &options,
                v2.last_offset_delta(),
                v2.max_timestamp(),
                &mut work.out,
            )?;
            return Ok(keep);
        }
        rebuild(
            &options,
            &views,
            &work.keep,
            &mut work.builder,
            &mut work.out,
        )?;
        Ok(keep)
    }
}

/// The options of a kept batch: its own header fields, with the delete horizon given (a new one
/// when a tombstone or an emptied transaction's marker is first kept, else the batch's own:
/// Kafka's `filterTo`), and its last offset, so the producer's last sequence stays.
fn kept_batch_options(
    v2: &RecordBatch<'_>,
    delete_horizon_ms: Option<i64>,
) -> rf::Result<BatchOptions> {
    let log_append = v2.timestamp_type() == TimestampType::LogAppendTime;
    Ok(BatchOptions::default()
        .with_base_offset(v2.base_offset())
        .with_partition_leader_epoch(v2.partition_leader_epoch())
        .with_producer_id(v2.producer_id())
        .with_producer_epoch(v2.producer_epoch())
        .with_base_sequence(v2.base_sequence())
        .with_transactional(v2.is_transactional())
        .with_control(v2.is_control())
        .with_timestamp_type(v2.timestamp_type())
        .with_log_append_time(if log_append { v2.max_timestamp() } else { -1 })
        .with_delete_horizon_ms(delete_horizon_ms)
        .with_compression(v2.compression()?)
        .with_last_offset_delta(Some(v2.last_offset_delta())))
}

/// Builds the batch of the kept records into `out`, from borrowed slices; headers go into one
/// flat list sliced per record.
fn rebuild(
    options: &BatchOptions,
    views: &[rf::RecordView<'_>],
    keep: &[bool],
    builder: &mut BatchBuilder,
    out: &mut Vec<u8>,
) -> rf::Result<()> {
    let mut headers: Vec<Header<'_>> = Vec::new();
    let mut spans = Vec::new();
    for (view, keep) in views.iter().zip(keep) {
        if *keep {
            let start = headers.len();
            headers.extend(view.headers());
            spans.push((view, start..headers.len()));
        }
    }
    let base = options.base_offset;
    let records = spans.iter().map(|(r, range)| {
        let delta = i32::try_from(r.offset() - base).unwrap_or(i32::MAX);
        NewRecord::new(delta, r.timestamp(), r.key(), r.value())
            .with_headers(headers.get(range.clone()).unwrap_or_default())
    });
    builder.build(options, records, out)?;
    Ok(())
}
