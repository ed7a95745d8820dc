//! Issue 17's report (docs/reliability.md, section 10), on the real binary: a partition made with
//! `segment.bytes=1048576`, `segment.index.bytes=1024` and `index.interval.bytes=0` (128 offset
//! index slots, an entry due at every batch but a segment's first), whose producer was killed
//! (SIGKILL) right after the append that filled the active segment's offset index, where that
//! segment was begun by an earlier producer. `check` finds nothing, `recover --dry-run` plans an
//! index rebuild, and the rebuild needs 129 entries where append gave 128 (each producer's first
//! batch unindexed): it failed the load (before that fail-safe, it emptied every segment). Now
//! recover rebuilds a full index, every record is read back, and compaction cleans.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use crate::run::{seglog, text};

const CONFIG: [&str; 8] = [
    "--config",
    "segment.bytes=1048576",
    "--config",
    "segment.index.bytes=1024",
    "--config",
    "index.interval.bytes=0",
    "--config",
    "cleanup.policy=compact",
];

fn lines(range: std::ops::Range<usize>) -> String {
    range.fold(String::new(), |mut out, i| {
        let _ = writeln!(out, "k{}|v{i}", i % 7);
        out
    })
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `consume` from the beginning: the values read.
fn consume(root: &Path) -> Vec<String> {
    let out = seglog(&["consume", "logs/t-0"], root, b"");
    ok(&out).lines().map(str::to_owned).collect()
}

/// Starts a producer of one-record batches, writes `range` to it, waits for the ack of the last
/// one, and kills it with SIGKILL while it waits for more input.
fn produce_and_kill(root: &Path, range: std::ops::Range<usize>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(["produce", "logs/t-0", "--key-separator", "|"])
        .args(["--batch-records", "1", "--print-acks"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let last = range.end - 1;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(lines(range).as_bytes()).unwrap();
    stdin.flush().unwrap();
    let acks = BufReader::new(child.stdout.take().unwrap());
    let expected = format!("acked {last}");
    let acked = acks.lines().map(Result::unwrap).any(|l| l == expected);
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    assert!(
        acked,
        "the producer ended before acknowledging offset {last}"
    );
}

#[test]
fn a_producer_killed_after_filling_a_tiny_index_loses_nothing_and_the_partition_compacts() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    // A first producer writes 60 batches and stops cleanly (59 index entries); a second appends
    // 70 more (its first unindexed: 128 entries, the index full) and is killed before its next
    // append would have rolled.
    let mut args = vec!["produce", "logs/t-0", "--create", "--key-separator", "|"];
    args.extend_from_slice(&["--batch-records", "1"]);
    args.extend_from_slice(&CONFIG);
    ok(&seglog(&args, root, lines(0..60).as_bytes()));
    produce_and_kill(root, 60..130);

    let out = seglog(&["check", "logs/t-0"], root, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let out = seglog(&["recover", "--dry-run", "logs/t-0"], root, b"");
    let plan = text(&out.stdout);
    assert!(plan.contains("rebuild the indexes of segment 0"), "{plan}");
    assert_eq!(
        plan.lines().count(),
        3,
        "only the rebuild is planned: {plan}"
    );
    let recovered = ok(&seglog(&["recover", "logs/t-0"], root, b""));
    assert!(
        recovered.contains("recovered (log end offset 130)")
            && recovered.contains("rebuild the indexes of segment 0"),
        "{recovered}"
    );
    let again = ok(&seglog(&["recover", "--dry-run", "logs/t-0"], root, b""));
    assert!(again.contains("nothing to recover"), "{again}");
    ok(&seglog(&["check", "logs/t-0"], root, b""));
    let all: Vec<String> = (0..130).map(|i| format!("v{i}")).collect();
    assert_eq!(consume(root), all);

    // The next producer rolls first (the index is full); then compaction cleans every segment
    // below the active one, keeping each key's latest record there.
    let mut args = vec!["produce", "logs/t-0", "--key-separator", "|"];
    args.extend_from_slice(&["--batch-records", "1"]);
    ok(&seglog(&args, root, lines(130..400).as_bytes()));
    let mut bases: Vec<usize> = std::fs::read_dir(root.join("logs/t-0"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".log").map(|b| b.parse().unwrap())
        })
        .collect();
    bases.sort_unstable();
    assert_eq!(bases.first(), Some(&0));
    assert!(bases.contains(&130), "no roll at offset 130: {bases:?}");
    let active = *bases.last().unwrap();
    let compacted = ok(&seglog(&["compact", "logs/t-0"], root, b""));
    assert!(
        compacted.starts_with(&format!("t-0: cleaned offsets 0..{active} (7 keys)")),
        "{compacted}"
    );
    ok(&seglog(&["check", "logs/t-0"], root, b""));
    let latest: HashMap<usize, usize> = (0..active).map(|i| (i % 7, i)).collect();
    let expected: Vec<String> = (0..400)
        .filter(|i| *i >= active || latest.get(&(i % 7)) == Some(i))
        .map(|i| format!("v{i}"))
        .collect();
    assert_eq!(consume(root), expected);
}
