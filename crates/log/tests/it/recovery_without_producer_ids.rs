//! The rule the loader relies on to skip the producer-state walks of a recovered segment: a
//! segment whose batches carry no producer id gives no `.txnindex` entry and leaves the state's
//! end offset after its last batch, so the recovery plan judges it from its own scan and the
//! load replays nothing from its `.log`; a segment with producer ids is still walked. Judged by
//! the bytes an uninterrupted run wrote: every `.txnindex` and producer snapshot after an unclean
//! reopen is what the appends and rolls wrote.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use seglog_fs::sim::{SimFs, Tear};
use seglog_fs::{File as _, FileSystem as _, OpenMode};
use seglog_log::producer::snapshot_path;
use seglog_log::record::{ControlRecordType, batches};
use seglog_log::{LoadOptions, LoadReport, MockClock, PartitionLog, naming};

use seglog_segment::txn_index::AbortedTxn;

use crate::common;
use crate::txn_log::{TS, Workload, expected, expected_txn_entries, facts, txn_entries};

const DIR: &str = "/sim/logs/plain-0";

fn dir() -> PathBuf {
    PathBuf::from(DIR)
}

fn open(fs: &SimFs) -> (PartitionLog<SimFs>, LoadReport) {
    PartitionLog::open(
        fs.clone(),
        &dir(),
        common::small_config(600),
        LoadOptions::default(),
        Arc::new(MockClock::new(TS)),
    )
    .unwrap()
}

/// Runs of plain batches long enough to fill segments of their own, between transactions (one
/// aborted in each run) and idempotent batches; the log ends in plain batches.
fn workload() -> Workload {
    let mut w = Workload::new();
    for round in 0..3 {
        for _ in 0..12 {
            w.plain(4);
        }
        w.data(1, 3, true).data(2, 2, true);
        w.marker(2, ControlRecordType::Abort, 1);
        w.data(3, 2, false);
        w.marker(1, ControlRecordType::Commit, 1);
        if round == 1 {
            // A transaction left open across the plain segments after it.
            w.data(4, 2, true);
        }
    }
    for _ in 0..12 {
        w.plain(4);
    }
    w
}

/// The files of `dir` with extension `ext`, by path, with their bytes.
fn files(fs: &SimFs, ext: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out: Vec<(PathBuf, Vec<u8>)> = fs
        .read_dir(&dir())
        .unwrap()
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .map(|p| {
            let bytes = fs.live_bytes(&p).unwrap();
            (p, bytes)
        })
        .collect();
    out.sort();
    out
}

/// The base offsets of the segments whose `.log` holds no batch with a producer id, read here
/// with the record format's own iterator.
fn segments_without_producer_ids(fs: &SimFs, bases: &[i64]) -> BTreeSet<i64> {
    bases
        .iter()
        .copied()
        .filter(|base| {
            let bytes = fs.live_bytes(&naming::log_file(&dir(), *base, "")).unwrap();
            batches(&bytes).all(|b| b.unwrap().v2().unwrap().producer_id() < 0)
        })
        .collect()
}

/// A partition written and closed by one uninterrupted run, then its checkpointed state gone:
/// an unclean reopen recovers every segment, the plan names exactly the segments without
/// producer ids (each then judged from the plan's scan alone), and the `.txnindex` files and
/// producer snapshots afterwards are byte for byte those the appends and rolls wrote.
#[test]
fn an_unclean_reopen_rebuilds_the_same_txn_indexes_and_snapshots() {
    let w = workload();
    let fs = SimFs::new();
    let (log, _) = open(&fs);
    w.append_to(&log);
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    let end = log.log_end_offset();
    log.close().unwrap();
    drop(log);
    let plain = segments_without_producer_ids(&fs, &bases);
    assert!(plain.len() >= 6, "{plain:?} of {bases:?}");
    assert!(plain.len() < bases.len(), "{plain:?} of {bases:?}");
    assert!(plain.contains(bases.last().unwrap()), "the log ends in one");
    let txn_indexes = files(&fs, "txnindex");
    assert!(
        txn_indexes.iter().any(|(_, b)| !b.is_empty()),
        "{txn_indexes:?}"
    );
    let snapshots = files(&fs, "snapshot");
    assert_eq!(snapshots.last().unwrap().0, snapshot_path(&dir(), end));
    let fs = fs.crash(Tear::DropAll);
    for (path, _) in &snapshots {
        fs.remove_file(path).unwrap();
    }

    let (log, report) = open(&fs);
    let mut scanned = report.plan.scanned.clone();
    scanned.sort_unstable();
    assert_eq!(scanned, bases);
    let judged: BTreeSet<i64> = report.plan.without_producer_ids.keys().copied().collect();
    assert_eq!(judged, plain);
    for base in &plain {
        let size = fs
            .live_bytes(&naming::log_file(&dir(), *base, ""))
            .unwrap()
            .len() as u64;
        assert_eq!(report.plan.without_producer_ids[base].0, size);
    }
    assert!(
        report.plan.corrupt_txn_indexes.is_empty(),
        "{}",
        report.plan
    );
    assert!(report.rebuilt_txn_indexes.is_empty());
    let want = expected(&w.batches);
    assert_eq!(facts(&log), want.producers);
    assert_eq!(txn_entries(&log), expected_txn_entries(&log, &want));
    assert_eq!(log.log_end_offset(), end);
    log.close().unwrap();
    drop(log);
    assert_eq!(files(&fs, "txnindex"), txn_indexes);
    assert_eq!(files(&fs, "snapshot"), snapshots);
}

