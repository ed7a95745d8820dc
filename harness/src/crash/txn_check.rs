//! The checks of a transactional workload's crash image, after the reopen: what a read_committed
//! consumer returns, the last stable offset, the producer snapshots and the producer state.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use seglog_fs::FileSystem as _;
use seglog_fs::sim::SimFs;
use seglog_log::{Isolation, IsolationLevel, PartitionLog, consumer_records};
use seglog_record_format::{Batch, ControlRecordType, parse_control_key};

use super::model::{Model, Rec};

/// What the harness's own replay of the recovered log gives for one producer (Kafka's
/// `ProducerStateEntry` as a replication-origin replay builds it).
#[derive(Debug, PartialEq, Eq)]
struct Replayed {
    epoch: i16,
    coordinator_epoch: i32,
    txn_first_offset: Option<i64>,
    /// The last data batch of the current epoch: (base sequence, last sequence, base offset,
    /// last offset). Only the last: a producer snapshot keeps no other (Kafka's format), so a
    /// state loaded from one holds the older batches of a replay no longer.
    last_batch: Option<(i32, i32, i64, i64)>,
}

/// Checks, on a reopened image whose high watermark is at its log end, that:
/// - the last stable offset is the first offset of the oldest transaction whose data survived
///   and whose marker did not (such a transaction is open again), else the log end;
/// - a read_committed consumer reading the whole log (`read` with `TxnCommitted`, then
///   `consumer_records` with each fetch's aborted transactions) returns exactly the surviving
///   plain and idempotent records and those of transactions whose COMMIT survived, below the
///   last stable offset: never a record of an aborted transaction, never one of a transaction
///   without a surviving marker, never a marker;
/// - every acknowledged record of a transaction whose COMMIT was acknowledged is among them
///   unless an older transaction is open (the caller already checked that each is present);
/// - no producer snapshot lies past the log end, and the producer state equals a replay of the
///   log's batches.
pub(super) fn check_txns(
    image: &SimFs,
    dir: &Path,
    log: &PartitionLog<SimFs>,
    model: &Model,
    required: &BTreeMap<i64, Rec>,
    present: &BTreeMap<i64, Rec>,
) -> Result<(), String> {
    let end = log.log_end_offset();
    let start = log.log_start_offset();
    let txns = &model.txns;
    // The transactions after recovery: decided if their marker survived, else open.
    let marker_present = |t: usize| txns.list[t].marker.filter(|(o, _)| present.contains_key(o));
    let mut first_of: BTreeMap<usize, i64> = BTreeMap::new();
    for (o, t) in &txns.txn_of {
        if present.contains_key(o) {
            first_of.entry(*t).or_insert(*o);
        }
    }
    let lso = first_of
        .iter()
        .filter(|(t, _)| marker_present(**t).is_none())
        .map(|(_, o)| *o)
        .min()
        .unwrap_or(end)
        .min(end);
    if log.last_stable_offset() != lso {
        return Err(format!(
            "the last stable offset is {} where the surviving transactions give {lso} (log end {end})",
            log.last_stable_offset()
        ));
    }
    let expected: Vec<i64> = present
        .range(start..lso)
        .map(|(o, _)| *o)
        .filter(|o| !txns.markers.contains(o))
        .filter(|o| {
            txns.txn_of
                .get(o)
                .is_none_or(|t| marker_present(*t).is_some_and(|(_, commit)| commit))
        })
        .collect();
    let returned = read_committed(log, start, lso)?;
    if returned != expected {
        let got: BTreeSet<i64> = returned.iter().copied().collect();
        let want: BTreeSet<i64> = expected.iter().copied().collect();
        return Err(format!(
            "read_committed returns offsets {:?} it should not, and misses {:?} (last stable offset {lso})",
            got.difference(&want).take(8).collect::<Vec<_>>(),
            want.difference(&got).take(8).collect::<Vec<_>>()
        ));
    }
    let got: BTreeSet<i64> = returned.into_iter().collect();
    for (o, t) in &txns.txn_of {
        let acked_commit = txns.list[*t]
            .marker
            .is_some_and(|(m, commit)| commit && required.contains_key(&m));
        if acked_commit && required.contains_key(o) && *o < lso && !got.contains(o) {
            return Err(format!(
                "offset {o} of a transaction whose COMMIT was acknowledged is not read_committed"
            ));
        }
    }
    for f in image.read_dir(dir).map_err(|e| format!("list: {e}"))? {
        let Some(name) = f.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if let Some(offset) = name.strip_suffix(".snapshot")
            && offset.parse::<i64>().is_ok_and(|o| o > end)
        {
            return Err(format!("producer snapshot {name} past the log end {end}"));
        }
    }
    let replayed = replay(log, start)?;
    let entries: BTreeMap<i64, Replayed> = log
        .producer_entries()
        .iter()
        .map(|e| {
            (
                e.producer_id(),
                Replayed {
                    epoch: e.producer_epoch(),
                    coordinator_epoch: e.coordinator_epoch(),
                    txn_first_offset: e.current_txn_first_offset(),
                    last_batch: e
                        .batch_metadata()
                        .last()
                        .map(|b| (b.first_seq(), b.last_seq, b.first_offset(), b.last_offset)),
                },
            )
        })
        .collect();
    if entries != replayed {
        return Err(format!(
            "the reopened producer state {entries:?} is not a replay of the log {replayed:?}"
        ));
    }
    Ok(())
}

