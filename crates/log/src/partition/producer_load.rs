//! Producer state read back from the log: Kafka's static `UnifiedLog.rebuildProducerState` (the
//! latest usable snapshot, then the batches after it, with its rules for a clean shutdown and a
//! missing snapshot), `loadProducersFromRecords` over a segment's batches, and the per-batch
//! replay of `LogSegment.recover` that rebuilds a recovered segment's `.txnindex`.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_record_format::FramedBatch;
use seglog_segment::LogSegment;
use seglog_segment::scan::{BatchHeader, Scan, ScanEnd};
use seglog_segment::txn_index::AbortedTxn;

use super::valid_prefix::ValidPrefix;
use super::{Inner, SegmentMap, range_overlapping};
use crate::error::{Error, Result};
use crate::producer::{
    AppendOrigin, CompletedTxn, DEFAULT_MAX_TRANSACTION_TIMEOUT_MS, NO_PRODUCER_ID,
    ProducerAppendInfo, ProducerStateManager, TV_UNKNOWN, append_batch, append_data_header,
    recover_data_header, replay_batch,
};

/// Kafka's static `rebuildProducerState`: brings `manager` to `last_offset`. With no snapshot
/// after a clean shutdown, empty snapshots are taken at the last two segments' base offsets and at
/// `last_offset` instead of reading the log (Kafka's upgrade rule); otherwise the state is
/// reloaded from the latest snapshot at or below `last_offset` (corrupt ones deleted by the
/// manager, older ones tried) and the batches from there to `last_offset` are replayed, unless the
/// state was empty and already at `last_offset`. A snapshot is taken at `last_offset` at the end.
/// `log_end_offset` spares a lookup when `last_offset` is the log end. Returns the corrupt
/// snapshots the manager deleted.
pub(crate) fn rebuild_producer_state<F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    segments: &SegmentMap<F>,
    log_start_offset: i64,
    last_offset: i64,
    log_end_offset: i64,
    now_ms: i64,
    reload_from_clean_shutdown: bool,
) -> Result<Vec<Error>> {
    let mut to_snapshot: Vec<i64> = Vec::with_capacity(3);
    if let Some((&last_base, _)) = segments.iter().next_back() {
        if let Some((&lower, _)) = segments.range(..last_base).next_back() {
            to_snapshot.push(lower);
        }
        to_snapshot.push(last_base);
    }
    to_snapshot.push(last_offset);
    if manager.latest_snapshot_offset().is_none() && reload_from_clean_shutdown {
        for offset in to_snapshot {
            manager.update_map_end_offset(offset);
            manager.take_snapshot(true)?;
        }
        return Ok(Vec::new());
    }
    let empty_before = manager.is_empty() && manager.map_end_offset() >= last_offset;
    let corrupt = manager.truncate_and_reload(log_start_offset, last_offset, now_ms)?;
    if last_offset > manager.map_end_offset() && !empty_before {
        let floor = segments.range(..=last_offset).next_back().map(|(b, _)| *b);
        let from = manager.map_end_offset();
        let replayed: Vec<_> = range_overlapping(segments, from, last_offset)
            .map(|(b, s)| (*b, crate::loom::sync::Arc::clone(s)))
            .collect();
        for (base, segment) in replayed {
            let start = base.max(manager.map_end_offset()).max(log_start_offset);
            manager.update_map_end_offset(start);
            if to_snapshot.contains(&base) {
                manager.take_snapshot(true)?;
            }
            let mut max_position = segment.size();
            if floor == Some(base) && last_offset < log_end_offset {
                max_position = segment
                    .translate_offset(last_offset, 0)?
                    .map_or(max_position, |p| p.position);
            }
            load_producers_from_segment(manager, &segment, start, max_position)?;
        }
    }
    manager.update_map_end_offset(last_offset);
    manager.take_snapshot(true)?;
    Ok(corrupt)
}

/// Whether a batch's header says it carries producer state: a v2 batch with a producer id
/// (Kafka's `hasProducerId`).
pub(super) fn carries_producer_state(h: &BatchHeader) -> bool {
    h.magic >= 2 && h.producer_id > NO_PRODUCER_ID
}

/// Whether a replay must read the batch whole: a control batch with a producer id, whose first
/// record is its marker. A data batch replays from its header ([`append_data_header`]).
pub(super) fn replay_reads_body(h: &BatchHeader) -> bool {
    carries_producer_state(h) && h.is_control
}