/// Writes, durably, one aborted transaction within `base`'s offsets (so Kafka's sanity check
/// passes it) into that segment's `.txnindex`.
fn write_stray_txn_entry(fs: &SimFs, base: i64) {
    let stray = naming::txn_index_file(&dir(), base, "");
    let entry = AbortedTxn::new(2, base, base + 1, base).to_bytes();
    let file = fs.open(&stray, OpenMode::CreateOrOpen).unwrap();
    file.write_all_at(&entry, 0).unwrap();
    file.sync_data().unwrap();
}

/// What the plan's shortcut must still catch: a `.txnindex` beside a segment without producer
/// ids that holds an entry (which passes Kafka's sanity check) is not what the markers give, and
/// is rewritten empty; a deleted `.txnindex` of a segment with an aborted transaction is
/// rebuilt by the walk, byte for byte. Nothing else changes.
#[test]
fn wrong_txn_indexes_are_still_found_and_rewritten() {
    let w = workload();
    let fs = SimFs::new();
    let (log, _) = open(&fs);
    w.append_to(&log);
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    let entries = txn_entries(&log);
    log.close().unwrap();
    drop(log);
    let fs = fs.crash(Tear::DropAll);
    let plain = segments_without_producer_ids(&fs, &bases);
    let want = files(&fs, "txnindex");
    // An entry within a plain segment's offsets (so Kafka's sanity check passes it) in its
    // `.txnindex`.
    let aborting = entries.iter().find(|(_, e)| !e.is_empty()).unwrap().0;
    let victim = *plain.iter().find(|b| *b > aborting).unwrap();
    write_stray_txn_entry(&fs, victim);
    let lost = naming::txn_index_file(&dir(), *aborting, "");
    fs.remove_file(&lost).unwrap();
    for (path, _) in files(&fs, "snapshot") {
        fs.remove_file(&path).unwrap();
    }
    let logs_before = files(&fs, "log");

    let plan = seglog_log::plan_partition(&fs, &dir(), 64, 4096, LoadOptions::default()).unwrap();
    let mut flagged: Vec<i64> = plan.corrupt_txn_indexes.iter().map(|(b, _)| *b).collect();
    flagged.sort_unstable();
    assert_eq!(flagged, vec![*aborting, victim], "{plan}");
    let (log, _) = open(&fs);
    let want_entries = expected(&w.batches);
    assert_eq!(txn_entries(&log), expected_txn_entries(&log, &want_entries));
    log.close().unwrap();
    drop(log);
    let got: Vec<_> = files(&fs, "txnindex")
        .into_iter()
        .filter(|(_, b)| !b.is_empty())
        .collect();
    let want: Vec<_> = want.into_iter().filter(|(_, b)| !b.is_empty()).collect();
    assert_eq!(got, want);
    assert_eq!(files(&fs, "log"), logs_before);
}

