//! What a consumer at an isolation level may fetch, shared by `consume` and `offsets`.

use anyhow::Result;
use seglog_log::inspect::PartitionView;
use seglog_log::{IsolationLevel, RealFs};

use crate::common::lib;

/// Parses Kafka's `isolation.level` names (clap's value parser).
pub(crate) fn parse(name: &str) -> Result<IsolationLevel, String> {
    IsolationLevel::from_name(name)
        .ok_or_else(|| format!("expected read_uncommitted or read_committed, not {name:?}"))
}

/// The last offset a consumer at `isolation` may fetch: the last stable offset under
/// read_committed, else the high watermark, which offline is the log end offset.
pub(crate) fn last_fetchable(
    view: &PartitionView<RealFs>,
    isolation: IsolationLevel,
) -> Result<i64> {
    match isolation {
        IsolationLevel::ReadCommitted => view.last_stable_offset().map_err(lib),
        IsolationLevel::ReadUncommitted => view.log_end_offset().map_err(lib),
    }
}

/// The first offset whose record has a timestamp at least `ts`, as a ListOffsets request at
/// `isolation` answers it: none if it is at or past the last fetchable offset.
pub(crate) fn offset_for_timestamp(
    view: &PartitionView<RealFs>,
    ts: i64,
    isolation: IsolationLevel,
) -> Result<Option<(i64, i64)>> {
    let Some(found) = view.offset_for_timestamp(ts).map_err(lib)? else {
        return Ok(None);
    };
    let fetchable = match isolation {
        IsolationLevel::ReadCommitted => found.offset < last_fetchable(view, isolation)?,
        // Below the log end offset by construction.
        IsolationLevel::ReadUncommitted => true,
    };
    Ok(fetchable.then_some((found.offset, found.timestamp)))
}
