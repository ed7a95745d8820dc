//! `log_append`'s limit and floors, interleaved in one process (docs/perf/log-append.md): the
//! workload (`PartitionLog::append_as_leader` of idempotent 1 KiB x 16 batches, a roll every 1/8
//! of the data), its bench-compare limit (`write_all` of the batch bytes), and two floors that
//! Kafka's rules impose: `write_all` plus one CRC-32C pass over the bytes the CRC covers, and that
//! plus a new file every 1/8 of the data whose predecessor is fdatasync'ed on another thread (the
//! roll's background flush); and the workload without its rolls. Every round runs each system
//! once, in turn; the medians of wall and of the timing thread's CPU time are printed.
//!
//! `cargo run --release -p seglog-benches --example log_append_floor -- DIR MIB ROUNDS`

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_precision_loss,
    clippy::cast_possible_wrap,
    clippy::field_reassign_with_default,
    reason = "a measuring tool: a failure is a panic, the figures are floats"
)]

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use seglog_log::{LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

const SYSTEMS: [&str; 5] = [
    "log_append",
    "write_all",
    "write_all+crc",
    "write_all+crc+roll",
    "log_append, no roll",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let dir = Path::new(&args[1]);
    let mib: usize = args[2].parse().unwrap();
    let rounds: usize = args[3].parse().unwrap();
    // An optional fourth argument runs only the systems whose name contains it (for `perf`).
    let only = args.get(4).map_or("", String::as_str);
    let batches = idempotent_batches(mib * 1024 / 16);
    let payload = (batches.len() * 16 * 1024) as f64 / f64::from(1 << 20);
    let segment_bytes = ((mib << 20) / 8).max(1 << 20);
    std::fs::create_dir_all(dir).unwrap();
    let mut wall = vec![Vec::new(); SYSTEMS.len()];
    let mut cpu = vec![Vec::new(); SYSTEMS.len()];
    for _ in 0..rounds {
        for (i, system) in SYSTEMS.iter().enumerate() {
            if !system.contains(only) {
                continue;
            }
            let (w, c) = match *system {
                "log_append" => log_append(dir, &batches, segment_bytes),
                "write_all" => write_all(dir, &batches, false, usize::MAX),
                "write_all+crc" => write_all(dir, &batches, true, usize::MAX),
                "write_all+crc+roll" => write_all(dir, &batches, true, segment_bytes),
                _ => log_append(dir, &batches, 1 << 30),
            };
            wall[i].push(payload / w);
            cpu[i].push(payload / c);
        }
    }
    let limit = if wall[1].is_empty() {
        (f64::NAN, f64::NAN)
    } else {
        (median(&mut wall[1]), median(&mut cpu[1]))
    };
    println!("{mib} MiB, {rounds} rounds, MiB/s (ratio to write_all)");
    for (i, system) in SYSTEMS.iter().enumerate() {
        if wall[i].is_empty() {
            continue;
        }
        let (w, c) = (median(&mut wall[i]), median(&mut cpu[i]));
        println!(
            "{system:20} wall {w:6.0} ({:.2}x)  thread cpu {c:6.0} ({:.2}x)",
            w / limit.0,
            c / limit.1
        );
    }
}

/// The bench-compare workload: a fresh log, the batches copied (untimed), appended as a leader.
fn log_append(dir: &Path, batches: &[Vec<u8>], segment_bytes: usize) -> (f64, f64) {
    let root = dir.join("log");
    let _ = std::fs::remove_dir_all(&root);
    let mut config = LogConfig::default();
    config.segment_bytes = i32::try_from(segment_bytes).unwrap();
    let (log, _) = PartitionLog::open(
        RealFs,
        &root.join("bench-0"),
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let mut copies = batches.to_vec();
    let (started, cpu) = (Instant::now(), thread_cpu());
    for bytes in &mut copies {
        log.append_as_leader(bytes).unwrap();
    }
    let times = (started.elapsed().as_secs_f64(), thread_cpu() - cpu);
    log.close().unwrap();
    drop(log);
    std::fs::remove_dir_all(&root).unwrap();
    times
}

/// `write_all` of the batches, with a CRC-32C of each batch's bytes 21.. when `crc`, into a new
/// file every `segment_bytes` whose predecessor is fdatasync'ed on its own thread.
fn write_all(dir: &Path, batches: &[Vec<u8>], crc: bool, segment_bytes: usize) -> (f64, f64) {
    let root = dir.join("files");
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).unwrap();
    let mut files = 0;
    let mut file = File::create(root.join("0.log")).unwrap();
    let mut written = 0;
    let mut flushes = Vec::new();
    let mut sum = 0_u32;
    let (started, cpu) = (Instant::now(), thread_cpu());
    for bytes in batches {
        if written + bytes.len() > segment_bytes {
            files += 1;
            let old = std::mem::replace(
                &mut file,
                File::create(root.join(format!("{files}.log"))).unwrap(),
            );
            flushes.push(std::thread::spawn(move || old.sync_data().unwrap()));
            written = 0;
        }
        if crc {
            sum ^= seglog_record_format::crc32c(&bytes[21..]);
        }
        file.write_all(bytes).unwrap();
        written += bytes.len();
    }
    let times = (started.elapsed().as_secs_f64(), thread_cpu() - cpu);
    std::hint::black_box(sum);
    for flush in flushes {
        flush.join().unwrap();
    }
    drop(file);
    std::fs::remove_dir_all(&root).unwrap();
    times
}

/// bench-compare's `idempotent_batches`: producer 1000, epoch 0, sequences from 0, base offset 0.
fn idempotent_batches(n: usize) -> Vec<Vec<u8>> {
    let value = vec![b'v'; 1024];
    let mut builder = BatchBuilder::new();
    (0..n as i64)
        .map(|b| {
            let records = (0..16).map(|i| {
                NewRecord::new(
                    i,
                    1_700_000_000_000 + b * 16 + i64::from(i),
                    None,
                    Some(&value[..]),
                )
            });
            let mut options = BatchOptions::new(0, Compression::None);
            options.producer_id = 1000;
            options.producer_epoch = 0;
            options.base_sequence = i32::try_from(b * 16).unwrap();
            let mut out = Vec::new();
            builder.build(&options, records, &mut out).unwrap();
            out
        })
        .collect()
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn thread_cpu() -> f64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    t.tv_sec as f64 + t.tv_nsec as f64 * 1e-9
}