/// 40 rounds of two plain records, each after a batch of 4 idempotent records of one of three
/// producers when `idempotent`, appended to a new log that is then closed cleanly: the
/// workload, the file system and the segments' base offsets (at least 4).
fn written_and_closed(idempotent: bool) -> (Workload, SimFs, Vec<i64>) {
    let mut w = Workload::new();
    for round in 0..40 {
        if idempotent {
            w.data(1 + round % 3, 4, false);
        }
        w.plain(2);
    }
    let fs = SimFs::new();
    let (log, _) = open(&fs);
    w.append_to(&log);
    let bases: Vec<i64> = log.segments().keys().copied().collect();
    assert!(bases.len() >= 4, "{bases:?}");
    log.close().unwrap();
    drop(log);
    (w, fs, bases)
}

/// Segments of idempotent producers only (no control batch): the plan's scan keeps their
/// batches' headers, so neither the plan's `.txnindex` check nor the load reads a `.log` again
/// after that scan; the state and snapshots are still byte for byte those the appends wrote.
/// With the headers not kept, both walks read every batch's header again (the read count
/// below more than doubles).
#[test]
fn idempotent_segments_replay_from_the_scans_headers_without_reading_again() {
    let (w, fs, bases) = written_and_closed(true);
    let snapshots = files(&fs, "snapshot");
    let txn_indexes = files(&fs, "txnindex");
    let fs = fs.crash(Tear::DropAll);
    for (path, _) in &snapshots {
        fs.remove_file(path).unwrap();
    }
    let logs: Vec<(PathBuf, Vec<u8>)> = files(&fs, "log");
    let log_bytes: u64 = logs.iter().map(|(_, b)| b.len() as u64).sum();
    let batch_count: u64 = logs.iter().map(|(_, b)| batches(b).count() as u64).sum();

    let before = fs.stats();
    let (log, report) = open(&fs);
    let after = fs.stats();
    assert_eq!(report.plan.scanned.len(), bases.len());
    assert!(
        report.plan.without_producer_ids.is_empty(),
        "{}",
        report.plan
    );
    // The plan's scan reads each `.log` once, in chunks; the rest of the open reads indexes and
    // snapshots, a few reads each, but no batch again.
    let reads = after.reads - before.reads;
    assert!(
        reads < batch_count,
        "{reads} reads for {batch_count} batches in {} segments",
        bases.len()
    );
    assert!(after.bytes_read - before.bytes_read < 2 * log_bytes);
    let want = expected(&w.batches);
    assert_eq!(facts(&log), want.producers);
    log.close().unwrap();
    drop(log);
    assert_eq!(files(&fs, "snapshot"), snapshots);
    assert_eq!(files(&fs, "txnindex"), txn_indexes);
}

/// Segments of idempotent producers only complete no transaction, so the plan judges their
/// `.txnindex` files without replaying producer state: each must be empty. A stray entry
/// (within the segment's offsets, so Kafka's sanity check passes it) is still found, in that
/// segment alone, and the load rewrites the file empty; the state is still the appends'.
#[test]
fn a_stray_txn_entry_beside_idempotent_data_is_found_without_a_replay() {
    let (w, fs, bases) = written_and_closed(true);
    let fs = fs.crash(Tear::DropAll);
    for (path, _) in files(&fs, "snapshot") {
        fs.remove_file(&path).unwrap();
    }
    let victim = bases[bases.len() / 2];
    write_stray_txn_entry(&fs, victim);

    let plan = seglog_log::plan_partition(&fs, &dir(), 64, 4096, LoadOptions::default()).unwrap();
    let flagged: Vec<i64> = plan.corrupt_txn_indexes.iter().map(|(b, _)| *b).collect();
    assert_eq!(flagged, vec![victim], "{plan}");
    let (log, report) = open(&fs);
    assert_eq!(report.plan.corrupt_txn_indexes.len(), 1);
    assert!(txn_entries(&log).iter().all(|(_, e)| e.is_empty()));
    assert_eq!(facts(&log), expected(&w.batches).producers);
    log.close().unwrap();
    drop(log);
    assert!(files(&fs, "txnindex").iter().all(|(_, b)| b.is_empty()));
}

