//! `seglog produce --producer-id --producer-epoch [--transactional --commit|--abort]` with the
//! real binary: sequences continue across runs from the partition's producer state, an older
//! epoch is fenced with Kafka's message and nothing appended, a transaction's records are hidden
//! from read_committed until its COMMIT marker (and for ever after an ABORT), a run that fails
//! halfway aborts its transaction, and a run SIGKILLed before its marker leaves an open
//! transaction that holds read_committed back at its first offset, before and after `recover`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::run::{seglog, text};

const DIR: &str = "logs/t-0";

fn produce(root: &Path, args: &[&str], stdin: &str) -> Output {
    let mut all = vec!["produce", DIR];
    all.extend_from_slice(args);
    seglog(&all, root, stdin.as_bytes())
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// The values `consume` prints at `level`.
fn values(root: &Path, level: &str) -> Vec<String> {
    let out = seglog(&["consume", DIR, "--isolation-level", level], root, b"");
    ok(&out).lines().map(str::to_owned).collect()
}

/// `offsets --latest`, at `level`.
fn latest(root: &Path, level: &str) -> i64 {
    let out = seglog(
        &["offsets", DIR, "--latest", "--isolation-level", level],
        root,
        b"",
    );
    // topic:partition:offset, as kafka-get-offsets.sh prints it.
    ok(&out).trim().rsplit(':').next().unwrap().parse().unwrap()
}

fn check_passes(root: &Path) {
    let out = seglog(&["check", DIR], root, b"");
    assert!(ok(&out).contains(": 0 problems"), "{}", text(&out.stdout));
}

/// Each batch's header fields as `dump --deep-iteration` prints them.
fn batches(root: &Path) -> Vec<HashMap<String, String>> {
    let file = format!("{DIR}/00000000000000000000.log");
    let out = seglog(&["dump", "--deep-iteration", "--files", &file], root, b"");
    ok(&out)
        .lines()
        .filter(|l| l.starts_with("baseOffset:"))
        .map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words
                .windows(2)
                .filter_map(|w| Some((w[0].strip_suffix(':')?.to_owned(), w[1].to_owned())))
                .collect()
        })
        .collect()
}

fn field<'a>(batch: &'a HashMap<String, String>, name: &str) -> &'a str {
    batch.get(name).map_or("", String::as_str)
}

/// (baseSequence, lastSequence, producerId, producerEpoch, isTransactional, isControl) per batch.
fn headers(root: &Path) -> Vec<[String; 6]> {
    batches(root)
        .iter()
        .map(|b| {
            [
                "baseSequence",
                "lastSequence",
                "producerId",
                "producerEpoch",
                "isTransactional",
                "isControl",
            ]
            .map(|f| field(b, f).to_owned())
        })
        .collect()
}

fn row(base: i32, last: i32, pid: i64, epoch: i16, txn: bool, control: bool) -> [String; 6] {
    [
        base.to_string(),
        last.to_string(),
        pid.to_string(),
        epoch.to_string(),
        txn.to_string(),
        control.to_string(),
    ]
}

#[test]
fn sequences_continue_across_runs() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let idempotent = ["--producer-id", "7", "--producer-epoch", "0"];
    let mut first = vec!["--create", "--batch-records", "2"];
    first.extend_from_slice(&idempotent);
    ok(&produce(root, &first, "a\nb\nc\n"));
    ok(&produce(root, &idempotent, "d\ne\n"));
    // A producer the partition does not know starts at 0.
    ok(&produce(
        root,
        &["--producer-id", "8", "--producer-epoch", "5"],
        "f\n",
    ));
    ok(&produce(root, &idempotent, "g\n"));
    assert_eq!(
        headers(root),
        [
            row(0, 1, 7, 0, false, false),
            row(2, 2, 7, 0, false, false),
            row(3, 4, 7, 0, false, false),
            row(0, 0, 8, 5, false, false),
            row(5, 5, 7, 0, false, false),
        ]
    );
    // A newer epoch starts again at 0, as Kafka wants.
    ok(&produce(
        root,
        &["--producer-id", "7", "--producer-epoch", "1"],
        "h\n",
    ));
    assert_eq!(headers(root)[5], row(0, 0, 7, 1, false, false));
    assert_eq!(
        values(root, "read_committed"),
        ["a", "b", "c", "d", "e", "f", "g", "h"]
    );
    check_passes(root);
}

