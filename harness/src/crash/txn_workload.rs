//! The appends of a transactional workload: an idempotent producer (which also retries its last
//! batch, a duplicate the log must answer with the original offsets), two or three
//! transactional producers interleaving data batches with COMMIT and ABORT markers (one of them
//! on transaction version 2, whose markers bump the epoch), and plain batches. A data batch is
//! acknowledged when a durable append returns, a marker when a sync up to it returns.

use seglog_fs::sim::SimFs;
use seglog_log::{MockClock, PartitionLog};
use seglog_record_format::{BatchOptions, Compression, ControlRecordType, EndTransactionMarker};

use super::clock_now;
use super::model::{Model, Rec, Txn, producer_batch};
use super::rng::Rng;

/// The idempotent producer's id; the transactional ones follow it.
const IDEMPOTENT_ID: i64 = 1_000;

#[derive(Clone)]
pub(super) struct Producer {
    id: i64,
    epoch: i16,
    next_seq: i32,
    /// 0 for the idempotent producer, else the transaction version of its markers.
    transaction_version: i16,
    coordinator_epoch: i32,
    /// The open transaction (an index into the model's list).
    open: Option<usize>,
    /// The last data batch: its records, base sequence and first offset (for a retry).
    last: Option<(Vec<Rec>, i32, i64)>,
}

/// The producers of one workload: the idempotent one first.
pub(super) fn producers(rng: &mut Rng) -> Vec<Producer> {
    let transactional = 2 + rng.below(2) as i64;
    (0..=transactional)
        .map(|i| Producer {
            id: IDEMPOTENT_ID + i,
            epoch: i as i16,
            next_seq: 0,
            transaction_version: match i {
                0 => 0,
                2 => 2,
                _ => 1,
            },
            coordinator_epoch: 3,
            open: None,
            last: None,
        })
        .collect()
}

/// The record of a marker, as the log writes it.
pub(super) fn marker_rec(commit: bool, coordinator_epoch: i32, timestamp: i64) -> Rec {
    let kind = if commit {
        ControlRecordType::Commit
    } else {
        ControlRecordType::Abort
    };
    Rec {
        key: kind.key_bytes().to_vec(),
        value: EndTransactionMarker {
            version: 0,
            coordinator_epoch,
        }
        .value_bytes()
        .to_vec(),
        timestamp,
    }
}

