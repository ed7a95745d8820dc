//! Reads (Kafka's `UnifiedLog.read` with its `FetchIsolation`), the log start offset, and
//! truncation. Lookups by time (`ListOffsets`) are in `list_offsets.rs`, the aborted
//! transactions of a read_committed fetch in `aborted.rs`.

use crate::loom::sync::Arc;
use std::ops::ControlFlow;
use std::os::fd::BorrowedFd;
use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_segment::{FileRegion, LogOffsetMetadata, LogSegment};

use super::aborted::aborted_in_fetch;
use super::fetch_records::{Owned, Reused, for_each_record};
use super::{Inner, PartitionLog};
use crate::consumer_records::{AbortedTransaction, IsolationLevel};
use crate::error::{Error, Result};

/// How far a read may go (Kafka's `FetchIsolation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isolation {
    /// Up to the log end offset (replication followers).
    LogEnd,
    /// Up to the high watermark (read_uncommitted consumers).
    HighWatermark,
    /// Up to the last stable offset, with the aborted transactions the fetch overlaps
    /// (read_committed consumers, Kafka's `TXN_COMMITTED`).
    TxnCommitted,
}

impl Isolation {
    /// Kafka's `FetchIsolation.of` for a consumer at `level` (followers read with
    /// [`Isolation::LogEnd`]).
    pub fn for_consumer(level: IsolationLevel) -> Self {
        match level {
            IsolationLevel::ReadUncommitted => Isolation::HighWatermark,
            IsolationLevel::ReadCommitted => Isolation::TxnCommitted,
        }
    }
}

/// The result of [`PartitionLog::read`]: a byte range of one segment. The segment stays open while
/// this value lives, even if retention removes it meanwhile.
#[derive(Debug, Clone)]
pub struct FetchDataInfo<F: FileSystem> {
    /// Where the read starts (the base offset of the first batch returned).
    pub offset_metadata: LogOffsetMetadata,
    /// The bytes, empty when there is nothing to return.
    pub region: FileRegion,
    /// Whether the first batch did not fit in the size asked for.
    pub first_entry_incomplete: bool,
    /// Kafka's `abortedTransactions`: under [`Isolation::TxnCommitted`], the aborted
    /// transactions overlapping the fetch (what a consumer needs to drop their records, see
    /// [`consumer_records`](crate::consumer_records)); `None` under the other isolations, and,
    /// as in Kafka, when a start offset in range finds no data (everything above it deleted).
    pub aborted_transactions: Option<Vec<AbortedTransaction>>,
    segment: Option<Arc<LogSegment<F>>>,
}

impl<F: FileSystem> FetchDataInfo<F> {
    /// Reads the bytes into `out`, replacing its contents.
    pub fn read_into(&self, out: &mut Vec<u8>) -> Result<()> {
        match &self.segment {
            Some(segment) => segment.read_region(self.region, out)?,
            None => out.clear(),
        }
        Ok(())
    }

