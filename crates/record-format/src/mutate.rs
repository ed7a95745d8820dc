//! In-place edits of a v2 batch that the log layer makes on `&mut [u8]` (Kafka's
//! `MutableRecordBatch`): offset assignment, leader epoch stamping, LogAppendTime stamping and
//! delete-horizon marking. Fields outside the CRC (base offset, leader epoch) are written as they
//! are; edits inside it recompute the CRC.

use zerocopy::FromBytes;

use crate::error::{CorruptKind, Error, Field, Position, Result};
use crate::header::{
    ATTR_DELETE_HORIZON, ATTR_TIMESTAMP_TYPE, ATTRIBUTES_OFFSET, CRC_OFFSET, RecordBatchHeader,
    TimestampType,
};
use crate::record::to_u64;

/// Checks that `batch` starts with a whole v2 batch and returns its header and length.
fn header_mut(batch: &mut [u8]) -> Result<(&mut RecordBatchHeader, usize)> {
    let available = batch.len();
    let Ok((h, _)) = RecordBatchHeader::mut_from_prefix(batch) else {
        let kind = CorruptKind::Truncated {
            needed: 61,
            available: to_u64(available),
        };
        return Err(Error::corrupt(Position::Buffer(0), Field::Header, kind));
    };
    if h.magic != 2 {
        let kind = CorruptKind::UnsupportedMagic { magic: h.magic };
        return Err(Error::corrupt(Position::Buffer(16), Field::Magic, kind));
    }
    let total = i64::from(h.batch_length.get()) + 12;
    let Some(total) = usize::try_from(total)
        .ok()
        .filter(|&t| (61..=available).contains(&t))
    else {
        let kind = CorruptKind::Truncated {
            needed: u64::try_from(total).unwrap_or(0),
            available: to_u64(available),
        };
        return Err(Error::corrupt(Position::Buffer(8), Field::Size, kind));
    };
    Ok((h, total))
}

fn rewrite_crc(batch: &mut [u8], total: usize) {
    let crc = crate::crc32c(batch.get(ATTRIBUTES_OFFSET..total).unwrap_or_default());
    if let Some(slot) = batch.get_mut(CRC_OFFSET..ATTRIBUTES_OFFSET) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
}

/// Sets the base offset (offset assignment). The CRC does not cover it.
pub fn set_base_offset(batch: &mut [u8], base_offset: i64) -> Result<()> {
    header_mut(batch)?.0.base_offset.set(base_offset);
    Ok(())
}

/// Sets the base offset so that the last offset becomes `last_offset` (Kafka's `setLastOffset`).
pub fn set_last_offset(batch: &mut [u8], last_offset: i64) -> Result<()> {
    let (h, _) = header_mut(batch)?;
    let delta = i64::from(h.last_offset_delta.get());
    h.base_offset.set(last_offset.wrapping_sub(delta));
    Ok(())
}

/// Sets the partition leader epoch. The CRC does not cover it.
pub fn set_partition_leader_epoch(batch: &mut [u8], epoch: i32) -> Result<()> {
    header_mut(batch)?.0.partition_leader_epoch.set(epoch);
    Ok(())
}

/// Sets maxTimestamp and the timestamp-type bit, keeping every other attribute bit, and
/// recomputes the CRC (Kafka's `setMaxTimestamp`; nothing is written when nothing changes).
pub fn set_max_timestamp(
    batch: &mut [u8],
    timestamp_type: TimestampType,
    max_timestamp: i64,
) -> Result<()> {
    let (h, total) = header_mut(batch)?;
    let attrs = h.attributes.get();
    let new_attrs = match timestamp_type {
        TimestampType::CreateTime => attrs & !ATTR_TIMESTAMP_TYPE,
        TimestampType::LogAppendTime => attrs | ATTR_TIMESTAMP_TYPE,
    };
    if new_attrs == attrs && h.max_timestamp.get() == max_timestamp {
        return Ok(());
    }
    h.attributes.set(new_attrs);
    h.max_timestamp.set(max_timestamp);
    rewrite_crc(batch, total);
    Ok(())
}

/// Sets attribute bit 6 and stores `delete_horizon_ms` as baseTimestamp, recomputing the CRC.
///
/// Record timestamps are deltas from baseTimestamp, so under CreateTime this shifts every
/// record's timestamp; Kafka's cleaner rebuilds the batch instead (use
/// [`BatchOptions::delete_horizon_ms`](crate::BatchOptions) for that). It is exact for
/// LogAppendTime batches, whose record timestamps read as maxTimestamp.
pub fn set_delete_horizon(batch: &mut [u8], delete_horizon_ms: i64) -> Result<()> {
    let (h, total) = header_mut(batch)?;
    h.attributes.set(h.attributes.get() | ATTR_DELETE_HORIZON);
    h.base_timestamp.set(delete_horizon_ms);
    rewrite_crc(batch, total);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BatchOptions, NewRecord, RecordBatch, build_batch};

    fn batch() -> Vec<u8> {
        let mut out = Vec::new();
        build_batch(
            &BatchOptions::default(),
            [
                NewRecord::new(0, 5, None, Some(b"v")),
                NewRecord::new(1, 9, None, None),
            ],
            &mut out,
        )
        .unwrap();
        out
    }

    #[test]
    fn offset_and_epoch_edits_keep_the_crc() {
        let mut b = batch();
        set_base_offset(&mut b, 1000).unwrap();
        set_partition_leader_epoch(&mut b, 7).unwrap();
        let v = RecordBatch::parse(&b).unwrap();
        assert!(v.is_valid());
        assert_eq!((v.base_offset(), v.partition_leader_epoch()), (1000, 7));
        set_last_offset(&mut b, 50).unwrap();
        assert_eq!(RecordBatch::parse(&b).unwrap().base_offset(), 49);
    }

    #[test]
    fn log_append_time_rewrites_crc_and_record_timestamps() {
        let mut b = batch();
        set_max_timestamp(&mut b, TimestampType::LogAppendTime, 777).unwrap();
        let v = RecordBatch::parse(&b).unwrap();
        v.validate().unwrap();
        assert_eq!(v.timestamp_type(), TimestampType::LogAppendTime);
        assert!(v.to_records().unwrap().iter().all(|r| r.timestamp == 777));
    }

    #[test]
    fn delete_horizon_sets_bit_six() {
        let mut b = batch();
        set_delete_horizon(&mut b, 123_456).unwrap();
        let v = RecordBatch::parse(&b).unwrap();
        v.validate().unwrap();
        assert_eq!(v.delete_horizon_ms(), Some(123_456));
    }

    #[test]
    fn short_or_foreign_buffers_are_errors() {
        assert!(set_base_offset(&mut [0u8; 60], 1).is_err());
        let mut b = batch();
        b[16] = 1;
        assert!(set_base_offset(&mut b, 1).is_err());
        let mut b = batch();
        b.pop();
        assert!(set_max_timestamp(&mut b, TimestampType::CreateTime, 1).is_err());
    }
}
