//! `seglog consume` and `seglog offsets`: read-only, lock-free views of a partition directory.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use seglog_log::inspect::{PartitionView, RecordsRead};
use seglog_log::record::{Batch, TimestampType};
use seglog_log::{IsolationLevel, RealFs};

use crate::common::{Outcome, b64, json_line, lib, partition_view};

/// Where `consume` starts.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Start {
    Beginning,
    Offset(i64),
    Timestamp(i64),
}

/// `consume`'s options.
pub(crate) struct ConsumeOptions {
    pub(crate) start: Start,
    pub(crate) max_records: Option<u64>,
    pub(crate) follow: bool,
    /// With `follow`: stop once no record has come for this long.
    pub(crate) idle_timeout: Option<Duration>,
    pub(crate) json: bool,
    pub(crate) print_key: bool,
    pub(crate) isolation: IsolationLevel,
}

fn timestamp_type(batch: &Batch<'_>) -> &'static str {
    match batch {
        Batch::V2(b) => b.timestamp_type().name(),
        Batch::Legacy(b) => b
            .timestamp_type()
            .map_or("NoTimestampType", TimestampType::name),
    }
}

/// The last offset a consumer at `isolation` may fetch: the last stable offset under
/// read_committed, else the high watermark, which offline is the log end offset.
fn last_fetchable(view: &PartitionView<RealFs>, isolation: IsolationLevel) -> Result<i64> {
    match isolation {
        IsolationLevel::ReadCommitted => view.last_stable_offset().map_err(lib),
        IsolationLevel::ReadUncommitted => view.log_end_offset().map_err(lib),
    }
}

/// The first offset whose record has a timestamp at least `ts`, as a ListOffsets request at
/// `isolation` answers it: none if it is at or past the last fetchable offset.
fn offset_for_timestamp(
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

pub(crate) fn consume(dir: &Path, o: &ConsumeOptions, out: &mut impl Write) -> Result<Outcome> {
    let view = partition_view(dir)?;
    let log_start = view.log_start_offset();
    let mut next = match o.start {
        Start::Beginning => log_start,
        Start::Offset(n) => n.max(log_start),
        Start::Timestamp(ts) => match offset_for_timestamp(&view, ts, o.isolation)? {
            Some((offset, _)) => offset,
            None if o.follow => last_fetchable(&view, o.isolation)?,
            None => return Ok(Outcome::Clean),
        },
    };
    let mut printed = 0_u64;
    let mut last_record = Instant::now();
    let mut last_error: Option<String> = None;
    loop {
        // Listed again on every poll, so a follower sees the segments a writer rolled.
        let view = partition_view(dir)?;
        let printed_before = printed;
        let polled = view.for_each_record(next, o.isolation, |r, batch| {
            if o.max_records.is_some_and(|max| printed >= max) {
                return ControlFlow::Break(None);
            }
            let written = (|| -> Result<()> {
                if o.json {
                    let headers: Vec<serde_json::Value> = r
                        .headers
                        .iter()
                        .map(|h| serde_json::json!({"key": String::from_utf8_lossy(&h.key), "value": b64(h.value.as_deref())}))
                        .collect();
                    json_line(
                        out,
                        &serde_json::json!({
                            "offset": r.offset,
                            "timestamp": r.timestamp,
                            "timestamp_type": timestamp_type(batch),
                            "key": b64(r.key.as_deref()),
                            "value": b64(r.value.as_deref()),
                            "headers": headers,
                        }),
                    )?;
                } else {
                    if o.print_key {
                        out.write_all(r.key.as_deref().unwrap_or(b"null"))?;
                        out.write_all(b"\t")?;
                    }
                    out.write_all(r.value.as_deref().unwrap_or(b"null"))?;
                    out.write_all(b"\n")?;
                }
                Ok(())
            })();
            if let Err(e) = written {
                return ControlFlow::Break(Some(e));
            }
            printed += 1;
            next = r.offset + 1;
            ControlFlow::Continue(())
        });
        let read = match polled {
            Ok(read) => {
                last_error = None;
                read
            }
            // A writer in another process may have removed, replaced or cut a file since the
            // listing (retention, compaction, recovery): a follower lists again at the next poll
            // and goes on from the next offset. The same error from a fresh listing is real, and
            // ends it.
            Err(e) if o.follow && last_error.as_deref() != Some(&e.to_string()) => {
                last_error = Some(e.to_string());
                RecordsRead {
                    next_offset: next,
                    stopped: None,
                }
            }
            Err(e) => return Err(lib(e)),
        };
        let stopped = match read.stopped {
            Some(Some(e)) => return Err(e),
            Some(None) => true,
            None => false,
        };
        if read.next_offset > next || printed_before != printed {
            last_record = Instant::now();
        }
        next = next.max(read.next_offset);
        if stopped || o.max_records.is_some_and(|max| printed >= max) || !o.follow {
            break;
        }
        if o.idle_timeout.is_some_and(|t| last_record.elapsed() >= t) {
            break;
        }
        out.flush()?;
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(Outcome::Clean)
}

/// What `offsets` looks up.
#[derive(Debug, Clone, Copy)]
pub(crate) enum OffsetQuery {
    Earliest,
    Latest,
    MaxTimestamp,
    Timestamp(i64),
}

pub(crate) fn offsets(
    dir: &Path,
    query: OffsetQuery,
    isolation: IsolationLevel,
    json: bool,
    out: &mut impl Write,
) -> Result<Outcome> {
    let view = partition_view(dir)?;
    let (offset, timestamp) = match query {
        OffsetQuery::Earliest => (Some(view.log_start_offset()), None),
        OffsetQuery::Latest => (Some(last_fetchable(&view, isolation)?), None),
        OffsetQuery::Timestamp(ts) => match offset_for_timestamp(&view, ts, isolation)? {
            Some((o, t)) => (Some(o), Some(t)),
            None => (None, None),
        },
        OffsetQuery::MaxTimestamp => {
            // Record level (KAFKA-16310): the first record carrying the largest timestamp.
            let best = view.max_timestamp().map_err(lib)?;
            let best = match (best, isolation) {
                (Some(b), IsolationLevel::ReadCommitted)
                    if b.offset >= last_fetchable(&view, isolation)? =>
                {
                    None
                }
                (best, _) => best,
            };
            (best.map(|b| b.offset), best.map(|b| b.timestamp))
        }
    };
    if json {
        json_line(
            out,
            &serde_json::json!({"offset": offset, "timestamp": timestamp}),
        )?;
    } else {
        match offset {
            Some(o) => writeln!(out, "{o}")?,
            None => writeln!(out, "none")?,
        }
    }
    Ok(Outcome::Clean)
}