    /// Reads the bytes into `buf` (replacing its contents) and iterates their records, each
    /// batch's CRC checked, decoded: offset, timestamp, key, value, headers
    /// ([`records`](crate::record::records)). The first
    /// batch is the one holding the offset read from, so records below it come first; control
    /// records (transaction markers) are included: [`consumer_records`](crate::consumer_records)
    /// is what a consumer at an isolation level sees.
    pub fn records<'b>(&self, buf: &'b mut Vec<u8>) -> Result<crate::record::Records<'b>> {
        self.read_into(buf)?;
        Ok(crate::record::records(buf))
    }

    /// Hands `f` the fetch's records in order, as [`records`](Self::records) yields them, but
    /// decoded straight from the segment's `.log` mapping when it has the fetch's bytes: no copy
    /// of the batches (each batch's CRC is computed over the mapped bytes; only each key, value
    /// and header is copied, into the record handed over, as a Kafka consumer copies them out of
    /// its fetch buffer). Without a mapping (`SimFs`, an evicted or closed mapping) the bytes
    /// are read into `buf` first, as [`read_into`](Self::read_into) reads them. Returns
    /// `Some(b)` when `f` stopped with [`ControlFlow::Break`]`(b)`, `None` after the last
    /// record.
    ///
    /// A batch that fails its CRC or framing, or a record that fails to decode, ends the
    /// iteration (after the batch's records before it) with
    /// [`seglog_segment::Error::Corrupt`], naming the `.log` and the byte position in it where
    /// the bad batch or field starts.
    ///
    /// `f` runs while its record's batch is borrowed from the mapping: a truncation or deletion
    /// of the segment by another thread waits until `f` has had the batch's last record (at
    /// most one batch). So `f` must not wait for a thread that truncates, deletes or closes this
    /// log (a deadlock), and should be short; to keep records, move them out. Called from `f`
    /// itself, on its own thread, [`PartitionLog::truncate_to`] (of the segment being read),
    /// [`PartitionLog::truncate_fully_and_start_at`] (reusing its name), [`PartitionLog::close`]
    /// and `LogDir::close` would wait for `f` the same way: they are refused, before changing
    /// anything, with [`seglog_segment::Error::LoanHeld`] naming the `.log` (inside
    /// [`Error::Segment`]), and the log stays as it was. Appends, rolls, retention,
    /// `delete_records_before` and compaction never wait for `f`.
    pub fn for_each_record<B>(
        &self,
        buf: &mut Vec<u8>,
        f: impl FnMut(crate::record::Record) -> ControlFlow<B>,
    ) -> Result<Option<B>> {
        match &self.segment {
            Some(segment) => for_each_record(segment, self.region, buf, Owned(f)),
            None => Ok(None),
        }
    }

    /// [`for_each_record`](Self::for_each_record), the same records, errors and rules for `f`,
    /// but each record is lent to `f` rather than given: its key and value are copied into
    /// buffers this call keeps from record to record (a record of a compressed or legacy batch,
    /// decoded whole, is lent as it is). So a consumer that uses each record and drops it pays no
    /// allocation per record, as a Rust consumer reads a borrowed message; to keep a record,
    /// clone it.
    pub fn for_each_record_ref<B>(
        &self,
        buf: &mut Vec<u8>,
        f: impl FnMut(&crate::record::Record) -> ControlFlow<B>,
    ) -> Result<Option<B>> {
        match &self.segment {
            Some(segment) => for_each_record(segment, self.region, buf, Reused::new(f)),
            None => Ok(None),
        }
    }

    /// Copies the bytes to a file or socket without a user-space copy where the platform allows.
    pub fn copy_to(&self, out: BorrowedFd<'_>) -> Result<u64> {
        match &self.segment {
            Some(segment) => Ok(segment.copy_region_to(self.region, out)?),
            None => Ok(0),
        }
    }
}

impl<F: FileSystem> PartitionLog<F> {
    pub(super) fn out_of_range(&self, offset: i64) -> Error {
        Error::OffsetOutOfRange {
            partition: self.inner.partition(),
            offset,
            log_start_offset: self.log_start_offset(),
            log_end_offset: self.log_end_offset(),
        }
    }

