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

use seglog_log::{Isolation, ListOffset, LoadOptions, LogConfig, PartitionLog, SystemClock};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_segment::io::RealFs;

const PER_BATCH: i64 = 4;
const BUDGET: usize = 24;
const READERS: usize = 4;

/// A producer batch whose record values are the offsets they will get, timestamped with them.
fn batch(first_offset: i64, builder: &mut BatchBuilder) -> Vec<u8> {
    let values: Vec<String> = (0..PER_BATCH)
        .map(|i| (first_offset + i).to_string())
        .collect();
    let records = values.iter().enumerate().map(|(i, v)| {
        NewRecord::new(
            i as i32,
            1_000_000 + first_offset + i as i64,
            None,
            Some(v.as_bytes()),
        )
    });
    let mut out = Vec::new();
    builder
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
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

/// How many mappings of files under `dir` the kernel holds while other threads map and unmap,
/// or `None` if no consistent snapshot could be had. The kernel hands `/proc/self/maps` out a
/// page per `read` and lets go of the address space between them, so one reading can count a
/// mapping unmapped after its page was read and also one mapped, at a higher address, before the
/// next page was: more than ever existed at once. Two readings in a row that agree line for line
/// are taken as a snapshot.
fn kernel_count_while_busy(dir: &Path) -> Option<usize> {
    let dir = dir.to_string_lossy();
    let mut last = kernel_mappings(&dir);
    for _ in 0..50 {
        let next = kernel_mappings(&dir);
        if next == last {
            return Some(next.len());
        }
        last = next;
    }
    None
}

#[test]
fn many_segments_read_at_random_stay_within_the_mapping_budget() {
    let root = tempfile::tempdir().unwrap();
    let config = LogConfig {
        max_segment_mappings: BUDGET as i64,
        message_timestamp_before_max_ms: i64::MAX,
        ..common::small_config(600)
    };
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
    log.set_high_watermark(log.log_end_offset());
    let end = log.log_end_offset();
    let after_appends = (budget.mapped(), kernel_count(&dir));
    assert!(after_appends.1 <= BUDGET, "{after_appends:?}");

    let stop = AtomicBool::new(false);
    let reads = AtomicU64::new(0);
    let max_mapped = AtomicUsize::new(0);
    let max_kernel = AtomicUsize::new(0);
    let mut snapshots = 0_u32;
    std::thread::scope(|s| {
        for seed in 0..READERS as u64 {
            let (log, stop, reads) = (&log, &stop, &reads);
            s.spawn(move || {
                let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ (seed + 7).wrapping_mul(0x2545_F491);
                let mut buf = Vec::new();
                while !stop.load(Ordering::Relaxed) {
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
        // I/O) on until enough reads were checked, bounded by a minute.
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(3)
            || (reads.load(Ordering::Relaxed) < 2_000 && started.elapsed() < Duration::from_mins(1))
        {
            max_mapped.fetch_max(budget.mapped(), Ordering::Relaxed);
            if let Some(count) = kernel_count_while_busy(&dir) {
                max_kernel.fetch_max(count, Ordering::Relaxed);
                snapshots += 1;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, Ordering::Relaxed);
    });
    let (reads, max_mapped, max_kernel) = (
        reads.load(Ordering::Relaxed),
        max_mapped.load(Ordering::Relaxed),
        max_kernel.load(Ordering::Relaxed),
    );
    eprintln!(
        "{} segments, {reads} checked reads; budget {BUDGET}: max mapped {max_mapped}, max in \
         /proc/self/maps {max_kernel} ({snapshots} snapshots); {} admissions, {} evictions",
        log.segment_count(),
        budget.admissions(),
        budget.evictions()
    );
    assert!(max_mapped <= BUDGET);
    // Past the budget's own count, one mapping per reader: a mapping evicted while that reader
    // is inside it goes when the reader leaves, and one being mapped is counted once it is made.
    assert!(max_kernel <= BUDGET + READERS, "{max_kernel}");
    assert!(
        snapshots >= 10,
        "only {snapshots} consistent snapshots of /proc/self/maps"
    );
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
