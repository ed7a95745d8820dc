//! Kafka 4.4's `TransactionIndexTest`, one test per behaviour, on real files; plus the 4.4
//! iterator's rules that the test does not pin (checked against Kafka's own classes: no
//! entries while closed, a partial tail never read, a bad version fails the read).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "tests"
)]

use std::path::{Path, PathBuf};

use seglog_fs::RealFs;
use seglog_segment::Error;
use seglog_segment::txn_index::{AbortedTxn, TransactionIndex};

fn t(pid: i64, first: i64, last: i64, lso: i64) -> AbortedTxn {
    AbortedTxn::new(pid, first, last, lso)
}

/// The four entries most of Kafka's tests use.
fn four() -> Vec<AbortedTxn> {
    vec![
        t(0, 0, 10, 11),
        t(1, 5, 15, 13),
        t(2, 18, 35, 25),
        t(3, 32, 50, 40),
    ]
}

/// Kafka's fixture: an index at base 0 over an existing empty temp file.
fn fixture() -> (tempfile::TempDir, PathBuf, TransactionIndex) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("00000000000000000000.txnindex");
    std::fs::write(&file, b"").unwrap();
    let index = TransactionIndex::open(RealFs, &file, 0).unwrap();
    (dir, file, index)
}

fn append_all(index: &mut TransactionIndex, txns: &[AbortedTxn]) {
    for txn in txns {
        index.append(*txn).unwrap();
    }
}

#[test]
fn position_set_correctly_when_opened() {
    let (_dir, file, mut index) = fixture();
    let mut txns = four();
    append_all(&mut index, &txns);
    index.close();
    let mut reopened = TransactionIndex::open(RealFs, &file, 0).unwrap();
    let another = t(3, 50, 60, 55);
    reopened.append(another).unwrap();
    txns.push(another);
    assert_eq!(reopened.all_aborted_txns().unwrap(), txns);
}

#[test]
fn sanity_check() {
    let (_dir, file, mut index) = fixture();
    append_all(&mut index, &four());
    index.sanity_check().unwrap();
    index.close();
    // Opened with a later start offset, to fake invalid data.
    let reopened = TransactionIndex::open(RealFs, &file, 100).unwrap();
    let err = reopened.sanity_check().unwrap_err();
    let Error::TxnIndexBelowStart {
        position,
        last_offset,
        start_offset,
        ..
    } = &err
    else {
        panic!("{err}");
    };
    assert_eq!((*position, *last_offset, *start_offset), (0, 10, 100));
    assert_eq!(
        err.to_string(),
        format!(
            "Last offset of aborted transaction AbortedTxn(producerId=0, firstOffset=0, lastOffset=10, lastStableOffset=11) in index {} is less than start offset 100 (the entry at byte 0)",
            file.display()
        )
    );
}

fn assert_order_error(err: &Error, file: &Path, last: i64, current: i64) {
    assert!(matches!(err, Error::TxnIndexOrder { .. }), "{err}");
    assert_eq!(
        err.to_string(),
        format!(
            "The last offset of appended transactions must increase sequentially, but {last} is not greater than current last offset {current} of index {}",
            file.display()
        )
    );
}

#[test]
fn last_offset_must_increase() {
    let (_dir, file, mut index) = fixture();
    index.append(t(1, 5, 15, 13)).unwrap();
    let err = index.append(t(0, 0, 15, 11)).unwrap_err();
    assert_order_error(&err, &file, 15, 15);
}

#[test]
fn last_offset_cannot_decrease() {
    let (_dir, file, mut index) = fixture();
    index.append(t(1, 5, 15, 13)).unwrap();
    let err = index.append(t(0, 0, 10, 11)).unwrap_err();
    assert_order_error(&err, &file, 10, 15);
    assert_eq!(index.all_aborted_txns().unwrap(), vec![t(1, 5, 15, 13)]);
}

#[test]
fn collect_aborted_transactions() {
    let (_dir, _file, mut index) = fixture();
    let txns = four();
    append_all(&mut index, &txns);
    let cases: [(i64, i64, &[AbortedTxn], bool); 6] = [
        (0, 100, &txns[..], false),
        (0, 32, &txns[0..3], true),
        (0, 35, &txns[..], true),
        (10, 35, &txns[..], true),
        (11, 35, &txns[1..4], true),
        (20, 41, &txns[2..4], false),
    ];
    for (fetch, upper, expected, complete) in cases {
        let result = index.collect_aborted_txns(fetch, upper).unwrap();
        assert_eq!(result.aborted_transactions, expected, "{fetch}..{upper}");
        assert_eq!(result.is_complete, complete, "{fetch}..{upper}");
    }
}