    /// Kafka's `read(startOffset, maxLength, isolation, minOneMessage)`: the batches from the one
    /// holding `start_offset`, at most `max_bytes` (at least one whole batch with
    /// `min_one_message`), never past the isolation bound. An offset below the log start offset or
    /// above the log end offset is [`Error::OffsetOutOfRange`]; one from the isolation bound up to
    /// the log end offset reads nothing. Under [`Isolation::TxnCommitted`] the bound is the last
    /// stable offset and the result carries the aborted transactions from the start offset to
    /// the fetch's upper bound (Kafka's `addAbortedTransactions`).
    ///
    /// The result holds raw batches, for zero-copy sends ([`FetchDataInfo::copy_to`]) or a copy
    /// ([`FetchDataInfo::read_into`]); [`FetchDataInfo::records`] decodes them into records, and
    /// [`FetchDataInfo::for_each_record`] does so without copying the batches first.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{Isolation, LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_record_format::{batches, BatchBuilder, BatchOptions, Compression, NewRecord};
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
    ///
    /// // Whole batches, from the one holding the start offset.
    /// let fetch = log.read(1, 1 << 20, Isolation::LogEnd, true)?;
    /// assert_eq!(fetch.offset_metadata.message_offset, 0);
    /// let mut bytes = Vec::new();
    /// fetch.read_into(&mut bytes)?;
    /// let last_offsets: Result<Vec<i64>, _> = batches(&bytes).map(|b| b?.last_offset()).collect();
    /// assert_eq!(last_offsets?, [2, 4]);
    ///
    /// // Consumers read below the high watermark, which appends do not move.
    /// log.set_high_watermark(3);
    /// log.read(0, 1 << 20, Isolation::HighWatermark, true)?.read_into(&mut bytes)?;
    /// assert_eq!(batches(&bytes).count(), 1);
    /// assert_eq!(log.read(3, 1 << 20, Isolation::HighWatermark, true)?.region.length, 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn read(
        &self,
        start_offset: i64,
        max_bytes: u32,
        isolation: Isolation,
        min_one_message: bool,
    ) -> Result<FetchDataInfo<F>> {
        let segments = self.segments();
        let log_end = self.log_end_offset();
        let log_start = self.log_start_offset();
        if start_offset < log_start || start_offset > log_end {
            return Err(self.out_of_range(start_offset));
        }
        let max_offset = match isolation {
            Isolation::LogEnd => log_end,
            Isolation::HighWatermark => self.high_watermark().min(log_end),
            Isolation::TxnCommitted => self.last_stable_offset().min(log_end),
        };
        let include_aborted = isolation == Isolation::TxnCommitted;
        let empty = |segment: Option<&Arc<LogSegment<F>>>| {
            let base = segment.map_or(0, |s| s.base_offset());
            FetchDataInfo {
                offset_metadata: LogOffsetMetadata {
                    message_offset: start_offset,
                    segment_base_offset: base,
                    relative_position: segment.map_or(0, |s| s.size()),
                },
                region: FileRegion {
                    position: 0,
                    length: 0,
                },
                first_entry_incomplete: false,
                aborted_transactions: include_aborted.then(Vec::new),
                segment: None,
            }
        };
        if start_offset >= max_offset {
            return Ok(empty(segments.values().next_back()));
        }
        // The segment holding the isolation bound, and where the bound's batch starts in it.
        let bound_segment = segments.range(..=max_offset).next_back();
        let bound_position = match bound_segment {
            Some((_, s)) if max_offset < log_end => {
                s.translate_offset(max_offset, 0)?.map(|p| p.position)
            }
            _ => None,
        };
        let floor = segments
            .range(..=start_offset)
            .next_back()
            .map_or(i64::MIN, |(b, _)| *b);
        for (base, segment) in segments.range(floor..) {
            let max_position = match bound_segment {
                Some((bound_base, s)) if bound_base == base => {
                    Some(bound_position.unwrap_or(s.size()))
                }
                Some((bound_base, _)) if base > bound_base => None,
                _ => Some(segment.size()),
            };
            if let Some(fetch) = segment.read(
                start_offset,
                i64::from(max_bytes),
                max_position,
                min_one_message,
            )? {
                let aborted_transactions = if include_aborted {
                    Some(aborted_in_fetch(
                        &segments,
                        segment,
                        start_offset,
                        &fetch,
                        log_end,
                    )?)
                } else {
                    None
                };
                return Ok(FetchDataInfo {
                    offset_metadata: fetch.offset_metadata,
                    region: fetch.region,
                    first_entry_incomplete: fetch.first_entry_incomplete,
                    aborted_transactions,
                    segment: Some(Arc::clone(segment)),
                });
            }
        }
        // Everything above start_offset was deleted or compacted away: as Kafka's
        // `FetchDataInfo(nextOffsetMetadata, EMPTY)`, no aborted transactions even under
        // read_committed.
        let mut nothing = empty(segments.values().next_back());
        nothing.aborted_transactions = None;
        Ok(nothing)
    }

    /// Raises the log start offset (Kafka's `DeleteRecords`): reads below it fail from now on, and
    /// retention deletes the segments entirely below it. It may not pass the high watermark, and it
    /// never moves back: returns whether it moved.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{Error, Isolation, ListOffset, LoadOptions, LogConfig, PartitionLog};
    /// # use seglog_log::SystemClock;
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
    /// // Appends do not move the high watermark, which bounds the new log start offset.
    /// let refused = log.delete_records_before(3);
    /// assert!(matches!(refused, Err(Error::InvalidRequest { .. })));
    /// log.set_high_watermark(5);
    ///
    /// assert!(log.delete_records_before(3)?);
    /// assert_eq!(log.log_start_offset(), 3);
    /// assert_eq!(log.offset_for_timestamp(ListOffset::Earliest)?.map(|t| t.offset), Some(3));
    /// let below = log.read(2, 1 << 20, Isolation::LogEnd, true);
    /// assert!(below.is_err_and(|e| e.is_offset_out_of_range()));
    /// assert!(!log.delete_records_before(1)?); // it never moves back
    /// # Ok(())
    /// # }
    /// ```
    pub fn delete_records_before(&self, offset: i64) -> Result<bool> {
        let _writer = self.inner.writer.lock();
        let hw = self.high_watermark();
        if offset > hw {
            return Err(Error::InvalidRequest {
                partition: self.inner.partition(),
                reason: format!(
                    "Cannot increment the log start offset to {offset} of partition {} since it is larger than the high watermark {hw}",
                    self.inner.tp
                ),
            });
        }
        let moved = self
            .inner
            .log_start_offset
            .fetch_max(offset, Ordering::AcqRel)
            < offset;
        if moved {
            self.inner.on_log_start_offset_incremented(offset)?;
        }
        Ok(moved)
    }

    /// Kafka's `truncateTo` (a follower dropping a divergent tail): removes every batch from the
    /// one holding `offset` on. Returns false when `offset` is at or past the log end.
    ///
    /// The log end offset becomes `offset`, and the recovery point, high watermark and log start
    /// offset drop to it if they were above. As in Kafka, `offset` is meant to be a batch
    /// boundary: inside a batch, the whole batch goes, yet the log end offset is still `offset`,
    /// so the batch's offsets below `offset` are left without records.
    ///
    /// Refused, changing nothing, when this thread is inside a callback of
    /// [`FetchDataInfo::for_each_record`] on the segment the truncation would cut (its cut would
    /// wait for that callback): [`seglog_segment::Error::LoanHeld`], in [`Error::Segment`].
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{Error, LoadOptions, LogConfig, PartitionLog, SystemClock};
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
    /// log.flush()?;
    /// assert_eq!(log.recovery_point(), 5);
    ///
    /// assert!(log.truncate_to(3)?); // drops the batch 3..=4
    /// assert_eq!((log.log_end_offset(), log.recovery_point()), (3, 3));
    /// assert!(!log.truncate_to(3)?); // nothing at or past the log end
    /// assert!(matches!(log.truncate_to(-1), Err(Error::InvalidRequest { .. })));
    ///
    /// // The freed offsets are assigned again.
    /// assert_eq!(log.append_as_leader(&mut batch(1)?)?.first_offset, 3);
    /// # Ok(())
    /// # }
    /// ```
    pub fn truncate_to(&self, offset: i64) -> Result<bool> {
        if offset < 0 {
            return Err(Error::InvalidRequest {
                partition: self.inner.partition(),
                reason: format!("Cannot truncate partition to a negative offset ({offset})"),
            });
        }
        let _writer = self.inner.writer.lock();
        self.wait_for_background_flushes();
        let inner = &self.inner;
        let log_end = inner.log_end_offset.load(Ordering::Acquire);
        if offset >= log_end {
            // Kafka always truncates the epoch cache: a leader may have recorded an epoch at the
            // log end and lost leadership before its first append.
            inner.truncate_epochs_from_end(log_end)?;
            return Ok(false);
        }
        let segments = self.segments();
        if segments.keys().next().is_some_and(|first| *first > offset) {
            inner.truncate_fully_and_start_at(offset)?;
            return Ok(true);
        }
        // The segment cut below becomes the active one; segments above it are only renamed and
        // queued (their deletion waits until no read holds them), so they wait for no loan.
        if let Some((_, cut)) = segments.range(..=offset).next_back() {
            cut.check_not_lent("truncate")?;
        }
        let removed: Vec<Arc<LogSegment<F>>> = segments
            .range(offset + 1..)
            .map(|(_, s)| Arc::clone(s))
            .collect();
        inner.swap_segments(|s| s.retain(|base, _| *base <= offset));
        for segment in removed {
            inner.schedule_delete(segment)?;
        }
        // The removals first, then the cut, each durable before the next step: a crash in
        // between finds either the whole old tail or none of it, never a gap between a cut
        // segment and removed ones that came back. Both are durable before anything is appended
        // at the offsets they freed: the recovery point drops to `offset`, so no later flush
        // would sync this segment again, and after a crash the old tail would come back under
        // the new records at the same offsets.
        inner.sync_dir()?;
        let active = inner.active();
        active.truncate_to(offset, inner.time.now_ms())?;
        active.flush()?;
        inner.after_truncation(offset);
        inner.truncate_epochs_from_end(offset)?;
        // Kafka's truncateTo -> rebuildProducerState: the snapshots above `offset` deleted, the
        // state reloaded from the latest one at or below it.
        inner.rebuild_after_truncation(offset)?;
        Ok(true)
    }

    /// Kafka's `truncateFullyAndStartAt`: deletes every segment and starts an empty log at
    /// `offset`. Refused, changing nothing, when this thread is inside a callback of
    /// [`FetchDataInfo::for_each_record`] on a segment based at `offset` (deleted at once, which
    /// would wait for the callback): [`seglog_segment::Error::LoanHeld`].
    pub fn truncate_fully_and_start_at(&self, offset: i64) -> Result<()> {
        let _writer = self.inner.writer.lock();
        self.wait_for_background_flushes();
        self.inner.truncate_fully_and_start_at(offset)
    }
}

