//! Kafka's checks of an append's input (`analyzeAndValidateRecords`): framing, sizes, CRC and
//! base offsets; `LogValidator.validateBatch`'s checks of a client's batch (offset range and
//! count, no control batch, a sequence with a producer id); and `validateRecord`'s of every
//! record of a leader append (a key in a compacted topic, CreateTime bounds, no LogAppendTime
//! from a producer), in the one walk that also proves the records decode.

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, Batch, TimestampType};

use super::InputBatch;
use crate::config::MessageTimestampType;
use crate::error::{Error, Result};
use crate::partition::Inner;
use crate::producer::AppendOrigin;

impl<F: FileSystem> Inner<F> {
    pub(super) fn invalid(&self, position: usize, reason: String) -> Error {
        Error::InvalidRecords {
            partition: self.partition(),
            position: position as u64,
            reason,
        }
    }

    /// Kafka's `analyzeAndValidateRecords`: frames the whole input and checks every batch. A
    /// leader append (any origin but replication) also reads every record back and checks it as
    /// `LogValidator.validateRecord` does; a client's batches get `validateBatch`'s checks too.
    pub(super) fn validate(
        &self,
        records: &[u8],
        origin: AppendOrigin,
        now: i64,
    ) -> Result<Vec<InputBatch>> {
        let config = self.config();
        let leader = origin != AppendOrigin::Replication;
        let client = origin == AppendOrigin::Client;
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        let mut framing = rf::batches(records);
        for framed in &mut framing {
            let framed = framed.map_err(|e| {
                let at = usize::try_from(e.position().unwrap_or(0)).unwrap_or(usize::MAX);
                self.invalid(at, e.to_string())
            })?;
            let start = framed.position();
            let size = framed.size_in_bytes();
            if size > usize::try_from(config.max_message_bytes).unwrap_or(0) {
                return Err(self.invalid(
                    start,
                    format!(
                        "The record batch size in the append to {} is {size} bytes which exceeds the maximum configured value of {}.",
                        self.tp, config.max_message_bytes
                    ),
                ));
            }
            let batch = framed
                .decode()
                .map_err(|e| self.invalid(start, e.to_string()))?;
            let Batch::V2(v2) = batch else {
                return Err(self.invalid(
                    start,
                    "message format v0/v1 is read-only; appends take record batch v2".to_owned(),
                ));
            };
            if v2.validate().is_err() {
                return Err(self.invalid(
                    start,
                    format!(
                        "Record is corrupt (stored crc = {}) in topic partition {}.",
                        v2.crc(),
                        self.tp
                    ),
                ));
            }
            // Kafka's leader decodes every record of a client's batch and checks it (LogValidator's
            // `validateRecord`); so does this one, within the decompression limit every reader
            // applies: a batch no reader could read back is refused before anything is
            // acknowledged. The batch's max timestamp is then the records' (Kafka's
            // `setMaxTimestamp` after the walk).
            let max_timestamp = if leader {
                self.check_records(start, size, &v2, &mut scratch, now)?
            } else {
                v2.max_timestamp()
            };
            if client && v2.base_offset() != 0 {
                return Err(self.invalid(
                    start,
                    format!(
                        "The baseOffset of the record batch in the append to {} should be 0, but it is {}",
                        self.tp,
                        v2.base_offset()
                    ),
                ));
            }
            if client {
                self.check_client_batch(start, &v2)?;
            }
            out.push(InputBatch {
                start,
                size,
                first_offset: v2.base_offset(),
                last_offset: v2.last_offset(),
                last_offset_delta: i64::from(v2.last_offset_delta()),
                max_timestamp,
                producer_id: v2.producer_id(),
            });
        }
        if framing.position() != records.len() || out.is_empty() {
            return Err(self.invalid(
                framing.position(),
                "the input does not end with a whole record batch".to_owned(),
            ));
        }
        let total: u64 = out.iter().map(|b| b.size as u64).sum();
        if total > u64::try_from(config.segment_bytes).unwrap_or(0) {
            return Err(self.invalid(
                0,
                format!(
                    "Message batch size is {total} bytes in append to partition {}, which exceeds the maximum configured segment size of {}.",
                    self.tp, config.segment_bytes
                ),
            ));
        }
        Ok(out)
    }