#[test]
fn truncate() {
    let (_dir, file, mut index) = fixture();
    let txns = vec![
        t(0, 0, 10, 2),
        t(1, 5, 15, 16),
        t(2, 18, 35, 25),
        t(3, 32, 50, 40),
    ];
    append_all(&mut index, &txns);
    let collected = |index: &TransactionIndex| {
        index
            .collect_aborted_txns(0, 100)
            .unwrap()
            .aborted_transactions
    };
    index.truncate_to(51).unwrap();
    assert_eq!(collected(&index), txns);
    index.truncate_to(50).unwrap();
    assert_eq!(collected(&index), txns[0..3]);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 3 * 34);
    // The last offset is the kept entry's again: 35 is refused, 36 taken.
    assert!(index.append(t(9, 30, 35, 30)).is_err());
    index.append(t(9, 30, 36, 30)).unwrap();
    index.reset().unwrap();
    assert_eq!(collected(&index), []);
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 0);
    // After a reset any last offset is taken.
    index.append(t(0, 0, 1, 1)).unwrap();
}

#[test]
fn aborted_txn_serde() {
    let txn = AbortedTxn::new(983_493, 137, 299, 200);
    assert_eq!(txn.version(), 0);
    assert_eq!(
        (
            txn.producer_id(),
            txn.first_offset(),
            txn.last_offset(),
            txn.last_stable_offset()
        ),
        (983_493, 137, 299, 200)
    );
    assert_eq!(AbortedTxn::from_bytes(txn.to_bytes()), txn);
}

#[test]
fn rename_index() {
    let (dir, file, mut index) = fixture();
    let renamed = dir.path().join("renamed.txnindex");
    index.append(t(0, 0, 10, 2)).unwrap();
    index.rename_to(&renamed).unwrap();
    assert!(!file.exists());
    assert_eq!(index.path(), renamed);
    index.append(t(1, 5, 15, 16)).unwrap();
    let txns = index
        .collect_aborted_txns(0, 100)
        .unwrap()
        .aborted_transactions;
    assert_eq!(
        txns.iter()
            .map(AbortedTxn::first_offset)
            .collect::<Vec<_>>(),
        [0, 5]
    );
    assert_eq!(std::fs::metadata(&renamed).unwrap().len(), 68);
}

#[test]
fn rename_of_a_missing_file_takes_the_new_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut index = TransactionIndex::open(RealFs, dir.path().join("a.txnindex"), 0).unwrap();
    let to = dir.path().join("b.txnindex");
    index.rename_to(&to).unwrap();
    assert_eq!(index.path(), to);
    assert!(!to.exists());
    index.append(t(0, 0, 1, 1)).unwrap();
    assert!(to.exists());
}

#[test]
fn update_parent_dir() {
    let (dir, file, mut index) = fixture();
    let parent = dir.path().join("parent");
    assert_ne!(index.path().parent(), Some(parent.as_path()));
    index.update_parent_dir(&parent);
    assert_eq!(index.path(), parent.join(file.file_name().unwrap()));
}

#[test]
fn flush() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("0.txnindex");
    let mut index = TransactionIndex::open(RealFs, &file, 0).unwrap();
    index.flush().unwrap();
    assert!(!index.is_unsynced());
    index.append(t(0, 0, 10, 2)).unwrap();
    assert!(index.is_unsynced());
    index.flush().unwrap();
    assert!(!index.is_unsynced());
    assert_ne!(std::fs::metadata(&file).unwrap().len(), 0);
}

#[test]
fn delete_if_exists() {
    let (_dir, file, mut index) = fixture();
    assert!(file.exists());
    assert!(index.delete_if_exists().unwrap());
    assert!(!file.exists());
    assert!(!index.delete_if_exists().unwrap());
}

#[test]
fn is_empty_when_file_does_not_exist() {
    let dir = tempfile::tempdir().unwrap();
    let index = TransactionIndex::open(RealFs, dir.path().join("0.txnindex"), 0).unwrap();
    assert!(index.is_empty());
}

#[test]
fn is_empty_when_file_is_empty() {
    let (_dir, _file, index) = fixture();
    assert!(index.is_empty());
}

#[test]
fn is_empty_when_file_is_not_empty() {
    let (_dir, _file, mut index) = fixture();
    index.append(t(0, 0, 10, 2)).unwrap();
    assert!(!index.is_empty());
}

#[test]
fn do_not_create_file_until_needed() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("0.txnindex");
    let mut index = TransactionIndex::open(RealFs, &file, 0).unwrap();
    assert!(!file.exists());
    index.reset().unwrap();
    index.flush().unwrap();
    index.truncate_to(0).unwrap();
    index.sanity_check().unwrap();
    assert!(index.all_aborted_txns().unwrap().is_empty());
    index.close();
    assert!(!file.exists());
    index.append(t(0, 0, 10, 2)).unwrap();
    assert!(file.exists());
}