#[test]
fn an_older_epoch_is_fenced_and_nothing_is_appended() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let create = ["--create", "--producer-id", "7", "--producer-epoch", "3"];
    ok(&produce(root, &create, "a\nb\n"));
    let out = produce(
        root,
        &["--producer-id", "7", "--producer-epoch", "2"],
        "c\n",
    );
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "InvalidProducerEpochException: Epoch of producer 7 at offset 2 in t-0 is 2, which is < the last seen epoch 3"
        ),
        "{err}"
    );
    // A transactional batch is fenced by UnifiedLog's own check first.
    let txn = [
        "--producer-id",
        "7",
        "--producer-epoch",
        "2",
        "--transactional",
        "--commit",
    ];
    let out = produce(root, &txn, "d\n");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "InvalidProducerEpochException: Epoch of producer 7 is 2, which is smaller than the last seen epoch 3"
        ),
        "{err}"
    );
    assert!(!err.contains("marker at offset"), "{err}");
    assert_eq!(latest(root, "read_uncommitted"), 2);
    assert_eq!(batches(root).len(), 1);
    check_passes(root);
}

#[test]
fn usage_errors_write_nothing() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    for (args, names) in [
        (&["--producer-id", "7"][..], "--producer-epoch"),
        (&["--producer-epoch", "0"], "--producer-id"),
        (&["--transactional", "--commit"], "--producer-id"),
        (
            &[
                "--producer-id",
                "7",
                "--producer-epoch",
                "0",
                "--transactional",
            ],
            "--commit|--abort",
        ),
        (
            &[
                "--producer-id",
                "7",
                "--producer-epoch",
                "0",
                "--transactional",
                "--commit",
                "--abort",
            ],
            "cannot be used with",
        ),
        (
            &["--producer-id", "7", "--producer-epoch", "0", "--commit"],
            "--transactional",
        ),
        (&["--producer-id", "7", "--producer-epoch", "-1"], "-1"),
    ] {
        let mut all = vec!["--create"];
        all.extend_from_slice(args);
        let out = produce(root, &all, "a\n");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(err.contains(names), "{args:?}: {err}");
        assert!(!root.join("logs").exists(), "{args:?} wrote");
    }
}

#[test]
fn an_aborted_transaction_is_hidden_and_a_committed_one_shown() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    ok(&produce(root, &["--create"], "p0\n"));
    let abort = [
        "--producer-id",
        "7",
        "--producer-epoch",
        "0",
        "--transactional",
        "--abort",
        "--print-acks",
    ];
    assert_eq!(
        ok(&produce(root, &abort, "a1\na2\n")),
        "acked 2\nmarker 3 ABORT\n"
    );
    assert_eq!(values(root, "read_committed"), ["p0"]);
    assert_eq!(values(root, "read_uncommitted"), ["p0", "a1", "a2"]);
    assert_eq!(latest(root, "read_committed"), 4);
    check_passes(root);
    // Transaction version 2: the marker bumped the epoch, so the next transaction uses 1.
    let commit = [
        "--producer-id",
        "7",
        "--producer-epoch",
        "1",
        "--transactional",
        "--commit",
        "--coordinator-epoch",
        "4",
        "--print-acks",
        "--sync",
    ];
    assert_eq!(
        ok(&produce(root, &commit, "c1\nc2\n")),
        "acked 5\nmarker 6 COMMIT\n"
    );
    assert_eq!(values(root, "read_committed"), ["p0", "c1", "c2"]);
    assert_eq!(
        values(root, "read_uncommitted"),
        ["p0", "a1", "a2", "c1", "c2"]
    );
    assert_eq!(
        (
            latest(root, "read_committed"),
            latest(root, "read_uncommitted")
        ),
        (7, 7)
    );
    check_passes(root);
    assert_eq!(
        headers(root)[1..],
        [
            row(0, 1, 7, 0, true, false),
            row(-1, -1, 7, 1, true, true),
            row(0, 1, 7, 1, true, false),
            row(-1, -1, 7, 2, true, true),
        ]
    );
    let file = format!("{DIR}/00000000000000000000.log");
    let dump = ok(&seglog(
        &["dump", "--deep-iteration", "--files", &file],
        root,
        b"",
    ));
    assert!(
        dump.contains("endTxnMarker: ABORT coordinatorEpoch: 0"),
        "{dump}"
    );
    assert!(
        dump.contains("endTxnMarker: COMMIT coordinatorEpoch: 4"),
        "{dump}"
    );
    // A coordinator epoch older than the last marker's is a zombie coordinator's.
    let zombie = [
        "--producer-id",
        "7",
        "--producer-epoch",
        "2",
        "--transactional",
        "--commit",
        "--coordinator-epoch",
        "3",
    ];
    let out = produce(root, &zombie, "z\n");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("TransactionCoordinatorFencedException"),
        "{err}"
    );
    assert!(err.contains("stay in an open transaction"), "{err}");
    assert_eq!(values(root, "read_committed"), ["p0", "c1", "c2"]);
    assert_eq!(latest(root, "read_committed"), 7);
    check_passes(root);
}

