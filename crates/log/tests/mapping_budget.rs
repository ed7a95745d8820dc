//! `seglog.max.segment.mappings` (KAFKA-6343): a log of many segments, appended with index
//! entries in every segment and then read at random from several threads, keeps its `.index`,
//! `.timeindex` and `.log` mappings within the budget (its own count, and the kernel's in
//! `/proc/self/maps`), while every read returns exactly the records written at its offsets.
//! Evicted mappings are made again on demand, and appends go on after evictions.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::too_many_lines,
    reason = "tests"
)]

mod common;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use seglog_fs::RealFs;
use seglog_log::{Isolation, ListOffset, LoadOptions, PartitionLog, SystemClock};
use seglog_record_format::BatchBuilder;

const PER_BATCH: i64 = 4;
const BUDGET: usize = 24;
const READERS: usize = 4;

/// A batch whose record values are the offsets they will get.
fn batch(first_offset: i64, builder: &mut BatchBuilder) -> Vec<u8> {
    common::offset_valued_batch(first_offset, PER_BATCH, builder)
}

/// The lines of `/proc/self/maps` that map a file under `dir`.
fn kernel_mappings(dir: &str) -> Vec<String> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .filter(|line| line.contains(dir))
        .map(str::to_owned)
        .collect()
}

/// How many mappings of files under `dir` the kernel holds, with nothing else mapping or
/// unmapping at the time.
fn kernel_count(dir: &Path) -> usize {
    kernel_mappings(&dir.to_string_lossy()).len()
}

/// This process's mappings of index and `.log` files, by its own count.
fn live() -> usize {
    seglog_mmap_index::live_mappings() + seglog_mmap_index::live_file_mappings()
}

/// Readers that stop between two reads when asked, so that `/proc/self/maps` can be read with
/// nothing mapping or unmapping. A reading taken while other threads map and unmap is not a
/// snapshot: the kernel hands the file out a page per `read` and lets go of the address space in
/// between, so one reading can count a mapping unmapped after its page was read and also one
/// mapped, at a higher address, before the next page was (more than ever existed at once), and
/// since freed addresses are reused, two such readings in a row can even agree.
#[derive(Default)]
struct Quiesce {
    requested: AtomicBool,
    parked: AtomicUsize,
}

