//! The crash-image harness behind `cargo xtask crash` (docs/reliability.md, section 1).
//!
//! Each workload is a seeded, reproducible sequence of operations on one partition log of a
//! `LogDir` over `SimFs`: leader and follower appends with every codec, explicit rolls, rolls by
//! size inside appends (one workload in three has segments of 1,000 to 2,000 bytes), flushes,
//! durable appends, truncations, retention, compaction (with its `.cleaned`/`.swap`/`.deleted`
//! protocol), checkpoints, and clean and unclean closes followed by a reopen; one workload in
//! four ends by deleting the partition (`LogDir::delete_log`: the rename to `-delete`, the
//! directory sync, the removals) and a clean close. One workload in three is transactional
//! (`txn_workload`: idempotent and transactional producers, COMMIT and ABORT markers, no
//! truncation, retention or compaction). The flush after a
//! roll runs inline, so the file-system events, and with them the crash points, come in the
//! same order on every run. While it runs,
//! `SimFs` captures the image a power loss would leave at every sync point (file and directory
//! syncs, before they take effect), at random writes (after them, torn at a random byte) and at
//! random other events (creations, renames, removals, length changes). The indexes are
//! memory-mapped on the real path, so every image keeps or loses each of their unsynced pages
//! (and an unsynced length change) on a seeded coin of its own.
//!
//! Every image is a crash point. It is reopened, and then:
//! - every record acknowledged as durable (and not since truncated, deleted by retention or
//!   superseded by a compaction) is present, byte-identical, at its offset;
//! - every record read was appended at that offset at some point (nothing is invented);
//! - offsets strictly increase;
//! - the log accepts an append, and reads it back;
//! - a crash inside the deletion leaves the partition whole (every check above) or gone, never
//!   a half; one after it leaves it gone; the open removes any `-delete` directory left over;
//! - after a clean close, every segment's `.log` frames and validates to its end and both
//!   indexes agree with it (the checks `seglog check` makes: entries point at batch starts with
//!   the right offsets, time entries hold the running maximum timestamp, no zero tails, no
//!   leftover `.cleaned`/`.swap` files);
//! - the leader epoch cache (`epoch_check`): its entries increase, none starts at or past the
//!   log end, and every batch from the log start carries the cache's epoch of its base offset
//!   (leader appends are stamped with an epoch that rises at random, follower appends carry it,
//!   each reopen is a new leader epoch);
//! - in a transactional workload (`txn_check`): the last stable offset, what a read_committed
//!   consumer returns (no aborted record, none of a transaction whose marker was lost, every
//!   acknowledged committed one below the last stable offset), no producer snapshot past the log
//!   end, the producer state against a replay of the log, and no problem `seglog check` finds.
//!
//! A failure prints the seed and the crash point; `--seed S --workload W --point P` re-runs
//! exactly that crash point.
//!
//! `workload` runs one workload and captures its images, `check` reopens an image and checks it
//! (`partition_check`: the checks of `seglog check`), `model` is what a workload knows.
//!
//! Usage: `seglog-crash [--cases N] [--seed S] [--workload W] [--point P] [--verbose]`.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    clippy::too_many_lines,
    reason = "a test harness on small, bounded values"
)]

mod check;
mod epoch_check;
mod model;
mod partition_check;
mod rng;
mod txn_check;
mod txn_workload;
mod workload;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use seglog_fs::FileSystem;
use seglog_fs::sim::SimEvent;
use seglog_log::{LogConfig, LogDirOptions, MockClock, TopicPartition};

use check::check_image;
use workload::run_workload;

const ROOT: &str = "/crash/logs";

/// The log's configuration; `segment_bytes` small enough makes appends roll by size.
fn config(segment_bytes: u64) -> LogConfig {
    let segment_bytes = segment_bytes.to_string();
    LogConfig::from_pairs([
        ("internal.segment.bytes", segment_bytes.as_str()),
        ("segment.index.bytes", "1024"),
        ("index.interval.bytes", "150"),
        ("file.delete.delay.ms", "0"),
        ("cleanup.policy", "compact,delete"),
        ("retention.ms", "-1"),
        ("min.compaction.lag.ms", "0"),
    ])
    .unwrap()
}

fn options(clock: &MockClock, segment_bytes: u64) -> LogDirOptions {
    LogDirOptions::default()
        .with_default_config(config(segment_bytes))
        .with_recovery_threads(1)
        .with_time(Arc::new(clock.clone()))
}

fn tp() -> TopicPartition {
    TopicPartition::new("crash", 0)
}

/// An offset or time index, under any suffix (`.deleted`, `.cleaned`, `.swap`).
fn is_index_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.contains(".index") || n.contains(".timeindex"))
}

