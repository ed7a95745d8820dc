//! Batches read into the producer state as recovery and the loader read them: Kafka's
//! `LogSegment.updateProducerState` (each recovered batch, the aborted transaction returned with
//! its last stable offset) and `loadProducersFromRecords`.

use seglog_fs::RealFs;
use seglog_log::producer::{
    CompletedTxn, ProducerStateEntry, ProducerStateManager, ProducerStateManagerConfig,
    load_producers_from_batches, recover_batch,
};
use seglog_log::record::{Compression, ControlRecordType, batches};

use crate::common::txn::{self, Producer};

fn data(out: &mut Vec<u8>, base: i64, count: i32, pid: i64, seq: i32, transactional: bool) {
    let producer = Producer { id: pid, epoch: 0 };
    txn::data(
        out,
        base,
        count,
        Some((producer, seq, transactional)),
        Compression::None,
    );
}

fn marker(out: &mut Vec<u8>, offset: i64, pid: i64, kind: ControlRecordType) {
    txn::marker(out, offset, Producer { id: pid, epoch: 0 }, 3, kind);
}

/// Producer 1's transaction 0..=1 and producer 2's 2..=3 interleave; 2 aborts at 4, 1 commits at
/// 5, an idempotent producer 3 writes 6..=7.
fn log() -> Vec<u8> {
    let mut out = Vec::new();
    data(&mut out, 0, 2, 1, 0, true);
    data(&mut out, 2, 2, 2, 0, true);
    marker(&mut out, 4, 2, ControlRecordType::Abort);
    marker(&mut out, 5, 1, ControlRecordType::Commit);
    data(&mut out, 6, 2, 3, 0, false);
    out
}

fn manager(dir: &std::path::Path) -> ProducerStateManager<RealFs> {
    ProducerStateManager::new(
        RealFs,
        dir,
        "t-0",
        60_000,
        ProducerStateManagerConfig::default(),
    )
    .expect("a manager")
}

#[test]
fn recovery_returns_each_completed_transaction_with_its_last_stable_offset() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut m = manager(dir.path());
    let bytes = log();
    let mut done = Vec::new();
    for framed in batches(&bytes) {
        let batch = framed.and_then(|f| f.v2()).expect("a batch");
        if let Some(d) = recover_batch(&mut m, &batch).expect("valid") {
            done.push(d);
        }
    }
    // The abort at 4 completes producer 2's transaction while producer 1's (from 0) is open: the
    // last stable offset is 0, as Kafka's txnindex entry has it.
    assert_eq!(
        done,
        vec![
            (
                CompletedTxn {
                    producer_id: 2,
                    first_offset: 2,
                    last_offset: 4,
                    is_aborted: true
                },
                0
            ),
            (
                CompletedTxn {
                    producer_id: 1,
                    first_offset: 0,
                    last_offset: 5,
                    is_aborted: false
                },
                6
            ),
        ]
    );
    // Completed, but above the high watermark: still unstable until it moves past the markers.
    assert_eq!(m.first_unstable_offset().map(|o| o.message_offset), Some(0));
    m.on_high_watermark_updated(8);
    assert_eq!(m.first_unstable_offset(), None);
    assert_eq!(m.map_end_offset(), 8);
    assert_eq!(m.active_producers().len(), 3);
    assert_eq!(
        m.last_entry(3)
            .map(seglog_log::producer::ProducerStateEntry::last_seq),
        Some(1)
    );
}

#[test]
fn loading_after_a_snapshot_leaves_an_open_transaction_unstable() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut m = manager(dir.path());
    let mut bytes = Vec::new();
    data(&mut bytes, 10, 3, 7, 0, true);
    data(&mut bytes, 13, 1, 8, 0, false);
    let completed = load_producers_from_batches(
        &mut m,
        batches(&bytes).map(|f| f.and_then(|f| f.v2()).expect("a batch")),
    )
    .expect("valid");
    assert!(completed.is_empty());
    assert_eq!(
        m.first_unstable_offset().map(|o| o.message_offset),
        Some(10)
    );
    assert_eq!(
        m.last_entry(7)
            .and_then(ProducerStateEntry::current_txn_first_offset),
        Some(10)
    );
}

#[test]
fn a_control_batch_that_is_no_marker_is_refused() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut m = manager(dir.path());
    let mut bytes = Vec::new();
    marker(&mut bytes, 0, 4, ControlRecordType::LeaderChange);
    let batch = batches(&bytes)
        .next()
        .expect("one batch")
        .and_then(|f| f.v2())
        .expect("a batch");
    let refused = recover_batch(&mut m, &batch).expect_err("not a marker");
    assert!(
        refused.to_string().contains("not an EndTransactionMarker"),
        "{refused}"
    );
}

#[test]
fn a_refused_batch_changes_no_producer_state() {
    // Producer 1 opens a transaction at 0; its non-transactional batch at 2 is refused
    // (Kafka's InvalidTxnStateException), as is a control batch of a new producer 4 that is no
    // marker: neither leaves a trace in the state, though each was half recorded when refused.
    let dir = tempfile::tempdir().expect("a temp dir");
    let mut m = manager(dir.path());
    let mut bytes = Vec::new();
    data(&mut bytes, 0, 2, 1, 0, true);
    data(&mut bytes, 2, 1, 1, 2, false);
    marker(&mut bytes, 3, 4, ControlRecordType::LeaderChange);
    let all: Vec<_> = batches(&bytes)
        .map(|f| f.and_then(|f| f.v2()).expect("a batch"))
        .collect();
    let [open, stray, no_marker] = all.as_slice() else {
        panic!("three batches");
    };
    assert_eq!(recover_batch(&mut m, open).expect("valid"), None);
    let before = m.last_entry(1).cloned().expect("producer 1");
    let refused = recover_batch(&mut m, stray).expect_err("not transactional");
    assert!(
        refused.to_string().contains("Expected transactional write"),
        "{refused}"
    );
    recover_batch(&mut m, no_marker).expect_err("not a marker");
    assert_eq!(m.last_entry(1), Some(&before));
    assert_eq!(before.batch_metadata().len(), 1);
    assert_eq!(m.last_entry(4), None);
    assert_eq!(m.active_producers().len(), 1);
    assert_eq!(m.map_end_offset(), 2);
    assert_eq!(m.first_unstable_offset().map(|o| o.message_offset), Some(0));
}
