//! `consume --follow`, `check`, `dump`, `stats` and `offsets` read without a lock while other
//! processes write: `produce` rolling segments quickly (1 MiB segments, 1 KiB indexes), and
//! `compact` after each producer, which replaces the segments and deletes the old files at once,
//! while a new follower starts from the beginning each round. No reader may die by a signal, and
//! every follower must print every record once, in order, and end cleanly.
//! The deterministic form of the fault (a file cut under a read-only index: `SIGBUS` through a
//! shared mapping) is mmap-index's `read_only_open.rs`; this test is the end-to-end form.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::run::seglog;

const ROUNDS: u32 = 12;
const PER_ROUND: u32 = 12_000;

/// Record `i`: a key of its own (so compaction keeps every record) and a value about 100 bytes
/// long, so that a round rolls a few segments.
fn line(i: u32) -> String {
    format!("k{i}|v{i:08}-{}\n", "x".repeat(90))
}

fn value(i: u32) -> String {
    format!("v{i:08}-{}", "x".repeat(90))
}

fn no_signal(what: &str, status: ExitStatus, stderr: &[u8]) {
    assert!(
        status.signal().is_none(),
        "{what} died by signal {:?}: {}",
        status.signal(),
        String::from_utf8_lossy(stderr)
    );
}

/// Runs the read-only commands over the partition until `stop`, asserting that none dies by a
/// signal; returns how many ran.
fn readers(root: &Path, stop: &AtomicBool) -> u32 {
    let mut runs = 0;
    while !stop.load(Ordering::Relaxed) {
        let dir = root.join("logs/t-0");
        let mut commands: Vec<Vec<String>> = vec![
            vec!["check".into(), "logs/t-0".into()],
            vec!["stats".into(), "logs/t-0".into()],
            vec!["offsets".into(), "logs/t-0".into(), "--latest".into()],
        ];
        // The indexes as listed now: a writer may trim, replace or delete them meanwhile.
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "index"))
                    .map(|p| format!("logs/t-0/{}", p.file_name().unwrap().to_string_lossy()))
                    .collect()
            })
            .unwrap_or_default();
        files.sort();
        if let Some(last) = files.last() {
            commands.push(vec!["dump".into(), "--files".into(), last.clone()]);
        }
        for args in &commands {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let out = seglog(&args, root, b"");
            no_signal(&args.join(" "), out.status, &out.stderr);
            runs += 1;
        }
    }
    runs
}

#[test]
fn follow_check_and_dump_survive_rolls_and_compaction_by_other_processes() {
    let root = tempfile::tempdir().unwrap();
    let first = seglog(
        &[
            "produce",
            "logs/t-0",
            "--key-separator",
            "|",
            "--create",
            "--config",
            "segment.bytes=1048576",
            "--config",
            "segment.index.bytes=1024",
            "--config",
            "cleanup.policy=compact",
            "--config",
            "file.delete.delay.ms=0",
        ],
        root.path(),
        line(0).as_bytes(),
    );
    assert!(first.status.success(), "{first:?}");
    let total = ROUNDS * PER_ROUND + 1;
    let follow = |root: &Path| {
        let child = Command::new(env!("CARGO_BIN_EXE_seglog"))
            .args([
                "consume",
                "logs/t-0",
                "--from-beginning",
                "--follow",
                "--max-records",
                &total.to_string(),
                "--timeout-ms",
                "60000",
            ])
            .current_dir(root)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Read as it prints, so that a full pipe never holds it up.
        std::thread::spawn(move || child.wait_with_output().unwrap())
    };
    // One follower from the start, at the tail; the later ones catch up through segments that
    // each compaction replaces and deletes.
    let mut followers = vec![follow(root.path())];
    let stop = Arc::new(AtomicBool::new(false));
    let reading = {
        let (root, stop) = (root.path().to_path_buf(), Arc::clone(&stop));
        std::thread::spawn(move || readers(&root, &stop))
    };
    let mut replaced = 0;
    for round in 0..ROUNDS {
        let from = round * PER_ROUND + 1;
        let input: String = (from..from + PER_ROUND).map(line).collect();
        let out = seglog(
            &[
                "produce",
                "logs/t-0",
                "--key-separator",
                "|",
                "--batch-records",
                "5",
            ],
            root.path(),
            input.as_bytes(),
        );
        assert!(out.status.success(), "{out:?}");
        followers.push(follow(root.path()));
        let out = seglog(&["compact", "logs/t-0", "--json"], root.path(), b"");
        assert!(out.status.success(), "{out:?}");
        let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        replaced += summary["segments_replaced"].as_u64().unwrap();
    }
    let expected: Vec<String> = (0..total).map(value).collect();
    for (n, follower) in followers.into_iter().enumerate() {
        let out = follower.join().unwrap();
        let what = format!("consume --follow #{n}");
        no_signal(&what, out.status, &out.stderr);
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let printed = String::from_utf8(out.stdout).unwrap();
        let printed: Vec<&str> = printed.lines().collect();
        assert_eq!(printed.len(), expected.len(), "{what}");
        assert!(
            printed.iter().zip(&expected).all(|(p, e)| p == e),
            "{what}: the records are not all there in order"
        );
    }
    stop.store(true, Ordering::Relaxed);
    let runs = reading.join().unwrap();
    assert!(
        replaced >= u64::from(ROUNDS),
        "compaction replaced only {replaced} segments"
    );
    assert!(runs > 0);
}

/// A lock-free reader may open a `.log` and an index that a writer in another process has
/// replaced in between (a compaction's swap): the index's positions are another file's. A reader
/// uses an entry only where the `.log` holds a batch ending at the entry's offset there, so it
/// neither skips records nor fails; here the index is another partition's, with other batches.
#[test]
fn an_index_of_another_file_makes_consume_read_from_the_start_of_the_segment() {
    let root = tempfile::tempdir().unwrap();
    let input: String = (0..5_000).map(line).collect();
    for (dir, batch) in [("logs/a-0", "7"), ("logs/b-0", "3")] {
        let out = seglog(
            &[
                "produce",
                dir,
                "--key-separator",
                "|",
                "--create",
                "--batch-records",
                batch,
            ],
            root.path(),
            input.as_bytes(),
        );
        assert!(out.status.success(), "{out:?}");
    }
    let index = "00000000000000000000.index";
    let logs = root.path().join("logs");
    std::fs::copy(logs.join("b-0").join(index), logs.join("a-0").join(index)).unwrap();
    for from in [1_000_u32, 2_500, 4_990] {
        let out = seglog(
            &["consume", "logs/a-0", "--from-offset", &from.to_string()],
            root.path(),
            b"",
        );
        assert!(out.status.success(), "{out:?}");
        let printed = String::from_utf8(out.stdout).unwrap();
        let expected: Vec<String> = (from..5_000).map(value).collect();
        let printed: Vec<&str> = printed.lines().collect();
        assert_eq!(printed.len(), expected.len(), "from {from}");
        assert!(
            printed.iter().zip(&expected).all(|(p, e)| p == e),
            "from {from}"
        );
    }
}