fn clock_now(clock: &MockClock) -> i64 {
    seglog_log::Time::now_ms(clock)
}

fn arg(args: &[String], name: &str) -> Option<u64> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .map(|v| {
            v.parse()
                .unwrap_or_else(|_| panic!("{name} takes a number"))
        })
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cases = arg(&args, "--cases").unwrap_or(1000);
    let seed = arg(&args, "--seed").unwrap_or(0x5E6_106);
    let only_workload = arg(&args, "--workload");
    let only_point = arg(&args, "--point");
    let verbose = args.iter().any(|a| a == "--verbose");
    let started = std::time::Instant::now();
    let mut explored = 0_u64;
    let mut failures = 0_u64;
    let mut by_event: BTreeMap<String, u64> = BTreeMap::new();
    let mut workload = only_workload.unwrap_or(0);
    let (mut small_segments, mut segments_rolled_by_size) = (0_u64, 0_u64);
    let mut deleting = 0_u64;
    let (mut transactional, mut transactional_points) = (0_u64, 0_u64);
    while explored < cases {
        let run = run_workload(seed, workload);
        deleting += u64::from(run.deletes);
        transactional += u64::from(run.transactional);
        if run.segment_bytes < 1 << 20 {
            small_segments += 1;
            segments_rolled_by_size += run.rolled_by_size;
        }
        for (number, event, op, image) in run.images {
            if only_point.is_some_and(|p| p != number) {
                continue;
            }
            explored += 1;
            transactional_points += u64::from(run.transactional);
            let kind = match event {
                SimEvent::Write(_) => "write".to_owned(),
                other => format!("{other:?}"),
            };
            *by_event.entry(kind).or_default() += 1;
            let expect = &run.expects[op];
            if verbose {
                let pdir = Path::new(ROOT).join(tp().dir_name());
                let top = image.read_dir(Path::new(ROOT)).unwrap_or_default();
                for f in top.iter().filter(|f| **f != pdir) {
                    let bytes = image.live_bytes(f).unwrap_or_default();
                    eprintln!(
                        "  image {} {:?}",
                        f.display(),
                        String::from_utf8_lossy(&bytes)
                    );
                }
                for f in image.read_dir(&pdir).unwrap_or_default() {
                    let bytes = image.live_bytes(&f).unwrap_or_default();
                    let shown = if is_index_file(&f) {
                        format!("{:?}", &bytes[..bytes.len().min(48)])
                    } else {
                        String::new()
                    };
                    eprintln!("  image {} {} {shown}", f.display(), bytes.len());
                }
            }
            let clock = MockClock::new(10_000_000);
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                check_image(
                    &image,
                    run.segment_bytes,
                    &clock,
                    &run.models[op],
                    expect,
                    run.transactional,
                )
            }))
            .unwrap_or_else(|p| {
                Err(format!(
                    "panic: {}",
                    p.downcast_ref::<String>()
                        .map(String::as_str)
                        .or_else(|| p.downcast_ref::<&str>().copied())
                        .unwrap_or("?")
                ))
            });
            if let Err(problem) = result {
                failures += 1;
                if verbose {
                    let pdir = Path::new(ROOT).join(tp().dir_name());
                    for f in image.read_dir(&pdir).unwrap_or_default() {
                        eprintln!(
                            "  file {} {:?}",
                            f.display(),
                            image.live_bytes(&f).map(|b| b.len())
                        );
                    }
                    for (i, e) in run.expects.iter().enumerate().take(op + 1) {
                        eprintln!(
                            "  op {i}: {} (required {:?})",
                            e.op,
                            e.required.keys().collect::<Vec<_>>()
                        );
                    }
                }
                eprintln!(
                    "FAIL seed {seed} workload {workload} point {number} ({event:?} during op {op}: {}): {problem}\n  reproduce: cargo xtask crash --seed {seed} --workload {workload} --point {number}",
                    expect.op
                );
            } else if verbose {
                eprintln!(
                    "ok workload {workload} point {number} ({event:?} during {})",
                    expect.op
                );
            }
            if explored >= cases {
                break;
            }
        }
        if only_workload.is_some() {
            break;
        }
        workload += 1;
    }
    println!(
        "crash: {explored} crash points in {} workloads (seed {seed}; {small_segments} with small segments, {segments_rolled_by_size} rolls by size inside appends, {deleting} deleting the partition, {transactional} transactional with {transactional_points} of the points), {failures} failures, {:.1} s; points by event: {by_event:?}",
        workload + 1 - only_workload.unwrap_or(0),
        started.elapsed().as_secs_f64()
    );
    if failures > 0 {
        std::process::exit(1);
    }
}
