//! `collect_aborted_txns` (and truncation, reset, reopen) against a plain list of entries that
//! applies Kafka's rules directly.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    reason = "tests"
)]

use proptest::prelude::*;
use seglog_fs::RealFs;
use seglog_segment::txn_index::{AbortedTxn, TransactionIndex, TxnIndexSearchResult};

#[derive(Debug, Clone)]
enum Op {
    Append {
        pid: i64,
        span: i64,
        gap: i64,
        lso_back: i64,
    },
    Truncate(i64),
    Reset,
    Reopen,
    Collect(i64, i64),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..5_i64, 0..20_i64, 1..15_i64, 0..30_i64)
            .prop_map(|(pid, span, gap, lso_back)| Op::Append { pid, span, gap, lso_back }),
        1 => (-5..200_i64).prop_map(Op::Truncate),
        1 => Just(Op::Reset),
        1 => Just(Op::Reopen),
        4 => (-5..200_i64, -5..220_i64).prop_map(|(a, b)| Op::Collect(a, b)),
    ]
}

/// Kafka's `collectAbortedTxns` over a list.
fn oracle_collect(entries: &[AbortedTxn], fetch: i64, upper: i64) -> TxnIndexSearchResult {
    let mut result = TxnIndexSearchResult::default();
    for txn in entries {
        if txn.last_offset() >= fetch && txn.first_offset() < upper {
            result.aborted_transactions.push(*txn);
        }
        if txn.last_stable_offset() >= upper {
            result.is_complete = true;
            break;
        }
    }
    result
}

proptest! {
    #[test]
    fn collect_matches_the_oracle(ops in proptest::collection::vec(op(), 1..60)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.txnindex");
        let mut index = TransactionIndex::open(RealFs, &path, 0).unwrap();
        let mut model: Vec<AbortedTxn> = Vec::new();
        // The precondition's last offset: Kafka's, forgotten on reopen and reset.
        let mut last: Option<i64> = None;
        for op in ops {
            match op {
                Op::Append { pid, span, gap, lso_back } => {
                    let next_last = model.last().map_or(0, AbortedTxn::last_offset) + gap;
                    let txn = AbortedTxn::new(pid, next_last - span, next_last, next_last - lso_back);
                    index.append(txn).unwrap();
                    model.push(txn);
                    last = Some(next_last);
                }
                Op::Truncate(offset) => {
                    index.truncate_to(offset).unwrap();
                    if let Some(cut) = model.iter().position(|t| t.last_offset() >= offset) {
                        model.truncate(cut);
                        last = model.last().map(AbortedTxn::last_offset);
                    }
                }
                Op::Reset => {
                    index.reset().unwrap();
                    model.clear();
                    last = None;
                }
                Op::Reopen => {
                    index.close();
                    index = TransactionIndex::open(RealFs, &path, 0).unwrap();
                    last = None;
                }
                Op::Collect(fetch, upper) => {
                    prop_assert_eq!(
                        index.collect_aborted_txns(fetch, upper).unwrap(),
                        oracle_collect(&model, fetch, upper)
                    );
                }
            }
            // The precondition holds exactly where the model says.
            if let Some(last) = last {
                let probe = AbortedTxn::new(0, 0, last, 0);
                prop_assert!(index.append(probe).is_err());
            }
            prop_assert_eq!(index.all_aborted_txns().unwrap(), model.clone());
            let len = std::fs::metadata(&path).map_or(0, |m| m.len());
            prop_assert_eq!(len, 34 * model.len() as u64);
        }
    }
}
