//! One partition as `consume` reads it: where it starts, where it is, and a poll that prints
//! what is fetchable from there.

use std::io::Write;
use std::ops::ControlFlow;

use anyhow::Result;

use super::format::Place;
use super::partitions::Partition;
use super::{ConsumeOptions, Start};
use crate::common::{lib, partition_view};

/// A partition's read position.
pub(super) struct Cursor {
    part: Partition,
    next: i64,
    done: bool,
    /// The last error a poll met while following, forgiven once (see [`Cursor::poll`]).
    last_error: Option<String>,
}

impl Cursor {
    /// The partition positioned at `o.start`; done at once when nothing can come (a time no
    /// record reaches, without `--follow`; a start at or past `--to-offset`).
    pub(super) fn open(part: Partition, o: &ConsumeOptions) -> Result<Self> {
        let view = partition_view(&part.dir)?;
        let log_start = view.log_start_offset();
        let end = || o.reach().last_fetchable(&view);
        let start = match o.start {
            Start::Beginning => Some(log_start),
            Start::End => Some(end()?),
            Start::Offset(n) => Some(n.max(log_start)),
            Start::FromEnd(n) => Some(
                end()?
                    .saturating_sub(i64::try_from(n).unwrap_or(i64::MAX))
                    .max(log_start),
            ),
            Start::Time(ts) => match o.reach().offset_for_timestamp(&view, ts)? {
                Some((offset, _)) => Some(offset),
                None if o.follow => Some(end()?),
                None => None,
            },
        };
        let next = start.unwrap_or(log_start);
        let done = start.is_none() || o.to_offset.is_some_and(|to| next >= to);
        Ok(Self {
            part,
            next,
            done,
            last_error: None,
        })
    }

    /// Whether this partition has nothing more to print.
    pub(super) fn done(&self) -> bool {
        self.done
    }

    /// Prints the records fetchable from the position on, at most `budget` of them (taking
    /// from it), up to `--to-offset`; without `--follow` the partition is then done. Returns
    /// whether the position moved.
    pub(super) fn poll(
        &mut self,
        o: &ConsumeOptions,
        budget: &mut Option<u64>,
        out: &mut impl Write,
    ) -> Result<bool> {
        let before = self.next;
        // Listed again on every poll, so a follower sees the segments a writer rolled.
        let view = partition_view(&self.part.dir)?;
        let place = Place {
            topic: &self.part.tp.topic,
            partition: self.part.tp.partition,
        };
        let mut reached_end = false;
        // The high watermark (or the last stable offset under it): a follower polls again, as
        // the broker may checkpoint a higher one.
        let fetchable = o.reach().poll_bound(&view)?;
        let next = &mut self.next;
        let polled = view.for_each_record(*next, o.isolation, |r, batch| {
            if o.to_offset.is_some_and(|to| r.offset >= to) {
                reached_end = true;
                return ControlFlow::Break(None);
            }
            if fetchable.is_some_and(|end| r.offset >= end) {
                return ControlFlow::Break(None);
            }
            if *budget == Some(0) {
                return ControlFlow::Break(None);
            }
            if let Err(e) = o.printer.print(out, &place, r, batch) {
                return ControlFlow::Break(Some(e));
            }
            if let Some(left) = budget.as_mut() {
                *left -= 1;
            }
            *next = r.offset + 1;
            ControlFlow::Continue(())
        });
        let read = match polled {
            Ok(read) => {
                self.last_error = None;
                read
            }
            // A writer in another process may have removed, replaced or cut a file since the
            // listing (retention, compaction, recovery): a follower lists again at the next poll
            // and goes on from the next offset. The same error from a fresh listing is real, and
            // ends it.
            Err(e) if o.follow && self.last_error.as_deref() != Some(&e.to_string()) => {
                self.last_error = Some(e.to_string());
                return Ok(false);
            }
            Err(e) => return Err(lib(e)),
        };
        if let Some(Some(e)) = read.stopped {
            return Err(e);
        }
        if read.stopped.is_none() {
            // Read to the end: what comes next starts past any control records read.
            self.next = self.next.max(read.next_offset);
        }
        if reached_end || o.to_offset.is_some_and(|to| self.next >= to) || !o.follow {
            self.done = true;
        }
        Ok(self.next > before)
    }
}
