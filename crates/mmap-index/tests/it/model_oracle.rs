//! Property test against a sorted-`Vec` oracle: random appends (valid and invalid), lookups,
//! truncations, resizes and reopens of both index types, checked operation by operation.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use proptest::prelude::*;
use seglog_mmap_index::{OffsetIndex, OffsetPosition, Problem, TimeIndex, TimestampOffset};

const BASE: i64 = 1_000;
const SLOTS: u32 = 64;

#[derive(Clone, Debug)]
enum Op {
    Append { step: i64, position: u32 },
    Lookup(i64),
    TruncateTo(i64),
    Truncate,
    Trim,
    Reset,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (-2_i64..20, any::<u32>()).prop_map(|(step, position)| Op::Append { step, position }),
        4 => (BASE - 5..BASE + 600).prop_map(Op::Lookup),
        1 => (BASE - 5..BASE + 600).prop_map(Op::TruncateTo),
        1 => Just(Op::Truncate),
        1 => Just(Op::Trim),
        1 => Just(Op::Reset),
        1 => Just(Op::Reopen),
    ]
}

fn floor<T: Copy>(oracle: &[(i64, T)], target: i64) -> Option<(i64, T)> {
    oracle.iter().rev().find(|(k, _)| *k <= target).copied()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn offset_index_matches_oracle(ops in prop::collection::vec(op(), 1..120)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.index");
        let mut idx = OffsetIndex::options(&path, BASE).max_index_size(SLOTS * 8).open().unwrap();
        let mut oracle: Vec<(i64, u32)> = Vec::new();
        let mut capacity = SLOTS as usize;
        for op in ops {
            match op {
                Op::Append { step, position } => {
                    let offset = oracle.last().map_or(BASE, |&(o, _)| o) + step;
                    let ok = oracle.len() < capacity
                        && (oracle.is_empty() || step > 0)
                        && offset >= BASE;
                    prop_assert_eq!(idx.append(offset, position).is_ok(), ok, "append {} at {}", offset, oracle.len());
                    if ok { oracle.push((offset, position)); }
                }
                Op::Lookup(t) => {
                    let expected = floor(&oracle, t).map_or(OffsetPosition { offset: BASE, position: 0 }, |(offset, position)| OffsetPosition { offset, position });
                    prop_assert_eq!(idx.lookup(t).unwrap(), expected);
                    prop_assert_eq!(idx.reader().lookup(t).unwrap(), expected);
                }
                Op::TruncateTo(t) => {
                    idx.truncate_to(t).unwrap();
                    oracle.retain(|&(o, _)| o < t);
                }
                Op::Truncate => { idx.truncate().unwrap(); oracle.clear(); }
                Op::Trim => { idx.trim_to_valid_size().unwrap(); capacity = oracle.len(); }
                Op::Reset => { idx.reset().unwrap(); oracle.clear(); capacity = SLOTS as usize; }
                Op::Reopen => {
                    idx.close().unwrap();
                    idx = OffsetIndex::options(&path, BASE).max_index_size(SLOTS * 8).open().unwrap();
                    capacity = oracle.len();
                }
            }
            prop_assert_eq!(idx.entries(), oracle.len());
            prop_assert_eq!(idx.last_offset(), oracle.last().map_or(BASE, |&(o, _)| o));
            prop_assert_eq!(idx.is_full(), oracle.len() >= capacity);
            idx.sanity_check().unwrap();
        }
        for (i, &(offset, position)) in oracle.iter().enumerate() {
            prop_assert_eq!(idx.entry(i).unwrap(), OffsetPosition { offset, position });
        }
    }

    #[test]
    fn time_index_matches_oracle(ops in prop::collection::vec(op(), 1..120)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.timeindex");
        let mut idx = TimeIndex::options(&path, BASE).max_index_size(SLOTS * 12).open().unwrap();
        // (timestamp, offset), timestamps strictly increasing, offsets non-decreasing.
        let mut oracle: Vec<(i64, i64)> = Vec::new();
        let mut capacity = SLOTS as usize;
        for op in ops {
            match op {
                Op::Append { step, position } => {
                    let (last_ts, last_off) = oracle.last().copied().unwrap_or((-1, BASE));
                    let ts = last_ts + step;
                    // Strictly increasing offsets keep the oracle exact for truncate_to (with
                    // equal offsets Kafka's result depends on its probe order).
                    let offset = last_off + 1 + i64::from(position % 3);
                    let skip = position % 5 == 0;
                    let result = idx.maybe_append(ts, offset, skip);
                    let full_refused = !skip && oracle.len() + 1 >= capacity;
                    let appends = !full_refused && ts > last_ts && oracle.len() < capacity;
                    prop_assert_eq!(result.as_ref().is_ok_and(|&a| a), appends, "{:?}", result);
                    if full_refused || (!oracle.is_empty() && ts < last_ts) { prop_assert!(result.is_err()); }
                    if appends { oracle.push((ts, offset)); }
                }
                Op::Lookup(t) => {
                    let t = t - BASE;
                    let expected = floor(&oracle, t).map_or(TimestampOffset { timestamp: -1, offset: BASE }, |(timestamp, offset)| TimestampOffset { timestamp, offset });
                    prop_assert_eq!(idx.lookup(t).unwrap(), expected);
                    prop_assert_eq!(idx.reader().lookup(t).unwrap(), expected);
                }
                Op::TruncateTo(t) => {
                    idx.truncate_to(t).unwrap();
                    oracle.retain(|&(_, o)| o < t);
                }
                Op::Truncate => { idx.truncate().unwrap(); oracle.clear(); }
                Op::Trim => { idx.trim_to_valid_size().unwrap(); capacity = oracle.len(); }
                Op::Reset => { idx.reset().unwrap(); oracle.clear(); capacity = SLOTS as usize; }
                Op::Reopen => {
                    idx.close().unwrap();
                    idx = TimeIndex::options(&path, BASE).max_index_size(SLOTS * 12).open().unwrap();
                    capacity = oracle.len();
                }
            }
            prop_assert_eq!(idx.entries(), oracle.len());
            let last = oracle.last().map_or(TimestampOffset { timestamp: -1, offset: BASE }, |&(timestamp, offset)| TimestampOffset { timestamp, offset });
            prop_assert_eq!(idx.last_entry(), last);
            idx.sanity_check().unwrap();
            let report = idx.verify().unwrap();
            let ordered = report.problems.iter().all(|p| {
                !matches!(p, Problem::OffsetOutOfOrder { .. } | Problem::TimestampOutOfOrder { .. })
            });
            prop_assert!(ordered, "{:?}", report);
        }
    }
}
