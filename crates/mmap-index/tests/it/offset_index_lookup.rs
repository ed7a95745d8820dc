//! OffsetIndexTest `randomLookupTest` and `lookupExtremeCases`: exact hits, floors for absent
//! offsets, `(base, 0)` below the first entry and on an empty index.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;

use proptest::prelude::*;
use seglog_mmap_index::{OffsetIndex, OffsetPosition};

const BASE: i64 = 45;

fn index(dir: &tempfile::TempDir) -> OffsetIndex {
    OffsetIndex::options(dir.path().join("test.index"), BASE)
        .max_index_size(30 * 8)
        .open()
        .unwrap()
}

#[test]
fn empty_index_lookup_gives_base_offset_and_position_zero() {
    let dir = tempfile::tempdir().unwrap();
    let idx = index(&dir);
    assert_eq!(
        idx.lookup(92).unwrap(),
        OffsetPosition {
            offset: BASE,
            position: 0
        }
    );
}

proptest! {
    #[test]
    fn random_lookup(gaps in prop::collection::vec(1_i64..=15, 30), pos_gaps in prop::collection::vec(1_u32..=15, 30), probes in prop::collection::vec(BASE..BASE + 500, 30)) {
        let dir = tempfile::tempdir().unwrap();
        let mut idx = index(&dir);
        let mut map = BTreeMap::new();
        let (mut offset, mut position) = (BASE + 1, 0_u32);
        for (g, p) in gaps.iter().zip(&pos_gaps) {
            offset += g;
            position += p;
            idx.append(offset, position).unwrap();
            map.insert(offset, position);
        }
        prop_assert!(idx.is_full());
        for (&o, &p) in &map {
            prop_assert_eq!(idx.lookup(o).unwrap(), OffsetPosition { offset: o, position: p });
        }
        for t in probes {
            let expected = map
                .range(..=t)
                .next_back()
                .map_or(OffsetPosition { offset: BASE, position: 0 }, |(&o, &p)| OffsetPosition { offset: o, position: p });
            prop_assert_eq!(idx.lookup(t).unwrap(), expected);
        }
    }
}

#[test]
fn lookup_extreme_cases() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = index(&dir);
    assert_eq!(
        idx.lookup(BASE).unwrap(),
        OffsetPosition {
            offset: BASE,
            position: 0
        }
    );
    let max = idx.max_entries();
    for i in 0..max {
        idx.append(BASE + n(i) + 1, u32::try_from(i).unwrap())
            .unwrap();
    }
    assert_eq!(
        idx.lookup(BASE).unwrap(),
        OffsetPosition {
            offset: BASE,
            position: 0
        }
    );
    assert_eq!(
        idx.lookup(BASE + n(max)).unwrap(),
        OffsetPosition {
            offset: BASE + n(max),
            position: u32::try_from(max - 1).unwrap()
        }
    );
}

#[test]
fn entry_returns_each_slot() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = index(&dir);
    for i in 0..idx.max_entries() {
        idx.append(BASE + n(i), u32::try_from(i).unwrap()).unwrap();
    }
    for i in 0..idx.max_entries() {
        let expected = OffsetPosition {
            offset: BASE + n(i),
            position: u32::try_from(i).unwrap(),
        };
        assert_eq!(idx.entry(i).unwrap(), expected);
        assert_eq!(idx.reader().entry(i).unwrap(), expected);
    }
}

#[test]
fn entry_on_empty_index_is_out_of_range() {
    let dir = tempfile::tempdir().unwrap();
    let idx = index(&dir);
    let err = idx.entry(0).unwrap_err();
    assert!(
        matches!(
            err,
            seglog_mmap_index::Error::EntryOutOfRange {
                slot: 0,
                entries: 0,
                ..
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("test.index"), "{err}");
    assert!(matches!(
        idx.reader().entry(0),
        Err(seglog_mmap_index::Error::EntryOutOfRange { .. })
    ));
}

#[test]
fn lookups_beyond_the_warm_section_agree_with_a_floor_search() {
    // 3000 entries: more than the 1024-entry warm section, so both search paths run.
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("big.index"), 0)
        .max_index_size(3000 * 8)
        .open()
        .unwrap();
    for i in 0..3000_i64 {
        idx.append(i * 3 + 1, u32::try_from(i * 7).unwrap())
            .unwrap();
    }
    let reader = idx.reader();
    for t in -1..9010_i64 {
        let expected = if t < 1 {
            OffsetPosition {
                offset: 0,
                position: 0,
            }
        } else {
            let i = ((t - 1) / 3).min(2999);
            OffsetPosition {
                offset: i * 3 + 1,
                position: u32::try_from(i * 7).unwrap(),
            }
        };
        assert_eq!(reader.lookup(t).unwrap(), expected, "target {t}");
    }
}

fn n(x: usize) -> i64 {
    i64::try_from(x).unwrap()
}
