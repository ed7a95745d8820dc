//! `compression.type` on a leader append, as Kafka's `LogValidator` applies it to RecordBatch v2
//! (`validateMessagesAndAssignOffsetsCompressed` and `buildRecordsAndAssignOffsets`): a batch in
//! another codec than the topic's is rebuilt in the topic's codec and level; `producer` keeps
//! the producer's codec.
//!
//! What a rebuild keeps, as Kafka's `MemoryRecordsBuilder` call there: the producer id, epoch
//! and base sequence, the transactional flag, the partition leader epoch, and every record's
//! timestamp, key, value and headers; records get consecutive offsets from the batch's, the
//! base timestamp is the first record's, and the header carries the topic's timestamp type (the
//! append time as max timestamp under `LogAppendTime`). Record attributes are written 0.
//!
//! What stays in place (the existing path edits the batch's header only): both codecs none; the
//! same codec on both sides (whatever the levels); an uncompressed control batch, never
//! compressed. Kafka also rebuilds a batch of the topic's codec whose records' offsets are not
//! their indexes; seglog's record reader refuses such a v2 batch before (offset deltas must
//! increase within `lastOffsetDelta`, whose count the client checks match), so none gets here.

use seglog_fs::FileSystem;
use seglog_record_format::{
    self as rf, BatchBuilder, BatchOptions, Compression, Header, NewRecord,
};

use super::InputBatch;
use crate::config::{CompressionType, LogConfig, MessageTimestampType};
use crate::error::Result;
use crate::partition::Inner;

/// The codec and level a leader append writes, for a batch in `source`
/// (`BrokerCompressionType.targetCompression`): `producer` keeps the source's codec at its
/// default level.
pub(crate) fn target_compression(
    config: &LogConfig,
    source: Compression,
) -> (Compression, Option<i32>) {
    match config.compression_type {
        CompressionType::Producer => (source, None),
        CompressionType::Uncompressed => (Compression::None, None),
        CompressionType::Gzip => (Compression::Gzip, Some(config.compression_gzip_level)),
        CompressionType::Snappy => (Compression::Snappy, None),
        CompressionType::Lz4 => (Compression::Lz4, Some(config.compression_lz4_level)),
        CompressionType::Zstd => (Compression::Zstd, Some(config.compression_zstd_level)),
    }
}

impl<F: FileSystem> Inner<F> {
    /// Rebuilds the append's one batch into `out` when `compression.type` asks for another codec,
    /// with base offset 0 and the topic's
    /// timestamp type; the caller then assigns the offset as for any batch. `None`: the batch
    /// stays as it is. An input of several batches where either side is compressed is refused
    /// ("Compressed outer record has more than one batch").
    pub(super) fn recompress(
        &self,
        records: &[u8],
        batches: &[InputBatch],
        now: i64,
        builder: &mut BatchBuilder,
        out: &mut Vec<u8>,
    ) -> Result<Option<InputBatch>> {
        let Some(first) = batches.first() else {
            return Ok(None);
        };
        let bytes = records
            .get(first.start..first.start + first.size)
            .unwrap_or_default();
        let invalid = |e: rf::Error| self.invalid(first.start, e.to_string());
        let batch = rf::RecordBatch::parse(bytes).map_err(invalid)?;
        let source = batch.compression().map_err(invalid)?;
        let config = self.config();
        let (target, level) = target_compression(&config, source);
        if source == Compression::None && target == Compression::None {
            return Ok(None);
        }
        if batches.len() > 1 {
            return Err(self.invalid(
                batches.get(1).map_or(0, |b| b.start),
                "Compressed outer record has more than one batch".to_owned(),
            ));
        }
        let in_place = source == target || (source == Compression::None && batch.is_control());
        if in_place {
            return Ok(None);
        }
        let log_append_time = config.message_timestamp_type == MessageTimestampType::LogAppendTime;
        let options = BatchOptions::new(0, target)
            .with_compression_level(level)
            .with_partition_leader_epoch(batch.partition_leader_epoch())
            .with_producer_id(batch.producer_id())
            .with_producer_epoch(batch.producer_epoch())
            .with_base_sequence(batch.base_sequence())
            .with_transactional(batch.is_transactional())
            .with_timestamp_type(if log_append_time {
                rf::TimestampType::LogAppendTime
            } else {
                rf::TimestampType::CreateTime
            })
            .with_log_append_time(now);
        out.clear();
        // An uncompressed batch whose records section is already what the rebuild writes
        // (offset deltas 0.., deltas from the first timestamp, attributes 0, shortest varints;
        // what Kafka's and seglog's producers send) is compressed as it is.
        let built = match rf::RecordsSection::of(&batch) {
            Some(section) => builder.build_from_section(&options, &section, out),
            None => rebuild_records(&batch, &options, builder, out),
        }
        .map_err(invalid)?;
        let last_offset_delta = i64::from(built.last_offset_delta);
        Ok(Some(InputBatch {
            start: 0,
            size: built.size_in_bytes,
            first_offset: 0,
            last_offset: last_offset_delta,
            last_offset_delta,
            max_timestamp: built.max_timestamp,
            producer_id: batch.producer_id(),
        }))
    }
}

/// The rebuild of every record as Kafka's `buildRecordsAndAssignOffsets` writes it: decoded
/// (and decompressed) into views, then built again into `out`.
fn rebuild_records(
    batch: &rf::RecordBatch<'_>,
    options: &BatchOptions,
    builder: &mut BatchBuilder,
    out: &mut Vec<u8>,
) -> rf::Result<rf::BuiltBatch> {
    let mut scratch = Vec::new();
    let views: Vec<rf::RecordView<'_>> = batch
        .records_with_limit(&mut scratch, rf::DEFAULT_MAX_DECOMPRESSED_BYTES)?
        .collect::<rf::Result<_>>()?;
    // Every record's headers, in one list; a record takes its span of it.
    let mut headers: Vec<Header<'_>> = Vec::new();
    let mut spans = Vec::with_capacity(views.len());
    for view in &views {
        let at = headers.len();
        if view.header_count() > 0 {
            headers.extend(view.headers());
        }
        spans.push(at..headers.len());
    }
    let new_records = views.iter().zip(&spans).enumerate().map(|(i, (v, span))| {
        let delta = i32::try_from(i).unwrap_or(i32::MAX);
        NewRecord::new(delta, v.timestamp(), v.key(), v.value())
            .with_headers(headers.get(span.clone()).unwrap_or_default())
    });
    builder.build(options, new_records, out)
}
