//! What a consumer returns from fetched bytes, pinned against the cases of Kafka's
//! `CompletedFetchTest` and `FetchRequestManagerTest` (read_committed with aborted transactions,
//! control records, fetch offsets inside a batch).

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, ControlRecordType, NewRecord};
use seglog_log::{AbortedTransaction, IsolationLevel, consumer_records};

use crate::common::txn::{self, Producer, TS};

fn data(
    out: &mut Vec<u8>,
    base: i64,
    count: i32,
    producer: Option<(i64, bool)>,
    codec: Compression,
) {
    let producer =
        producer.map(|(id, transactional)| (Producer { id, epoch: 0 }, 0, transactional));
    txn::data(out, base, count, producer, codec);
}

fn marker(out: &mut Vec<u8>, offset: i64, producer: i64, kind: ControlRecordType) {
    txn::marker(
        out,
        offset,
        Producer {
            id: producer,
            epoch: 0,
        },
        0,
        kind,
    );
}

fn offsets(
    bytes: &[u8],
    from: i64,
    level: IsolationLevel,
    aborted: &[AbortedTransaction],
) -> Vec<i64> {
    consumer_records(bytes, from, level, aborted)
        .map(|r| r.expect("a record").offset)
        .collect()
}

/// Producer 1 commits 0..3, producer 2 aborts 3..5, a plain batch 5..7, markers at 7 and 8.
fn interleaved(codec: Compression) -> (Vec<u8>, Vec<AbortedTransaction>) {
    let mut out = Vec::new();
    data(&mut out, 0, 3, Some((1, true)), codec);
    data(&mut out, 3, 2, Some((2, true)), codec);
    data(&mut out, 5, 2, None, codec);
    marker(&mut out, 7, 1, ControlRecordType::Commit);
    marker(&mut out, 8, 2, ControlRecordType::Abort);
    let aborted = vec![AbortedTransaction {
        producer_id: 2,
        first_offset: 3,
    }];
    (out, aborted)
}

#[test]
fn read_uncommitted_returns_aborted_data_and_never_a_control_record() {
    for codec in [Compression::None, Compression::Gzip, Compression::Zstd] {
        let (bytes, aborted) = interleaved(codec);
        let got = offsets(&bytes, 0, IsolationLevel::ReadUncommitted, &aborted);
        assert_eq!(got, vec![0, 1, 2, 3, 4, 5, 6], "{codec:?}");
    }
}

#[test]
fn read_committed_drops_the_aborted_transaction_only() {
    for codec in [Compression::None, Compression::Lz4, Compression::Snappy] {
        let (bytes, aborted) = interleaved(codec);
        let got = offsets(&bytes, 0, IsolationLevel::ReadCommitted, &aborted);
        assert_eq!(got, vec![0, 1, 2, 5, 6], "{codec:?}");
    }
}

#[test]
fn next_fetch_offset_passes_trailing_control_batches() {
    let (bytes, aborted) = interleaved(Compression::None);
    let mut it = consumer_records(&bytes, 0, IsolationLevel::ReadCommitted, &aborted);
    assert_eq!(it.by_ref().count(), 5);
    assert_eq!(it.next_fetch_offset(), 9);
}

#[test]
fn without_the_aborted_list_read_committed_keeps_everything() {
    // The consumer trusts the fetch's list: no list, nothing aborted (CompletedFetchTest's
    // testCommittedTransactionRecordsIncluded shape, with the abort unlisted).
    let (bytes, _) = interleaved(Compression::None);
    let got = offsets(&bytes, 0, IsolationLevel::ReadCommitted, &[]);
    assert_eq!(got, vec![0, 1, 2, 3, 4, 5, 6]);
}

#[test]
fn the_abort_marker_ends_the_producers_aborted_state() {
    // Producer 1 aborts 0..2 (marker at 2), then commits 3..5 (marker at 5).
    let mut bytes = Vec::new();
    data(&mut bytes, 0, 2, Some((1, true)), Compression::None);
    marker(&mut bytes, 2, 1, ControlRecordType::Abort);
    data(&mut bytes, 3, 2, Some((1, true)), Compression::None);
    marker(&mut bytes, 5, 1, ControlRecordType::Commit);
    let aborted = [AbortedTransaction {
        producer_id: 1,
        first_offset: 0,
    }];
    assert_eq!(
        offsets(&bytes, 0, IsolationLevel::ReadCommitted, &aborted),
        vec![3, 4]
    );
}

