//! A command given one partition touches that partition only, one bad partition never blocks
//! the others, a rejected `--config` leaves nothing behind, and no path lets a second writer
//! into a partition: each run with the real binary on real files.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::run::{seglog, text};

/// Every file under `dir` with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.insert(path.clone(), Vec::new());
            out.extend(snapshot(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    out
}

fn consume(dir: &str, cwd: &Path) -> Vec<String> {
    let out = seglog(&["consume", dir, "--from-beginning"], cwd, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn a_partition_command_touches_only_its_partition_and_a_bad_sibling_blocks_nothing() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path();
    for p in ["a-0", "b-0", "c-0"] {
        let out = seglog(
            &["produce", &format!("logs/{p}"), "--create"],
            cwd,
            b"1\n2\n3\n",
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let logs = cwd.join("logs");
    // b-0 torn (needs recovery), c-0 with a garbage seglog.properties, a pending -delete, a
    // lost+found, and stray entries named like segments in a-0.
    let b_log = logs.join("b-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&b_log).unwrap();
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 1, 0, 42]);
    std::fs::write(&b_log, bytes).unwrap();
    std::fs::write(logs.join("c-0/seglog.properties"), "garbage\n").unwrap();
    std::fs::create_dir_all(logs.join("old-0.0123456789abcdef-delete")).unwrap();
    std::fs::write(
        logs.join("old-0.0123456789abcdef-delete/00000000000000000000.log"),
        b"",
    )
    .unwrap();
    std::fs::create_dir(logs.join("lost+found")).unwrap();
    std::fs::create_dir(logs.join("a-0/00000000000000000099.log")).unwrap();
    std::fs::write(logs.join("a-0/123.log"), b"x").unwrap();
    std::fs::remove_file(logs.join(".kafka_cleanshutdown")).unwrap();
    // Everything but a-0 and the log directory's own files (the checkpoints are read below).
    let others = |logs: &Path| -> BTreeMap<PathBuf, Vec<u8>> {
        snapshot(logs)
            .into_iter()
            .filter(|(p, _)| !p.starts_with(logs.join("a-0")))
            .filter(|(p, _)| p.parent() != Some(logs) || p.is_dir())
            .collect()
    };
    let before = others(&logs);
    let checkpoint = |logs: &Path| {
        std::fs::read_to_string(logs.join("recovery-point-offset-checkpoint")).unwrap()
    };
    let entry = |text: &str, tp: &str| text.lines().find(|l| l.starts_with(tp)).map(str::to_owned);
    let checkpoint_before = checkpoint(&logs);
    // check names each stray entry with its path.
    let out = seglog(&["check", "logs"], cwd, b"");
    assert_eq!(out.status.code(), Some(1));
    let report = text(&out.stdout);
    for stray in ["a-0/123.log", "a-0/00000000000000000099.log", "lost+found"] {
        assert!(
            report.lines().any(|l| l.contains(stray)
                && (l.contains("stray_file") || l.contains("not_a_partition"))),
            "{stray}: {report}"
        );
    }

    let out = seglog(&["produce", "logs/a-0"], cwd, b"4\n5\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // a-0 is a delete-policy topic: compact refuses it without --force.
    let out = seglog(&["compact", "logs/a-0", "--force"], cwd, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(others(&logs), before, "nothing outside a-0 changed");
    assert!(
        !logs.join(".kafka_cleanshutdown").exists(),
        "b-0 still needs its recovery"
    );
    let checkpoint_after = checkpoint(&logs);
    for tp in ["b 0 ", "c 0 "] {
        assert_eq!(
            entry(&checkpoint_after, tp),
            entry(&checkpoint_before, tp),
            "{tp}"
        );
    }
    assert_eq!(entry(&checkpoint_after, "a 0 ").as_deref(), Some("a 0 5"));
    assert_eq!(consume("logs/a-0", cwd), ["1", "2", "3", "4", "5"]);
    // Opening a-0 set its strays aside, whole, in its own quarantine.
    let q = logs.join("a-0/seglog-quarantine/1");
    assert!(q.join("123.log").exists() && q.join("00000000000000000099.log").is_dir());
    assert!(!logs.join("a-0/123.log").exists());

    // The bad partition is refused with its file and cause; the healthy one takes writes.
    let out = seglog(&["produce", "logs/c-0"], cwd, b"x\n");
    assert_eq!(out.status.code(), Some(2));
    let err = text(&out.stderr);
    assert!(
        err.contains("c-0/seglog.properties") && err.contains("garbage"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = seglog(&["produce", "logs/b-0"], cwd, b"4\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(consume("logs/b-0", cwd), ["1", "2", "3", "4"]);
}

#[test]
fn a_rejected_config_leaves_nothing_behind() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path();
    std::fs::create_dir(cwd.join("logs")).unwrap();
    for config in [
        "segment.index.bytes=4",
        "cleanup.policy=bogus",
        "segment.bytes=1",
        "no.such.key=1",
    ] {
        let out = seglog(
            &["produce", "logs/e-0", "--create", "--config", config],
            cwd,
            b"x\n",
        );
        assert_eq!(out.status.code(), Some(2), "{config}");
        let err = text(&out.stderr);
        assert!(
            err.contains(config.split('=').next().unwrap()),
            "{config}: {err}"
        );
        assert!(
            std::fs::read_dir(cwd.join("logs"))
                .unwrap()
                .next()
                .is_none(),
            "{config}: something was left in logs"
        );
    }
}

/// A running `seglog produce --sync --print-acks` and its acks.
struct Producer {
    child: Child,
    stdin: ChildStdin,
    acks: mpsc::Receiver<String>,
}

impl Producer {
    fn start(cwd: &Path, dir: &str) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
            .args(["produce", dir, "--create", "--sync", "--print-acks"])
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (tx, acks) = mpsc::channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                if tx.send(line.unwrap()).is_err() {
                    return;
                }
            }
        });
        Self { child, stdin, acks }
    }

    /// Sends one line and waits for its ack.
    fn send(&mut self, line: &str, offset: usize) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
        // Generous for a loaded machine; an ack that never comes fails the test.
        let ack = self.acks.recv_timeout(Duration::from_mins(1));
        assert_eq!(ack.ok(), Some(format!("acked {offset}")), "{line}");
    }
}

#[test]
fn no_symlink_or_deleted_lock_lets_a_second_producer_in() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path();
    let mut first = Producer::start(cwd, "logs/a-0");
    let mut acked = Vec::new();
    let send = |first: &mut Producer, acked: &mut Vec<String>| {
        let line = format!("first {}", acked.len());
        first.send(&line, acked.len());
        acked.push(line);
    };
    send(&mut first, &mut acked);
    std::os::unix::fs::symlink(cwd.join("logs"), cwd.join("alias")).unwrap();
    std::fs::create_dir(cwd.join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(cwd.join("logs/a-0"), cwd.join("elsewhere/a-0")).unwrap();
    let attempts: [(&str, &str, Option<&str>); 3] = [
        ("alias/a-0", "Failed to acquire lock on file .lock", None),
        (
            "elsewhere/a-0",
            "Failed to acquire lock on file .lock",
            None,
        ),
        ("logs/a-0", "locked by another writer", Some("logs/.lock")),
    ];
    for (path, message, delete) in attempts {
        if let Some(lock) = delete {
            std::fs::remove_file(cwd.join(lock)).unwrap();
        }
        let out = seglog(
            &["produce", path, "--sync"],
            cwd,
            b"intruder 1\nintruder 2\n",
        );
        assert_eq!(out.status.code(), Some(2), "{path}: {}", text(&out.stderr));
        let err = text(&out.stderr);
        assert!(err.contains(message), "{path}: {err}");
        // The message names the real partition or log directory, not the symlink.
        assert!(
            err.contains(
                &cwd.join("logs")
                    .canonicalize()
                    .unwrap()
                    .display()
                    .to_string()
            ),
            "{err}"
        );
        send(&mut first, &mut acked);
        send(&mut first, &mut acked);
    }
    drop(first.stdin);
    let status = first.child.wait().unwrap();
    assert!(status.success());
    assert_eq!(
        consume("logs/a-0", cwd),
        acked,
        "every acked record, and no other"
    );
}

#[test]
fn recover_of_one_partition_touches_no_sibling_and_a_full_recover_reports_what_it_could_not() {
    let root = tempfile::tempdir().unwrap();
    let cwd = root.path();
    for p in ["a-0", "b-0", "c-0"] {
        let out = seglog(
            &["produce", &format!("logs/{p}"), "--create"],
            cwd,
            b"1\n2\n",
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let logs = cwd.join("logs");
    let b_log = logs.join("b-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&b_log).unwrap();
    bytes.extend_from_slice(&[0; 30]);
    std::fs::write(&b_log, bytes).unwrap();
    std::fs::write(logs.join("c-0/seglog.properties"), "garbage\n").unwrap();
    let doomed = logs.join("old-0.0123456789abcdef-delete");
    std::fs::create_dir_all(&doomed).unwrap();
    std::fs::create_dir(logs.join("lost+found")).unwrap();
    let siblings = (snapshot(&logs.join("b-0")), snapshot(&logs.join("c-0")));

    let out = seglog(&["recover", "logs/a-0"], cwd, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).starts_with("a-0: "),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(text(&out.stdout).lines().count(), 1);
    assert_eq!(
        (snapshot(&logs.join("b-0")), snapshot(&logs.join("c-0"))),
        siblings
    );
    assert!(doomed.exists());
    let out = seglog(&["recover", "logs/c-0"], cwd, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("c-0/seglog.properties"),
        "{}",
        text(&out.stderr)
    );

    let out = seglog(&["recover", "logs"], cwd, b"");
    assert_eq!(out.status.code(), Some(2), "c-0 could not be recovered");
    let report = text(&out.stdout);
    assert!(
        report.contains("b-0: recovered") && report.contains("(30 bytes, offsets from 2 on)"),
        "{report}"
    );
    assert!(
        report.contains("c-0: not recovered:") && report.contains("garbage"),
        "{report}"
    );
    assert!(
        report.contains("lost+found: not a partition directory"),
        "{report}"
    );
    assert!(
        report.contains("-delete (a partition pending deletion)"),
        "{report}"
    );
    assert!(!doomed.exists() && logs.join("lost+found").exists());
    assert_eq!(
        std::fs::read_to_string(logs.join("c-0/seglog.properties")).unwrap(),
        "garbage\n"
    );
}
