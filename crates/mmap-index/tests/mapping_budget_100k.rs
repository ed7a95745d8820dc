//! KAFKA-6343 ("Map failed" once a broker holds more mappings than `vm.max_map_count`): the
//! indexes of a 100,000-segment log, read at random from several threads, stay within a
//! mapping budget of 1,000 while every lookup returns exactly what the files hold. The count is
//! taken three ways: the budget's own and the crate's live-mapping counter during the reads, and
//! at rest also the kernel's `/proc/self/maps`, which must equal both. (Not during the reads:
//! the kernel hands that file out a page per `read` and lets go of the address space between
//! pages, so a reading taken while threads map and unmap can count more mappings than ever
//! existed at once.) This is the only test of its file, so the process-wide counter is ours.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::too_many_lines,
    reason = "tests"
)]

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use seglog_mmap_index::{
    LazyOffsetIndex, LazyTimeIndex, MappingBudget, OffsetIndex, OffsetIndexReader, OffsetPosition,
    TimeIndex, TimeIndexReader, TimestampOffset, live_mappings,
};

const SEGMENTS: usize = 100_000;
const ENTRIES: i64 = 4;
const BUDGET: usize = 1_000;
const READERS: usize = 4;
const SEGMENT_SPAN: i64 = 1_000;

/// Every segment's entry `k`: offset `base + 100k + 10` at position `4096k`; the time index
/// maps timestamp `TS + 100k + 10` to the same offset. Offsets are stored relative to the base,
/// so all segments' files hold the same bytes: each name is a hard link to one of two files,
/// which keeps creating 200,000 names cheap. Each mapping is still its own `vm_area`.
fn relative(k: i64) -> i64 {
    100 * k + 10
}

const TS: i64 = 1_700_000_000_000;

fn write_files(dir: &Path) {
    let mut index = Vec::new();
    let mut time = Vec::new();
    for k in 0..ENTRIES {
        let rel = relative(k) as u32;
        index.extend_from_slice(&rel.to_be_bytes());
        index.extend_from_slice(&((4096 * k) as u32).to_be_bytes());
        time.extend_from_slice(&(TS + relative(k)).to_be_bytes());
        time.extend_from_slice(&rel.to_be_bytes());
    }
    // ext4 allows 65,000 links to one inode: a source file per 50,000 names.
    let sources = dir.join("sources");
    std::fs::create_dir(&sources).unwrap();
    for i in 0..SEGMENTS {
        let (index_source, time_source) = (
            sources.join(format!("{}.index", i / 50_000)),
            sources.join(format!("{}.timeindex", i / 50_000)),
        );
        if i % 50_000 == 0 {
            std::fs::write(&index_source, &index).unwrap();
            std::fs::write(&time_source, &time).unwrap();
        }
        let name = format!("{:020}", i as i64 * SEGMENT_SPAN);
        std::fs::hard_link(&index_source, dir.join(format!("{name}.index"))).unwrap();
        std::fs::hard_link(&time_source, dir.join(format!("{name}.timeindex"))).unwrap();
    }
}

/// One segment's lazily opened indexes, with read handles taken on first use (as
/// `LogSegment` does).
struct Segment {
    offset: LazyOffsetIndex,
    time: LazyTimeIndex,
    offset_reader: OnceLock<OffsetIndexReader>,
    time_reader: OnceLock<TimeIndexReader>,
}

impl Segment {
    fn offset_reader(&self) -> &OffsetIndexReader {
        self.offset_reader
            .get_or_init(|| self.offset.get().unwrap().reader())
    }

    fn time_reader(&self) -> &TimeIndexReader {
        self.time_reader
            .get_or_init(|| self.time.get().unwrap().reader())
    }
}

/// Mappings of this directory's files in `/proc/self/maps`.
fn kernel_count(dir: &Path) -> usize {
    let dir = dir.to_string_lossy().into_owned();
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|line| line.contains(&dir))
        .count()
}

