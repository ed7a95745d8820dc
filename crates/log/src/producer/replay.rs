//! Batches as the producer state reads them: Kafka's `ProducerAppendInfo.append(batch)` (a data
//! batch or a transaction marker), `LogSegment.updateProducerState` (one batch of a segment being
//! recovered) and `UnifiedLog.loadProducersFromRecords` (the batches after a snapshot).

use std::collections::HashMap;

use seglog_fs::FileSystem;
use seglog_record_format::{
    ControlRecordType, ControlValue, RecordBatch, parse_control, parse_control_key,
};
use seglog_segment::scan::BatchHeader;

use super::append_info::{AppendOrigin, EndTxnMarker, ProducerAppendInfo, TV_UNKNOWN};
use super::entry::NO_PRODUCER_ID;
use super::manager::ProducerStateManager;
use super::txn::{CompletedTxn, LogOffsetMetadata};
use crate::error::{Error, Result};

/// Whether a batch carries producer state (Kafka's `hasProducerId`: an id above -1).
#[must_use]
pub fn has_producer_id(batch: &RecordBatch<'_>) -> bool {
    batch.producer_id() > NO_PRODUCER_ID
}

/// Validates and records one batch in `info` (Kafka's `ProducerAppendInfo.append`): a control
/// batch's first record is its marker (an empty control batch, left by the cleaner, changes
/// nothing); a data batch starts or continues its producer's state. `first_offset` is where the
/// append begins, if known (else the batch's base offset). Returns the transaction a marker
/// completed.
///
/// # Errors
///
/// The producer state refuses the batch ([`Error::Producer`]), or a control batch's first record
/// is not a transaction marker, or it does not decode.
pub fn append_batch(
    info: &mut ProducerAppendInfo,
    batch: &RecordBatch<'_>,
    first_offset: Option<LogOffsetMetadata>,
    transaction_version: i16,
) -> Result<Option<CompletedTxn>> {
    if batch.is_control() {
        let invalid = |reason: String| Error::InvalidRecords {
            partition: info.partition().to_owned(),
            position: batch.position(),
            reason,
        };
        let mut scratch = Vec::new();
        let Some(record) = batch
            .records_with(&mut scratch)
            .map_err(|e| invalid(e.to_string()))?
            .next()
        else {
            return Ok(None);
        };
        let record = record.map_err(|e| invalid(e.to_string()))?;
        // Kafka's EndTransactionMarker.deserialize: the type first, then the value.
        let (_, kind) = parse_control_key(record.key()).map_err(|e| invalid(e.to_string()))?;
        let is_abort = match kind {
            ControlRecordType::Abort => true,
            ControlRecordType::Commit => false,
            other => {
                return Err(invalid(format!(
                    "Invalid record with type {} in the control batch of producer {}: not an EndTransactionMarker",
                    other.id(),
                    batch.producer_id()
                )));
            }
        };
        let control =
            parse_control(record.key(), record.value()).map_err(|e| invalid(e.to_string()))?;
        let coordinator_epoch = match control.value {
            ControlValue::EndTransaction(m) => m.coordinator_epoch,
            _ => 0,
        };
        let marker = EndTxnMarker {
            is_abort,
            coordinator_epoch,
        };
        let completed = info.append_end_txn_marker(
            marker,
            batch.producer_epoch(),
            batch.base_offset(),
            record.timestamp(),
            transaction_version,
        )?;
        return Ok(completed);
    }
    let first = first_offset.unwrap_or_else(|| LogOffsetMetadata::offset(batch.base_offset()));
    info.append_data_batch(
        batch.producer_epoch(),
        batch.base_sequence(),
        batch.last_sequence(),
        batch.max_timestamp(),
        first,
        batch.last_offset(),
        batch.is_transactional(),
    )?;
    Ok(None)
}

/// [`append_batch`] of a data batch known by its header alone: every field a data batch's
/// append reads is in the 61-byte v2 header, so a walk reads the bodies of control batches only
/// (Kafka's `FileChannelRecordBatch` likewise loads only the header of the batches it replays).
/// The caller passes a v2 batch with a producer id that is not a control batch.
///
/// # Errors
///
/// The producer state refuses the batch ([`Error::Producer`]).
pub(crate) fn append_data_header(info: &mut ProducerAppendInfo, h: &BatchHeader) -> Result<()> {
    debug_assert!(h.magic >= 2 && !h.is_control);
    info.append_data_batch(
        h.producer_epoch,
        h.base_sequence,
        h.last_sequence(),
        h.max_timestamp,
        LogOffsetMetadata::offset(h.offset_field),
        h.last_offset,
        h.is_transactional,
    )?;
    Ok(())
}

/// [`recover_batch`] of a data batch with a producer id known by its header alone (see
/// [`append_data_header`]): a data batch completes no transaction.
///
/// # Errors
///
/// The producer state refuses the batch ([`Error::Producer`]).
pub(crate) fn recover_data_header<F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    h: &BatchHeader,
) -> Result<()> {
    manager.append_and_update(h.producer_id, AppendOrigin::Replication, |info| {
        append_data_header(info, h)
    })?;
    manager.update_map_end_offset(h.last_offset.saturating_add(1));
    Ok(())
}

/// One batch of a segment being recovered (Kafka's `LogSegment.updateProducerState`): recorded
/// with the replication origin, its completed transaction (if any) returned with the last stable
/// offset at its completion, for the segment's `.txnindex`, and then completed; the state's end
/// offset moves past the batch.
///
/// # Errors
///
/// As [`append_batch`].
pub fn recover_batch<F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    batch: &RecordBatch<'_>,
) -> Result<Option<(CompletedTxn, i64)>> {
    let mut done = None;
    if has_producer_id(batch) {
        let completed =
            manager.append_and_update(batch.producer_id(), AppendOrigin::Replication, |info| {
                append_batch(info, batch, None, TV_UNKNOWN)
            })?;
        if let Some(txn) = completed {
            let last_stable_offset = manager.last_stable_offset(&txn);
            manager.complete_txn(&txn)?;
            done = Some((txn, last_stable_offset));
        }
    }
    manager.update_map_end_offset(batch.last_offset().saturating_add(1));
    Ok(done)
}

/// The batches after a snapshot (Kafka's `loadProducersFromRecords`): every producer's batches
/// recorded with the replication origin, then the producers updated and the completed
/// transactions completed, in that order. Returns the completed transactions.
///
/// # Errors
///
/// As [`append_batch`].
pub fn load_producers_from_batches<'a, F: FileSystem>(
    manager: &mut ProducerStateManager<F>,
    batches: impl IntoIterator<Item = RecordBatch<'a>>,
) -> Result<Vec<CompletedTxn>> {
    let mut loaded: HashMap<i64, ProducerAppendInfo> = HashMap::new();
    let mut order = Vec::new();
    let mut completed = Vec::new();
    for batch in batches {
        if !has_producer_id(&batch) {
            continue;
        }
        let pid = batch.producer_id();
        let info = loaded.entry(pid).or_insert_with(|| {
            order.push(pid);
            manager.prepare_update(pid, AppendOrigin::Replication)
        });
        if let Some(txn) = append_batch(info, &batch, None, TV_UNKNOWN)? {
            completed.push(txn);
        }
    }
    for pid in order {
        if let Some(info) = loaded.get(&pid) {
            manager.update(info);
        }
    }
    for txn in &completed {
        manager.complete_txn(txn)?;
    }
    Ok(completed)
}
