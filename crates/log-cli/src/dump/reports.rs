//! What `seglog dump` gathers across files and prints on stderr at the end, as Kafka's tool does.

use std::collections::BTreeMap;
use std::io::Write;

use anyhow::Result;

/// What accumulates across files and is printed on stderr at the end, as Kafka does.
#[derive(Debug, Default)]
pub(super) struct Reports {
    /// Per index file (absolute path): index offset -> first batch's last offset, newest first.
    pub(super) index_mismatches: BTreeMap<String, BTreeMap<i64, i64>>,
    /// Per time index file: (index timestamp, log timestamp).
    pub(super) time_mismatches: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per time index file: (index timestamp, previous indexed timestamp).
    pub(super) out_of_order: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per time index file: (indexed offset, found log offset).
    pub(super) shallow_not_found: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per log file: previous offset -> next offset, where they are not consecutive.
    pub(super) non_consecutive: BTreeMap<String, BTreeMap<i64, i64>>,
    /// Per index file: the first entry whose batch is over --max-message-size, where Kafka's
    /// tool throws (`OverMaxMessageSize`).
    pub(super) over_max_message_size: BTreeMap<String, OverMaxMessageSize>,
}

/// An index entry whose batch is larger than `--max-message-size`: Kafka's tool reads only that
/// many bytes there, finds no whole batch and throws; seglog reads the batch whole.
#[derive(Debug)]
pub(super) struct OverMaxMessageSize {
    pub(super) offset: i64,
    pub(super) position: u32,
    pub(super) size: u64,
    pub(super) max_message_size: u32,
}

impl OverMaxMessageSize {
    /// The line the end-of-run report prints for index file `file`.
    pub(super) fn note(&self, file: &str) -> String {
        format!(
            "Over --max-message-size in :{file}: the batch of index offset {} at position {} is {} bytes, over {}; \
             Kafka's kafka-dump-log.sh throws java.util.NoSuchElementException at this entry and stops \
             (exit status 1); seglog read the whole batch and checked the entry against it",
            self.offset, self.position, self.size, self.max_message_size
        )
    }
}

pub(super) fn print_reports(r: &Reports, err: &mut impl Write) -> Result<()> {
    for (file, mismatches) in &r.index_mismatches {
        writeln!(err, "Mismatches in :{file}")?;
        for (index_offset, log_offset) in mismatches.iter().rev() {
            writeln!(
                err,
                "  Index offset: {index_offset}, log offset: {log_offset}"
            )?;
        }
    }
    for (file, list) in &r.time_mismatches {
        writeln!(err, "Found timestamp mismatch in :{file}")?;
        for (index_ts, log_ts) in list {
            writeln!(
                err,
                "  Index timestamp: {index_ts}, log timestamp: {log_ts}"
            )?;
        }
    }
    for (file, list) in &r.out_of_order {
        writeln!(err, "Found out of order timestamp in :{file}")?;
        for (index_ts, prev) in list {
            writeln!(
                err,
                "  Index timestamp: {index_ts}, Previously indexed timestamp: {prev}"
            )?;
        }
    }
    for (file, list) in &r.shallow_not_found {
        // Kafka 4.4.0's wording (the reference's "in the log." is an older version's).
        writeln!(
            err,
            "The following indexed offsets are not found in :{file}"
        )?;
        for (indexed, found) in list {
            writeln!(err, "Indexed offset: {indexed}, found log offset: {found}")?;
        }
    }
    for (file, pairs) in &r.non_consecutive {
        writeln!(err, "Non-consecutive offsets in {file}")?;
        for (a, b) in pairs {
            writeln!(err, "  {a} is followed by {b}")?;
        }
    }
    for (file, over) in &r.over_max_message_size {
        writeln!(err, "{}", over.note(file))?;
    }
    Ok(())
}
