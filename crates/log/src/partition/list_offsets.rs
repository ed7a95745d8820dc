//! Offset lookups (Kafka's `ListOffsets`: `UnifiedLog.fetchOffsetByTimestamp` and, with an
//! isolation level, `Partition.fetchOffsetForTimestamp`).

use seglog_fs::FileSystem;
use seglog_segment::TimestampAndOffset;

use super::PartitionLog;
use crate::consumer_records::IsolationLevel;
use crate::error::Result;
pub use crate::time_lookup::ListOffset;
use crate::time_lookup::lookup_by_time;

impl<F: FileSystem> PartitionLog<F> {
    /// Kafka's `fetchOffsetByTimestamp` (ListOffsets): see [`ListOffset`]. For a timestamp, the
    /// first segment whose largest timestamp (or `.log` modification time, when it has none) is
    /// at least the target is searched, and the answer is its first record with a timestamp at
    /// least the target and an offset at least the log start offset. Each answer carries its
    /// leader epoch, as Kafka's `TimestampAndOffset.leaderEpoch`: the found batch's epoch, the
    /// earliest cached epoch for [`ListOffset::Earliest`] (if it starts at or before the log
    /// start), the latest cached epoch for [`ListOffset::Latest`].
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{ListOffset, LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # const T: i64 = 1_700_000_000_000;
    /// # fn batch(timestamps: &[i64]) -> seglog_record_format::Result<Vec<u8>> {
    /// #     let records =
    /// #         (0..).zip(timestamps).map(|(i, ts)| NewRecord::new(i, *ts, None, Some(b"v")));
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
    /// log.append_as_leader(&mut batch(&[T, T + 10])?)?; // offsets 0..=1
    /// log.append_as_leader(&mut batch(&[T + 30, T + 20])?)?; // offsets 2..=3
    /// let offset = |target| log.offset_for_timestamp(target).map(|found| found.map(|t| t.offset));
    ///
    /// assert_eq!(offset(ListOffset::Earliest)?, Some(0)); // the log start offset
    /// assert_eq!(offset(ListOffset::Latest)?, Some(4)); // the log end offset
    /// let max = log.offset_for_timestamp(ListOffset::MaxTimestamp)?.expect("a record");
    /// assert_eq!((max.timestamp, max.offset), (T + 30, 2)); // a record, not its batch's last
    /// assert_eq!(offset(ListOffset::Timestamp(T + 5))?, Some(1));
    /// assert_eq!(offset(ListOffset::Timestamp(T + 15))?, Some(2)); // the first at or past it
    /// assert_eq!(offset(ListOffset::Timestamp(T + 31))?, None); // none that late
    /// # Ok(())
    /// # }
    /// ```
    pub fn offset_for_timestamp(&self, target: ListOffset) -> Result<Option<TimestampAndOffset>> {
        self.fetch_offset_for_timestamp(target, None)
    }

    /// Kafka's `Partition.fetchOffsetForTimestamp`: [`offset_for_timestamp`](Self::offset_for_timestamp)
    /// as a ListOffsets request with an isolation level sees it. The last fetchable offset is
    /// the last stable offset under read_committed, the high watermark under read_uncommitted
    /// and the log end offset without a level (a follower's request). [`ListOffset::Latest`]
    /// answers it; a lookup by time that finds a record at or past it answers `None`, as the
    /// broker's unknown offset (-1).
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{IsolationLevel, ListOffset, LoadOptions, LogConfig, PartitionLog};
    /// # use seglog_log::SystemClock;
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # const T: i64 = 1_700_000_000_000;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let dir = root.path().join("orders-0");
    /// # let (log, _) = PartitionLog::open(
    /// #     RealFs, &dir, LogConfig::default(), LoadOptions::default(), Arc::new(SystemClock))?;
    /// let mut batch = Vec::new();
    /// let records = (0..4).map(|i| NewRecord::new(i, T + i64::from(i), None, Some(b"v")));
    /// BatchBuilder::new().build(&BatchOptions::new(0, Compression::None), records, &mut batch)?;
    /// log.append_as_leader(&mut batch)?; // offsets 0..=3
    /// log.set_high_watermark(2);
    /// let latest = |level| log.fetch_offset_for_timestamp(ListOffset::Latest, level);
    /// assert_eq!(latest(None)?.map(|t| t.offset), Some(4)); // the log end offset
    /// let uncommitted = latest(Some(IsolationLevel::ReadUncommitted))?;
    /// assert_eq!(uncommitted.map(|t| t.offset), Some(2)); // the high watermark
    /// let committed = latest(Some(IsolationLevel::ReadCommitted))?;
    /// assert_eq!(committed.map(|t| t.offset), Some(log.last_stable_offset()));
    /// // A record past what a consumer may fetch is not an answer.
    /// let late = ListOffset::Timestamp(T + 3);
    /// assert_eq!(log.fetch_offset_for_timestamp(late, None)?.map(|t| t.offset), Some(3));
    /// assert_eq!(log.fetch_offset_for_timestamp(late, Some(IsolationLevel::ReadUncommitted))?, None);
    /// # Ok(())
    /// # }
    /// ```
    pub fn fetch_offset_for_timestamp(
        &self,
        target: ListOffset,
        isolation: Option<IsolationLevel>,
    ) -> Result<Option<TimestampAndOffset>> {
        let last_fetchable = match isolation {
            Some(IsolationLevel::ReadCommitted) => self.last_stable_offset(),
            Some(IsolationLevel::ReadUncommitted) => self.high_watermark(),
            None => self.log_end_offset(),
        };
        let log_start = self.log_start_offset();
        match target {
            // Kafka: the earliest cached epoch, if it starts at or before the log start.
            ListOffset::Earliest => Ok(Some(TimestampAndOffset {
                timestamp: -1,
                offset: log_start,
                leader_epoch: self
                    .inner
                    .epochs
                    .read()
                    .earliest_entry()
                    .filter(|e| e.start_offset <= log_start)
                    .map(|e| e.epoch),
            })),
            // Kafka: the latest cached epoch.
            ListOffset::Latest => Ok(Some(TimestampAndOffset {
                timestamp: -1,
                offset: last_fetchable,
                leader_epoch: self.latest_epoch(),
            })),
            ListOffset::MaxTimestamp | ListOffset::Timestamp(_) => loop {
                let segments = self.segments();
                // Borrowed: the same code under loom, whose `Arc` is not std's.
                let readers = segments.values().map(|s| Ok(&**s));
                match lookup_by_time(readers, target, self.log_start_offset()) {
                    // Retention removed a segment of the snapshot while the lookup was in it (its
                    // indexes closed): the answer is in the log as it is now.
                    Err(_) if !self.snapshot_is_current(&segments) => {}
                    // ReplicaManager: a found offset at or past the last fetchable one is none.
                    outcome => return outcome.map(|f| f.filter(|t| t.offset < last_fetchable)),
                }
            },
        }
    }
}