#[test]
fn a_100k_segment_log_read_at_random_stays_within_the_mapping_budget() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    write_files(dir.path());
    let written = started.elapsed();
    let started = Instant::now();
    let budget = MappingBudget::new(BUDGET);
    let segments: Vec<Segment> = (0..SEGMENTS)
        .map(|i| {
            let base = i as i64 * SEGMENT_SPAN;
            let name = format!("{base:020}");
            let mut offset = OffsetIndex::options(dir.path().join(format!("{name}.index")), base)
                .max_index_size(1 << 20)
                .lazy();
            offset.set_budget(Some(budget.clone()));
            let mut time = TimeIndex::options(dir.path().join(format!("{name}.timeindex")), base)
                .max_index_size(1 << 20)
                .lazy();
            time.set_budget(Some(budget.clone()));
            Segment {
                offset,
                time,
                offset_reader: OnceLock::new(),
                time_reader: OnceLock::new(),
            }
        })
        .collect();
    let baseline = live_mappings();
    assert_eq!(baseline, 0);

    let stop = AtomicBool::new(false);
    let lookups = AtomicU64::new(0);
    let max_budget_seen = AtomicUsize::new(0);
    let max_live_seen = AtomicUsize::new(0);
    let read_for = Duration::from_secs(4);
    let segments = Arc::new(segments);
    std::thread::scope(|s| {
        for seed in 0..READERS as u64 {
            let (segments, stop, lookups) = (&segments, &stop, &lookups);
            s.spawn(move || {
                let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ (seed + 1).wrapping_mul(0xA24B_AED4);
                let mut next = || {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng
                };
                while !stop.load(Ordering::Relaxed) {
                    let i = (next() % SEGMENTS as u64) as usize;
                    let base = i as i64 * SEGMENT_SPAN;
                    let segment = &segments[i];
                    let target = (next() % 500) as i64;
                    let k = (0..ENTRIES).rev().find(|k| relative(*k) <= target);
                    let expected = k.map_or(
                        OffsetPosition {
                            offset: base,
                            position: 0,
                        },
                        |k| OffsetPosition {
                            offset: base + relative(k),
                            position: (4096 * k) as u32,
                        },
                    );
                    assert_eq!(
                        segment.offset_reader().lookup(base + target).unwrap(),
                        expected,
                        "segment {i} offset {}",
                        base + target
                    );
                    let expected_time = k.map_or(
                        TimestampOffset {
                            timestamp: -1,
                            offset: base,
                        },
                        |k| TimestampOffset {
                            timestamp: TS + relative(k),
                            offset: base + relative(k),
                        },
                    );
                    // Half through the read handle, half through the writer's own view.
                    let found = if next().is_multiple_of(2) {
                        segment.time_reader().lookup(TS + target).unwrap()
                    } else {
                        segment.time.get().unwrap().lookup(TS + target).unwrap()
                    };
                    assert_eq!(found, expected_time, "segment {i} time {}", TS + target);
                    lookups.fetch_add(2, Ordering::Relaxed);
                }
            });
        }
        // The sampler: the budget's count never passes the budget; the process's live
        // mappings pass it by at most one per reading thread (a mapping evicted while a lookup is
        // inside goes when the lookup returns).
        let started = Instant::now();
        while started.elapsed() < read_for {
            let mapped = budget.mapped();
            let live = live_mappings();
            max_budget_seen.fetch_max(mapped, Ordering::Relaxed);
            max_live_seen.fetch_max(live, Ordering::Relaxed);
            std::thread::sleep(Duration::from_millis(20));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let lookups = lookups.load(Ordering::Relaxed);
    let (max_budget, max_live) = (
        max_budget_seen.load(Ordering::Relaxed),
        max_live_seen.load(Ordering::Relaxed),
    );
    // Quiescent: exactly the budget's count is mapped, in the crate's counter and the kernel's.
    let (mapped, live, kernel) = (budget.mapped(), live_mappings(), kernel_count(dir.path()));
    eprintln!(
        "{SEGMENTS} segments written in {written:?}; {lookups} checked lookups; \
         {} admissions, {} evictions; max seen: budget {max_budget}, live {max_live}; \
         at rest: budget {mapped}, live {live}, kernel {kernel}",
        budget.admissions(),
        budget.evictions()
    );
    assert!(max_budget <= BUDGET, "budget count {max_budget}");
    assert!(max_live <= BUDGET + READERS, "live mappings {max_live}");
    assert!(mapped <= BUDGET && live == mapped && kernel == mapped);
    // The reads reached far more indexes than the budget holds, so eviction did the work. (The
    // floor is low for a loaded 2-core machine; an idle one does about 10 times more.)
    assert!(lookups > 4_000, "{lookups} lookups");
    assert!(budget.evictions() > 2 * BUDGET as u64, "{budget:?}");
    drop(segments);
    assert_eq!(live_mappings(), 0);
    assert_eq!(kernel_count(dir.path()), 0);
    eprintln!("read and closed in {:?}", started.elapsed());
}
