//! Resize and close versus lookup: a lookup never reads a mapping after it is unmapped (loom's
//! `UnsafeCell` tracking would report the overlap), it sees correct entries through whichever
//! mapping it pinned, and every mapping is unmapped once the writer and readers are done.
#![forbid(unsafe_code)]

use std::path::PathBuf;

use super::loom_memory::{LoomFile, LoomMemory};
use crate::entry::OffsetEntry;
use crate::loom::{Arc, Ordering};
use crate::raw::Core;

const BASE: i64 = 0;

fn entry(slot: usize) -> OffsetEntry {
    let slot = u32::try_from(slot).unwrap();
    OffsetEntry::new(slot + 1, slot * 100)
}

/// A core over a 4-entry file holding 2 entries.
fn two_entries(file: &Arc<LoomFile>) -> Core<OffsetEntry, LoomMemory> {
    let mut core = Core::new(LoomMemory::map(file, 8), 0, BASE, PathBuf::new());
    assert!(core.push(&entry(0)).unwrap());
    assert!(core.push(&entry(1)).unwrap());
    core
}

fn check_view(v: &crate::raw::View<'_, OffsetEntry, LoomMemory>) {
    for slot in 0..v.entries() {
        assert_eq!(v.entry(slot), Some(entry(slot)));
    }
}

#[test]
fn loom_trim_vs_lookup() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = two_entries(&file);
        let reader = core.reader();
        let lookup = loom::thread::spawn(move || {
            let n = reader.view(|v| {
                check_view(v);
                v.entries()
            });
            assert_eq!(n.ok(), Some(2));
        });
        // Trim: a mapping of exactly the 2 entries replaces the 4-slot one; wait for the unmap.
        assert!(core.remap(LoomMemory::map(&file, 4), true));
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        lookup.join().unwrap();
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_close_vs_lookup() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = two_entries(&file);
        let reader = core.reader();
        let lookup = loom::thread::spawn(move || {
            // Either the index was already closed, or the lookup completes on live memory.
            if let Ok(n) = reader.view(|v| {
                check_view(v);
                v.entries()
            }) {
                assert_eq!(n, 2);
            }
            reader
        });
        core.close(true);
        // Deterministic unmap: gone when close returns, whatever the reader is doing.
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
        let reader = lookup.join().unwrap();
        assert!(reader.view(|_| ()).is_err());
    });
}

#[test]
fn loom_two_resizes_vs_lookup_without_waiting() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = two_entries(&file);
        let reader = core.reader();
        let lookup = loom::thread::spawn(move || {
            let n = reader.view(|v| {
                check_view(v);
                v.entries()
            });
            assert_eq!(n.ok(), Some(2));
        });
        // Grow-style swaps do not wait; the second one reuses the first slot, which must be
        // reclaimed (by the writer or by the reader leaving it) before it is reinstalled.
        assert!(core.remap(LoomMemory::map(&file, 6), false));
        assert!(core.remap(LoomMemory::map(&file, 8), false));
        lookup.join().unwrap();
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_two_lookups_vs_swap_and_close() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = two_entries(&file);
        let lookups: Vec<_> = (0..2)
            .map(|_| {
                let reader = core.reader();
                loom::thread::spawn(move || {
                    if let Ok(n) = reader.view(|v| {
                        check_view(v);
                        v.entries()
                    }) {
                        assert_eq!(n, 2);
                    }
                })
            })
            .collect();
        // A swap that does not wait, then a close that does: whichever of the three threads
        // leaves a retired mapping last unmaps it, exactly once.
        assert!(core.remap(LoomMemory::map(&file, 4), false));
        core.close(true);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
        for l in lookups {
            l.join().unwrap();
        }
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}
