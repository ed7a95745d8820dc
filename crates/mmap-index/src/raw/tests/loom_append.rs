//! Append versus lookup: a reader sees the old count or the new count, and every entry below
//! the count it sees is fully written (release/acquire publication of the entry count).
#![forbid(unsafe_code)]

use std::path::PathBuf;

use super::loom_memory::{LoomFile, LoomMemory};
use crate::entry::{OffsetEntry, OffsetPosition, TimeEntry, TimestampOffset};
use crate::loom::Ordering;
use crate::raw::Core;

const BASE: i64 = 100;

fn offset_entry(slot: usize) -> OffsetEntry {
    let slot = u32::try_from(slot).unwrap();
    OffsetEntry::new(slot * 10 + 7, slot * 1000 + 1)
}

#[test]
fn loom_offset_append_vs_lookup() {
    loom::model(|| {
        let file = LoomFile::new(6);
        let mut core =
            Core::<OffsetEntry, _>::new(LoomMemory::map(&file, 6), 0, BASE, PathBuf::new());
        let reader = core.reader();
        let lookup = loom::thread::spawn(move || {
            reader
                .view(|v| {
                    let n = v.entries();
                    for slot in 0..n {
                        assert_eq!(
                            v.entry(slot),
                            Some(offset_entry(slot)),
                            "slot {slot} of {n}"
                        );
                    }
                    // The lookup agrees with the count it saw.
                    let found = v.floor(BASE + 1_000);
                    let expected = n.checked_sub(1).map(|last| OffsetPosition {
                        offset: BASE + i64::from(offset_entry(last).relative_offset.get()),
                        position: offset_entry(last).position.get(),
                    });
                    assert_eq!(found, expected);
                    n
                })
                .unwrap()
        });
        assert!(core.push(&offset_entry(0)).unwrap());
        assert!(core.push(&offset_entry(1)).unwrap());
        let seen = lookup.join().unwrap();
        assert!(seen <= 2);
    });
}

#[test]
fn loom_time_append_vs_lookup() {
    loom::model(|| {
        let file = LoomFile::new(6);
        let mut core =
            Core::<TimeEntry, _>::new(LoomMemory::map(&file, 6), 0, BASE, PathBuf::new());
        let reader = core.reader();
        let lookup = loom::thread::spawn(move || {
            reader
                .view(|v| {
                    let n = v.entries();
                    let found = v.floor(50);
                    match n {
                        0 => assert_eq!(found, None),
                        _ => assert_eq!(
                            found,
                            Some(TimestampOffset {
                                timestamp: 40,
                                offset: BASE + 4
                            })
                        ),
                    }
                })
                .unwrap();
        });
        assert!(core.push(&TimeEntry::new(40, 4)).unwrap());
        lookup.join().unwrap();
    });
}

/// The owner's unpinned reads of an owned cell (no budget) against a reader's pin, a
/// non-waiting remap and a waiting close: the owner always reads the mapping it installed last,
/// the reader reads whichever it pinned, and nothing is unmapped under either.
#[test]
fn loom_owner_reads_vs_reader_and_remap() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core =
            Core::<OffsetEntry, _>::new(LoomMemory::map(&file, 8), 0, BASE, PathBuf::new());
        assert!(core.push(&offset_entry(0)).unwrap());
        let reader = core.reader();
        let lookup = loom::thread::spawn(move || {
            // Either closed already, or a consistent view of one mapping.
            let _ = reader.view(|v| {
                for slot in 0..v.entries() {
                    assert_eq!(v.entry(slot), Some(offset_entry(slot)));
                }
            });
        });
        assert_eq!(core.view(|v| v.entry(0)).unwrap(), Some(offset_entry(0)));
        // A growth-style swap that does not wait for the reader.
        assert!(core.remap(LoomMemory::map(&file, 6), false));
        assert!(core.push(&offset_entry(1)).unwrap());
        assert_eq!(
            core.view(|v| (v.entries(), v.entry(1))).unwrap(),
            (2, Some(offset_entry(1)))
        );
        core.close(true);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
        lookup.join().unwrap();
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_owner_cached_lookups_vs_reader_remaps_and_close() {
    // The writer's lookups read the words its `map::Owner` cached (checked against the active
    // mapping on every call under loom) across an append, a growth that does not wait, a shrink
    // that waits and a close, while a reader pins.
    let found = |slot: usize| OffsetPosition {
        offset: BASE + i64::try_from(slot).unwrap() * 10 + 7,
        position: u32::try_from(slot).unwrap() * 1000 + 1,
    };
    loom::model(move || {
        let file = LoomFile::new(8);
        let mut core =
            Core::<OffsetEntry, _>::new(LoomMemory::map(&file, 4), 0, BASE, PathBuf::new());
        assert!(core.push(&offset_entry(0)).unwrap());
        let reader = core.reader();
        let lookup = loom::thread::spawn(move || {
            // Closed, or an entry that was appended (the count it loaded, clamped).
            if let Some(got) = reader.lookup_mapped(BASE + 100) {
                assert!(got == found(0) || got == found(1), "{got:?}");
            }
        });
        assert_eq!(core.lookup_owned(BASE + 100), Some(found(0)));
        assert!(core.remap(LoomMemory::map(&file, 8), false));
        assert!(core.push(&offset_entry(1)).unwrap());
        assert_eq!(core.lookup_owned(BASE + 100), Some(found(1)));
        assert_eq!(core.lookup_owned(BASE + 9), Some(found(0)));
        core.set_entries(1);
        assert!(core.remap(LoomMemory::map(&file, 2), true));
        assert_eq!(core.lookup_owned(BASE + 100), Some(found(0)));
        core.close(true);
        assert_eq!(core.lookup_owned(BASE + 100), None);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
        lookup.join().unwrap();
    });
}
