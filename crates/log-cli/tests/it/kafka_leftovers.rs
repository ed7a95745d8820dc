//! Regression: `check` exited 1 on a healthy directory a broker left after a clean stop: the
//! `*.deleted` files of a retention or cleaner pass younger than `file.delete.delay.ms`, which
//! Kafka deletes at its next start. Such states, which Kafka's loader accepts and tidies without
//! touching a record, are notes (exit 0, `"severity":"note"` in `--json`); docs/reliability.md
//! lists each decision. After `recover` (which does what Kafka's loader does) none is left.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    reason = "tests"
)]

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::run::{seglog, text};

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The segment files of `dir` with `suffix`, oldest first.
fn files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(suffix))
        .collect();
    out.sort();
    out
}

fn add_suffix(path: &Path, suffix: &str) {
    let mut to = path.as_os_str().to_owned();
    to.push(suffix);
    std::fs::rename(path, to).unwrap();
}

/// `logs/t-0` as a broker leaves it after a clean stop, with every leftover its loader accepts:
/// the oldest segment deleted by retention (renamed `.deleted`), a cleaning's unfinished
/// `.cleaned` output, an orphan index of each kind, a segment whose `.index` and `.timeindex`
/// were never written, producer-state and epoch files, and a deleted topic's `-delete`
/// directory (whose contents Kafka never reads: here a torn segment). Returns how many notes
/// `check` should give.
fn broker_leftovers(root: &Path) -> usize {
    let lines: String = (0..3_000).map(|i| format!("k{}:v{i}\n", i % 50)).collect();
    let out = seglog(
        &[
            "produce",
            "logs/t-0",
            "--create",
            "--key-separator",
            ":",
            "--config",
            "internal.segment.bytes=8192",
        ],
        root,
        lines.as_bytes(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let t0 = root.join("logs/t-0");
    let logs = files(&t0, ".log");
    assert!(logs.len() >= 5, "{logs:?}");
    let stem = |p: &Path| p.to_str().unwrap().strip_suffix(".log").unwrap().to_owned();
    // Retention removed the oldest segment: its three files renamed `.deleted`.
    let oldest = stem(&logs[0]);
    for suffix in [".log", ".index", ".timeindex"] {
        add_suffix(Path::new(&format!("{oldest}{suffix}")), ".deleted");
    }
    // A cleaning stopped with the broker: its output for the second segment left `.cleaned`.
    let second = stem(&logs[1]);
    for suffix in [".log", ".index", ".timeindex"] {
        std::fs::copy(
            format!("{second}{suffix}"),
            format!("{second}{suffix}.cleaned"),
        )
        .unwrap();
    }
    // Orphan indexes of a segment whose .log an interrupted deletion already removed.
    let orphan = t0.join("00000000000000999999");
    std::fs::copy(format!("{second}.index"), orphan.with_extension("index")).unwrap();
    std::fs::copy(
        format!("{second}.timeindex"),
        orphan.with_extension("timeindex"),
    )
    .unwrap();
    std::fs::write(orphan.with_extension("txnindex"), b"").unwrap();
    // A segment whose indexes were never written.
    let third = stem(&logs[2]);
    std::fs::remove_file(format!("{third}.index")).unwrap();
    std::fs::remove_file(format!("{third}.timeindex")).unwrap();
    // A broker's own files, which are no findings at all.
    std::fs::write(
        t0.join("partition.metadata"),
        b"version: 0\ntopic_id: vvO5N3IYR1ezBKXzHaP3xg",
    )
    .unwrap();
    std::fs::write(t0.join("leader-epoch-checkpoint"), b"0\n1\n0 0\n").unwrap();
    std::fs::write(format!("{}.snapshot", stem(&logs[3])), b"").unwrap();
    std::fs::write(
        root.join("logs/.kafka_cleanshutdown"),
        br#"{"version":0,"brokerEpoch":7}"#,
    )
    .unwrap();
    // A deleted topic's directory, not yet removed.
    let deleted = root.join("logs/gone-0.4b2f8a4e0c1d4e2fa3b3c4d5e6f70819-delete");
    std::fs::create_dir(&deleted).unwrap();
    std::fs::write(
        deleted.join("00000000000000000000.log"),
        b"\0\0\0\0\0\0\0\0\0\0\0\x40torn",
    )
    .unwrap();
    // One note per segment and kind: the .deleted segment, the .cleaned one, the orphan
    // indexes, the two missing indexes, the -delete directory; and the empty snapshot, which
    // Kafka's load finds corrupt and deletes (rebuilding producer state from the log).
    7
}

#[test]
fn a_cleanly_stopped_brokers_leftovers_are_notes_and_recover_tidies_them() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let notes = broker_leftovers(root);

    let out = seglog(&["check", "logs"], root, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    for kind in [
        "deleted_file",
        "cleaned_file",
        "orphan_index",
        "missing_index",
        "missing_time_index",
        "pending_delete_dir",
    ] {
        assert!(
            stdout.contains(&format!(": note: {kind}: ")),
            "{kind}: {stdout}"
        );
    }
    assert!(
        stdout.ends_with(&format!(
            "in 1 partitions: 0 problems, {notes} notes (states Kafka accepts)\n"
        )),
        "{stdout}"
    );
    assert_eq!(stdout.lines().count(), notes + 1, "{stdout}");

    let out = seglog(&["check", "--json", "logs"], root, b"");
    assert_eq!(out.status.code(), Some(0));
    let lines = json_lines(&out);
    let (summary, findings) = lines.split_last().unwrap();
    assert_eq!(summary["problems"], 0);
    assert_eq!(summary["notes"], notes);
    assert_eq!(findings.len(), notes);
    let counts: Vec<u64> = findings
        .iter()
        .map(|f| f["count"].as_u64().unwrap())
        .collect();
    assert_eq!(
        counts.iter().sum::<u64>(),
        13,
        "3 .deleted, 3 .cleaned, 3 orphans, 2 missing, 1 directory, 1 snapshot: {counts:?}"
    );
    for f in findings {
        assert_eq!(f["severity"], "note", "{f}");
        assert_eq!(f["type"], "note", "{f}");
        assert!(f["file"].as_str().unwrap().starts_with("logs/"), "{f}");
    }

    // A real problem beside them: exit 1, and only it counts as a problem.
    let last = files(&root.join("logs/t-0"), ".log").pop().unwrap();
    let mut bytes = std::fs::read(&last).unwrap();
    bytes.extend_from_slice(b"\0\0\0\0\0\0\0\x01\0\0");
    std::fs::write(&last, bytes).unwrap();
    let out = seglog(&["check", "logs"], root, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains(": 1 problems, "), "{stdout}");

    // Recovery does what Kafka's loader does with each: afterwards nothing is left to note but
    // the quarantine, which holds the cut garbage.
    let out = seglog(&["recover", "logs"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = seglog(&["check", "logs"], root, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.ends_with(": 0 problems, 1 note (a state Kafka accepts)\n")
            && stdout.starts_with("logs/t-0/seglog-quarantine: note: quarantine: ")
            && stdout.contains("cut tails"),
        "after recover: {stdout}"
    );
    // The records are all there: the retained segments' ones.
    let out = seglog(&["consume", "logs/t-0", "--max-records", "1"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
}
