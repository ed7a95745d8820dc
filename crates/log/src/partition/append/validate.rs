//! Kafka's checks of an append's input (`analyzeAndValidateRecords`): framing, sizes, CRC,
//! base offsets and CreateTime bounds; and `LogValidator.validateBatch`'s checks of a client's
//! batch (offset range and count, no control batch, a sequence with a producer id).

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, Batch};

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
    /// leader append (any origin but replication) also reads every record back, and checks
    /// CreateTime bounds; a client's batches get `LogValidator`'s checks as well.
    pub(super) fn validate(
        &self,
        records: &[u8],
        origin: AppendOrigin,
        now: i64,
    ) -> Result<Vec<InputBatch>> {
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
            if size > usize::try_from(self.config.max_message_bytes).unwrap_or(0) {
                return Err(self.invalid(
                    start,
                    format!(
                        "The record batch size in the append to {} is {size} bytes which exceeds the maximum configured value of {}.",
                        self.tp, self.config.max_message_bytes
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
            // Kafka's leader decodes every record of a client's batch (LogValidator); so does
            // this one, within the decompression limit every reader applies: a batch no reader
            // could read back is refused before anything is acknowledged.
            if leader {
                v2.verify_records(&mut scratch, rf::DEFAULT_MAX_DECOMPRESSED_BYTES)
                    .map_err(|e| {
                        self.invalid(
                            start,
                            format!(
                                "the record batch ({size} bytes) in the append to {} cannot be read back: {e}",
                                self.tp
                            ),
                        )
                    })?;
            }
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
            if leader && self.config.message_timestamp_type == MessageTimestampType::CreateTime {
                self.check_timestamps(start, &v2, now)?;
            }
            out.push(InputBatch {
                start,
                size,
                first_offset: v2.base_offset(),
                last_offset: v2.last_offset(),
                last_offset_delta: i64::from(v2.last_offset_delta()),
                max_timestamp: v2.max_timestamp(),
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
        if total > u64::try_from(self.config.segment_bytes).unwrap_or(0) {
            return Err(self.invalid(
                0,
                format!(
                    "Message batch size is {total} bytes in append to partition {}, which exceeds the maximum configured segment size of {}.",
                    self.tp, self.config.segment_bytes
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

    /// Kafka's CreateTime bounds (`message.timestamp.before.max.ms` / `after.max.ms`), checked on
    /// the batch's first and largest timestamps.
    fn check_timestamps(&self, start: usize, batch: &rf::RecordBatch<'_>, now: i64) -> Result<()> {
        for ts in [batch.base_timestamp(), batch.max_timestamp()] {
            if ts < 0 {
                continue;
            }
            let too_old = now.saturating_sub(ts) > self.config.message_timestamp_before_max_ms;
            let too_new = ts.saturating_sub(now) > self.config.message_timestamp_after_max_ms;
            if too_old || too_new {
                return Err(self.invalid(
                    start,
                    format!(
                        "Timestamp {ts} of the batch is out of range. The timestamp should be within [{}, {}]",
                        now.saturating_sub(self.config.message_timestamp_before_max_ms),
                        now.saturating_add(self.config.message_timestamp_after_max_ms)
                    ),
                ));
            }
        }
        Ok(())
    }
}
