//! The pin-free lookup (`Reader::lookup_mapped`, a hazard word instead of a pin) versus a swap
//! that does not wait, a shrink that waits, a close, and an eviction with its remap. Loom cannot
//! model `membarrier`, so both sides of the handshake run a `SeqCst` fence here (`hazard.rs`).
//! A lookup reading a mapping the writer dropped (its slot's `UnsafeCell` written while the
//! lookup reads it, with no happens-before between them) is reported by loom; each model also
//! checks the entry found and that every mapping is unmapped at the end.
#![forbid(unsafe_code)]

use std::path::PathBuf;

use super::loom_memory::{LoomFile, LoomMemory};
use crate::entry::{OffsetEntry, OffsetPosition};
use crate::loom::{Arc, Ordering};
use crate::raw::{Core, Reader, Remapper};

fn entry(slot: usize) -> OffsetEntry {
    let slot = u32::try_from(slot).unwrap();
    OffsetEntry::new(slot + 1, slot * 100)
}

/// A core over a 4-entry (8-word) file holding 2 entries; with `evictable`, one a budget may
/// evict, which maps the file again when a lookup finds it evicted.
fn two_entries(file: &Arc<LoomFile>, evictable: bool) -> Core<OffsetEntry, LoomMemory> {
    let remap: Option<Remapper<LoomMemory>> = evictable.then(|| {
        let remap_file = Arc::clone(file);
        let remap: Remapper<LoomMemory> =
            Box::new(move |_path, words| Ok(LoomMemory::map(&remap_file, words)));
        remap
    });
    let mut core = Core::with_budget(LoomMemory::map(file, 8), 0, 0, PathBuf::new(), remap, None);
    assert!(core.push(&entry(0)).unwrap());
    assert!(core.push(&entry(1)).unwrap());
    core
}

/// The lookup of `IndexReader::lookup`: pin-free first, then (closed, evicted, a raced swap)
/// through a pinned view. `None` once closed.
fn lookup(reader: &Reader<OffsetEntry, LoomMemory>, target: i64) -> Option<OffsetPosition> {
    if let Some(found) = reader.lookup_mapped(target) {
        return Some(found);
    }
    reader.view(|v| v.floor(target)).ok().map(Option::unwrap)
}

const SECOND: OffsetPosition = OffsetPosition {
    offset: 2,
    position: 100,
};

#[test]
fn loom_hazard_lookup_vs_swaps_without_waiting() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = two_entries(&file, false);
        let reader = core.reader();
        let t = loom::thread::spawn(move || assert_eq!(lookup(&reader, 2), Some(SECOND)));
        // Two growth-style swaps: the second reinstalls into the first one's slot, which must
        // not be reclaimed while the lookup is inside it.
        assert!(core.remap(LoomMemory::map(&file, 8), false));
        assert!(core.remap(LoomMemory::map(&file, 8), false));
        t.join().unwrap();
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_hazard_lookup_vs_shrink_that_waits() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = two_entries(&file, false);
        let reader = core.reader();
        let t = loom::thread::spawn(move || assert_eq!(lookup(&reader, 2), Some(SECOND)));
        // Trim to the 2 entries: once this returns the old mapping is gone, so the file may be
        // cut (no lookup can still be inside the pages past the new end).
        assert!(core.remap(LoomMemory::map(&file, 4), true));
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        t.join().unwrap();
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}

#[test]
fn loom_hazard_lookup_vs_close() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let mut core = two_entries(&file, false);
        let reader = core.reader();
        let t = loom::thread::spawn(move || {
            // Either closed first, or the lookup completes on live memory.
            if let Some(found) = lookup(&reader, 2) {
                assert_eq!(found, SECOND);
            }
            reader
        });
        core.close(true);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
        let reader = t.join().unwrap();
        assert_eq!(lookup(&reader, 2), None);
    });
}

#[test]
fn loom_hazard_lookup_vs_evict_and_remap() {
    loom::model(|| {
        let file = LoomFile::new(8);
        let core = two_entries(&file, true);
        let reader = core.reader();
        let t = loom::thread::spawn(move || assert_eq!(lookup(&reader, 2), Some(SECOND)));
        // The budget evicts from another thread; a later lookup maps the index again, into the
        // other slot, and the evicted mapping goes only once the first lookup left it.
        assert!(core.evict());
        assert_eq!(lookup(&core.reader(), 2), Some(SECOND));
        t.join().unwrap();
        assert_eq!(file.mapped.load(Ordering::SeqCst), 1);
        drop(core);
        assert_eq!(file.mapped.load(Ordering::SeqCst), 0);
    });
}