/// Index files lost in a crash are written from the plan's scan (`SegmentScan::index_image`):
/// the unclean reopen reads each `.log` once, in the scan's chunks, and not a batch header
/// again, and the indexes it writes, as the producer state it rebuilds, are byte for byte what
/// the appends wrote. With plain batches only, and with idempotent ones (their state replayed
/// from the scan's kept headers). With the images not used, the rebuild walks every batch's
/// header again and the read count more than doubles.
#[test]
fn lost_indexes_are_written_from_the_scans_images_without_reading_again() {
    for idempotent in [false, true] {
        let (w, fs, bases) = written_and_closed(idempotent);
        let indexes = (files(&fs, "index"), files(&fs, "timeindex"));
        let snapshots = files(&fs, "snapshot");
        let fs = fs.crash(Tear::DropAll);
        for (path, _) in indexes.0.iter().chain(&indexes.1).chain(&snapshots) {
            fs.remove_file(path).unwrap();
        }
        let batch_count: u64 = files(&fs, "log")
            .iter()
            .map(|(_, b)| batches(b).count() as u64)
            .sum();

        let before = fs.stats();
        let (log, report) = open(&fs);
        let reads = fs.stats().reads - before.reads;
        let rebuilt: Vec<i64> = report.recovered.iter().map(|(b, _)| *b).collect();
        assert_eq!(rebuilt, bases, "idempotent {idempotent}");
        assert!(
            reads < batch_count / 2,
            "idempotent {idempotent}: {reads} reads for {batch_count} batches in {} segments",
            bases.len()
        );
        assert_eq!(facts(&log), expected(&w.batches).producers);
        log.close().unwrap();
        drop(log);
        assert_eq!(
            (files(&fs, "index"), files(&fs, "timeindex")),
            indexes,
            "idempotent {idempotent}"
        );
        assert_eq!(files(&fs, "snapshot"), snapshots, "idempotent {idempotent}");
    }
}

/// A torn write at the end of the active segment, the common crash: the plan's scan finds where
/// its valid prefix ends, and the load cuts it there, writes its indexes from the scan's image
/// (`LogSegment::recover_from`) and replays its producer state from the scan's kept headers,
/// without reading the `.log` again. The torn bytes go to the quarantine; every file left is
/// byte for byte what the appends wrote. One segment of 120 batches, plain and idempotent; with
/// the image not used for the cut, the segment is read and checked again, and its headers
/// walked: the bytes read go from 1.1 to 3.1 times the `.log`'s size.
#[test]
fn a_torn_tail_is_cut_from_the_scans_image_without_reading_again() {
    let open_big = |fs: &SimFs| {
        PartitionLog::open(
            fs.clone(),
            &dir(),
            common::small_config(1 << 20),
            LoadOptions::default(),
            Arc::new(MockClock::new(TS)),
        )
        .unwrap()
    };
    for idempotent in [false, true] {
        let mut w = Workload::new();
        for round in 0..40 {
            if idempotent {
                w.data(1 + round % 3, 4, false)
                    .data(1 + (round + 1) % 3, 2, false);
            } else {
                w.plain(4).plain(2);
            }
            w.plain(2);
        }
        let fs = SimFs::new();
        let (log, _) = open_big(&fs);
        w.append_to(&log);
        assert_eq!(log.segments().len(), 1);
        log.close().unwrap();
        drop(log);
        let kinds = ["log", "index", "timeindex", "txnindex", "snapshot"];
        let want: Vec<_> = kinds.iter().map(|k| files(&fs, k)).collect();
        let fs = fs.crash(Tear::DropAll);
        for (path, _) in files(&fs, "snapshot") {
            fs.remove_file(&path).unwrap();
        }
        // The first 40 bytes of a batch, as a write torn by the crash leaves them.
        let active = naming::log_file(&dir(), 0, "");
        let bytes = fs.live_bytes(&active).unwrap();
        let file = fs.open(&active, OpenMode::CreateOrOpen).unwrap();
        file.write_all_at(&bytes[..40], bytes.len() as u64).unwrap();
        file.sync_data().unwrap();
        drop(file);
        assert_eq!(batches(&bytes).count(), 120);

        let before = fs.stats();
        let (log, report) = open_big(&fs);
        let read = fs.stats().bytes_read - before.bytes_read;
        assert_eq!(report.plan.cuts.len(), 1, "{}", report.plan);
        assert_eq!(report.plan.cuts[0].bytes, 40);
        // The scan's one pass, and the index files it compares.
        assert!(
            read < bytes.len() as u64 * 3 / 2,
            "idempotent {idempotent}: {read} bytes read for a .log of {}",
            bytes.len()
        );
        assert_eq!(facts(&log), expected(&w.batches).producers);
        log.close().unwrap();
        drop(log);
        let got: Vec<_> = kinds.iter().map(|k| files(&fs, k)).collect();
        assert_eq!(got, want, "idempotent {idempotent}");
    }
}
