//! Durable appends and group commit: concurrent durable appenders share one fdatasync round.

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use seglog_fs::FileSystem;

use super::AppendInfo;
use crate::error::Result;
use crate::partition::PartitionLog;

/// How many group-commit rounds may fsync at once. One gives the fewest fsyncs: every appender
/// that arrives during a round is covered by the next. Overlapping rounds add fsyncs without a
/// clear throughput gain (docs/benchmarks.md, the partition log's durable appends).
const MAX_ROUNDS_IN_FLIGHT: u32 = 1;

/// The longest a round's leader lingers for the appenders the last round released (see
/// `sync_locked`); it lingers at most half an average round below that.
const MAX_LINGER: Duration = Duration::from_millis(1);

impl<F: FileSystem> PartitionLog<F> {
    /// A leader append that returns only once the appended records are on stable storage
    /// (fdatasync). Concurrent durable appenders share one fsync round (group commit); a round
    /// may start up to half an average round (and at most 1 ms) late, to take in the durable
    /// appenders the previous round released, which a lone appender never waits for.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock};
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
    /// let info = log.append_durable(&mut batch(0, 3)?)?;
    /// assert_eq!((info.first_offset, info.last_offset), (0, 2));
    /// assert_eq!(log.recovery_point(), 3); // offsets below it are on stable storage
    /// assert_eq!(log.group_commit_rounds(), 1);
    ///
    /// // A plain leader append leaves the recovery point behind.
    /// log.append_as_leader(&mut batch(0, 2)?)?;
    /// assert_eq!((log.log_end_offset(), log.recovery_point()), (5, 3));
    /// // The next durable append's round covers both.
    /// log.append_durable(&mut batch(0, 1)?)?;
    /// assert_eq!((log.recovery_point(), log.group_commit_rounds()), (6, 2));
    /// # Ok(())
    /// # }
    /// ```
    pub fn append_durable(&self, records: &mut [u8]) -> Result<AppendInfo> {
        let inner = &self.inner;
        {
            let mut state = inner.sync.lock();
            state.returning = state.returning.saturating_sub(1);
            state.appending += 1;
        }
        let appended = self.append_as_leader(records);
        let mut state = inner.sync.lock();
        state.appending -= 1;
        if state.lingering {
            inner.linger_done.notify_one();
        }
        let info = match appended {
            Ok(info) => info,
            Err(e) => {
                drop(state);
                return Err(e);
            }
        };
        self.sync_locked(state, info.last_offset + 1)?;
        Ok(info)
    }

    /// Waits until every offset below `offset` is durable, running or joining a flush round.
    /// An `offset` past the log end offset (records not appended, or cut by a truncation since)
    /// is [`crate::Error::OffsetOutOfRange`].
    pub fn sync_up_to(&self, offset: i64) -> Result<()> {
        self.sync_locked(self.inner.sync.lock(), offset)
    }

    /// Group commit. One round runs at a time: its leader takes as its goal the log end offset
    /// (everything written so far, whoever wrote it), fdatasyncs up to it, and releases every
    /// waiter below it; whoever arrived meanwhile is covered by the next round.
    ///
    /// Started at once, the next round would miss the appenders the last one just released:
    /// they append again moments later and wait a whole round more, so with `n`
    /// appenders each round would cover about `n / 2` appends. So the next round's leader first
    /// lingers until those appenders are back and have written (or are writing: see
    /// `appending`), for at most half an average round (ext4's journal lingers the same way for
    /// concurrent synchronous writers, `jbd2_journal_stop`). It never lingers for itself: a
    /// lone appender's rounds start at once.
    fn sync_locked<'a>(
        &'a self,
        mut state: parking_lot::MutexGuard<'a, crate::partition::SyncState>,
        offset: i64,
    ) -> Result<()> {
        let inner = &self.inner;
        state.in_sync += 1;
        let result = loop {
            if state.synced_to >= offset {
                break Ok(());
            }
            if offset > inner.log_end_offset.load(Ordering::Acquire) {
                // No round can make records durable that the log does not hold.
                break Err(self.out_of_range(offset));
            }
            if state.in_flight_goal >= offset || state.rounds_in_flight >= MAX_ROUNDS_IN_FLIGHT {
                // A running round covers our records, or enough rounds run already: wait, and
                // let the next round cover everyone who arrived meanwhile.
                inner.sync_done.wait(&mut state);
                continue;
            }
            state.rounds_in_flight += 1;
            let linger = state
                .linger_override
                .unwrap_or((state.average_round / 2).min(MAX_LINGER));
            if !linger.is_zero() && (state.returning > 0 || state.appending > 0) {
                let deadline = Instant::now() + linger;
                state.lingering = true;
                while state.returning > 0 || state.appending > 0 {
                    if inner
                        .linger_done
                        .wait_until(&mut state, deadline)
                        .timed_out()
                    {
                        break;
                    }
                }
                state.lingering = false;
            }
            // The goal is taken after the linger and before the fsync begins: every append
            // below it was written before the fsync, so the fsync makes it durable.
            let goal = inner.log_end_offset.load(Ordering::Acquire);
            state.in_flight_goal = state.in_flight_goal.max(goal);
            state.rounds += 1;
            // Everyone waiting now appended below the goal: this round releases them all.
            let members = state.in_sync;
            let truncations = state.truncations;
            drop(state);
            let started = Instant::now();
            let result = inner.flush_through(goal);
            let took = started.elapsed();
            state = inner.sync.lock();
            state.rounds_in_flight -= 1;
            state.returning = members;
            state.average_round = if state.average_round.is_zero() {
                took
            } else {
                (state.average_round * 7 + took) / 8
            };
            match &result {
                // An fsync makes everything written before it durable, so the largest goal
                // that completed bounds what is durable.
                // Unless a truncation came meanwhile: what the round synced may have been cut.
                Ok(()) if state.truncations == truncations => {
                    state.synced_to = state.synced_to.max(goal);
                }
                Ok(()) => {}
                // Let waiters start their own round rather than wait for one that failed.
                Err(_) => state.in_flight_goal = state.synced_to,
            }
            inner.sync_done.notify_all();
            if result.is_err() {
                break result;
            }
        };
        state.in_sync -= 1;
        result
    }
}