impl Quiesce {
    /// Called by a reader between reads: waits while a pause is requested.
    fn checkpoint(&self) {
        if self.requested.load(Ordering::Acquire) {
            self.parked.fetch_add(1, Ordering::AcqRel);
            while self.requested.load(Ordering::Acquire) {
                std::thread::yield_now();
            }
            self.parked.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Runs `f` once all `readers` are parked (or `None` if they do not all stop within a second,
    /// which a reader that finished or panicked causes).
    fn paused<R>(&self, readers: usize, f: impl FnOnce() -> R) -> Option<R> {
        self.requested.store(true, Ordering::Release);
        let asked = Instant::now();
        while self.parked.load(Ordering::Acquire) < readers
            && asked.elapsed() < Duration::from_secs(1)
        {
            std::thread::yield_now();
        }
        let result = (self.parked.load(Ordering::Acquire) == readers).then(f);
        self.requested.store(false, Ordering::Release);
        result
    }
}

#[test]
fn many_segments_read_at_random_stay_within_the_mapping_budget() {
    let root = tempfile::tempdir().unwrap();
    let config = common::small_config(600)
        .with_max_segment_mappings(BUDGET as i64)
        .with_message_timestamp_before_max_ms(i64::MAX);
    let dir = common::partition_dir(root.path());
    let (log, _) = PartitionLog::open(
        RealFs,
        &dir,
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let budget = log.mapping_budget().unwrap().clone();
    let mut builder = BatchBuilder::new();
    while log.segment_count() < 400 {
        let next = log.log_end_offset();
        log.append_as_leader(&mut batch(next, &mut builder))
            .unwrap();
        assert!(budget.mapped() <= BUDGET);
    }
    // Each roll flushed the segments before it on a thread of its own, and a flush pins the
    // mappings it syncs: the budget allows one extra mapping per thread in flight, so the bounds
    // below, for the readers alone, hold once those threads are done.
    log.wait_for_background_flushes();
    log.set_high_watermark(log.log_end_offset());
    let end = log.log_end_offset();
    let after_appends = (budget.mapped(), kernel_count(&dir));
    assert!(after_appends.1 <= BUDGET, "{after_appends:?}");

    let stop = AtomicBool::new(false);
    let reads = AtomicU64::new(0);
    let quiesce = Quiesce::default();
    let (mut max_mapped, mut max_live, mut max_kernel) = (0, 0, 0);
    let mut snapshots = 0_u32;
    std::thread::scope(|s| {
        for seed in 0..READERS as u64 {
            let (log, stop, reads, quiesce) = (&log, &stop, &reads, &quiesce);
            s.spawn(move || {
                let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ (seed + 7).wrapping_mul(0x2545_F491);
                let mut buf = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    quiesce.checkpoint();
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let target = (rng % end as u64) as i64;
                    if rng.is_multiple_of(8) {
                        // A time lookup goes through the time index, then the offset index.
                        let found = log
                            .offset_for_timestamp(ListOffset::Timestamp(1_000_000 + target))
                            .unwrap()
                            .unwrap();
                        assert_eq!(found.offset, target, "time lookup of {target}");
                    } else {
                        let fetch = log.read(target, 256, Isolation::LogEnd, true).unwrap();
                        fetch.read_into(&mut buf).unwrap();
                        let mut seen = false;
                        for b in seglog_record_format::batches(&buf) {
                            for r in b.unwrap().decode().unwrap().to_records().unwrap() {
                                assert_eq!(r.value.unwrap(), r.offset.to_string().into_bytes());
                                seen |= r.offset == target;
                            }
                        }
                        assert!(seen, "read at {target} did not return it");
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        // Three seconds, and on a slow or busy machine (page faults behind other processes'
        // I/O, readers slow to stop) on until enough reads and pauses were checked, bounded by
        // a minute.
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(3)
            || ((reads.load(Ordering::Relaxed) < 2_000 || snapshots < 10)
                && started.elapsed() < Duration::from_mins(1))
        {
            // While the readers read: the budget's count, and the mappings that exist. Past the
            // budget's own count, one mapping per reader (the only threads that map now): a
            // mapping evicted while that reader is inside it goes when the reader leaves, and one
            // being mapped is counted once made.
            for _ in 0..10 {
                max_mapped = max_mapped.max(budget.mapped());
                max_live = max_live.max(live());
                std::thread::sleep(Duration::from_millis(1));
            }
            // With the readers stopped between reads, the kernel's own count, exact: no reader is
            // inside an evicted mapping, so every mapping left is one the budget counts.
            if let Some((kernel, live)) = quiesce.paused(READERS, || (kernel_count(&dir), live())) {
                assert_eq!(
                    kernel, live,
                    "/proc/self/maps against the process's own count"
                );
                max_kernel = max_kernel.max(kernel);
                snapshots += 1;
            }
        }
        stop.store(true, Ordering::Relaxed);
    });
    let reads = reads.load(Ordering::Relaxed);
    eprintln!(
        "{} segments, {reads} checked reads; budget {BUDGET}: max mapped {max_mapped}, max live \
         {max_live}, max in /proc/self/maps {max_kernel} ({snapshots} pauses); {} admissions, \
         {} evictions",
        log.segment_count(),
        budget.admissions(),
        budget.evictions()
    );
    assert!(max_mapped <= BUDGET);
    assert!(max_live <= BUDGET + READERS, "{max_live}");
    assert!(max_kernel <= BUDGET, "{max_kernel}");
    assert!(snapshots >= 10, "only {snapshots} pauses of the readers");
    assert!(
        reads > 100 && budget.evictions() > 100,
        "{reads} reads, {budget:?}"
    );
    // Appends after all that eviction: the active segment's indexes come back as needed.
    for _ in 0..50 {
        let next = log.log_end_offset();
        log.append_as_leader(&mut batch(next, &mut builder))
            .unwrap();
    }
    let values = common::read_values(&log, end - 8);
    assert_eq!(values.len() as i64, log.log_end_offset() - (end - 8));
    for (offset, value) in values {
        assert_eq!(value, offset.to_string());
    }
    log.close().unwrap();
    assert_eq!(kernel_count(&dir), 0);
}
