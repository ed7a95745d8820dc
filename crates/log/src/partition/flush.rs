//! Flushing (Kafka's `UnifiedLog.flush`): segments up to an offset, the recovery point that
//! follows, the background flush after a roll, and a clean close.

use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_segment::LogSegment;

use super::{Inner, PartitionLog, range_overlapping};
use crate::error::Result;
use crate::snapshot::is_unreferenced;

impl<F: FileSystem> PartitionLog<F> {
    /// Flushes every segment up to `offset` (exclusive) and moves the recovery point there
    /// (Kafka's `flush(offset, includingOffset = false)`), but not past the log end offset at the
    /// start of the flush: records appended while it runs may miss its fsync.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # fn batch(count: i32) -> seglog_record_format::Result<Vec<u8>> {
    /// #     let records =
    /// #         (0..count).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(b"v")));
    /// #     let mut out = Vec::new();
    /// #     let options = BatchOptions::new(0, Compression::None);
    /// #     BatchBuilder::new().build(&options, records, &mut out)?;
    /// #     Ok(out)
    /// # }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let dir = root.path().join("orders-0");
    /// # let time = Arc::new(SystemClock);
    /// # let (log, _) =
    /// #     PartitionLog::open(RealFs, &dir, LogConfig::default(), LoadOptions::default(), time)?;
    /// log.append_as_leader(&mut batch(3)?)?; // offsets 0..=2
    /// log.append_as_leader(&mut batch(2)?)?; // offsets 3..=4
    /// assert_eq!(log.recovery_point(), 0); // appended, not yet flushed
    ///
    /// log.flush_up_to(3)?;
    /// assert_eq!(log.recovery_point(), 3);
    /// log.flush_up_to(100)?; // never past the log end offset
    /// assert_eq!(log.recovery_point(), 5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn flush_up_to(&self, offset: i64) -> Result<()> {
        self.inner.flush_up_to(offset)
    }

    /// Flushes everything appended so far (Kafka's `flush(forceFlushActiveSegment = true)`): the
    /// recovery point moves to the log end offset.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{LoadOptions, LogConfig, MockClock, PartitionLog};
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # fn batch(count: i32) -> seglog_record_format::Result<Vec<u8>> {
    /// #     let records =
    /// #         (0..count).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(b"v")));
    /// #     let mut out = Vec::new();
    /// #     let options = BatchOptions::new(0, Compression::None);
    /// #     BatchBuilder::new().build(&options, records, &mut out)?;
    /// #     Ok(out)
    /// # }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let dir = root.path().join("orders-0");
    /// let clock = MockClock::new(1_700_000_000_000); // the log's clock
    /// # let time = Arc::new(clock.clone());
    /// # let (log, _) =
    /// #     PartitionLog::open(RealFs, &dir, LogConfig::default(), LoadOptions::default(), time)?;
    /// log.append_as_leader(&mut batch(3)?)?; // offsets 0..=2
    /// clock.advance(1_000);
    /// log.flush()?;
    /// assert_eq!(log.recovery_point(), log.log_end_offset());
    /// assert_eq!(log.last_flush_ms(), 1_700_000_001_000);
    /// # Ok(())
    /// # }
    /// ```
    pub fn flush(&self) -> Result<()> {
        self.inner
            .flush_up_to(self.log_end_offset().saturating_add(1))
    }

    /// With `true`, the flush that follows a roll runs on the thread that rolls, before the
    /// roll returns, instead of in the background. For deterministic tests (the crash harness:
    /// a roll inside an append then orders its file-system events the same way on every run);
    /// the default, `false`, is Kafka's background flush.
    pub fn set_roll_flush_inline(&self, inline: bool) {
        self.inner
            .roll_flush_inline
            .store(inline, Ordering::Release);
    }

    /// Waits for the background flushes started by rolls.
    pub fn wait_for_background_flushes(&self) {
        // The worker exits only with the queue empty, so joining it waits for every flush queued
        // before this call.
        let worker = self.inner.background.lock().take_worker();
        if let Some(worker) = worker {
            let _ = worker.join();
        }
    }

    /// Flushes and closes every segment (trimming the active one's preallocated files), after a
    /// producer snapshot at the log end (Kafka's `close`). The log must not be used afterwards.
    ///
    /// Refused, changing nothing, when this thread is inside a callback of
    /// [`FetchDataInfo::for_each_record`](crate::FetchDataInfo::for_each_record) on one of the
    /// log's segments (closing it would wait for that callback):
    /// [`seglog_segment::Error::LoanHeld`], in [`Error::Segment`](crate::Error::Segment).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # fn batch(count: i32) -> seglog_record_format::Result<Vec<u8>> {
    /// #     let records =
    /// #         (0..count).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(b"v")));
    /// #     let mut out = Vec::new();
    /// #     let options = BatchOptions::new(0, Compression::None);
    /// #     BatchBuilder::new().build(&options, records, &mut out)?;
    /// #     Ok(out)
    /// # }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let dir = root.path().join("orders-0");
    /// # let time = Arc::new(SystemClock);
    /// # let (log, _) =
    /// #     PartitionLog::open(RealFs, &dir, LogConfig::default(), LoadOptions::default(), time)?;
    /// log.append_as_leader(&mut batch(3)?)?; // offsets 0..=2
    /// let index = dir.join("00000000000000000000.index");
    /// assert_eq!(std::fs::metadata(&index)?.len(), 10 << 20); // preallocated: segment.index.bytes
    ///
    /// log.close()?;
    /// assert_eq!(log.recovery_point(), 3); // flushed
    /// assert_eq!(std::fs::metadata(&index)?.len(), 0); // trimmed to its entries (none yet)
    /// # Ok(())
    /// # }
    /// ```
    pub fn close(&self) -> Result<()> {
        self.check_no_loan_held("close")?;
        self.wait_for_background_flushes();
        self.flush()?;
        // Nothing reads through this log any more: `.deleted` files need not wait for their delay
        // (Kafka leaves them for the next start; a clean directory is friendlier).
        let fs = &self.inner.fs;
        self.inner
            .pending_deletes
            .lock()
            .retain(|p| !(is_unreferenced(&p.segment) && p.delete(fs).is_ok()));
        // Kafka's `UnifiedLog.close`: a snapshot at the log end, so the next open need not scan
        // the log for producer state.
        self.inner.producer_state.lock().take_snapshot(true)?;
        self.inner.active().flush_unopened_indexes()?;
        for segment in self.segments().values() {
            segment.close()?;
        }
        Ok(())
    }
}

