//! Appends (Kafka's `UnifiedLog.append` for leaders and followers) and rolls; durable appends
//! with group commit are in `group_commit`, the input checks in `validate`, the producer state's
//! part in `producer`.
//!
//! An append's order, as Kafka's: the input checked, offsets assigned (leader), the producer
//! state validated (a duplicate returns here), then the roll if due, the write, the log end
//! offset, the producer state and the `.txnindex`. Unlike Kafka, the roll decision is made before
//! the producer-state validation but the roll itself after it, so an append that is refused or
//! is a duplicate creates no segment and no snapshot.

mod group_commit;
mod producer;
mod recompress;
mod roll_flush;
mod validate;

use crate::loom::sync::Arc;
use std::path::PathBuf;
use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, TimestampType};
use seglog_segment::{LogSegment, RollParams, naming};

use super::{Inner, PartitionLog};
use crate::config::MessageTimestampType;
use crate::error::{Error, Result};
use crate::producer::{AppendOrigin, TV_UNKNOWN, flush_snapshot};
use producer::ProducerAnalysis;
pub(super) use roll_flush::{RollFlush, RollFlushes};

/// What an append did (Kafka's `LogAppendInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AppendInfo {
    /// The first offset assigned (the base offset of the first batch).
    pub first_offset: i64,
    /// The last offset assigned.
    pub last_offset: i64,
    /// The largest timestamp appended.
    pub max_timestamp: i64,
    /// The broker append time stamped into the batches under `LogAppendTime`, else `None`.
    pub log_append_time: Option<i64>,
    /// The number of batches.
    pub batches: usize,
    /// The bytes appended.
    pub valid_bytes: u64,
}

/// The facts of one validated input batch.
struct InputBatch {
    start: usize,
    size: usize,
    first_offset: i64,
    last_offset: i64,
    last_offset_delta: i64,
    max_timestamp: i64,
    /// -1 for a batch without producer state.
    producer_id: i64,
}

/// A local roll's result: the new active segment, and the one that became inactive (none when
/// an empty active segment was recreated).
type Rolled<F> = (Arc<LogSegment<F>>, Option<Arc<LogSegment<F>>>);

/// Where an append goes: the active segment, or a new one rolled at the append's first offset.
struct AppendTarget<F: FileSystem> {
    active: Arc<LogSegment<F>>,
    roll: bool,
    /// The base offset of the segment that takes the append, and the byte position there.
    segment_base: i64,
    position: u64,
}

