//! What a consumer at an isolation level may fetch, shared by `consume` and `offsets`.
//!
//! A Kafka consumer never reads past the partition's high watermark (read_uncommitted) or its
//! last stable offset (read_committed). Offline, the high watermark is the one the broker left
//! in the log directory's `replication-offset-checkpoint`; without an entry (a directory
//! seglog alone wrote before it kept one, a copy without the file), or with `--to-log-end`, it
//! is the log end offset.

use anyhow::Result;
use seglog_log::inspect::PartitionView;
use seglog_log::{IsolationLevel, RealFs};

use crate::common::lib;

/// Parses Kafka's `isolation.level` names (clap's value parser).
pub(crate) fn parse(name: &str) -> Result<IsolationLevel, String> {
    IsolationLevel::from_name(name)
        .ok_or_else(|| format!("expected read_uncommitted or read_committed, not {name:?}"))
}

/// How far a reader reads: as a consumer at `isolation`, bounded by the checkpointed high
/// watermark unless `to_log_end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reach {
    pub(crate) isolation: IsolationLevel,
    pub(crate) to_log_end: bool,
}

impl Reach {
    /// The high watermark that bounds the reader: the checkpointed one (clamped to the log's
    /// offsets, as a broker opening the partition clamps it); `None` (the log end) without an
    /// entry or with `to_log_end`.
    pub(crate) fn high_watermark(self, view: &PartitionView<RealFs>) -> Result<Option<i64>> {
        if self.to_log_end {
            return Ok(None);
        }
        view.high_watermark().map_err(lib)
    }

    /// The last offset a consumer may fetch (ListOffsets' latest): the last stable offset under
    /// read_committed, else the high watermark.
    pub(crate) fn last_fetchable(self, view: &PartitionView<RealFs>) -> Result<i64> {
        let hw = self.high_watermark(view)?;
        match (self.isolation, hw) {
            (IsolationLevel::ReadCommitted, Some(hw)) => {
                view.last_stable_offset_at(hw).map_err(lib)
            }
            (IsolationLevel::ReadCommitted, None) => view.last_stable_offset().map_err(lib),
            (IsolationLevel::ReadUncommitted, Some(hw)) => Ok(hw),
            (IsolationLevel::ReadUncommitted, None) => view.log_end_offset().map_err(lib),
        }
    }

    /// The bound a poll stops at, below the log end: `None` when it reads to the log end
    /// (read_uncommitted without a high watermark; read_committed stops at the last stable
    /// offset by itself).
    pub(crate) fn poll_bound(self, view: &PartitionView<RealFs>) -> Result<Option<i64>> {
        match self.high_watermark(view)? {
            None => Ok(None),
            Some(_) => self.last_fetchable(view).map(Some),
        }
    }

    /// The first offset whose record has a timestamp at least `ts`, as a ListOffsets request at
    /// the isolation level answers it: none if it is at or past the last fetchable offset.
    pub(crate) fn offset_for_timestamp(
        self,
        view: &PartitionView<RealFs>,
        ts: i64,
    ) -> Result<Option<(i64, i64)>> {
        let Some(found) = view.offset_for_timestamp(ts).map_err(lib)? else {
            return Ok(None);
        };
        Ok(self
            .fetchable(view, found.offset)?
            .then_some((found.offset, found.timestamp)))
    }

    /// Whether `offset` lies below the last fetchable offset.
    pub(crate) fn fetchable(self, view: &PartitionView<RealFs>, offset: i64) -> Result<bool> {
        if self.isolation == IsolationLevel::ReadUncommitted && self.high_watermark(view)?.is_none()
        {
            // Below the log end offset by construction.
            return Ok(true);
        }
        Ok(offset < self.last_fetchable(view)?)
    }
}
