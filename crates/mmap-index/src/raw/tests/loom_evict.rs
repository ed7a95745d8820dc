//! Eviction by a mapping budget versus lookups, appends and a resize: an evicted index is
//! unmapped once the lookups inside it return (never under one: loom's `UnsafeCell` tracking
//! would report it), a lookup that finds it evicted maps it again and sees the same entries, two
//! lookups that both find it evicted map it once between them, an index evicted twice while a
//! lookup is inside is mapped again without waiting for it, and an append or a resize after an
//! eviction maps it again without losing an entry.
#![forbid(unsafe_code)]

use std::path::PathBuf;

use super::loom_memory::{LoomFile, LoomMemory};
use crate::entry::OffsetEntry;
use crate::loom::{Arc, Ordering};
use crate::raw::{Core, Remapper};

fn entry(slot: usize) -> OffsetEntry {
    let slot = u32::try_from(slot).unwrap();
    OffsetEntry::new(slot + 1, slot * 100)
}

/// A core over a 4-entry (8-word) file holding 2 entries, which maps the file again (with the
/// evicted mapping's word count) when it finds itself evicted.
fn evictable(file: &Arc<LoomFile>) -> Core<OffsetEntry, LoomMemory> {
    let remap_file = Arc::clone(file);
    let remap: Remapper<LoomMemory> =
        Box::new(move |_path, words| Ok(LoomMemory::map(&remap_file, words)));
    let mut core = Core::with_budget(
        LoomMemory::map(file, 8),
        0,
        0,
        PathBuf::new(),
        Some(remap),
        None,
    );
    assert!(core.push(&entry(0)).unwrap());
    assert!(core.push(&entry(1)).unwrap());
    core
}

fn lookup(reader: &crate::raw::Reader<OffsetEntry, LoomMemory>) -> usize {
    reader
        .view(|v| {
            for slot in 0..v.entries() {
                assert_eq!(v.entry(slot), Some(entry(slot)));
            }
            v.entries()
        })
        .unwrap()
}

#[test]
fn loom_evict_vs_lookup() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let core = evictable(&file);
        let reader = core.reader();
        let t = loom::thread::spawn(move || assert_eq!(lookup(&reader), 2));
        // The budget evicts from whatever thread admits another mapping.
        assert!(core.evict());
        t.join().unwrap();
        // Either the lookup came first (nothing mapped now) or it mapped the index again.
        assert!(file.mapped.load(Ordering::SeqCst) <= 1);
        assert_eq!(lookup(&core.reader()), 2);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_two_lookups_remap_once() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let core = evictable(&file);
        assert!(core.evict());
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
        let lookups: Vec<_> = (0..2)
            .map(|_| {
                let reader = core.reader();
                loom::thread::spawn(move || assert_eq!(lookup(&reader), 2))
            })
            .collect();
        for l in lookups {
            l.join().unwrap();
        }
        // Both found it evicted or one remapped first: one mapping either way.
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_evict_vs_append_and_resize() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = evictable(&file);
        let evictor = {
            let reader = core.reader();
            // The budget holds the cell, not the core; a reader's handle reaches the same cell.
            loom::thread::spawn(move || {
                reader.evict_for_test();
                let n = lookup(&reader);
                assert!(n == 2 || n == 3, "saw {n} entries");
            })
        };
        // An append maps the index again if it was evicted, and the entry is kept.
        assert!(core.push(&entry(2)).unwrap());
        // A shrinking resize (trim to 3 entries) that waits: installs into an evicted cell too.
        assert!(core.remap(LoomMemory::map(&file, 6), true));
        evictor.join().unwrap();
        assert_eq!(core.view(|v| v.entries()).unwrap(), 3);
        assert_eq!(lookup(&core.reader()), 3);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

/// Evicted, remapped and evicted again while a lookup may still be inside the first mapping:
/// the second remap installs into whichever slot its readers have left (waiting only if neither
/// has), and never under the lookup.
#[test]
fn loom_evicted_twice_while_a_lookup_is_inside() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let core = evictable(&file);
        let reader = core.reader();
        let t = loom::thread::spawn(move || assert_eq!(lookup(&reader), 2));
        // The lookup thread may hold the writer lock (remapping): then an eviction is skipped.
        let _ = core.evict();
        assert_eq!(lookup(&core.reader()), 2);
        let _ = core.evict();
        assert_eq!(lookup(&core.reader()), 2);
        t.join().unwrap();
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}
