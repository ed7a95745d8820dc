//! Concurrency under load (issue 9, section 5): one appender, eight readers, a roll every few
//! milliseconds, retention and compaction, all at once for a bounded time. Every record any read
//! returns is checked against the model (the key and value of each offset are functions of the
//! offset), offsets only increase within a read, and at the end every key's latest record that
//! retention kept is still there (compaction never drops it). A watchdog bounds every wait: if
//! any role stops making progress for `STALL`, it prints what each thread was last doing and
//! aborts the process, so a deadlock fails the test instead of hanging it. The second test runs
//! the same with a small mapping budget, so mappings are evicted and made again all along.
//! Its own binary: the watchdog aborts the whole process, and its stall and run-time bounds
//! assume no other test of the binary runs beside it.
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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use seglog_fs::RealFs;
use seglog_log::{
    CleanOptions, Isolation, ListOffset, LoadOptions, LogConfig, PartitionLog, SystemClock,
};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

const PER_BATCH: i64 = 4;
const KEYS: i64 = 40;
const READERS: usize = 8;
const TS: i64 = 1_700_000_000_000;
/// How long a role may make no progress before the watchdog declares a deadlock.
const STALL: Duration = Duration::from_secs(30);
/// The least work each background role must have done before the run may end.
const MIN_ROLLS: u64 = 30;
const MIN_DELETED: u64 = 10;
const MIN_CLEANED: u64 = 10;
/// The longest a run may take to get there.
const MAX_RUN: Duration = Duration::from_mins(1);

fn key(offset: i64) -> Vec<u8> {
    format!("k{}", offset % KEYS).into_bytes()
}

fn value(offset: i64) -> Vec<u8> {
    format!("v{offset}").into_bytes()
}

/// A producer batch whose records are the model's records for the offsets they will get.
fn batch(first_offset: i64, builder: &mut BatchBuilder) -> Vec<u8> {
    let records: Vec<(Vec<u8>, Vec<u8>)> = (first_offset..first_offset + PER_BATCH)
        .map(|o| (key(o), value(o)))
        .collect();
    let records = records.iter().enumerate().map(|(i, (k, v))| {
        NewRecord::new(
            i as i32,
            TS + first_offset + i as i64,
            Some(&k[..]),
            Some(&v[..]),
        )
    });
    let mut out = Vec::new();
    builder
        .build(&BatchOptions::new(0, Compression::None), records, &mut out)
        .unwrap();
    out
}

/// The roles whose progress the watchdog follows.
const ROLES: [&str; 4 + READERS] = [
    "appender",
    "roller",
    "retention",
    "cleaner",
    "reader 0",
    "reader 1",
    "reader 2",
    "reader 3",
    "reader 4",
    "reader 5",
    "reader 6",
    "reader 7",
];

/// Progress counters and a description of each role's current step.
struct Progress {
    steps: Vec<AtomicU64>,
    doing: Vec<AtomicUsize>,
}

/// What a role may be doing (indexes into this list are stored in `Progress::doing`).
const STEPS: [&str; 8] = [
    "idle",
    "append",
    "roll",
    "delete_old_segments",
    "delete_expired_files",
    "clean",
    "read",
    "offset_for_timestamp",
];

impl Progress {
    fn new() -> Self {
        Self {
            steps: ROLES.iter().map(|_| AtomicU64::new(0)).collect(),
            doing: ROLES.iter().map(|_| AtomicUsize::new(0)).collect(),
        }
    }

    fn start(&self, role: usize, step: usize) {
        self.doing[role].store(step, Ordering::Relaxed);
    }

    fn done(&self, role: usize) {
        self.doing[role].store(0, Ordering::Relaxed);
        self.steps[role].fetch_add(1, Ordering::Relaxed);
    }

    fn report(&self) -> String {
        ROLES
            .iter()
            .enumerate()
            .map(|(i, role)| {
                format!(
                    "{role}: {} steps, now in {}",
                    self.steps[i].load(Ordering::Relaxed),
                    STEPS[self.doing[i].load(Ordering::Relaxed)]
                )
            })
            .collect::<Vec<_>>()
            .join("\n  ")
    }
}

