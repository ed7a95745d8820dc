//! Kafka's `printBatchLevel` line and the names it prints.

use seglog_log::record::{Batch, TimestampType};

pub(crate) fn timestamp_type_name(t: Option<TimestampType>) -> &'static str {
    match t {
        Some(TimestampType::CreateTime) => "CreateTime",
        Some(TimestampType::LogAppendTime) => "LogAppendTime",
        None => "NoTimestampType",
    }
}

pub(crate) fn codec_name(batch: &Batch<'_>) -> String {
    let codec = match batch {
        Batch::V2(b) => b.compression().map(|c| c.name().to_owned()),
        Batch::Legacy(b) => b.compression().map(|c| c.name().to_owned()),
    };
    codec.unwrap_or_else(|_| "unknown".to_owned())
}

/// Kafka's `printBatchLevel`; `checked`: the scan has found the batch's CRC valid, so it is not
/// computed again.
pub(super) fn batch_line(batch: &Batch<'_>, position: u64, checked: bool) -> String {
    let common = |ts_type: &str, max_ts: i64, size: usize, magic: i8, crc: u32, valid: bool| {
        format!(
            " position: {position} {ts_type}: {max_ts} size: {size} magic: {magic} compresscodec: {} crc: {crc} isvalid: {valid}",
            codec_name(batch)
        )
    };
    match batch {
        Batch::V2(b) => {
            let horizon = b.delete_horizon_ms().map_or_else(
                || "OptionalLong.empty".to_owned(),
                |h| format!("OptionalLong[{h}]"),
            );
            format!(
                "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {horizon}{}",
                b.base_offset(),
                b.last_offset(),
                b.records_count(),
                b.base_sequence(),
                b.last_sequence(),
                b.producer_id(),
                b.producer_epoch(),
                b.partition_leader_epoch(),
                b.is_transactional(),
                b.is_control(),
                common(
                    timestamp_type_name(Some(b.timestamp_type())),
                    b.max_timestamp(),
                    b.size_in_bytes(),
                    b.magic(),
                    b.crc(),
                    checked || b.is_valid()
                ),
            )
        }
        Batch::Legacy(b) => format!(
            "offset: {}{}",
            b.last_offset(),
            common(
                timestamp_type_name(b.timestamp_type()),
                b.max_timestamp(),
                b.size_in_bytes(),
                b.magic(),
                b.crc(),
                checked || b.is_valid()
            ),
        ),
    }
}