impl<F: FileSystem> PartitionLog<F> {
    /// Appends producer batches as the partition leader: checks each batch (magic 2, base offset
    /// 0 as clients send it, size within `max.message.bytes`, CRC, no control batch) and every
    /// record (Kafka's `validateRecord`: a key in a compacted topic, a timestamp within
    /// `message.timestamp.before/after.max.ms` under CreateTime, no LogAppendTime set by the
    /// producer), assigns offsets from the log end offset, sets each batch's max timestamp to its
    /// records' largest (or stamps the append time under `LogAppendTime`), validates every batch
    /// with a producer id against the producer state, rolls if needed and appends. The batches in
    /// `records` are edited in place, unless `compression.type` names another codec than the
    /// batch's: then, as Kafka's `LogValidator`, the append must be one batch, which is rebuilt in
    /// the topic's codec and level and written instead (`records` is left as it was). The high
    /// watermark does not move (see [`PartitionLog::set_high_watermark`]).
    ///
    /// A batch that retries one of its producer's last five is a duplicate: nothing is appended,
    /// and the result has the original batch's offsets (Kafka's answer). A sequence gap, an older
    /// producer epoch or a transactional-state violation is [`Error::Producer`] with Kafka's
    /// message, and nothing of the append is written.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{Error, LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_record_format::{batches, BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # fn batch(base_offset: i64, count: i32) -> seglog_record_format::Result<Vec<u8>> {
    /// #     let records =
    /// #         (0..count).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(b"v")));
    /// #     let mut out = Vec::new();
    /// #     let options = BatchOptions::new(base_offset, Compression::None);
    /// #     BatchBuilder::new().build(&options, records, &mut out)?;
    /// #     Ok(out)
    /// # }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let dir = root.path().join("orders-0");
    /// # let time = Arc::new(SystemClock);
    /// # let (log, _) =
    /// #     PartitionLog::open(RealFs, &dir, LogConfig::default(), LoadOptions::default(), time)?;
    /// // Producers send batches with base offset 0 (`batch(0, n)` builds one of n records);
    /// // the leader assigns offsets from the log end offset.
    /// let info = log.append_as_leader(&mut batch(0, 3)?)?;
    /// assert_eq!((info.first_offset, info.last_offset, info.batches), (0, 2, 1));
    /// let mut second = batch(0, 2)?;
    /// let info = log.append_as_leader(&mut second)?;
    /// assert_eq!((info.first_offset, info.last_offset), (3, 4));
    /// assert_eq!((log.log_end_offset(), log.high_watermark()), (5, 0));
    ///
    /// // The batch was edited in place: it now carries its assigned base offset, which a leader
    /// // refuses.
    /// assert_eq!(batches(&second).next().expect("one batch")?.offset_field(), 3);
    /// let refused = log.append_as_leader(&mut second);
    /// assert!(matches!(refused, Err(Error::InvalidRecords { .. })));
    /// assert_eq!(log.log_end_offset(), 5);
    /// # Ok(())
    /// # }
    /// ```
    pub fn append_as_leader(&self, records: &mut [u8]) -> Result<AppendInfo> {
        self.inner
            .append_as_leader(records, AppendOrigin::Client, TV_UNKNOWN)
    }

    /// Appends batches whose offsets are already assigned, as a follower replica does: the first
    /// batch must start at or after the log end offset and offsets must increase. Offsets and
    /// timestamps are kept as they are, and timestamps are not checked against the clock. The
    /// producer state follows with Kafka's replication rules (no sequence checks, epochs not
    /// enforced), and markers complete their transactions.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{Error, LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # fn batch(base_offset: i64, count: i32) -> seglog_record_format::Result<Vec<u8>> {
    /// #     let records =
    /// #         (0..count).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(b"v")));
    /// #     let mut out = Vec::new();
    /// #     let options = BatchOptions::new(base_offset, Compression::None);
    /// #     BatchBuilder::new().build(&options, records, &mut out)?;
    /// #     Ok(out)
    /// # }
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let dir = root.path().join("orders-0");
    /// # let time = Arc::new(SystemClock);
    /// # let (log, _) =
    /// #     PartitionLog::open(RealFs, &dir, LogConfig::default(), LoadOptions::default(), time)?;
    /// // Batches copied from the leader (`batch(base, n)`: offsets base..base + n).
    /// let info = log.append_as_follower(&batch(0, 3)?)?;
    /// assert_eq!((info.first_offset, info.last_offset), (0, 2));
    ///
    /// // Offsets below the log end offset are refused...
    /// let refused = log.append_as_follower(&batch(2, 2)?);
    /// assert!(matches!(refused, Err(Error::InvalidRecords { .. })));
    /// // ...a gap above it is not (a compacted leader's log has gaps).
    /// let info = log.append_as_follower(&batch(10, 2)?)?;
    /// assert_eq!((info.first_offset, info.last_offset), (10, 11));
    /// assert_eq!(log.log_end_offset(), 12);
    /// # Ok(())
    /// # }
    /// ```
    pub fn append_as_follower(&self, records: &[u8]) -> Result<AppendInfo> {
        self.inner.append_as_follower(records)
    }

    /// Rolls a new active segment now (Kafka's `roll`), whatever `should_roll` says, with a producer
    /// snapshot at its base offset.
    pub fn roll(&self) -> Result<Arc<LogSegment<F>>> {
        let _writer = self.inner.writer.lock();
        self.inner.roll(None)
    }
}

