//! Appending whole, offset-assigned batches to the `.log` and indexing them (Kafka's `append`).

use std::path::PathBuf;

use seglog_record_format as rf;

use super::{BatchFacts, LogSegment, MAX_SEGMENT_SIZE, Writer, index_batch};
use crate::error::{Error, Result};
use seglog_fs::{File, FileSystem};

impl<F: FileSystem> LogSegment<F> {
    /// Appends already-offset-assigned batches whose largest offset is `largest_offset`
    /// (Kafka's `append`, with the per-batch index rule of KAFKA-806): for each batch, if more
    /// than `index.interval.bytes` were written since the last index entry (checked before the
    /// batch's own bytes count), the batch gets an offset index entry (its last offset, its start
    /// position) and a time index entry (the running max timestamp and the last offset of the
    /// batch holding it).
    pub fn append(&self, largest_offset: i64, records: &[u8]) -> Result<()> {
        if records.is_empty() {
            return Ok(());
        }
        let mut w = self.writer.lock();
        let mut batches = std::mem::take(&mut w.batch_facts);
        let appended = self.append_framed(&mut w, &mut batches, largest_offset, records);
        batches.clear();
        w.batch_facts = batches;
        appended
    }

    /// [`LogSegment::append`] under the writer's lock, framing `records` into `batches`.
    fn append_framed(
        &self,
        w: &mut Writer,
        batches: &mut Vec<BatchFacts>,
        largest_offset: i64,
        records: &[u8],
    ) -> Result<()> {
        frame_whole(|| self.log_path(), records, batches)?;
        let batches = &*batches;
        let physical_position = self.size.load_by_writer();
        if !self.can_convert_to_relative_offset(largest_offset) {
            return Err(Error::OffsetOverflow {
                path: self.log_path(),
                offset: largest_offset,
            });
        }
        let new_size = physical_position + records.len() as u64;
        if new_size > MAX_SEGMENT_SIZE {
            return Err(Error::SegmentTooLarge {
                path: self.log_path(),
                size: new_size,
            });
        }
        // The index entries this append adds get their disk blocks first: on a full disk the
        // append fails here, before a byte is written, rather than halfway through indexing.
        let entries = index_entries(
            w.bytes_since_last_index_entry,
            self.config.index_interval_bytes,
            batches,
        );
        if entries > 0 {
            w.offset_index.get_mut()?.reserve(entries)?;
            w.time_index.get_mut()?.reserve(entries)?;
        }
        // The segment appended to is the active one: pinned, never closed by the cache.
        self.log.pin();
        let log = self.log_for_write()?;
        if let Err(e) = log.write_all_at(records, physical_position) {
            // A short write (a full disk) leaves a torn batch past the size: cut it, so the file
            // holds only what was acknowledged. Best effort: the size is unchanged either way,
            // the next append overwrites those bytes, and recovery would cut them.
            let _ = log.set_len(physical_position);
            return Err(Error::io(&*self.path(), "write", e));
        }
        if physical_position == 0 {
            w.rolling_based_timestamp = batches.first().map(|b| b.max_timestamp);
        }
        Self::load_max_timestamp(w)?;
        let mut position = physical_position;
        for batch in batches {
            index_batch(w, self.config.index_interval_bytes, batch, position)?;
            position += batch.size;
        }
        self.size.publish(new_size);
        if let Some(map) = self.existing_mapping()
            && let Some(file) = log.map_fd()
        {
            // A failed remap leaves the old mapping in use: reads past it use `pread`.
            let _ = map.publish(file, new_size);
        }
        Ok(())
    }
}

/// How many index entries `index_batch` adds for `batches`, starting `since` bytes after the
/// last entry (the same rule, without its effects).
fn index_entries(mut since: u64, interval: u32, batches: &[BatchFacts]) -> usize {
    let mut entries = 0;
    for batch in batches {
        if since > u64::from(interval) {
            entries += 1;
            since = 0;
        }
        since += batch.size;
    }
    entries
}

/// Frames `records` completely into `facts`, or refuses them: `append` takes whole batches only.
/// `path` names the `.log` in the error (the path lock is taken only then).
fn frame_whole(
    path: impl Fn() -> PathBuf,
    records: &[u8],
    facts: &mut Vec<BatchFacts>,
) -> Result<()> {
    let invalid = |reason: String| Error::InvalidRecords {
        path: path(),
        reason,
    };
    let mut batches = rf::batches(records);
    for batch in &mut batches {
        let batch = batch.map_err(|e| invalid(e.to_string()))?;
        let decoded = batch.decode().map_err(|e| invalid(e.to_string()))?;
        facts.push(BatchFacts {
            last_offset: decoded.last_offset(),
            max_timestamp: decoded.max_timestamp(),
            size: batch.size_in_bytes() as u64,
        });
    }
    if batches.position() != records.len() {
        return Err(invalid(format!(
            "{} trailing bytes after the last whole batch",
            records.len() - batches.position()
        )));
    }
    Ok(())
}