impl<F: FileSystem> Inner<F> {
    fn truncate_fully_and_start_at(&self, offset: i64) -> Result<()> {
        let old: Vec<Arc<LogSegment<F>>> = self.segments.load().values().cloned().collect();
        for segment in &old {
            if segment.base_offset() == offset {
                // The new segment reuses the name: the old files go now, not after the delay.
                // The first change this makes: refused for a loan held here, it changed nothing.
                segment.delete()?;
            }
        }
        let fresh = Arc::new(
            LogSegment::open(
                self.fs.clone(),
                &self.dir,
                offset,
                self.segment_config(),
                false,
                "",
                self.time.now_ms(),
            )?
            .with_mapping_budget(self.mapping_budget.clone())
            .with_descriptor_cache(self.descriptor_cache.as_ref()),
        );
        self.swap_segments(|s| {
            s.clear();
            s.insert(offset, Arc::clone(&fresh));
        });
        for segment in old.into_iter().filter(|s| s.base_offset() != offset) {
            self.schedule_delete(segment)?;
        }
        self.sync_dir()?;
        self.log_start_offset.store(offset, Ordering::Release);
        self.after_truncation(offset);
        // Kafka's updateHighWatermark(logEndOffsetMetadata): the new, empty log's end.
        self.stable.set_high_watermark(offset);
        self.clear_epochs()?;
        self.producer_state
            .lock()
            .truncate_fully_and_start_at(offset)?;
        self.rebuild_after_truncation(offset)?;
        Ok(())
    }

    fn after_truncation(&self, offset: i64) {
        self.log_end_offset.store(offset, Ordering::Release);
        self.log_start_offset.fetch_min(offset, Ordering::AcqRel);
        self.stable.lower_high_watermark(offset);
        let mut sync = self.sync.lock();
        self.recovery_point.fetch_min(offset, Ordering::AcqRel);
        sync.synced_to = sync.synced_to.min(offset);
        sync.in_flight_goal = sync.in_flight_goal.min(offset);
        sync.truncations += 1;
    }
}
