//! `seglog consume`: a read-only, lock-free view of a partition directory (or of every partition
//! of a topic in a log directory), printed record by record from an offset or a time, as a
//! consumer at an isolation level gets them.

mod args;
mod cursor;
mod format;
mod json;
pub(crate) mod partitions;
mod wake;

use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::Result;
use seglog_log::IsolationLevel;
use seglog_log::record::{Batch, Record};

use crate::common::Outcome;
use cursor::Cursor;
use format::{Place, Token};
use json::JsonBytes;
use wake::Wake;

pub(crate) use args::{ConsumeArgs, EXAMPLES};

/// Where `consume` starts in each partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Start {
    /// The log start offset.
    Beginning,
    /// The last offset a consumer at the isolation level may fetch (kcat's `-o end`).
    End,
    /// An offset (the log start offset if it is below it).
    Offset(i64),
    /// This many records back from the end (kcat's `-o -N`), not before the log start.
    FromEnd(u64),
    /// The first record whose timestamp is at least this (milliseconds).
    Time(i64),
}

/// How records are printed.
#[derive(Debug, Clone)]
pub(crate) enum Printer {
    /// The value and a newline; with `print_key`, the key and a tab before it; null as `null`.
    Plain { print_key: bool },
    /// kcat's `-f` format string.
    Format(Vec<Token>),
    /// kcat's `-J` objects.
    Json(JsonBytes),
}

impl Printer {
    fn print(
        &self,
        out: &mut impl Write,
        place: &Place<'_>,
        record: &Record,
        batch: &Batch<'_>,
    ) -> Result<()> {
        match self {
            Printer::Plain { print_key } => {
                if *print_key {
                    out.write_all(record.key.as_deref().unwrap_or(b"null"))?;
                    out.write_all(b"\t")?;
                }
                out.write_all(record.value.as_deref().unwrap_or(b"null"))?;
                out.write_all(b"\n")?;
            }
            Printer::Format(tokens) => format::render(tokens, place, record, out)?,
            Printer::Json(bytes) => json::write_record(out, place, record, batch, *bytes)?,
        }
        Ok(())
    }
}

/// `consume`'s options.
pub(crate) struct ConsumeOptions {
    pub(crate) topic: Option<String>,
    pub(crate) start: Start,
    /// The exclusive end offset of each partition.
    pub(crate) to_offset: Option<i64>,
    /// The most records printed in all.
    pub(crate) max_records: Option<u64>,
    pub(crate) follow: bool,
    /// With `follow`: stop once no record has come for this long.
    pub(crate) idle_timeout: Option<Duration>,
    /// With `follow`: the longest wait between two reads when no change is seen.
    pub(crate) poll: Duration,
    pub(crate) printer: Printer,
    pub(crate) isolation: IsolationLevel,
    /// `--to-log-end`: past the checkpointed high watermark.
    pub(crate) to_log_end: bool,
}

impl ConsumeOptions {
    /// How far it reads.
    pub(crate) fn reach(&self) -> crate::isolation::Reach {
        crate::isolation::Reach {
            isolation: self.isolation,
            to_log_end: self.to_log_end,
        }
    }
}

/// Prints the records of `path` (a partition directory, or a log directory with `o.topic`):
/// partition after partition in partition order; with `follow`, a round over every partition
/// after each change, each printing what came since the last round.
pub(crate) fn consume(path: &Path, o: &ConsumeOptions, out: &mut impl Write) -> Result<Outcome> {
    let selected = partitions::select(path, o.topic.as_deref(), true)?;
    let dirs: Vec<_> = selected.iter().map(|p| p.dir.clone()).collect();
    let mut cursors = selected
        .into_iter()
        .map(|p| Cursor::open(p, o))
        .collect::<Result<Vec<_>>>()?;
    let mut budget = o.max_records;
    if !o.follow {
        for cursor in cursors.iter_mut().filter(|c| !c.done()) {
            if budget == Some(0) {
                break;
            }
            cursor.poll(o, &mut budget, out)?;
        }
        return Ok(Outcome::Clean);
    }
    // Watching starts before the first read, so no change after it is missed.
    let wake = Wake::new(&dirs, o.poll);
    let mut last_record = Instant::now();
    loop {
        let mut advanced = false;
        for cursor in cursors.iter_mut().filter(|c| !c.done()) {
            advanced |= cursor.poll(o, &mut budget, out)?;
            if budget == Some(0) {
                return Ok(Outcome::Clean);
            }
        }
        if cursors.iter().all(Cursor::done) {
            return Ok(Outcome::Clean);
        }
        if advanced {
            last_record = Instant::now();
        }
        let left = match o.idle_timeout {
            Some(t) => match t.checked_sub(last_record.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => return Ok(Outcome::Clean),
            },
            None => Duration::MAX,
        };
        out.flush()?;
        wake.wait(left);
    }
}