/// A batch a replay did not read whole ([`replay_reads_body`]), replayed from its header as
/// `recover_batch` replays it: a data batch with a producer id recorded, and any v2 batch's end
/// moving the state's end offset; a legacy entry changes nothing.
pub(super) fn replay_header<F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    h: &BatchHeader,
) -> Result<()> {
    if carries_producer_state(h) {
        recover_data_header(manager, h)
    } else {
        if h.magic >= 2 {
            manager.update_map_end_offset(h.last_offset.saturating_add(1));
        }
        Ok(())
    }
}

/// The byte where the batch holding `offset` starts (0 at or below the base, without a lookup).
fn position_of<F: FileSystem>(segment: &LogSegment<F>, offset: i64) -> Result<Option<u64>> {
    if offset <= segment.base_offset() {
        return Ok(Some(0));
    }
    Ok(segment.translate_offset(offset, 0)?.map(|p| p.position))
}

/// Kafka's `loadProducersFromRecords` over the batches of `segment` from the one holding `start`
/// to byte `max_position`, read in chunks: every producer's batches recorded with the replication
/// origin, then the producers updated and the completed transactions completed.
fn load_producers_from_segment<F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    segment: &LogSegment<F>,
    start: i64,
    max_position: u64,
) -> Result<()> {
    let Some(from) = position_of(segment, start)? else {
        return Ok(());
    };
    let mut loaded: HashMap<i64, ProducerAppendInfo> = HashMap::new();
    let mut order = Vec::new();
    let mut completed: Vec<CompletedTxn> = Vec::new();
    let mut failure = None;
    // Only the control batches with a producer id are read whole (a legacy entry carries no
    // producer state, a data batch's is in its header); the walk goes from header to header.
    let wanted = |h: &BatchHeader| h.position < max_position && replay_reads_body(h);
    let scan = segment.scan_selected_batches(from, wanted, |h, framed| {
        if h.position >= max_position {
            return Ok(ControlFlow::Break(()));
        }
        if !carries_producer_state(h) {
            return Ok(ControlFlow::Continue(()));
        }
        let pid = h.producer_id;
        let info = loaded.entry(pid).or_insert_with(|| {
            order.push(pid);
            manager.prepare_update(pid, AppendOrigin::Replication)
        });
        let appended = match framed.map(|f| f.v2()) {
            None => append_data_header(info, h).map(|()| None),
            Some(Ok(batch)) => append_batch(info, &batch, None, TV_UNKNOWN),
            Some(Err(_)) => return Ok(ControlFlow::Continue(())),
        };
        match appended {
            Ok(Some(txn)) => completed.push(txn),
            Ok(None) => {}
            Err(e) => {
                failure = Some(e);
                return Ok(ControlFlow::Break(()));
            }
        }
        Ok(ControlFlow::Continue(()))
    })?;
    if let Some(e) = failure {
        return Err(e);
    }
    if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan
        && position < max_position
    {
        return Err(seglog_segment::Error::Corrupt {
            path: segment.log_path(),
            position,
            source: error,
        }
        .into());
    }
    for pid in order {
        if let Some(info) = loaded.get(&pid) {
            manager.update(info);
        }
    }
    for txn in &completed {
        manager.complete_txn(txn)?;
    }
    Ok(())
}

/// The aborted transactions whose ABORT markers `segment` holds, as Kafka's recovery writes them
/// to its `.txnindex`: every batch replayed into `manager` (Kafka's `updateProducerState`), each
/// completed aborted transaction with the last stable offset at its completion.
pub(crate) fn replay_segment<F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    segment: &LogSegment<F>,
) -> Result<Vec<AbortedTxn>> {
    let mut replay = SegmentReplay::new(manager);
    segment.scan_selected_batches(0, replay_reads_body, |h, framed| {
        Ok(if replay.batch(h, framed) {
            ControlFlow::Continue(())
        } else {
            ControlFlow::Break(())
        })
    })?;
    replay.finish().map(|(_, aborted)| aborted)
}

/// [`replay_segment`] fed batch by batch by a walk over a segment, only its control batches with
/// a producer id ([`replay_reads_body`]) read whole: the walk may be another one's, such as the
/// index rebuild's.
pub(super) struct SegmentReplay<'m, F: FileSystem> {
    manager: &'m mut ProducerStateManager<F>,
    aborted: Vec<AbortedTxn>,
    failure: Option<Error>,
}