/// Checks one read's records against the model.
fn check_read(buf: &[u8], target: i64) {
    let mut last = None;
    for (i, b) in seglog_record_format::batches(buf).enumerate() {
        let b = b.unwrap().decode().unwrap();
        if i == 0 {
            assert!(
                b.last_offset() >= target,
                "first batch ends before {target}"
            );
        }
        for r in b.to_records().unwrap() {
            assert!(
                last.is_none_or(|l| r.offset > l),
                "offsets go back at {}",
                r.offset
            );
            assert_eq!(
                r.key.as_deref(),
                Some(&key(r.offset)[..]),
                "key at {}",
                r.offset
            );
            assert_eq!(
                r.value.as_deref(),
                Some(&value(r.offset)[..]),
                "value at {}",
                r.offset
            );
            assert_eq!(r.timestamp, TS + r.offset, "timestamp at {}", r.offset);
            last = Some(r.offset);
        }
    }
}

fn run(max_segment_mappings: i64) {
    let run_for = Duration::from_millis(
        std::env::var("SEGLOG_STRESS_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(3_000),
    );
    let root = tempfile::tempdir().unwrap();
    let config = LogConfig::from_pairs([
        ("internal.segment.bytes", "4000"),
        ("segment.index.bytes", "4096"),
        ("index.interval.bytes", "100"),
        ("cleanup.policy", "compact,delete"),
        ("min.cleanable.dirty.ratio", "0.01"),
    ])
    .unwrap()
    .with_retention_bytes(24_000)
    .with_file_delete_delay_ms(0)
    .with_max_segment_mappings(max_segment_mappings);
    let (log, _) = PartitionLog::open(
        RealFs,
        &common::partition_dir(root.path()),
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let progress = Progress::new();
    let stop = AtomicBool::new(false);
    let (reads, out_of_range, deleted, cleaned, rolls) = (
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
        AtomicU64::new(0),
    );
    std::thread::scope(|s| {
        let (log, progress, stop) = (&log, &progress, &stop);
        // The watchdog: every role must make progress within STALL while the run lasts.
        s.spawn(move || {
            let mut last: Vec<(u64, Instant)> = progress
                .steps
                .iter()
                .map(|c| (c.load(Ordering::Relaxed), Instant::now()))
                .collect();
            while !stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(100));
                for (i, (count, since)) in last.iter_mut().enumerate() {
                    let now = progress.steps[i].load(Ordering::Relaxed);
                    if now != *count {
                        (*count, *since) = (now, Instant::now());
                    } else if since.elapsed() > STALL && !stop.load(Ordering::Relaxed) {
                        eprintln!(
                            "watchdog: {} made no progress for {STALL:?} (deadlock?)\n  {}",
                            ROLES[i],
                            progress.report()
                        );
                        std::process::abort();
                    }
                }
            }
        });
        let (rolls, deleted, cleaned) = (&rolls, &deleted, &cleaned);
        s.spawn(move || {
            let mut builder = BatchBuilder::new();
            let started = Instant::now();
            // At least `run_for`, and until every background role did real work (a loaded
            // machine schedules them rarely), but never past `MAX_RUN`.
            let busy = || {
                rolls.load(Ordering::Relaxed) < MIN_ROLLS
                    || deleted.load(Ordering::Relaxed) < MIN_DELETED
                    || cleaned.load(Ordering::Relaxed) < MIN_CLEANED
            };
            while started.elapsed() < run_for || (busy() && started.elapsed() < MAX_RUN) {
                progress.start(0, 1);
                let next = log.log_end_offset();
                let info = log
                    .append_as_leader(&mut batch(next, &mut builder))
                    .unwrap();
                assert_eq!(info.first_offset, next);
                log.set_high_watermark(log.log_end_offset());
                progress.done(0);
            }
            stop.store(true, Ordering::SeqCst);
        });
        s.spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                progress.start(1, 2);
                log.roll().unwrap();
                rolls.fetch_add(1, Ordering::Relaxed);
                progress.done(1);
                std::thread::sleep(Duration::from_millis(3));
            }
        });
        s.spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                progress.start(2, 3);
                let report = log.delete_old_segments().unwrap();
                deleted.fetch_add(report.total() as u64, Ordering::Relaxed);
                progress.start(2, 4);
                log.delete_expired_files().unwrap();
                progress.done(2);
                std::thread::sleep(Duration::from_millis(2));
            }
        });
        s.spawn(move || {
            let mut checkpoint = 0;
            while !stop.load(Ordering::SeqCst) {
                progress.start(3, 5);
                let report = log
                    .clean(
                        &CleanOptions::default()
                            .with_first_dirty_offset(checkpoint)
                            .with_dedupe_buffer_bytes(1 << 20)
                            .with_io_max_bytes_per_second(None)
                            .with_uncleanable_offset(None),
                    )
                    .unwrap();
                if !report.aborted {
                    checkpoint = checkpoint.max(report.end_offset);
                    cleaned.fetch_add(report.segments_replaced as u64, Ordering::Relaxed);
                }
                progress.done(3);
                std::thread::sleep(Duration::from_millis(1));
            }
        });
        for reader in 0..READERS {
            let (reads, out_of_range) = (&reads, &out_of_range);
            s.spawn(move || {
                let role = 4 + reader;
                let mut rng = 0x9E37_79B9_7F4A_7C15_u64 ^ ((reader as u64 + 1) * 0x2545_F491);
                let mut buf = Vec::new();
                while !stop.load(Ordering::SeqCst) {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    let (start, end) = (log.log_start_offset(), log.log_end_offset());
                    if end <= start {
                        std::thread::yield_now();
                        continue;
                    }
                    let target = start + (rng % (end - start) as u64) as i64;
                    if rng.is_multiple_of(16) {
                        progress.start(role, 7);
                        // The first record at or after the timestamp is at or after the offset
                        // (compaction may have removed the offset itself), and is the model's.
                        if let Some(found) = log
                            .offset_for_timestamp(ListOffset::Timestamp(TS + target))
                            .unwrap()
                        {
                            assert!(found.offset >= target, "{found:?} for {target}");
                            assert_eq!(found.timestamp, TS + found.offset);
                        }
                    } else {
                        progress.start(role, 6);
                        match log.read(target, 1024, Isolation::LogEnd, true) {
                            Ok(fetch) => {
                                fetch.read_into(&mut buf).unwrap();
                                // A read may end a moment ahead of the log end offset: the
                                // segment publishes an append before the log moves its end.
                                check_read(&buf, target);
                            }
                            Err(e) if e.is_offset_out_of_range() => {
                                out_of_range.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => panic!("read at {target}: {e}"),
                        }
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                    progress.done(role);
                }
            });
        }
    });
    // At rest: one walk from the log start sees only the model's records, and every key's latest
    // record at or above the log start (compaction keeps it; retention removes only below).
    let start = log.log_start_offset();
    let end = log.log_end_offset();
    let records = common::read_records(&log, start);
    let mut previous = None;
    for r in &records {
        assert!(previous.is_none_or(|p| r.offset > p));
        assert_eq!(r.key.as_deref(), Some(&key(r.offset)[..]));
        assert_eq!(r.value.as_deref(), Some(&value(r.offset)[..]));
        previous = Some(r.offset);
    }
    let present: std::collections::HashSet<i64> = records.iter().map(|r| r.offset).collect();
    for k in 0..KEYS {
        let latest = (end - 1) - ((end - 1 - k).rem_euclid(KEYS));
        if latest >= start {
            assert!(
                present.contains(&latest),
                "key k{k}: latest offset {latest} is gone"
            );
        }
    }
    let counts =
        [&reads, &out_of_range, &rolls, &deleted, &cleaned].map(|c| c.load(Ordering::Relaxed));
    eprintln!(
        "budget {max_segment_mappings}: {end} offsets appended, {} checked reads, {} out of range, \
         {} rolls, {} segments deleted by retention, {} replaced by compaction; at rest \
         {} segments, log start {start}",
        counts[0],
        counts[1],
        counts[2],
        counts[3],
        counts[4],
        log.segment_count()
    );
    assert!(counts[0] > 1_000, "{counts:?}");
    assert!(
        counts[2] > 20 && counts[3] > 5 && counts[4] > 5,
        "{counts:?}"
    );
    if let Some(budget) = log.mapping_budget() {
        assert!(budget.mapped() <= budget.max_mappings());
        assert!(budget.evictions() > 0, "{budget:?}");
    }
    log.close().unwrap();
}

#[test]
fn appender_readers_rolls_retention_and_compaction() {
    run(-1);
}

#[test]
fn the_same_under_a_small_mapping_budget() {
    run(24);
}