impl<F: FileSystem> Inner<F> {
    /// Kafka's `appendAsLeader` from `origin` (a client, or a coordinator's marker): checks,
    /// assigns offsets from the log end offset, validates the producer state and appends.
    fn append_as_leader(
        &self,
        records: &mut [u8],
        origin: AppendOrigin,
        transaction_version: i16,
    ) -> Result<AppendInfo> {
        let mut writer = self.writer.lock();
        let now = self.time.now_ms();
        let batches = self.validate(records, origin, now)?;
        // `compression.type`: the batch rebuilt in the topic's codec, or kept.
        let state = &mut *writer;
        let (records, batches) = match self.recompress(
            records,
            &batches,
            now,
            &mut state.builder,
            &mut state.rebuilt,
        )? {
            Some(batch) => (&mut state.rebuilt[..], vec![batch]),
            None => (records, batches),
        };
        let log_append_time = (self.config().message_timestamp_type
            == MessageTimestampType::LogAppendTime)
            .then_some(now);
        let mut next = self.log_end_offset.load(Ordering::Acquire);
        let first_offset = next;
        let mut max_timestamp = -1;
        let leader_epoch = self.stamp_epoch();
        for b in &batches {
            let bytes = records
                .get_mut(b.start..b.start + b.size)
                .unwrap_or_default();
            let invalid = |e: rf::Error| self.invalid(b.start, e.to_string());
            rf::set_base_offset(bytes, next).map_err(invalid)?;
            if let Some(epoch) = leader_epoch {
                // Kafka's LogValidator stamps the leader's epoch (outside the CRC).
                rf::set_partition_leader_epoch(bytes, epoch).map_err(invalid)?;
            }
            // Under LogAppendTime the append time; otherwise the records' largest timestamp
            // (Kafka's `setMaxTimestamp`: the CRC is recomputed only when the producer's header
            // said otherwise).
            let (timestamp_type, batch_max) = match log_append_time {
                Some(t) => (TimestampType::LogAppendTime, t),
                None => (TimestampType::CreateTime, b.max_timestamp),
            };
            rf::set_max_timestamp(bytes, timestamp_type, batch_max).map_err(invalid)?;
            max_timestamp = max_timestamp.max(batch_max);
            next += b.last_offset_delta + 1;
        }
        let last_offset = next - 1;
        // Kafka's order: the epoch cache before the roll and the producer-state checks.
        if let Some(epoch) = leader_epoch {
            self.assign_batch_epochs(std::iter::once((epoch, first_offset)))?;
        }
        let target = self.append_target(records.len(), first_offset, last_offset, max_timestamp)?;
        let analysis = self.analyze_producer_state(
            records,
            &batches,
            (target.segment_base, target.position),
            origin,
            transaction_version,
        )?;
        if let Some(duplicate) = analysis.duplicate {
            // Kafka's answer to a retried batch: the offsets it got the first time.
            return Ok(AppendInfo {
                first_offset: duplicate.first_offset(),
                last_offset: duplicate.last_offset,
                max_timestamp,
                log_append_time: Some(duplicate.timestamp),
                batches: batches.len(),
                valid_bytes: records.len() as u64,
            });
        }
        self.write(records, target, first_offset, last_offset, &analysis)?;
        Ok(AppendInfo {
            first_offset,
            last_offset,
            max_timestamp,
            log_append_time,
            batches: batches.len(),
            valid_bytes: records.len() as u64,
        })
    }

