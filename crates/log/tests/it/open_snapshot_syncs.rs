//! The producer snapshots an open writes are synced at its end (issue 35): written unsynced
//! while the partition loads, then each one synced and its directory once, before
//! `PartitionLog::open` or `LogDir::open` returns. A power loss right after the open returns
//! finds every one of them whole, and the open syncs the directory fewer times than it writes
//! snapshots (once per snapshot before).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_fs::FileSystem as _;
use seglog_fs::sim::{SimFs, Tear};
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{LoadOptions, LogDir, LogDirOptions, MockClock, PartitionLog};

use crate::common;

const ROOT: &str = "/sim/logs";
const DIR: &str = "/sim/logs/orders-0";

/// Batch `n` of one idempotent producer: three records, sequence `3n`.
fn idempotent_batch(n: i32) -> Vec<u8> {
    let values: Vec<String> = (0..3).map(|i| format!("v{n}-{i}")).collect();
    let records = values.iter().enumerate().map(|(i, v)| {
        NewRecord::new(
            i32::try_from(i).unwrap(),
            1_000 + i64::from(n),
            Some(b"k"),
            Some(v.as_bytes()),
        )
    });
    let options = BatchOptions::new(0, Compression::None).with_producer(7, 0, n * 3);
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&options, records, &mut out)
        .unwrap();
    out
}

/// A partition of several small segments written by one idempotent producer, its data durable,
/// left as an unclean shutdown leaves it and without its snapshots: an open recovers every
/// segment and writes a snapshot for each.
fn unclean_partition() -> SimFs {
    let fs = SimFs::new();
    let (log, _) = PartitionLog::open(
        fs.clone(),
        Path::new(DIR),
        common::small_config(600),
        LoadOptions::default(),
        Arc::new(MockClock::new(1_000)),
    )
    .unwrap();
    for n in 0..30 {
        log.append_as_leader(&mut idempotent_batch(n)).unwrap();
    }
    log.flush().unwrap();
    drop(log);
    for path in snapshots(&fs) {
        fs.remove_file(&path).unwrap();
    }
    fs.sync_dir(Path::new(DIR)).unwrap();
    fs
}

fn snapshots(fs: &SimFs) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs
        .read_dir(Path::new(DIR))
        .unwrap()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "snapshot"))
        .collect();
    out.sort();
    out
}

/// Every snapshot the open left is in the image of a power loss right after it, byte for byte;
/// the open wrote more than one, and synced the directory fewer times than that.
fn check_durable(fs: &SimFs, dir_syncs_before: u64) {
    let written = snapshots(fs);
    assert!(
        written.len() > 2,
        "one snapshot per recovered segment: {written:?}"
    );
    let dir_syncs = fs.stats().dir_syncs - dir_syncs_before;
    assert!(
        dir_syncs < written.len() as u64,
        "{dir_syncs} directory syncs for {} snapshots",
        written.len()
    );
    let crashed = fs.crash(Tear::DropAll);
    assert_eq!(snapshots(&crashed), written);
    for path in &written {
        assert_eq!(
            crashed.live_bytes(path),
            fs.live_bytes(path),
            "{}",
            path.display()
        );
    }
}

#[test]
fn a_partition_opens_with_its_snapshots_durable() {
    let fs = unclean_partition();
    let before = fs.stats().dir_syncs;
    let (log, report) = PartitionLog::open(
        fs.clone(),
        Path::new(DIR),
        common::small_config(600),
        LoadOptions::default(),
        Arc::new(MockClock::new(2_000)),
    )
    .unwrap();
    assert!(report.segments_scanned > 2);
    assert_eq!(log.producer_id_count(), 1);
    check_durable(&fs, before);
}

#[test]
fn a_log_dir_opens_with_its_partitions_snapshots_durable() {
    let fs = unclean_partition();
    let before = fs.stats().dir_syncs;
    let options = LogDirOptions::default()
        .with_default_config(common::small_config(600))
        .with_time(Arc::new(MockClock::new(2_000)));
    let (dir, report) = LogDir::open(fs.clone(), Path::new(ROOT), options).unwrap();
    assert!(report.failed.is_empty());
    assert_eq!(dir.logs().len(), 1);
    // The log directory's own files (its lock, the checkpoints it reads) add no directory sync
    // of the partition; the root's syncs are not the partition's, but they count here too.
    check_durable(&fs, before);
}