impl<'m, F: FileSystem> SegmentReplay<'m, F> {
    pub(super) fn new(manager: &'m mut ProducerStateManager<F>) -> Self {
        Self {
            manager,
            aborted: Vec::new(),
            failure: None,
        }
    }

    /// Replays one batch; false once producer state refused a batch (the later ones are not
    /// replayed).
    pub(super) fn batch(&mut self, h: &BatchHeader, framed: Option<FramedBatch<'_>>) -> bool {
        if self.failure.is_some() {
            return false;
        }
        let replayed = match framed.map(|f| f.v2()) {
            Some(Ok(batch)) => replay_batch(self.manager, &batch, &mut self.aborted),
            Some(Err(_)) => Ok(()),
            None => replay_header(self.manager, h),
        };
        if let Err(e) = replayed {
            self.failure = Some(e);
            return false;
        }
        true
    }

    /// The manager back, and the aborted transactions completed; or the refusal.
    pub(super) fn finish(self) -> Result<(&'m mut ProducerStateManager<F>, Vec<AbortedTxn>)> {
        match self.failure {
            Some(e) => Err(e),
            None => Ok((self.manager, self.aborted)),
        }
    }
}

impl<F: FileSystem> Inner<F> {
    /// A producer state manager of this partition, empty, knowing the snapshot files on disk.
    /// Its snapshots' syncs are deferred as the partition's are (an open's).
    pub(super) fn new_producer_state(&self) -> Result<ProducerStateManager<F>> {
        let (config, deferred) = {
            let state = self.producer_state.lock();
            (state.config(), state.deferred_syncs().cloned())
        };
        let mut manager = ProducerStateManager::new(
            self.fs.clone(),
            &self.dir,
            self.partition(),
            DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
            config,
        )?;
        manager.defer_syncs(deferred);
        Ok(manager)
    }

    /// Kafka's instance `rebuildProducerState` after a truncation to `offset` (no clean-shutdown
    /// rule), then the high watermark and the first unstable offset follow.
    pub(super) fn rebuild_after_truncation(&self, offset: i64) -> Result<()> {
        let segments = self.segments.load();
        let mut manager = self.producer_state.lock();
        let log_start = self.log_start_offset.load(Ordering::Acquire);
        rebuild_producer_state(
            &mut manager,
            &segments,
            log_start,
            offset,
            offset,
            self.time.now_ms(),
            false,
        )?;
        manager.on_high_watermark_updated(self.stable.high_watermark());
        self.refresh_first_unstable_offset(&manager);
        Ok(())
    }
}

/// The producer state a load's segment recoveries share.
#[derive(Debug)]
pub(super) struct TxnRecovery<F: FileSystem> {
    manager: Option<ProducerStateManager<F>>,
    log_start_offset: i64,
}

impl<F: FileSystem> TxnRecovery<F> {
    /// For a load with the checkpointed `log_start_offset`.
    pub(super) fn new(log_start_offset: i64) -> Self {
        Self {
            manager: None,
            log_start_offset,
        }
    }
}

impl<F: FileSystem> Inner<F> {
    /// The producer-state half of Kafka's `recoverSegment`: a manager rebuilt up to the
    /// segment's base offset, then every batch of the segment replayed into it; a segment just
    /// `recovered` (its `.txnindex` reset) gets each aborted transaction appended, one found valid
    /// by the plan is recovered only if its `.txnindex` differs from what recovery writes. A
    /// snapshot is taken at the end of the segment, as Kafka does. `known` is the segment's
    /// whole `.log` as the recovery plan's scan found it, which spares the walk when it holds no
    /// producer id. Returns whether the `.txnindex` was rewritten.
    pub(super) fn recover_txn_index(
        &self,
        recovery: &mut TxnRecovery<F>,
        segments: &SegmentMap<F>,
        segment: &LogSegment<F>,
        next_base_offset: Option<i64>,
        recovered: bool,
        known: Option<&ValidPrefix>,
    ) -> Result<bool> {
        let manager = self.producer_state_before(recovery, segments, segment)?;
        // `replay_segment` replays every batch, whatever its offset.
        let aborted = match known.and_then(|k| k.replay_without_reading(manager, i64::MIN)) {
            Some(replayed) => replayed.map_err(|(_, e)| e)?,
            None => replay_segment(manager, segment)?,
        };
        Self::finish_txn_index(manager, segment, next_base_offset, aborted, recovered)
    }