    /// Kafka's `appendAsFollower`: offsets kept, the producer state updated with the replication
    /// origin (no sequence checks, epochs not enforced), markers completing transactions.
    fn append_as_follower(&self, records: &[u8]) -> Result<AppendInfo> {
        let _writer = self.writer.lock();
        let batches = self.validate(records, AppendOrigin::Replication, self.time.now_ms())?;
        let Some(first) = batches.first() else {
            return Err(self.invalid(0, "no record batch in the append".to_owned()));
        };
        // Kafka's order: monotonic offsets first, then the first offset against the log end.
        let mut previous = i64::MIN;
        for b in &batches {
            if b.first_offset <= previous || b.last_offset < b.first_offset {
                return Err(self.invalid(
                    b.start,
                    format!("Out of order offsets found in append to {}", self.tp),
                ));
            }
            previous = b.last_offset;
        }
        let log_end = self.log_end_offset.load(Ordering::Acquire);
        if first.first_offset < log_end {
            // Kafka's UnexpectedAppendOffsetException (appends take v2 batches only, whose first
            // offset is always known: "First offset", never "Last offset of the first batch").
            return Err(self.invalid(
                0,
                format!(
                    "Unexpected offset in append to {}. First offset {} is less than the next offset {log_end}. First 10 offsets in append: {}, last offset in append: {previous}. Log start offset = {}",
                    self.tp,
                    first.first_offset,
                    first_record_offsets(records, 10),
                    self.log_start_offset.load(Ordering::Acquire)
                ),
            ));
        }
        let max_timestamp = batches.iter().map(|b| b.max_timestamp).max().unwrap_or(-1);
        let last_offset = previous;
        // The epochs the leader stamped (Kafka's order: before the roll).
        self.assign_batch_epochs(
            batches
                .iter()
                .map(|b| (batch_leader_epoch(records, b.start), b.first_offset)),
        )?;
        let target = self.append_target(
            records.len(),
            first.first_offset,
            last_offset,
            max_timestamp,
        )?;
        let analysis = self.analyze_producer_state(
            records,
            &batches,
            (target.segment_base, target.position),
            AppendOrigin::Replication,
            TV_UNKNOWN,
        )?;
        self.write(records, target, first.first_offset, last_offset, &analysis)?;
        Ok(AppendInfo {
            first_offset: first.first_offset,
            last_offset,
            max_timestamp,
            log_append_time: None,
            batches: batches.len(),
            valid_bytes: records.len() as u64,
        })
    }

    /// Which segment an append of `size` bytes goes to (Kafka's `maybeRoll` decision, without
    /// the roll). The caller holds the writer lock.
    fn append_target(
        &self,
        size: usize,
        first_offset: i64,
        last_offset: i64,
        max_timestamp: i64,
    ) -> Result<AppendTarget<F>> {
        let active = self.active();
        let config = self.config();
        if self.active_needs_resize.swap(false, Ordering::AcqRel) {
            active.resize_indexes(u32::try_from(config.segment_index_bytes).unwrap_or(0))?;
        }
        let params = RollParams {
            max_segment_ms: config.max_segment_ms(),
            max_segment_bytes: u64::try_from(config.segment_bytes).unwrap_or(0),
            max_timestamp_in_messages: max_timestamp,
            max_offset_in_messages: last_offset,
            messages_size: size as u64,
            now_ms: self.time.now_ms(),
        };
        let roll = active.should_roll(params)?;
        let (segment_base, position) = if roll {
            let log_end = self.log_end_offset.load(Ordering::Acquire);
            (first_offset.max(log_end), 0)
        } else {
            (active.base_offset(), active.size())
        };
        Ok(AppendTarget {
            active,
            roll,
            segment_base,
            position,
        })
    }

