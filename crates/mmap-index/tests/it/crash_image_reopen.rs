//! A crash before close leaves the preallocated file untrimmed. Reopening counts every slot as an
//! entry (Kafka's rule, no scan); Kafka's sanity check accepts the offset index and rejects the
//! time index; `verify` reports the zero tail of both, and `truncate_to` plus `resize` repair it.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use seglog_mmap_index::{OffsetIndex, OffsetPosition, Problem, TimeIndex};

#[test]
fn untrimmed_indexes_reopen_with_zero_tails() {
    let dir = tempfile::tempdir().unwrap();
    let (ipath, tpath) = (dir.path().join("c.index"), dir.path().join("c.timeindex"));
    {
        let mut idx = OffsetIndex::options(&ipath, 500)
            .max_index_size(20 * 8)
            .open()
            .unwrap();
        let mut tidx = TimeIndex::options(&tpath, 500)
            .max_index_size(20 * 12)
            .open()
            .unwrap();
        for i in 1..=3 {
            idx.append(500 + i * 10, u32::try_from(i * 100).unwrap())
                .unwrap();
            tidx.maybe_append(1_000 + i, 500 + i * 10, false).unwrap();
        }
        idx.flush().unwrap();
        tidx.flush().unwrap();
        // Dropped without close: the process "crashed" before trimming.
    }
    let mut idx = OffsetIndex::options(&ipath, 500)
        .max_index_size(20 * 8)
        .open()
        .unwrap();
    let tidx = TimeIndex::options(&tpath, 500)
        .max_index_size(20 * 12)
        .open()
        .unwrap();
    assert_eq!((idx.entries(), tidx.entries()), (20, 20));
    assert_eq!(idx.last_offset(), 500, "the zero tail's offset is the base");
    idx.sanity_check().unwrap();
    assert!(tidx.sanity_check().is_err());
    assert_eq!(
        idx.verify().unwrap().problems,
        vec![Problem::ZeroTail {
            first_slot: 3,
            slots: 17
        }]
    );
    let treport = tidx.verify().unwrap();
    assert!(treport.problems.contains(&Problem::ZeroTail {
        first_slot: 3,
        slots: 17
    }));
    assert!(treport.problems.contains(&Problem::LastTimestampZero));
    // Lookups past the real entries land in the tail: this is why the segment must recover.
    assert_eq!(
        idx.lookup(600).unwrap(),
        OffsetPosition {
            offset: 500,
            position: 0
        }
    );
    // Repair: drop the tail, then the index works again.
    idx.truncate().unwrap();
    for i in 1..=3 {
        idx.append(500 + i * 10, u32::try_from(i * 100).unwrap())
            .unwrap();
    }
    assert!(idx.verify().unwrap().is_clean());
    assert_eq!(
        idx.lookup(600).unwrap(),
        OffsetPosition {
            offset: 530,
            position: 300
        }
    );
}
