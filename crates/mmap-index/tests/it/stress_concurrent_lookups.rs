//! Multi-threaded stress: one appender and several lock-free readers for about two seconds, with
//! truncations, trims and regrowths (remaps) mixed in; every lookup result is checked against
//! the oracle of what the appender has written.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use seglog_mmap_index::{OffsetIndex, OffsetPosition, live_mappings};

const BASE: i64 = 7_000;
const SLOTS: u32 = 4096;

/// Entry `k` (the k-th append since the last reset) is offset `BASE + 3k + 1`, position `k * 5`,
/// so any entry a reader sees can be checked on its own, whatever the reader's timing.
fn entry(k: i64) -> OffsetPosition {
    OffsetPosition {
        offset: BASE + 3 * k + 1,
        position: u32::try_from(k * 5).unwrap(),
    }
}

/// Published by the appender: the entry count after each append, and a generation that is odd
/// while a truncation, trim or reset is in progress and changes with each one.
struct Progress {
    count: AtomicI64,
    generation: AtomicU64,
}

fn check(found: OffsetPosition, target: i64, exact: Option<(i64, i64)>) {
    let base = OffsetPosition {
        offset: BASE,
        position: 0,
    };
    let k = if found == base && (target < entry(0).offset || exact.is_none_or(|(lo, _)| lo <= 1)) {
        // Below the first entry (or the index may have been empty): nothing more to check
        // unless we know entry 0 existed and was at or below the target.
        if let Some((lo, _)) = exact {
            assert!(
                lo == 0 || entry(0).offset > target,
                "target {target}: base returned with {lo} entries"
            );
        }
        return;
    } else {
        (found.offset - BASE - 1) / 3
    };
    // A real entry, at or below the target.
    assert_eq!(found, entry(k), "target {target}");
    assert!(found.offset <= target, "target {target} found {found:?}");
    if let Some((lo, hi)) = exact {
        // No truncation overlapped: the count was in lo..=hi during the lookup, so the answer
        // is the floor among the first `count` entries.
        // `count` is stored after `append` returns, so the index may be one entry ahead.
        assert!(k <= hi, "target {target}: slot {k} beyond {hi} + 1 entries");
        assert!(
            k + 1 >= lo || entry(k + 1).offset > target,
            "target {target}: {found:?} is not the floor of {lo} entries"
        );
    }
}

#[test]
fn appender_and_readers_agree_with_the_oracle() {
    let dir = tempfile::tempdir().unwrap();
    let mut idx = OffsetIndex::options(dir.path().join("s.index"), BASE)
        .max_index_size(SLOTS * 8)
        .open()
        .unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let lookups = Arc::new(AtomicU64::new(0));
    let exact_checks = Arc::new(AtomicU64::new(0));
    let progress = Arc::new(Progress {
        count: AtomicI64::new(0),
        generation: AtomicU64::new(0),
    });
    let readers: Vec<_> = (0..3)
        .map(|seed| {
            let reader = idx.reader();
            let stop = Arc::clone(&stop);
            let lookups = Arc::clone(&lookups);
            let exact_checks = Arc::clone(&exact_checks);
            let progress = Arc::clone(&progress);
            std::thread::spawn(move || {
                let mut x: u64 = 0x9e37_79b9_7f4a_7c15 ^ seed;
                while !stop.load(Ordering::Relaxed) {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    let target = BASE + i64::try_from(x % (3 * u64::from(SLOTS) + 10)).unwrap();
                    let g1 = progress.generation.load(Ordering::SeqCst);
                    let lo = progress.count.load(Ordering::SeqCst);
                    let found = reader.lookup(target).unwrap();
                    let hi = progress.count.load(Ordering::SeqCst);
                    let g2 = progress.generation.load(Ordering::SeqCst);
                    let exact = (g1 == g2 && g1.is_multiple_of(2)).then_some((lo, hi));
                    if exact.is_some() {
                        exact_checks.fetch_add(1, Ordering::Relaxed);
                    }
                    check(found, target, exact);
                    lookups.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();

    let started = Instant::now();
    let mut k: i64 = 0;
    let mut rounds = 0;
    while started.elapsed() < Duration::from_secs(2) {
        if idx.is_full() {
            rounds += 1;
            progress.generation.fetch_add(1, Ordering::SeqCst);
            match rounds % 3 {
                // Truncate back half-way, then keep appending into the same mapping.
                0 => {
                    k /= 2;
                    idx.truncate_to(entry(k).offset).unwrap();
                }
                // Trim (a shrinking remap that waits for readers), then regrow (a remap).
                1 => {
                    idx.trim_to_valid_size().unwrap();
                    k /= 2;
                    idx.truncate_to(entry(k).offset).unwrap();
                    idx.resize(SLOTS * 8).unwrap();
                }
                // Reset: empty, and the file back to full size.
                _ => {
                    idx.reset().unwrap();
                    k = 0;
                }
            }
            progress.count.store(k, Ordering::SeqCst);
            progress.generation.fetch_add(1, Ordering::SeqCst);
            assert_eq!(idx.entries(), usize::try_from(k).unwrap());
        }
        let e = entry(k);
        idx.append(e.offset, e.position).unwrap();
        k += 1;
        progress.count.store(k, Ordering::SeqCst);
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    assert!(
        rounds > 3,
        "the appender filled the index only {rounds} times"
    );
    assert!(lookups.load(Ordering::Relaxed) > 10_000);
    assert!(exact_checks.load(Ordering::Relaxed) > 1_000);
    assert!(live_mappings() >= 1);
    idx.close().unwrap();
}
