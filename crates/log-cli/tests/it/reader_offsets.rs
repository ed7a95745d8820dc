//! The readers apply recovery's offset rules before recovery has run (issue 17, point 6), with the
//! real binary on real files: a partition of two segments (ten batches of three records,
//! offsets 0..=29, then 30..=35) where one batch's base offset (outside the CRC) went backwards
//! into the batch before, or reaches the next segment's base offset. `dump` (text and JSON) and
//! `consume` report the damage naming the file and byte position, exit 1, and never show that
//! batch's records; on the healthy files dump's output is the whole file.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};

use crate::run::{seglog, text};

const FIRST: &str = "00000000000000000000.log";

/// Writes `t-0` under `root` by hand: segment 0 with batches of three records "r0".."r29",
/// segment 30 with "r30".."r35". Returns the directory and the first segment's batch positions.
fn partition(root: &Path, codec: Compression) -> (PathBuf, Vec<usize>) {
    let dir = root.join("t-0");
    std::fs::create_dir(&dir).unwrap();
    let mut builder = BatchBuilder::new();
    let mut positions = Vec::new();
    for (name, batches) in [(FIRST, 0..10), ("00000000000000000030.log", 10..12)] {
        let mut file = Vec::new();
        for b in batches {
            let values: Vec<Vec<u8>> = (b * 3..b * 3 + 3)
                .map(|i| format!("r{i}").into_bytes())
                .collect();
            let records = values
                .iter()
                .zip(0..)
                .map(|(v, i)| NewRecord::new(i, 1_700_000_000_000, None, Some(&v[..])));
            if name == FIRST {
                positions.push(file.len());
            }
            builder
                .build(&BatchOptions::new(b * 3, codec), records, &mut file)
                .unwrap();
        }
        std::fs::write(dir.join(name), &file).unwrap();
    }
    (dir, positions)
}

fn set_base_offset(log: &Path, at: usize, base: i64) {
    let mut bytes = std::fs::read(log).unwrap();
    bytes[at..at + 8].copy_from_slice(&base.to_be_bytes());
    std::fs::write(log, &bytes).unwrap();
}

fn values(from: usize, to: usize) -> Vec<String> {
    (from..to).map(|i| format!("r{i}")).collect()
}

/// Runs dump (plain, deep, JSON) and consume on the partition whose first segment is damaged at
/// `at`, where the records before it are `0..kept`; `what` is the start of the damage's text.
fn readers_report(dir: &Path, at: usize, kept: usize, what: &str) {
    let log = dir.join(FIRST);
    let named = format!("{}: at byte {at}: {what}", log.display());

    // dump, given the file by a relative path in its own directory, finds the next segment there.
    let out = seglog(&["dump", "--files", FIRST, "--deep-iteration"], dir, b"");
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}\n{stderr}");
    let relative = format!("{FIRST}: at byte {at}: {what}");
    assert!(stderr.contains(&relative), "{relative} not in:\n{stderr}");
    let records: Vec<i64> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("| offset: "))
        .map(|l| l.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        records,
        (0..i64::try_from(kept).unwrap()).collect::<Vec<_>>(),
        "{stdout}"
    );
    let batches = stdout
        .lines()
        .filter(|l| l.starts_with("baseOffset:"))
        .count();
    assert_eq!(batches, kept / 3, "{stdout}");
    assert!(!stderr.contains("Non-consecutive"), "{stderr}");

    let out = seglog(
        &["dump", "--files", log.to_str().unwrap(), "--json"],
        dir,
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(
        (&last["type"], &last["kind"], &last["position"]),
        (
            &serde_json::json!("problem"),
            &serde_json::json!("impossible_offsets"),
            &serde_json::json!(at)
        ),
        "{lines:?}"
    );
    assert_eq!(lines.len(), kept / 3 + 1, "{lines:?}");

    let out = seglog(
        &["consume", dir.to_str().unwrap(), "--from-beginning"],
        dir,
        b"",
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&log.display().to_string()) && stderr.contains(&format!("byte {at}")),
        "{named}: {stderr}"
    );
    let consumed: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(consumed, values(0, kept), "{stderr}");
}

#[test]
fn healthy_segments_dump_whole_and_consume_whole() {
    for codec in [Compression::None, Compression::Gzip] {
        let root = tempfile::tempdir().unwrap();
        let (dir, _) = partition(root.path(), codec);
        let out = seglog(&["dump", "--files", FIRST, "--deep-iteration"], &dir, b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let stdout = text(&out.stdout);
        assert_eq!(
            stdout
                .lines()
                .filter(|l| l.starts_with("| offset:"))
                .count(),
            30
        );
        assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
        let out = seglog(&["consume", "t-0", "--from-beginning"], root.path(), b"");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        assert_eq!(text(&out.stdout).lines().count(), 36);
    }
}

#[test]
fn a_base_offset_gone_backwards_is_reported_not_read() {
    for codec in [Compression::None, Compression::Gzip] {
        let root = tempfile::tempdir().unwrap();
        let (dir, positions) = partition(root.path(), codec);
        // Batch 5 (15..=17) now claims 12..=14, batch 4's offsets.
        set_base_offset(&dir.join(FIRST), positions[5], 12);
        readers_report(
            &dir,
            positions[5],
            15,
            "batch with offsets 12..=14 cannot follow offset 14",
        );
    }
}

#[test]
fn a_batch_reaching_the_next_segment_is_reported_not_read() {
    for codec in [Compression::None, Compression::Gzip] {
        let root = tempfile::tempdir().unwrap();
        let (dir, positions) = partition(root.path(), codec);
        // The last batch (27..=29) now claims 28..=30; offset 30 is the next segment's.
        set_base_offset(&dir.join(FIRST), positions[9], 28);
        readers_report(
            &dir,
            positions[9],
            27,
            "batch with offsets 28..=30 reaches the next segment's base offset 30",
        );
    }
}