    /// Kafka's `LogValidator.validateBatch` for a client's v2 batch, with its messages.
    fn check_client_batch(&self, start: usize, batch: &rf::RecordBatch<'_>) -> Result<()> {
        let tp = &self.tp;
        let (base, last) = (batch.base_offset(), batch.last_offset());
        let count_from_offsets = last - base + 1;
        let count = i64::from(batch.records_count());
        let refuse = |reason: String| Err(self.invalid(start, reason));
        if count_from_offsets <= 0 {
            return refuse(format!(
                "Batch has an invalid offset range: [{base}, {last}] in topic partition {tp}"
            ));
        }
        if count <= 0 {
            return refuse(format!(
                "Invalid reported count for record batch: {count} in topic partition {tp}"
            ));
        }
        if count_from_offsets != count {
            return refuse(format!(
                "Inconsistent batch offset range [{base}, {last}] and count of records {count} in topic partition {tp}"
            ));
        }
        if batch.is_control() {
            return refuse(format!(
                "Clients are not allowed to write control records in topic partition {tp}"
            ));
        }
        if batch.producer_id() > crate::producer::NO_PRODUCER_ID && batch.base_sequence() < 0 {
            return refuse(format!(
                "Invalid sequence number {} in record batch with producerId {} in topic partition {tp}",
                batch.base_sequence(),
                batch.producer_id()
            ));
        }
        Ok(())
    }

    /// Reads every record of a leader append's batch back and applies Kafka's
    /// `LogValidator.validateRecord` to each (uncompressed v2 batches and the records of
    /// compressed ones alike): a key in a compacted topic; under CreateTime a timestamp within
    /// `message.timestamp.before/after.max.ms` of `now` (-1, none, is not checked); otherwise no
    /// LogAppendTime set by the producer. As Kafka, every record is checked and the batch refused
    /// with `processRecordErrors`' message and the first three record errors. Returns the largest
    /// record timestamp (-1 for none), the batch's max timestamp from then on.
    fn check_records(
        &self,
        start: usize,
        size: usize,
        batch: &rf::RecordBatch<'_>,
        scratch: &mut Vec<u8>,
        now: i64,
    ) -> Result<i64> {
        let tp = &self.tp;
        let unreadable = |e: rf::Error| {
            self.invalid(
                start,
                format!(
                    "the record batch ({size} bytes) in the append to {tp} cannot be read back: {e}"
                ),
            )
        };
        let records = batch
            .records_with_limit(scratch, rf::DEFAULT_MAX_DECOMPRESSED_BYTES)
            .map_err(unreadable)?;
        let config = self.config();
        let compacted = config.cleanup_policy.compact;
        let create_time = config.message_timestamp_type == MessageTimestampType::CreateTime;
        let (before, after) = (
            config.message_timestamp_before_max_ms,
            config.message_timestamp_after_max_ms,
        );
        let log_append_time_batch = batch.timestamp_type() == TimestampType::LogAppendTime;
        let mut max_timestamp = rf::NO_TIMESTAMP;
        let mut errors = RecordErrors::default();
        for (index, record) in records.enumerate() {
            let record = record.map_err(unreadable)?;
            let ts = record.timestamp();
            if compacted && record.key().is_none() {
                errors.push(index, false, || {
                    format!(
                        "Compacted topic cannot accept message without key in topic partition {tp}"
                    )
                });
            } else if create_time && ts != rf::NO_TIMESTAMP {
                let diff = now.saturating_sub(ts);
                if diff > before || diff.saturating_neg() > after {
                    errors.push(index, true, || {
                        format!(
                            "Timestamp {ts} of message with offset {} is out of range. The timestamp should be within [{}, {}]",
                            record.offset(),
                            now.saturating_sub(before),
                            now.saturating_add(after)
                        )
                    });
                }
            } else if log_append_time_batch {
                errors.push(index, true, || {
                    format!(
                        "Invalid timestamp type in message DefaultRecord(offset={}, timestamp={ts}, key={} bytes, value={} bytes). Producer should not set timestamp type to LogAppendTime.",
                        record.offset(),
                        record.key().map_or(0, <[u8]>::len),
                        record.value().map_or(0, <[u8]>::len)
                    )
                });
            }
            max_timestamp = max_timestamp.max(ts);
        }
        match errors.reason() {
            Some(reason) => Err(self.invalid(start, reason)),
            None => Ok(max_timestamp),
        }
    }
}

/// The record errors of one batch, as Kafka's `processRecordErrors` reports them: the count, the
/// first three (`RecordError`'s text), and whether one is a timestamp error.
#[derive(Default)]
struct RecordErrors {
    count: usize,
    timestamp: bool,
    first: Vec<String>,
}

impl RecordErrors {
    fn push(&mut self, index: usize, timestamp: bool, message: impl FnOnce() -> String) {
        self.count += 1;
        self.timestamp |= timestamp;
        if self.first.len() < 3 {
            self.first.push(format!(
                "RecordError(batchIndex={index}, message='{}')",
                message()
            ));
        }
    }

    fn reason(&self) -> Option<String> {
        if self.count == 0 {
            return None;
        }
        let first = self.first.join(", ");
        Some(if self.timestamp {
            format!("One or more records have been rejected due to invalid timestamp: [{first}]")
        } else {
            format!(
                "One or more records have been rejected due to {} record errors in total, and only showing the first three errors at most: [{first}]",
                self.count
            )
        })
    }
}