impl<F: FileSystem> PartitionLog<F> {
    /// [`seglog_segment::Error::LoanHeld`] for `op` when this thread holds a loan of any of the
    /// log's segments (it is inside a callback of a read): `op` would wait for it.
    pub(crate) fn check_no_loan_held(&self, op: &'static str) -> Result<()> {
        for segment in self.segments().values() {
            segment.check_not_lent(op)?;
        }
        Ok(())
    }
}

impl<F: FileSystem> Inner<F> {
    /// Flushes the segments below `offset` and moves the recovery point to `offset`.
    pub(super) fn flush_up_to(&self, offset: i64) -> Result<()> {
        self.flush_segments(offset, offset, None)
    }

    /// The flush after a roll to `offset`: [`Inner::flush_up_to`], except that `rolled`, the
    /// segment that became inactive, is flushed whole even when the recovery point already
    /// reached `offset` (Kafka then flushes nothing), unless a flush since the roll did it. Its
    /// records may then have been synced while it was active (`.log` only, its indexes never),
    /// and `on_become_inactive` has just appended to and trimmed them; below the recovery point
    /// nothing rebuilds them after a power loss. (When the recovery point is below `offset`, the
    /// range flushed covers `rolled`.)
    pub(super) fn flush_after_roll(&self, offset: i64, rolled: &LogSegment<F>) -> Result<()> {
        self.flush_segments(offset, offset, Some(rolled))
    }

    /// Kafka's `flush(offset, includingOffset = true)`: also flushes a segment that starts at
    /// `offset` (an active segment rolled there: its name is made durable), and moves the
    /// recovery point to `offset`.
    pub(super) fn flush_through(&self, offset: i64) -> Result<()> {
        self.flush_segments(offset.saturating_add(1), offset, None)
    }

    /// Flushes the segments that may hold offsets in `[recovery point, flush_to)` and moves the
    /// recovery point to `recovery_to`, but never past the log end offset read before the first
    /// sync: what was appended later may have missed the syncs. `rolled` (see
    /// [`Inner::flush_after_roll`]) is flushed whole when the range is already flushed.
    fn flush_segments(
        &self,
        flush_to: i64,
        recovery_to: i64,
        rolled: Option<&LogSegment<F>>,
    ) -> Result<()> {
        // A truncation from here on makes this flush's result stale (see `SyncState`).
        let truncations = self.sync.lock().truncations;
        // Every offset below `written` was written before the syncs below begin, into segments
        // the snapshot taken next holds (a roll never starts a segment below the log end).
        let written = self.log_end_offset.load(Ordering::Acquire);
        let recovery_point = self.recovery_point.load(Ordering::Acquire);
        if flush_to <= recovery_point {
            if let Some(rolled) = rolled {
                rolled.flush_if_unsynced_since_inactive()?;
            }
            return Ok(());
        }
        let segments = self.segments.load();
        let active_base = segments.keys().next_back().copied();
        for (base, segment) in range_overlapping(&segments, recovery_point, flush_to) {
            if Some(*base) == active_base {
                // The recovery point ends up inside the active segment, which recovery rescans
                // after a crash: its data must be durable, its indexes need not be.
                segment.flush_data()?;
            } else {
                segment.flush()?;
            }
        }
        if let Some(rolled) = active_base
            .filter(|base| self.segments.load().keys().next_back() != Some(base))
            .and_then(|base| segments.get(&base))
            .filter(|rolled| rolled.base_offset() < flush_to)
        {
            // Rolled since: no longer rescanned by recovery once the new segment's name is
            // durable (the directory sync below), so its indexes are synced too.
            rolled.flush()?;
        }
        if self.names_unsynced.load(Ordering::Acquire) {
            // A segment created since the last directory sync (or before this open): make its
            // name durable too, before anything under it counts as durable.
            self.sync_dir()?;
        }
        // Under the sync lock, which a truncation takes to lower the recovery point: either the
        // truncation comes after and lowers what we raise, or it came before and we raise nothing.
        let sync = self.sync.lock();
        if sync.truncations == truncations {
            self.recovery_point.fetch_max(
                recovery_to
                    .min(written)
                    .min(self.log_end_offset.load(Ordering::Acquire)),
                Ordering::AcqRel,
            );
        }
        drop(sync);
        self.last_flush_ms
            .store(self.time.now_ms(), Ordering::Release);
        Ok(())
    }
}
