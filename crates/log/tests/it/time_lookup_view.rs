//! Lookups by time through the read-only view (`offsets --time`, `consume --from-time`) and the
//! live log: both go through each segment's time index, and both equal a brute-force scan of the
//! records, on logs with out-of-order timestamps and empty segments, and with time or offset
//! indexes damaged (an index that fails its checks is not used: the segment is scanned).
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_sign_loss,
    reason = "tests"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use seglog_log::inspect::PartitionView;
use seglog_log::{
    CleanShutdownMarker, ListOffset, LoadOptions, MockClock, OffsetCheckpoint,
    RECOVERY_POINT_CHECKPOINT, RealFs, TopicPartition,
};
use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};

use crate::common::{open, partition_dir, small_config};

const TS: i64 = 1_700_000_000_000;

/// A small deterministic generator (xorshift64).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Writes a log of random batches (1 to 6 records, timestamps out of order within and across
/// batches, some compressed) in small segments, one of them empty, closes it cleanly with
/// everything flushed, and returns its directory and every record's `(offset, timestamp)`.
fn random_log(root: &Path, seed: u64) -> (PathBuf, Vec<(i64, i64)>) {
    let dir = partition_dir(root);
    let clock = MockClock::new(TS);
    let (log, _) = open(&dir, small_config(900), LoadOptions::default(), &clock);
    let mut rng = Rng(seed | 1);
    let mut records = Vec::new();
    let mut offset = 0_i64;
    let mut drift = 0_i64;
    for b in 0..80 {
        let n = 1 + rng.below(6) as i32;
        drift += rng.below(40) as i64;
        let stamps: Vec<i64> = (0..n)
            .map(|_| TS - 10_000 + drift + rng.below(300) as i64 - 150)
            .collect();
        let compression = if rng.below(4) == 0 {
            Compression::Gzip
        } else {
            Compression::None
        };
        let new: Vec<NewRecord<'_>> = (0..n)
            .zip(&stamps)
            .map(|(i, ts)| NewRecord::new(i, *ts, None, Some(b"value")))
            .collect();
        let mut batch = Vec::new();
        BatchBuilder::new()
            .build(&BatchOptions::new(0, compression), new, &mut batch)
            .unwrap();
        log.append_as_leader(&mut batch).unwrap();
        for ts in stamps {
            records.push((offset, ts));
            offset += 1;
        }
        if b == 40 {
            // An empty segment between two others.
            log.roll().unwrap();
            log.roll().unwrap();
        }
    }
    assert!(log.segment_count() > 5, "{}", log.segment_count());
    log.flush().unwrap();
    log.close().unwrap();
    drop(log);
    set_shutdown(&dir, true, offset);
    (dir, records)
}

/// Marks the log directory cleanly shut down (or not) with the recovery point at `point`.
fn set_shutdown(dir: &Path, clean: bool, point: i64) {
    let log_dir = dir.parent().unwrap();
    if clean {
        CleanShutdownMarker::new(RealFs, log_dir).write(-1).unwrap();
    } else {
        let _ = std::fs::remove_file(log_dir.join(seglog_log::CLEAN_SHUTDOWN_FILE));
    }
    OffsetCheckpoint::new(RealFs, log_dir.join(RECOVERY_POINT_CHECKPOINT))
        .write(&BTreeMap::from([(TopicPartition::new("orders", 0), point)]))
        .unwrap();
}

/// The first record whose timestamp is at least `target`, by walking every record.
fn brute(records: &[(i64, i64)], target: i64) -> Option<(i64, i64)> {
    records.iter().copied().find(|(_, ts)| *ts >= target)
}

/// Every target worth asking: each timestamp, one below and one above, and beyond both ends.
fn targets(records: &[(i64, i64)]) -> Vec<i64> {
    let mut out: Vec<i64> = records
        .iter()
        .flat_map(|(_, ts)| [ts - 1, *ts, ts + 1])
        .collect();
    out.extend([0, i64::MAX]);
    out.sort_unstable();
    out.dedup();
    out
}

/// Asserts that the view answers every target, and the max timestamp, as the brute force does.
fn assert_view_matches(dir: &Path, records: &[(i64, i64)], what: &str) {
    let view = PartitionView::open(RealFs, dir).unwrap();
    for target in targets(records) {
        let found = view
            .offset_for_timestamp(target)
            .unwrap()
            .map(|f| (f.offset, f.timestamp));
        assert_eq!(found, brute(records, target), "{what}: target {target}");
    }
    let max = records.iter().map(|(_, ts)| *ts).max().unwrap();
    let want = brute(records, max);
    let got = view
        .max_timestamp()
        .unwrap()
        .map(|f| (f.offset, f.timestamp));
    assert_eq!(got, want, "{what}: max timestamp");
}

