//! `verify` finds exactly the zero tail of an untrimmed crash image, whatever the number of
//! written entries and slots, for both index types; and finds nothing on a trimmed index.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use proptest::prelude::*;
use seglog_mmap_index::{OffsetEntry, OffsetIndex, Problem, TimeEntry, TimeIndex};
use zerocopy::IntoBytes;

proptest! {
    #[test]
    fn offset_index_zero_tail(written in 0_usize..40, extra in 0_usize..40, base in 0_i64..1_000_000) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.index");
        let mut bytes: Vec<u8> = (0..written)
            .flat_map(|i| OffsetEntry::new(u32::try_from(i * 3 + 1).unwrap(), 7).as_bytes().to_vec())
            .collect();
        bytes.resize((written + extra) * 8, 0);
        std::fs::write(&path, bytes).unwrap();
        let idx = OffsetIndex::options(&path, base).max_index_size(1024).open().unwrap();
        let report = idx.verify().unwrap();
        // A zero entry in slot 0 is indistinguishable from a real entry at the base offset.
        let first = written.max(1);
        let expected: Vec<Problem> = if written + extra > first {
            vec![Problem::ZeroTail { first_slot: first, slots: written + extra - first }]
        } else {
            vec![]
        };
        prop_assert_eq!(report.problems, expected);
        idx.sanity_check().unwrap();
    }

    #[test]
    fn time_index_zero_tail(written in 1_usize..40, extra in 0_usize..40) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("z.timeindex");
        let mut bytes: Vec<u8> = (0..written)
            .flat_map(|i| TimeEntry::new(i64::try_from(i).unwrap() * 10 + 100, u32::try_from(i).unwrap() + 1).as_bytes().to_vec())
            .collect();
        bytes.resize((written + extra) * 12, 0);
        std::fs::write(&path, bytes).unwrap();
        let idx = TimeIndex::options(&path, 50).max_index_size(1200).open().unwrap();
        let report = idx.verify().unwrap();
        prop_assert_eq!(report.has_zero_tail(), extra > 0);
        prop_assert_eq!(report.problems.contains(&Problem::LastTimestampZero), extra > 0);
        prop_assert_eq!(idx.sanity_check().is_err(), extra > 0, "Kafka's rule: last ts 0 < first ts");
        if extra > 0 {
            let tail = Problem::ZeroTail { first_slot: written, slots: extra };
            prop_assert!(report.problems.contains(&tail), "{:?}", report);
        } else {
            prop_assert!(report.is_clean(), "{:?}", report);
        }
    }
}
