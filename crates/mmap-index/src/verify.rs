//! `verify`: Kafka's sanity rules plus the checks Kafka's `sanityCheck` misses, returned as a
//! structured report instead of the first exception.
//!
//! The extra checks find what a crash leaves behind: a preallocated file that was never trimmed
//! reopens with every slot counted as an entry, and its unwritten slots are zeros. Kafka only
//! detects that in `DumpLogSegments` (an entry after slot 0 whose offset equals the base) and,
//! for the time index, through "last timestamp below the first". KAFKA-19200 proposes checking a
//! last timestamp of 0, which we report too.
#![forbid(unsafe_code)]

use crate::entry::Entry;
use crate::error::{CorruptKind, IndexKind};
use crate::map::Memory;
use crate::raw::View;

/// One problem found by `verify`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Problem {
    /// A rule of Kafka's `sanityCheck` fails; `sanity_check` returns this as an error.
    Kafka(CorruptKind),
    /// A zero-filled tail: starting at `first_slot` (> 0), every slot holds an all-zero entry,
    /// whose offset is the base offset. The file was preallocated and never trimmed.
    ZeroTail {
        /// The first slot of the tail.
        first_slot: usize,
        /// How many slots the tail covers (up to the last entry).
        slots: usize,
    },
    /// An entry after slot 0 has the base offset although the tail is not all zeros
    /// (DumpLogSegments' rule for a zero tail, met by something else).
    BaseOffsetRepeated {
        /// The slot.
        slot: usize,
    },
    /// Time index: the last entry's timestamp is 0 (KAFKA-19200's signature of a never-written,
    /// preallocated file).
    LastTimestampZero,
    /// Offsets go backwards (offset index: do not strictly increase; time index: decrease)
    /// among the entries before any zero tail. Only the first occurrence is reported.
    OffsetOutOfOrder {
        /// The slot whose offset is out of order.
        slot: usize,
        /// The previous slot's offset.
        previous: i64,
        /// This slot's offset.
        offset: i64,
        /// How many slots are out of order in total.
        count: usize,
    },
    /// Time index: timestamps do not strictly increase among the entries before any zero tail.
    /// Only the first occurrence is reported.
    TimestampOutOfOrder {
        /// The slot whose timestamp is out of order.
        slot: usize,
        /// The previous slot's timestamp.
        previous: i64,
        /// This slot's timestamp.
        timestamp: i64,
        /// How many slots are out of order in total.
        count: usize,
    },
}

/// What `verify` found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VerifyReport {
    /// Offset or time index.
    pub kind: IndexKind,
    /// The file length in bytes.
    pub length: u64,
    /// The number of entries (Kafka's count: `length / entry_size` at open).
    pub entries: usize,
    /// The number of slots of the mapping.
    pub max_entries: usize,
    /// Everything found, Kafka's rules first.
    pub problems: Vec<Problem>,
}

impl VerifyReport {
    /// True when nothing was found.
    pub fn is_clean(&self) -> bool {
        self.problems.is_empty()
    }

    /// True when a zero tail was found.
    pub fn has_zero_tail(&self) -> bool {
        self.problems
            .iter()
            .any(|p| matches!(p, Problem::ZeroTail { .. }))
    }
}

/// Runs the extra checks over every entry of `view`, after Kafka's findings in `kafka`.
pub(crate) fn scan<E: Entry, M: Memory>(
    view: &View<'_, E, M>,
    base_offset: i64,
    kafka: Vec<CorruptKind>,
) -> Vec<Problem> {
    let offset_of = |e: &E| e.offset(base_offset);
    let timestamp_of = |e: &E| e.timestamp();
    let n = view.entries();
    let mut problems: Vec<Problem> = kafka.into_iter().map(Problem::Kafka).collect();
    let entries: Vec<E> = (0..n).filter_map(|slot| view.entry(slot)).collect();
    let is_zero = |e: &E| offset_of(e) == base_offset && timestamp_of(e).unwrap_or(0) == 0;

    // The zero tail: the longest run of base-offset, zero-timestamp slots that ends at the last
    // entry and starts after slot 0.
    let mut tail_start = n;
    while tail_start > 1 && entries.get(tail_start - 1).is_some_and(&is_zero) {
        tail_start -= 1;
    }
    if tail_start < n {
        problems.push(Problem::ZeroTail {
            first_slot: tail_start,
            slots: n - tail_start,
        });
    }
    if let Some(slot) =
        (1..tail_start).find(|&s| entries.get(s).is_some_and(|e| offset_of(e) == base_offset))
    {
        problems.push(Problem::BaseOffsetRepeated { slot });
    }
    if E::KIND == IndexKind::Time && n > 0 && entries.last().and_then(timestamp_of) == Some(0) {
        problems.push(Problem::LastTimestampZero);
    }

    let live = entries.get(..tail_start).unwrap_or_default();
    let strict = E::KIND == IndexKind::Offset;
    let mut offset_disorder: Option<(usize, i64, i64)> = None;
    let mut offset_count = 0;
    let mut ts_disorder: Option<(usize, i64, i64)> = None;
    let mut ts_count = 0;
    for (i, pair) in live.windows(2).enumerate() {
        let [prev, cur] = pair else { continue };
        let (po, co) = (offset_of(prev), offset_of(cur));
        if co < po || (strict && co == po) {
            offset_count += 1;
            offset_disorder.get_or_insert((i + 1, po, co));
        }
        if let (Some(pt), Some(ct)) = (timestamp_of(prev), timestamp_of(cur))
            && ct <= pt
        {
            ts_count += 1;
            ts_disorder.get_or_insert((i + 1, pt, ct));
        }
    }
    if let Some((slot, previous, offset)) = offset_disorder {
        problems.push(Problem::OffsetOutOfOrder {
            slot,
            previous,
            offset,
            count: offset_count,
        });
    }
    if let Some((slot, previous, timestamp)) = ts_disorder {
        problems.push(Problem::TimestampOutOfOrder {
            slot,
            previous,
            timestamp,
            count: ts_count,
        });
    }
    problems
}
