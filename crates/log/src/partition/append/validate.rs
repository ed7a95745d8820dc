//! Kafka's checks of an append's input (`analyzeAndValidateRecords`): framing, sizes, CRC,
//! base offsets and CreateTime bounds.

use seglog_fs::FileSystem;
use seglog_record_format::{self as rf, Batch};

use super::InputBatch;
use crate::config::MessageTimestampType;
use crate::error::{Error, Result};
use crate::partition::Inner;

impl<F: FileSystem> Inner<F> {
    pub(super) fn invalid(&self, position: usize, reason: String) -> Error {
        Error::InvalidRecords {
            partition: self.partition(),
            position: position as u64,
            reason,
        }
    }

    /// Kafka's `analyzeAndValidateRecords`: frames the whole input and checks every batch.
    pub(super) fn validate(
        &self,
        records: &[u8],
        leader: bool,
        now: i64,
    ) -> Result<Vec<InputBatch>> {
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
            if leader && v2.base_offset() != 0 {
                return Err(self.invalid(
                    start,
                    format!(
                        "The baseOffset of the record batch in the append to {} should be 0, but it is {}",
                        self.tp,
                        v2.base_offset()
                    ),
                ));
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