/// The offsets a read_committed consumer returns from `start` to the last stable offset.
fn read_committed(log: &PartitionLog<SimFs>, start: i64, lso: i64) -> Result<Vec<i64>, String> {
    let mut out = Vec::new();
    let mut next = start;
    let mut buf = Vec::new();
    while next < lso {
        let fetch = log
            .read(next, 4096, Isolation::TxnCommitted, true)
            .map_err(|e| format!("read_committed at {next}: {e}"))?;
        fetch
            .read_into(&mut buf)
            .map_err(|e| format!("read_committed at {next}: {e}"))?;
        if buf.is_empty() {
            break;
        }
        let aborted = fetch.aborted_transactions.unwrap_or_default();
        let mut records = consumer_records(&buf, next, IsolationLevel::ReadCommitted, &aborted);
        for r in records.by_ref() {
            let r = r.map_err(|e| format!("read_committed near {next}: {e}"))?;
            if r.offset >= lso {
                return Err(format!(
                    "read_committed returns offset {} at or past the last stable offset {lso}",
                    r.offset
                ));
            }
            out.push(r.offset);
        }
        let after = records.next_fetch_offset();
        if after <= next {
            return Err(format!("read_committed at {next} does not advance"));
        }
        next = after;
    }
    Ok(out)
}

/// The producer state a replication-origin replay of every batch from `start` gives.
fn replay(log: &PartitionLog<SimFs>, start: i64) -> Result<BTreeMap<i64, Replayed>, String> {
    let mut state: BTreeMap<i64, Replayed> = BTreeMap::new();
    let mut next = start;
    let mut buf = Vec::new();
    while next < log.log_end_offset() {
        let fetch = log
            .read(next, 1 << 20, Isolation::LogEnd, true)
            .map_err(|e| format!("read at {next}: {e}"))?;
        fetch
            .read_into(&mut buf)
            .map_err(|e| format!("read at {next}: {e}"))?;
        if buf.is_empty() {
            break;
        }
        for framed in seglog_record_format::batches(&buf) {
            let framed = framed.map_err(|e| format!("batch near {next}: {e}"))?;
            let Ok(Batch::V2(b)) = framed.decode() else {
                continue;
            };
            next = next.max(b.last_offset() + 1);
            if b.producer_id() < 0 {
                continue;
            }
            let e = state.entry(b.producer_id()).or_insert(Replayed {
                epoch: b.producer_epoch(),
                coordinator_epoch: -1,
                txn_first_offset: None,
                last_batch: None,
            });
            if e.epoch != b.producer_epoch() {
                e.epoch = b.producer_epoch();
                e.last_batch = None;
            }
            if b.is_control() {
                let records = Batch::V2(b)
                    .to_records()
                    .map_err(|e| format!("marker near {next}: {e}"))?;
                let Some(marker) = records.first() else {
                    continue;
                };
                match parse_control_key(marker.key.as_deref()) {
                    Ok((_, ControlRecordType::Commit | ControlRecordType::Abort)) => {}
                    other => return Err(format!("a control batch near {next}: {other:?}")),
                }
                let value = marker.value.as_deref().unwrap_or_default();
                e.coordinator_epoch =
                    i32::from_be_bytes(value[2..6].try_into().map_err(|_| "short marker")?);
                e.txn_first_offset = None;
                continue;
            }
            e.last_batch = Some((
                b.base_sequence(),
                b.last_sequence(),
                b.base_offset(),
                b.last_offset(),
            ));
            if b.is_transactional() && e.txn_first_offset.is_none() {
                e.txn_first_offset = Some(b.base_offset());
            }
        }
    }
    Ok(state)
}
