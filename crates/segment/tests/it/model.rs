//! Model test: random appends (random sizes, codecs, out-of-order timestamps, offset gaps),
//! reads, timestamp lookups, truncations, recoveries and reopens, checked against an in-memory
//! oracle of batches.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests"
)]

use crate::common;

use proptest::prelude::*;
use seglog_fs::RealFs;
use seglog_record_format::{Compression, batches};
use seglog_segment::{LogSegment, SegmentConfig};

const BASE: i64 = 1000;
const MAX_INDEX_SIZE: u32 = 4096;

#[derive(Debug, Clone)]
enum Op {
    Append {
        batches: Vec<(u8, Vec<i64>, u16)>,
        gap: u8,
    },
    Read(u16),
    FindByTimestamp(i64),
    Truncate(u16),
    Recover,
    Reopen,
}

fn op() -> impl Strategy<Value = Op> {
    let batch = (
        0_u8..5,
        prop::collection::vec(0_i64..10_000, 1..8),
        1_u16..400,
    );
    prop_oneof![
        4 => (prop::collection::vec(batch, 1..4), 0_u8..3).prop_map(|(batches, gap)| Op::Append { batches, gap }),
        3 => (0_u16..300).prop_map(Op::Read),
        2 => (-5_i64..10_100).prop_map(Op::FindByTimestamp),
        1 => (0_u16..300).prop_map(Op::Truncate),
        1 => Just(Op::Recover),
        1 => Just(Op::Reopen),
    ]
}

/// One batch of the oracle: first record offset, last offset, and (offset, timestamp) pairs.
type ModelBatch = (i64, i64, Vec<(i64, i64)>);

/// The oracle: every batch in order.
#[derive(Debug, Default)]
struct Model {
    batches: Vec<ModelBatch>,
}

impl Model {
    fn next_offset(&self) -> i64 {
        self.batches.last().map_or(BASE, |b| b.1 + 1)
    }
    fn records(&self) -> impl Iterator<Item = (i64, i64)> + '_ {
        self.batches.iter().flat_map(|b| b.2.iter().copied())
    }
}

fn codec(n: u8) -> Compression {
    [
        Compression::None,
        Compression::Gzip,
        Compression::Snappy,
        Compression::Lz4,
        Compression::Zstd,
    ][n as usize % 5]
}

fn open(dir: &std::path::Path, exists: bool, interval: u32) -> LogSegment {
    let config = SegmentConfig::default()
        .with_index_interval_bytes(interval)
        .with_max_index_size(MAX_INDEX_SIZE);
    LogSegment::open(RealFs, dir, BASE, config, exists, "", 0).unwrap()
}

fn run(ops: &[Op], interval: u32) {
    let dir = tempfile::tempdir().unwrap();
    let mut seg = open(dir.path(), false, interval);
    let mut model = Model::default();
    for op in ops {
        match op {
            Op::Append {
                batches: specs,
                gap,
            } => {
                let mut chunk = Vec::new();
                let mut offset = model.next_offset() + i64::from(*gap);
                let mut new_batches = Vec::new();
                for (c, timestamps, value_len) in specs {
                    chunk.extend(common::batch_with(
                        offset,
                        timestamps,
                        usize::from(*value_len),
                        codec(*c),
                    ));
                    let records: Vec<(i64, i64)> = timestamps
                        .iter()
                        .enumerate()
                        .map(|(i, ts)| (offset + i as i64, *ts))
                        .collect();
                    let last = offset + timestamps.len() as i64 - 1;
                    new_batches.push((offset, last, records));
                    offset = last + 1;
                }
                // Keep the index within its preallocated size: the model does not roll.
                let (entries, _) = seg.index_entries().unwrap();
                if entries + specs.len() + 1 >= (MAX_INDEX_SIZE / 12) as usize {
                    continue;
                }
                seg.append(offset - 1, &chunk).unwrap();
                model.batches.extend(new_batches);
            }
            Op::Read(rel) => {
                let target = BASE + i64::from(*rel);
                let expected = model.batches.iter().find(|b| b.1 >= target);
                let got = seg.read_simple(target, 1 << 20).unwrap();
                match (expected, got) {
                    (None, None) => {}
                    (Some(b), Some(fetch)) => {
                        let mut buf = Vec::new();
                        seg.read_region(fetch.region, &mut buf).unwrap();
                        let first = batches(&buf).next().unwrap().unwrap().decode().unwrap();
                        let first_record = first.to_records().unwrap()[0].offset;
                        assert_eq!(first_record, b.0, "read {target}");
                        assert_eq!(fetch.offset_metadata.message_offset, b.0);
                    }
                    (e, g) => panic!("read {target}: expected {e:?}, got {g:?}"),
                }
            }
            Op::FindByTimestamp(ts) => {
                let expected = model.records().find(|r| r.1 >= *ts).map(|r| r.0);
                let got = seg
                    .find_offset_by_timestamp(*ts, BASE)
                    .unwrap()
                    .map(|t| t.offset);
                assert_eq!(got, expected, "find {ts}");
            }
            Op::Truncate(rel) => {
                let target = BASE + i64::from(*rel);
                seg.truncate_to(target, 0).unwrap();
                model.batches.retain(|b| b.1 < target);
            }
            Op::Recover => {
                let report = seg.recover().unwrap();
                assert_eq!(report.bytes_truncated, 0);
                // Recovery trims the indexes; the loader resizes the active segment's.
                seg.resize_indexes(MAX_INDEX_SIZE).unwrap();
            }
            Op::Reopen => {
                seg.close().unwrap();
                drop(seg);
                seg = open(dir.path(), true, interval);
                // As Kafka's loader does for the active segment.
                seg.resize_indexes(MAX_INDEX_SIZE).unwrap();
            }
        }
        assert_eq!(seg.read_next_offset().unwrap(), model.next_offset());
        let max_ts = model.records().map(|r| r.1).max().unwrap_or(-1);
        assert_eq!(
            seg.max_timestamp_so_far().unwrap().max(-1),
            max_ts,
            "after {op:?}"
        );
    }
}

proptest! {
    // Past failures replay from `model.proptest-regressions` beside this file (the default looks
    // for them under `tests/proptest-regressions/`, as `tests/it` holds a `main.rs`).
    #![proptest_config(ProptestConfig {
        cases: 128,
        failure_persistence: Some(Box::new(
            proptest::test_runner::FileFailurePersistence::WithSource("proptest-regressions"),
        )),
        ..ProptestConfig::default()
    })]

    #[test]
    fn segment_matches_the_model(ops in prop::collection::vec(op(), 1..40), interval in prop_oneof![Just(0_u32), Just(200), Just(4096)]) {
        run(&ops, interval);
    }
}