    /// Rolls if due, appends, moves the log end offset, takes over the producer state and applies
    /// `flush.messages`. The caller holds the writer lock.
    fn write(
        &self,
        records: &[u8],
        target: AppendTarget<F>,
        first_offset: i64,
        last_offset: i64,
        analysis: &ProducerAnalysis,
    ) -> Result<()> {
        let segment = if target.roll {
            self.roll(Some(first_offset))?
        } else {
            target.active
        };
        segment.append(last_offset, records)?;
        {
            let mut state = self.producer_state.lock();
            // The log end moves first, as in Kafka: should the `.txnindex` write below fail,
            // later appends still get increasing offsets (recovery repairs the index).
            self.log_end_offset
                .store(last_offset + 1, Ordering::Release);
            self.apply_producer_state(&mut state, &segment, analysis, last_offset + 1)?;
        }
        let unflushed = last_offset + 1 - self.recovery_point.load(Ordering::Acquire);
        if unflushed >= self.config().flush_messages {
            self.flush_up_to(last_offset + 1)?;
        }
        Ok(())
    }

    /// Kafka's `UnifiedLog.roll`: the local roll, then a producer snapshot at the new segment's
    /// base offset, written unsynced under the lock; the background flush of the older segments
    /// syncs it first. The caller holds the writer lock.
    pub(super) fn roll(&self, expected_next_offset: Option<i64>) -> Result<Arc<LogSegment<F>>> {
        let (segment, rolled) = self.roll_local(expected_next_offset)?;
        let snapshot = {
            let mut state = self.producer_state.lock();
            state.update_map_end_offset(segment.base_offset());
            state.take_snapshot(false)?
        };
        match rolled {
            Some(rolled) => self.schedule_flush_before(segment.base_offset(), rolled, snapshot),
            // A recreated empty segment: no older segment to flush, only the snapshot.
            None => {
                if let Some(path) = snapshot {
                    flush_snapshot(&self.fs, &path)?;
                }
            }
        }
        Ok(segment)
    }

    /// Kafka's `LocalLog.roll`. The caller holds the writer lock.
    fn roll_local(&self, expected_next_offset: Option<i64>) -> Result<Rolled<F>> {
        let log_end = self.log_end_offset.load(Ordering::Acquire);
        let new_offset = expected_next_offset.unwrap_or(0).max(log_end);
        let active = self.active();
        if new_offset == active.base_offset() {
            if active.size() == 0 {
                // KAFKA-6388: an empty active segment at the same offset is recreated, not rolled.
                // As Kafka's `createAndDeleteSegment`: renamed `.deleted` first (its names are the
                // new one's), replaced in the list, deleted once due, so that a reader that took
                // it from the list never finds it closed while it is still listed.
                self.schedule_delete(Arc::clone(&active))?;
                let fresh = Arc::new(self.open_new_segment(new_offset)?);
                self.swap_segments(|s| {
                    s.insert(new_offset, Arc::clone(&fresh));
                });
                return Ok((fresh, None));
            }
            return Err(Error::InvalidRequest {
                partition: self.partition(),
                reason: format!(
                    "Trying to roll a new log segment with start offset {new_offset} while it already exists"
                ),
            });
        }
        if new_offset < active.base_offset() {
            return Err(Error::InvalidRequest {
                partition: self.partition(),
                reason: format!(
                    "Trying to roll a new log segment with start offset {new_offset} lower than start offset of the active segment {}",
                    active.base_offset()
                ),
            });
        }
        // Stray files named like the new segment are deleted first, as Kafka does.
        for path in [
            naming::log_file(&self.dir, new_offset, ""),
            naming::offset_index_file(&self.dir, new_offset, ""),
            naming::time_index_file(&self.dir, new_offset, ""),
            naming::txn_index_file(&self.dir, new_offset, ""),
        ] {
            let _ = self.fs.remove_file(&path);
        }
        active.on_become_inactive()?;
        if self.recovery_point.load(Ordering::Acquire) >= log_end {
            // A flush synced this segment's data only (recovery rescans the active segment), and
            // once the new segment's name is durable it lies below the recovery point, loaded
            // after a crash without recovery: its indexes and `.txnindex` are synced first.
            active.flush()?;
        }
        let segment = Arc::new(self.open_new_segment(new_offset)?);
        self.swap_segments(|s| {
            s.insert(new_offset, Arc::clone(&segment));
        });
        Ok((segment, Some(active)))
    }