/// One append of a transactional workload. `begin(model, description)` is called once the model
/// holds every record the operation may write, before the log is touched.
pub(super) fn txn_append(
    rng: &mut Rng,
    log: &PartitionLog<SimFs>,
    clock: &MockClock,
    model: &mut Model,
    producers: &mut [Producer],
    records: &mut dyn FnMut(&mut Rng, usize, i64) -> Vec<Rec>,
    begin: &mut dyn FnMut(&Model, String),
) {
    let codec = [Compression::None, Compression::Lz4, Compression::Zstd][rng.below(3) as usize];
    let ts = clock_now(clock);
    let base = log.log_end_offset();
    let which = rng.below(producers.len() as u64 + 1) as usize;
    let Some(p) = producers.get_mut(which) else {
        // A plain batch, no producer id.
        let n = 1 + rng.below(4) as usize;
        let recs = records(rng, n, ts);
        let durable = rng.chance(4);
        write_data(
            log,
            model,
            &BatchOptions::new(0, codec),
            recs,
            durable,
            None,
            begin,
        );
        return;
    };
    if p.transaction_version == 0
        && rng.chance(6)
        && let Some((recs, seq, first)) = p.last.clone()
    {
        let mut options = BatchOptions::new(0, codec);
        options.producer_id = p.id;
        options.producer_epoch = p.epoch;
        options.base_sequence = seq;
        begin(
            model,
            format!("retry of producer {}'s batch at {first}", p.id),
        );
        let mut bytes = producer_batch(&options, &recs);
        let info = log.append_durable(&mut bytes).unwrap();
        assert_eq!(
            (info.first_offset, log.log_end_offset()),
            (first, base),
            "a duplicate is answered with the original offsets and appends nothing"
        );
        // The durable answer to a retry: the original batch is on stable storage.
        let covered: Vec<i64> = model
            .current
            .range(..first + recs.len() as i64)
            .map(|(o, _)| *o)
            .collect();
        model.durable.extend(covered);
        return;
    }
    if let Some(txn) = p.open.filter(|_| rng.chance(3)) {
        let commit = rng.chance(2);
        let durable = rng.chance(2);
        let marker_epoch = if p.transaction_version >= 2 {
            p.epoch + 1
        } else {
            p.epoch
        };
        if rng.chance(4) {
            p.coordinator_epoch += 1;
        }
        model
            .appended
            .entry(base)
            .or_default()
            .push(marker_rec(commit, p.coordinator_epoch, ts));
        // Known before the append: an image captured during it may hold the marker.
        model.txns.markers.insert(base);
        model.txns.list[txn].marker = Some((base, commit));
        begin(
            model,
            format!(
                "{} of producer {} at {base}{}",
                if commit { "COMMIT" } else { "ABORT" },
                p.id,
                if durable { ", synced" } else { "" }
            ),
        );
        let info = log
            .append_end_txn_marker(
                p.id,
                marker_epoch,
                p.coordinator_epoch,
                commit,
                p.transaction_version,
            )
            .unwrap();
        assert_eq!(info.first_offset, base);
        if durable {
            log.sync_up_to(base + 1).unwrap();
        }
        model.batches.insert(base, base);
        model
            .current
            .insert(base, marker_rec(commit, p.coordinator_epoch, ts));
        if durable {
            let covered: Vec<i64> = model.current.range(..=base).map(|(o, _)| *o).collect();
            model.durable.extend(covered);
        }
        p.open = None;
        if p.epoch != marker_epoch {
            // Transaction version 2: the marker bumped the epoch; sequences start again.
            p.epoch = marker_epoch;
            p.next_seq = 0;
            p.last = None;
        }
        log.set_high_watermark(log.log_end_offset());
        return;
    }
    let n = 1 + rng.below(5) as usize;
    let recs = records(rng, n, ts);
    let mut options = BatchOptions::new(0, codec);
    options.producer_id = p.id;
    options.producer_epoch = p.epoch;
    options.base_sequence = p.next_seq;
    options.transactional = p.transaction_version > 0;
    let txn = options.transactional.then(|| {
        *p.open.get_or_insert_with(|| {
            model.txns.list.push(Txn { marker: None });
            model.txns.list.len() - 1
        })
    });
    p.last = Some((recs.clone(), p.next_seq, base));
    p.next_seq += n as i32;
    let durable = rng.chance(4);
    write_data(log, model, &options, recs, durable, txn, begin);
}

/// A data batch appended (durable: with `append_durable`) and recorded in the model.
fn write_data(
    log: &PartitionLog<SimFs>,
    model: &mut Model,
    options: &BatchOptions,
    recs: Vec<Rec>,
    durable: bool,
    txn: Option<usize>,
    begin: &mut dyn FnMut(&Model, String),
) {
    let base = log.log_end_offset();
    let n = recs.len() as i64;
    for (i, r) in recs.iter().enumerate() {
        model
            .appended
            .entry(base + i as i64)
            .or_default()
            .push(r.clone());
        if let Some(t) = txn {
            model.txns.txn_of.insert(base + i as i64, t);
        }
    }
    begin(
        model,
        format!(
            "{} {n} records of producer {} at {base}{}",
            if durable {
                "durable append"
            } else {
                "leader append"
            },
            options.producer_id,
            if options.transactional {
                " (transactional)"
            } else {
                ""
            }
        ),
    );
    let mut bytes = producer_batch(options, &recs);
    let info = if durable {
        log.append_durable(&mut bytes)
    } else {
        log.append_as_leader(&mut bytes)
    }
    .unwrap();
    assert_eq!(info.first_offset, base);
    model.batches.insert(base, base + n - 1);
    for (i, r) in recs.into_iter().enumerate() {
        model.current.insert(base + i as i64, r);
    }
    if durable {
        let covered: Vec<i64> = model.current.range(..base + n).map(|(o, _)| *o).collect();
        model.durable.extend(covered);
    }
    log.set_high_watermark(log.log_end_offset());
}