/// Kafka's `testAppendAndCollectAfterClose`, as 4.4 behaves (checked with its classes): appends
/// after a close reopen the file; reads while closed find nothing; once reopened, all is there.
#[test]
fn append_and_collect_after_close() {
    let (_dir, _file, mut index) = fixture();
    index.close();
    index.append(t(0, 0, 10, 2)).unwrap();
    index.close();
    index.append(t(1, 5, 15, 16)).unwrap();
    index.close();
    assert!(
        index
            .collect_aborted_txns(0, 100)
            .unwrap()
            .aborted_transactions
            .is_empty()
    );
    index.append(t(2, 18, 35, 25)).unwrap();
    let txns = index
        .collect_aborted_txns(0, 100)
        .unwrap()
        .aborted_transactions;
    assert_eq!(
        txns.iter()
            .map(AbortedTxn::first_offset)
            .collect::<Vec<_>>(),
        [0, 5, 18]
    );
}

#[test]
fn truncate_past_the_end_keeps_everything() {
    let (_dir, _file, mut index) = fixture();
    append_all(&mut index, &four());
    index.truncate_to(i64::MAX).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), four());
    // Nothing was cut, so the last offset stays: 50 is still refused.
    assert!(index.append(t(0, 0, 50, 0)).is_err());
}

#[test]
fn a_partial_trailing_entry_is_never_read_and_appends_go_after_it() {
    let (_dir, file, mut index) = fixture();
    index.append(t(0, 0, 10, 2)).unwrap();
    index.close();
    let mut bytes = std::fs::read(&file).unwrap();
    bytes.push(9);
    std::fs::write(&file, &bytes).unwrap();
    let mut index = TransactionIndex::open(RealFs, &file, 0).unwrap();
    assert_eq!(index.all_aborted_txns().unwrap(), [t(0, 0, 10, 2)]);
    assert_eq!(index.partial_tail(), Some((34, 1)));
    index.sanity_check().unwrap();
    // As Kafka's channel does, the append lands after the stray byte; its entry then reads
    // with version 0x0900 (the stray byte and the new version's first byte).
    index.append(t(1, 1, 20, 20)).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 69);
    let err = index.all_aborted_txns().unwrap_err();
    assert!(
        matches!(
            err,
            Error::TxnIndexVersion {
                position: 34,
                version: 2304,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn an_unknown_version_fails_the_read_naming_file_and_position() {
    let (_dir, file, mut index) = fixture();
    index.append(t(0, 0, 10, 2)).unwrap();
    index.close();
    let mut bytes = std::fs::read(&file).unwrap();
    let mut second = t(1, 1, 20, 20).to_bytes();
    second[1] = 1;
    bytes.extend_from_slice(&second);
    std::fs::write(&file, &bytes).unwrap();
    let index = TransactionIndex::open(RealFs, &file, 0).unwrap();
    let err = index.all_aborted_txns().unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "Unexpected aborted transaction version 1 in transaction index {}, supported version range is 0 to 0 (the entry at byte 34)",
            file.display()
        )
    );
    // The same for every reader.
    assert!(index.collect_aborted_txns(0, 100).is_err());
    assert!(index.sanity_check().is_err());
    // A collect that completes before the bad entry does not read it, as in Kafka.
    assert!(index.collect_aborted_txns(0, 2).unwrap().is_complete);
}

#[test]
fn read_only_open_reads_and_refuses_appends() {
    let (_dir, file, mut index) = fixture();
    append_all(&mut index, &four());
    index.close();
    let mut ro = TransactionIndex::open_read_only(RealFs, &file, 0).unwrap();
    assert_eq!(ro.all_aborted_txns().unwrap(), four());
    assert!(ro.append(t(9, 60, 70, 70)).is_err());
    assert_eq!(std::fs::metadata(&file).unwrap().len(), 4 * 34);
}

/// The entries of `testdata/kafka-dump/extra/txnindex/00000000000000000100.txnindex`, which Kafka
/// 4.4's own `TransactionIndex` wrote (`interop/kafka/make-goldens.sh`).
fn kafka_golden() -> (PathBuf, Vec<AbortedTxn>) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata/kafka-dump/extra/txnindex/00000000000000000100.txnindex");
    let txns = vec![
        t(4000, 100, 110, 100),
        t(4001, 105, 120, 105),
        t(i64::MAX, 118, 135, 118),
        t(17, 130, 150, 140),
        t(0, -1, 151, -1),
    ];
    (path, txns)
}

#[test]
fn reads_kafkas_file_and_writes_the_same_bytes() {
    let (golden, txns) = kafka_golden();
    let kafka = TransactionIndex::open_read_only(RealFs, &golden, 100).unwrap();
    assert_eq!(kafka.all_aborted_txns().unwrap(), txns);
    kafka.sanity_check().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ours = dir.path().join("00000000000000000100.txnindex");
    let mut index = TransactionIndex::open(RealFs, &ours, 100).unwrap();
    append_all(&mut index, &txns);
    index.flush().unwrap();
    index.close();
    assert_eq!(
        std::fs::read(&ours).unwrap(),
        std::fs::read(&golden).unwrap()
    );
}