#[test]
fn a_run_that_fails_halfway_aborts_its_transaction() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let args = [
        "--create",
        "--config",
        "max.message.bytes=200",
        "--batch-records",
        "1",
        "--producer-id",
        "7",
        "--producer-epoch",
        "0",
        "--transactional",
        "--commit",
    ];
    let out = produce(root, &args, &format!("ok\n{}\n", "x".repeat(500)));
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("the run's transaction was aborted (ABORT marker at offset 1)"),
        "{err}"
    );
    assert_eq!(values(root, "read_uncommitted"), ["ok"]);
    assert!(values(root, "read_committed").is_empty());
    assert_eq!(latest(root, "read_committed"), 2);
    check_passes(root);
}

/// Reads `child`'s stdout lines on a thread of their own.
fn lines_of(child: &mut std::process::Child) -> mpsc::Receiver<String> {
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stdout.lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    rx
}

#[test]
fn a_killed_transactional_run_holds_read_committed_back_across_recover() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let commit = |epoch: &'static str| {
        [
            "--producer-id",
            "7",
            "--producer-epoch",
            epoch,
            "--transactional",
            "--commit",
        ]
    };
    let mut first = vec!["--create"];
    first.extend_from_slice(&commit("0"));
    ok(&produce(root, &first, "c1\nc2\n"));
    // Offsets 0..=1 committed (marker 2). The next run appends 3 and 4 durably, then dies
    // while it waits for more input, before its marker.
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(["produce", DIR, "--sync", "--print-acks"])
        .args(commit("1"))
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let acks = lines_of(&mut child);
    for (line, offset) in [("o1", 3), ("o2", 4)] {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        // Generous for a loaded machine: the ack comes once the batch is durable.
        let ack = acks.recv_timeout(Duration::from_mins(1));
        assert_eq!(ack.ok(), Some(format!("acked {offset}")));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    drop(stdin);
    let observe = |root: &Path| {
        (
            values(root, "read_committed"),
            values(root, "read_uncommitted"),
            latest(root, "read_committed"),
            latest(root, "read_uncommitted"),
        )
    };
    let open = (
        vec!["c1".to_owned(), "c2".to_owned()],
        ["c1", "c2", "o1", "o2"].map(str::to_owned).to_vec(),
        3,
        5,
    );
    assert_eq!(observe(root), open);
    let out = seglog(&["recover", DIR], root, b"");
    ok(&out);
    assert_eq!(observe(root), open);
    check_passes(root);
    // A run with no records ends the transaction the killed run left open.
    let abort = [
        "--producer-id",
        "7",
        "--producer-epoch",
        "1",
        "--transactional",
        "--abort",
        "--print-acks",
    ];
    assert_eq!(ok(&produce(root, &abort, "")), "marker 5 ABORT\n");
    assert_eq!(values(root, "read_committed"), ["c1", "c2"]);
    assert_eq!(latest(root, "read_committed"), 6);
    check_passes(root);
    // With no transaction open, an empty run writes no marker.
    let idle = [
        "--producer-id",
        "7",
        "--producer-epoch",
        "2",
        "--transactional",
        "--commit",
        "--print-acks",
    ];
    let out = produce(root, &idle, "");
    assert_eq!(ok(&out), "");
    assert!(text(&out.stderr).contains("no transaction, so no marker"));
    assert_eq!(latest(root, "read_uncommitted"), 6);
}
