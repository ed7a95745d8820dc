//! One appender, four readers and retention at once, for a bounded time: every read returns
//! exactly the records written at those offsets, or a clean out-of-range error.
//! Its own binary: the readers must do a minimum of work in the fixed run time, which other
//! tests running beside them in one process would take.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests"
)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use seglog_fs::RealFs;
use seglog_log::{Isolation, LoadOptions, PartitionLog, SystemClock};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

const PER_BATCH: i64 = 8;

/// A producer batch whose record values are the offsets they will get.
fn batch(first_offset: i64, builder: &mut BatchBuilder) -> Vec<u8> {
    let values: Vec<String> = (0..PER_BATCH)
        .map(|i| (first_offset + i).to_string())
        .collect();
    let records = values
        .iter()
        .enumerate()
        .map(|(i, v)| NewRecord::new(i as i32, 1_000, None, Some(v.as_bytes())));
    let mut out = Vec::new();
    builder
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
}

#[test]
fn readers_see_exactly_what_was_written_while_retention_deletes() {
    let root = tempfile::tempdir().unwrap();
    let config = common::small_config(1_000)
        .with_retention_bytes(8_000)
        .with_file_delete_delay_ms(0);
    let (log, _) = PartitionLog::open(
        RealFs,
        &common::partition_dir(root.path()),
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let stop = AtomicBool::new(false);
    let reads = AtomicU64::new(0);
    let out_of_range = AtomicU64::new(0);
    let deleted = AtomicU64::new(0);
    let run_for = Duration::from_secs(3);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut builder = BatchBuilder::new();
            let started = Instant::now();
            while started.elapsed() < run_for {
                let next = log.log_end_offset();
                let info = log
                    .append_as_leader(&mut batch(next, &mut builder))
                    .unwrap();
                assert_eq!(info.first_offset, next);
                log.set_high_watermark(log.log_end_offset());
            }
            stop.store(true, Ordering::SeqCst);
        });
        s.spawn(|| {
            while !stop.load(Ordering::SeqCst) {
                deleted.fetch_add(
                    log.delete_old_segments().unwrap().total() as u64,
                    Ordering::Relaxed,
                );
                log.delete_expired_files().unwrap();
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        for seed in 0..4_u64 {
            let (log, stop, reads, out_of_range) = (&log, &stop, &reads, &out_of_range);
            s.spawn(move || {
                let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ (seed + 1);
                let mut buf = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let (start, end) = (log.log_start_offset(), log.log_end_offset());
                    if end <= start {
                        continue;
                    }
                    let target = start + (rng % (end - start) as u64) as i64;
                    match log.read(target, 4096, Isolation::LogEnd, true) {
                        Ok(fetch) => {
                            fetch.read_into(&mut buf).unwrap();
                            let mut seen_target = false;
                            for b in seglog_record_format::batches(&buf) {
                                let b = b.unwrap();
                                for r in b.decode().unwrap().to_records().unwrap() {
                                    assert_eq!(
                                        r.value.unwrap(),
                                        r.offset.to_string().into_bytes(),
                                        "offset {}",
                                        r.offset
                                    );
                                    seen_target |= r.offset == target;
                                }
                            }
                            assert!(seen_target, "read at {target} did not return it");
                            reads.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) if e.is_offset_out_of_range() => {
                            out_of_range.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => panic!("read at {target}: {e}"),
                    }
                }
            });
        }
    });
    let (reads, out_of_range, deleted) = (
        reads.load(Ordering::Relaxed),
        out_of_range.load(Ordering::Relaxed),
        deleted.load(Ordering::Relaxed),
    );
    eprintln!("{reads} checked reads, {out_of_range} out of range, {deleted} segments deleted");
    assert!(
        reads > 1_000 && deleted > 10,
        "{reads} reads, {deleted} deletions"
    );
}