/// The segments' index files of one kind (`index` or `timeindex`), oldest first, non-empty ones.
fn index_files(dir: &Path, extension: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .filter(|p| std::fs::metadata(p).unwrap().len() >= 24)
        .collect();
    out.sort();
    out
}

#[test]
fn the_view_and_the_live_log_answer_as_a_scan_of_every_record() {
    for seed in [1, 7, 42, 1234] {
        let root = tempfile::tempdir().unwrap();
        let (dir, records) = random_log(root.path(), seed);
        assert!(!index_files(&dir, "timeindex").is_empty());
        assert_view_matches(&dir, &records, "clean");
        // The live log, reopened, gives the same answers.
        let clock = MockClock::new(TS);
        let (log, _) = open(&dir, small_config(900), LoadOptions::default(), &clock);
        for target in targets(&records) {
            let found = log
                .offset_for_timestamp(ListOffset::Timestamp(target))
                .unwrap()
                .map(|f| (f.offset, f.timestamp));
            assert_eq!(found, brute(&records, target), "live: target {target}");
        }
        log.close().unwrap();
    }
}

#[test]
fn a_damaged_index_costs_a_scan_never_a_wrong_answer() {
    type Damage = fn(&Path);
    let damages: [(&str, &str, Damage); 5] = [
        ("timeindex", "a torn entry", |p| {
            let mut b = std::fs::read(p).unwrap();
            b.extend([1, 2, 3, 4, 5]);
            std::fs::write(p, b).unwrap();
        }),
        (
            "timeindex",
            "the first entry's timestamp past the last",
            |p| {
                let mut b = std::fs::read(p).unwrap();
                b[..8].copy_from_slice(&(TS * 2).to_be_bytes());
                std::fs::write(p, b).unwrap();
            },
        ),
        ("timeindex", "timestamps out of order", |p| {
            let mut b = std::fs::read(p).unwrap();
            let n = b.len() / 12;
            let middle = (n / 2) * 12;
            let last_ts = i64::from_be_bytes(b[(n - 1) * 12..(n - 1) * 12 + 8].try_into().unwrap());
            b[middle..middle + 8].copy_from_slice(&(last_ts + 1).to_be_bytes());
            std::fs::write(p, b).unwrap();
        }),
        ("timeindex", "missing", |p| std::fs::remove_file(p).unwrap()),
        ("index", "positions shifted", |p| {
            let mut b = std::fs::read(p).unwrap();
            for entry in b.chunks_mut(8) {
                let pos = u32::from_be_bytes(entry[4..8].try_into().unwrap());
                entry[4..8].copy_from_slice(&(pos + 3).to_be_bytes());
            }
            std::fs::write(p, b).unwrap();
        }),
    ];
    for (extension, what, damage) in damages {
        let root = tempfile::tempdir().unwrap();
        let (dir, records) = random_log(root.path(), 99);
        for file in index_files(&dir, extension) {
            damage(&file);
        }
        assert_view_matches(&dir, &records, what);
    }
}

#[test]
fn after_an_unclean_stop_the_indexes_kafka_rebuilds_are_not_used() {
    let root = tempfile::tempdir().unwrap();
    let (dir, records) = random_log(root.path(), 5);
    // Each time index replaced by one entry that passes every check, the `.log` agreeing with
    // it (the max timestamp of the batch at the last offset-index entry, at that batch's last
    // offset), but that hides the earlier records stamped later, as a stale index can. Kafka
    // rebuilds it when it recovers the segment; the view must not use it either.
    let mut replaced = 0;
    for index in index_files(&dir, "index") {
        let entries = std::fs::read(&index).unwrap();
        let last = &entries[entries.len() - 8..];
        let position = u32::from_be_bytes(last[4..8].try_into().unwrap()) as usize;
        let log = std::fs::read(index.with_extension("log")).unwrap();
        let max_ts: [u8; 8] = log[position + 35..position + 43].try_into().unwrap();
        let mut entry = max_ts.to_vec();
        entry.extend(&last[..4]);
        std::fs::write(index.with_extension("timeindex"), entry).unwrap();
        replaced += 1;
    }
    assert!(replaced > 2);
    set_shutdown(&dir, false, 0);
    assert_view_matches(&dir, &records, "unclean, recovery point 0");
    // After a clean shutdown Kafka serves such an index as it is, and so does the view: the
    // answers differ from the scan (what the check above guards against).
    set_shutdown(&dir, true, i64::MAX);
    let view = PartitionView::open(RealFs, &dir).unwrap();
    let wrong = targets(&records).into_iter().any(|t| {
        view.offset_for_timestamp(t)
            .unwrap()
            .map(|f| (f.offset, f.timestamp))
            != brute(&records, t)
    });
    assert!(
        wrong,
        "the replaced indexes are used after a clean shutdown"
    );
}