    /// The load's manager rebuilt up to `segment`'s base offset (the start of Kafka's
    /// `recoverSegment`), ready for the segment's batches.
    ///
    /// Kafka makes a fresh manager (listing the directory) per segment; one manager serves every
    /// segment of a load here, with the producers a fresh load would drop as expired dropped
    /// first, which gives the same state and snapshots without a listing per segment.
    pub(super) fn producer_state_before<'r>(
        &self,
        recovery: &'r mut TxnRecovery<F>,
        segments: &SegmentMap<F>,
        segment: &LogSegment<F>,
    ) -> Result<&'r mut ProducerStateManager<F>> {
        let now = self.time.now_ms();
        let manager = match recovery.manager.take() {
            Some(mut m) => {
                m.remove_expired_producers(now);
                m
            }
            None => self.new_producer_state()?,
        };
        let manager = recovery.manager.insert(manager);
        let base = segment.base_offset();
        rebuild_producer_state(
            manager,
            segments,
            recovery.log_start_offset,
            base,
            base,
            now,
            false,
        )?;
        Ok(manager)
    }

    /// The end of [`Inner::recover_txn_index`], once the segment's batches are replayed into
    /// `manager` and gave `aborted`.
    pub(super) fn finish_txn_index(
        manager: &mut ProducerStateManager<F>,
        segment: &LogSegment<F>,
        next_base_offset: Option<i64>,
        aborted: Vec<AbortedTxn>,
        recovered: bool,
    ) -> Result<bool> {
        let rewrite = recovered || segment.all_aborted_txns()? != aborted;
        if rewrite {
            if !recovered {
                let report = segment.recover_before(next_base_offset)?;
                if report.bytes_truncated > 0 {
                    return Err(Error::Changed {
                        path: segment.log_path(),
                        reason: format!(
                            "recovery cut {} bytes that its plan found valid: the file changed \
                             while recovery ran",
                            report.bytes_truncated
                        ),
                    });
                }
            }
            for txn in aborted {
                segment.append_aborted_txn(txn)?;
            }
        }
        manager.take_snapshot(true)?;
        Ok(rewrite && !recovered)
    }

    /// The last step of Kafka's `LogLoader.load`: stray snapshots removed, then the state rebuilt
    /// from the latest snapshot to the log end (`rebuildProducerState` with the clean-shutdown
    /// rule), the first unstable offset published.
    pub(super) fn load_producer_state(
        &self,
        segments: &SegmentMap<F>,
        log_start_offset: i64,
        log_end_offset: i64,
        had_clean_shutdown: bool,
        snapshots: Option<Vec<crate::producer::SnapshotFile>>,
        report: &mut super::LoadReport,
    ) -> Result<()> {
        let bases: Vec<i64> = segments.keys().copied().collect();
        let mut manager = self.producer_state.lock();
        report
            .snapshots_removed
            .extend(manager.remove_stray_snapshots_listed(&bases, snapshots)?);
        let corrupt = rebuild_producer_state(
            &mut manager,
            segments,
            log_start_offset,
            log_end_offset,
            log_end_offset,
            self.time.now_ms(),
            had_clean_shutdown,
        )?;
        report
            .corrupt_snapshots_deleted
            .extend(corrupt.iter().map(ToString::to_string));
        manager.on_high_watermark_updated(log_end_offset);
        self.refresh_first_unstable_offset(&manager);
        Ok(())
    }
}

impl<F: FileSystem> super::PartitionLog<F> {
    /// A copy of the producers the log keeps state for, by ascending producer id.
    pub fn producer_entries(&self) -> Vec<crate::producer::ProducerStateEntry> {
        let manager = self.inner.producer_state.lock();
        let mut entries: Vec<_> = manager.active_producers().values().cloned().collect();
        entries.sort_by_key(crate::producer::ProducerStateEntry::producer_id);
        entries
    }

    /// The offsets of the producer snapshot files the log knows, ascending.
    pub fn producer_snapshot_offsets(&self) -> Vec<i64> {
        let manager = self.inner.producer_state.lock();
        manager.snapshot_files().map(|s| s.offset).collect()
    }
}
