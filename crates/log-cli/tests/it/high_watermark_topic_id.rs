//! The high watermark and the topic id as a broker keeps them, through the real binary:
//! `consume` and `offsets` stop at a partition's checkpointed high watermark (read_committed at
//! the last stable offset under it: a transaction whose marker lies at or past it is not yet
//! replicated) unless `--to-log-end`; `produce` moves the high watermark to its log end and
//! keeps `--topic-id` in `partition.metadata`; `check` reports a malformed `partition.metadata`
//! and two ids for one topic.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use crate::run::{seglog, text};

const ID: &str = "vvO5N3IYR1ezBKXzHaP3xg";
const OTHER: &str = "AAAAAAAAAAAAAAAAAAAAAQ";

fn run(root: &Path, args: &[&str], stdin: &str) -> String {
    let out = seglog(args, root, stdin.as_bytes());
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

fn set_high_watermark(root: &Path, entries: &str) {
    let lines = entries.lines().count();
    std::fs::write(
        root.join("logs/replication-offset-checkpoint"),
        format!("0\n{lines}\n{entries}"),
    )
    .unwrap();
}

/// `logs/t-0`: ten records (`v0`..`v9`), then a committed transaction of three (offsets
/// 10..=12, its marker at 13).
fn partition(root: &Path) {
    let values = (0..10)
        .map(|i| format!("v{i}"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    run(root, &["produce", "logs/t-0", "--create"], &values);
    let txn = [
        "produce",
        "logs/t-0",
        "--producer-id",
        "7",
        "--producer-epoch",
        "0",
        "--transactional",
        "--commit",
    ];
    run(root, &txn, "x0\nx1\nx2\n");
}

fn consumed(root: &Path, extra: &[&str]) -> usize {
    let mut args = vec!["consume", "logs/t-0"];
    args.extend_from_slice(extra);
    run(root, &args, "").lines().count()
}

#[test]
fn reads_stop_at_the_checkpointed_high_watermark() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    partition(r);
    // No high watermark kept for it: read to the log end.
    let checkpoint = r.join("logs/replication-offset-checkpoint");
    assert_eq!(std::fs::read_to_string(&checkpoint).unwrap(), "0\n0\n");
    assert_eq!(consumed(r, &[]), 13);
    assert_eq!(
        run(r, &["offsets", "logs/t-0", "--time", "-1"], ""),
        "t:0:14\n"
    );

    // A broker stopped with six records replicated.
    set_high_watermark(r, "t 0 6\n");
    assert_eq!(consumed(r, &[]), 6);
    assert_eq!(consumed(r, &["--to-log-end"]), 13);
    assert_eq!(consumed(r, &["--offset", "end"]), 0);
    assert_eq!(
        run(r, &["offsets", "logs/t-0", "--time", "-1"], ""),
        "t:0:6\n"
    );
    assert_eq!(
        run(
            r,
            &["offsets", "logs/t-0", "--time", "-1", "--to-log-end"],
            ""
        ),
        "t:0:14\n"
    );
    // The transaction's marker (13) is not below the high watermark: not yet replicated, so
    // its first offset bounds read_committed (Kafka's unreplicatedTxns).
    set_high_watermark(r, "t 0 13\n");
    let committed = ["--isolation-level", "read_committed"];
    let latest = [
        "offsets",
        "logs/t-0",
        "--latest",
        "--isolation-level",
        "read_committed",
    ];
    assert_eq!(run(r, &latest, ""), "t:0:10\n");
    assert_eq!(consumed(r, &committed), 10);
    assert_eq!(consumed(r, &[]), 13);
    set_high_watermark(r, "t 0 14\n");
    assert_eq!(run(r, &latest, ""), "t:0:14\n");
    assert_eq!(consumed(r, &committed), 13);
    // Past the log end: clamped, as a broker clamps it.
    set_high_watermark(r, "t 0 99\n");
    assert_eq!(run(r, &["offsets", "logs/t-0", "--latest"], ""), "t:0:14\n");
    // Another partition's entry only: this one reads to its log end, as before.
    set_high_watermark(r, "u 0 1\n");
    assert_eq!(consumed(r, &[]), 13);
    // A kept high watermark (a broker's): produce, the one replica, moves it to its log end.
    set_high_watermark(r, "t 0 6\n");
    run(r, &["produce", "logs/t-0"], "y0\ny1\n");
    let text = std::fs::read_to_string(&checkpoint).unwrap();
    assert_eq!(text, "0\n1\nt 0 16\n");
    assert_eq!(consumed(r, &[]), 15);
}

#[test]
fn produce_keeps_the_topic_id_and_check_reports_bad_files_and_conflicting_ids() {
    let root = tempfile::tempdir().unwrap();
    let r = root.path();
    run(
        r,
        &["produce", "logs/t-0", "--create", "--topic-id", ID],
        "a\n",
    );
    let file = r.join("logs/t-0/partition.metadata");
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        format!("version: 0\ntopic_id: {ID}")
    );
    run(r, &["produce", "logs/t-0", "--topic-id", ID], "b\n");
    // Another id: refused before anything is appended.
    let out = seglog(&["produce", "logs/t-0", "--topic-id", OTHER], r, b"c\n");
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("but log already contained topic ID"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(consumed(r, &[]), 2);
    let out = seglog(
        &[
            "produce",
            "logs/t-0",
            "--topic-id",
            "AAAAAAAAAAAAAAAAAAAAAA",
        ],
        r,
        b"c\n",
    );
    assert_eq!(out.status.code(), Some(2));
    run(r, &["check", "logs"], "");

    // A second partition of the topic naming another id.
    run(
        r,
        &["produce", "logs/t-1", "--create", "--topic-id", OTHER],
        "a\n",
    );
    let out = seglog(&["check", "logs", "--json"], r, b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = text(&out.stdout);
    assert!(report.contains("\"topic_id_conflict\""), "{report}");
    assert!(report.contains("t-1/partition.metadata"), "{report}");
    assert!(
        report.contains(&format!("t-1 has topic id {OTHER}, but t-0 has {ID}")),
        "{report}"
    );

    // A malformed file: the line, in Kafka's words.
    std::fs::write(&file, "version: 0\ntopic_id: not-an-id\n").unwrap();
    let out = seglog(&["check", "logs/t-0", "--json"], r, b"");
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    assert!(report.contains("\"bad_partition_metadata\""), "{report}");
    assert!(
        report.contains("line 2: Malformed line in partition metadata file"),
        "{report}"
    );
}