#[test]
fn an_abort_marker_with_no_data_in_the_fetch() {
    // FetchRequestManagerTest.testReadCommittedAbortMarkerWithNoData: the aborted transaction's
    // data lies before the fetch, the marker and a committed transaction after it are fetched.
    let mut bytes = Vec::new();
    marker(&mut bytes, 5, 1, ControlRecordType::Abort);
    data(&mut bytes, 6, 3, Some((1, true)), Compression::None);
    marker(&mut bytes, 9, 1, ControlRecordType::Commit);
    let aborted = [AbortedTransaction {
        producer_id: 1,
        first_offset: 0,
    }];
    let mut it = consumer_records(&bytes, 5, IsolationLevel::ReadCommitted, &aborted);
    let got: Vec<i64> = it.by_ref().map(|r| r.expect("a record").offset).collect();
    assert_eq!(got, vec![6, 7, 8]);
    assert_eq!(it.next_fetch_offset(), 10);
}

#[test]
fn an_aborted_transaction_starting_later_does_not_hide_earlier_batches() {
    // Producer 1's non-aborted transaction at 0..2 commits at 2; its aborted one starts at 3.
    let mut bytes = Vec::new();
    data(&mut bytes, 0, 2, Some((1, true)), Compression::None);
    marker(&mut bytes, 2, 1, ControlRecordType::Commit);
    data(&mut bytes, 3, 2, Some((1, true)), Compression::None);
    marker(&mut bytes, 5, 1, ControlRecordType::Abort);
    let aborted = [AbortedTransaction {
        producer_id: 1,
        first_offset: 3,
    }];
    assert_eq!(
        offsets(&bytes, 0, IsolationLevel::ReadCommitted, &aborted),
        vec![0, 1]
    );
}

#[test]
fn records_below_the_fetch_offset_are_skipped() {
    let mut bytes = Vec::new();
    data(&mut bytes, 10, 5, None, Compression::Gzip);
    assert_eq!(
        offsets(&bytes, 12, IsolationLevel::ReadUncommitted, &[]),
        vec![12, 13, 14]
    );
}

#[test]
fn idempotent_batches_are_not_transactional_and_never_aborted() {
    // An aborted list naming an idempotent (non-transactional) producer hides nothing of it.
    let mut bytes = Vec::new();
    data(&mut bytes, 0, 3, Some((7, false)), Compression::None);
    let aborted = [AbortedTransaction {
        producer_id: 7,
        first_offset: 0,
    }];
    assert_eq!(
        offsets(&bytes, 0, IsolationLevel::ReadCommitted, &aborted),
        vec![0, 1, 2]
    );
}

#[test]
fn a_control_batch_with_a_broken_key_is_an_error() {
    let mut bytes = Vec::new();
    let mut options = BatchOptions::new(0, Compression::None);
    options.producer_id = 1;
    options.producer_epoch = 0;
    options.transactional = true;
    options.control = true;
    let record = NewRecord::new(0, TS, Some(&[0, 0][..]), Some(&[0u8; 6][..]));
    BatchBuilder::new()
        .build(&options, std::iter::once(record), &mut bytes)
        .expect("a batch with a broken key");
    let mut it = consumer_records(&bytes, 0, IsolationLevel::ReadCommitted, &[]);
    assert!(it.next().expect("an error").is_err());
    assert!(it.next().is_none());
}

#[test]
fn isolation_level_names_are_kafkas() {
    for level in [
        IsolationLevel::ReadUncommitted,
        IsolationLevel::ReadCommitted,
    ] {
        assert_eq!(IsolationLevel::from_name(level.name()), Some(level));
    }
    assert_eq!(IsolationLevel::from_name("READ_COMMITTED"), None);
}
