//! `seglog consume`: a read-only, lock-free view of a partition directory, printed record by
//! record from an offset or a time.

mod args;

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use seglog_log::IsolationLevel;
use seglog_log::inspect::RecordsRead;
use seglog_log::record::{Batch, TimestampType};

use crate::common::{Outcome, b64, json_line, lib, partition_view};
use crate::isolation::{last_fetchable, offset_for_timestamp};

pub(crate) use args::{ConsumeArgs, EXAMPLES};

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