    fn open_new_segment(&self, base: i64) -> Result<LogSegment<F>> {
        let segment = LogSegment::open(
            self.fs.clone(),
            &self.dir,
            base,
            self.segment_config(),
            false,
            "",
            self.time.now_ms(),
        )?
        .with_mapping_budget(self.mapping_budget.clone())
        .with_descriptor_cache(self.descriptor_cache.as_ref());
        // After the files exist, so that a directory sync that clears this covers them.
        self.names_unsynced.store(true, Ordering::Release);
        Ok(segment)
    }

    /// Syncs the roll's producer snapshot, then flushes every segment below `offset` and moves
    /// the recovery point to `offset`, in the background, as Kafka's "flush-log" task after a
    /// roll; see [`Inner::flush_after_roll`].
    fn schedule_flush_before(
        &self,
        offset: i64,
        rolled: Arc<LogSegment<F>>,
        snapshot: Option<PathBuf>,
    ) {
        if self.roll_flush_inline.load(Ordering::Acquire) {
            // As in the background: a failure leaves the recovery point where it was.
            let _ = self.flush_after_roll_with_snapshot(offset, &rolled, snapshot.as_deref());
            return;
        }
        let mut background = self.background.lock();
        let start = background.push(RollFlush {
            offset,
            rolled,
            snapshot,
        });
        if !start {
            // The running worker takes it after the flushes queued before it.
            return;
        }
        // The last worker has left its loop (it found the queue empty under this lock and takes
        // it no more): wait for its thread to end, so that a partition never has two.
        if let Some(last) = background.take_worker() {
            let _ = last.join();
        }
        let me = self.me.clone();
        let worker = std::thread::spawn(move || {
            while let Some(inner) = me.upgrade() {
                let Some(job) = inner.background.lock().next() else {
                    return;
                };
                // A failure leaves the recovery point where it was: the next flush retries.
                let _ = inner.flush_after_roll_with_snapshot(
                    job.offset,
                    &job.rolled,
                    job.snapshot.as_deref(),
                );
            }
        });
        background.started(worker);
    }

    /// The roll's snapshot synced (a snapshot that retention has renamed `.deleted` since needs
    /// none), then [`Inner::flush_after_roll`].
    fn flush_after_roll_with_snapshot(
        &self,
        offset: i64,
        rolled: &LogSegment<F>,
        snapshot: Option<&std::path::Path>,
    ) -> Result<()> {
        if let Some(path) = snapshot {
            match flush_snapshot(&self.fs, path) {
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        self.flush_after_roll(offset, rolled)
    }
}

/// The offsets of the first `n` records of `records`, as Kafka's messages list them
/// (`"4, 5, 6"`); the input was validated already, so a record that does not decode ends the list.
/// The `partitionLeaderEpoch` of the validated batch at `start` of `records`.
fn batch_leader_epoch(records: &[u8], start: usize) -> i32 {
    let at = start + rf::PARTITION_LEADER_EPOCH_OFFSET;
    records
        .get(at..at + 4)
        .and_then(|b| <[u8; 4]>::try_from(b).ok())
        .map_or(rf::NO_PARTITION_LEADER_EPOCH, i32::from_be_bytes)
}

fn first_record_offsets(records: &[u8], n: usize) -> String {
    let mut offsets = Vec::with_capacity(n);
    let mut scratch = Vec::new();
    for framed in rf::batches(records).flatten() {
        let Ok(rf::Batch::V2(batch)) = framed.decode() else {
            break;
        };
        let Ok(batch_records) = batch.records_with(&mut scratch) else {
            break;
        };
        for record in batch_records.map_while(Result::ok) {
            if offsets.len() == n {
                return offsets.join(", ");
            }
            offsets.push(record.offset().to_string());
        }
    }
    offsets.join(", ")
}
