//! The flags `commands.rs` does not reach: `consume --follow` picking up records appended by
//! another process, `produce --sync`, `offsets --max-timestamp`, the `--json` forms of `check`
//! and `recover`, and `demo` end to end.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    reason = "tests"
)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

fn spawn(args: &[&str], cwd: &Path) -> Child {
    Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn seglog(args: &[&str], cwd: &Path, stdin: &[u8]) -> Output {
    let mut child = spawn(args, cwd);
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn produce(root: &Path, args: &[&str], lines: std::ops::Range<u32>) -> Output {
    let input: String = lines.map(|i| format!("k{}|v{i}\n", i % 7)).collect();
    let mut all = vec!["produce", "logs/t-0", "--key-separator", "|"];
    all.extend_from_slice(args);
    let out = seglog(&all, root, input.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
    out
}

/// Kills the child when dropped, so a hung `--follow` cannot outlive a failed test.
struct Reaper(Child);

impl Drop for Reaper {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn consume_follow_prints_records_appended_after_it_started() {
    let root = tempfile::tempdir().unwrap();
    produce(root.path(), &["--create"], 0..40);
    let mut follower = Reaper(spawn(
        &[
            "consume",
            "logs/t-0",
            "--from-beginning",
            "--follow",
            "--max-records",
            "100",
        ],
        root.path(),
    ));
    let stdout = follower.0.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_mins(1);
    let mut seen = Vec::new();
    // The first 40 arrive before anything else is appended.
    while seen.len() < 40 {
        seen.push(rx.recv_timeout(deadline - Instant::now()).unwrap());
    }
    produce(root.path(), &["--sync"], 40..100);
    while seen.len() < 100 {
        seen.push(rx.recv_timeout(deadline - Instant::now()).unwrap());
    }
    let expected: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
    assert_eq!(seen, expected);
    // --max-records ends the follow.
    while follower.0.try_wait().unwrap().is_none() {
        assert!(
            Instant::now() < deadline,
            "--follow did not stop at --max-records"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(follower.0.try_wait().unwrap().unwrap().success());
}

#[test]
fn sync_acks_and_max_timestamp_agree_with_what_consume_reads() {
    let root = tempfile::tempdir().unwrap();
    let out = produce(
        root.path(),
        &["--create", "--sync", "--print-acks", "--batch-records", "9"],
        0..50,
    );
    let acks: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    let expected: Vec<String> = (0..50)
        .filter(|i| i % 9 == 8 || *i == 49)
        .map(|i| format!("acked {i}"))
        .collect();
    assert_eq!(acks, expected);

    let consumed = json_lines(&seglog(
        &["consume", "logs/t-0", "--from-beginning", "--json"],
        root.path(),
        b"",
    ));
    assert_eq!(consumed.len(), 50);
    let max = consumed
        .iter()
        .map(|r| r["ts"].as_i64().unwrap())
        .max()
        .unwrap();
    let first_at_max = consumed
        .iter()
        .find(|r| r["ts"].as_i64().unwrap() == max)
        .unwrap()["offset"]
        .clone();
    let out = seglog(
        &["offsets", "logs/t-0", "--max-timestamp", "--json"],
        root.path(),
        b"",
    );
    let answer = &json_lines(&out)[0];
    assert_eq!(answer["timestamp"].as_i64(), Some(max));
    assert_eq!(answer["offset"], first_at_max);
}

#[test]
fn check_and_recover_json_report_a_torn_tail_then_a_clean_partition() {
    let root = tempfile::tempdir().unwrap();
    produce(root.path(), &["--create", "--batch-records", "5"], 0..30);
    let log = root.path().join("logs/t-0/00000000000000000000.log");
    let len = std::fs::metadata(&log).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(len - 3)
        .unwrap();

    let out = seglog(&["check", "logs/t-0", "--json"], root.path(), b"");
    assert_eq!(out.status.code(), Some(1));
    let lines = json_lines(&out);
    let problem = lines.iter().find(|l| l["type"] == "problem").unwrap();
    assert!(
        problem["file"]
            .as_str()
            .unwrap()
            .ends_with("00000000000000000000.log"),
        "{problem}"
    );
    assert!(problem["position"].as_u64().unwrap() < len);
    assert_eq!(
        std::fs::metadata(&log).unwrap().len(),
        len - 3,
        "check changed the log"
    );

    let out = seglog(&["recover", "logs/t-0", "--json"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report = &json_lines(&out)[0];
    assert!(report.to_string().contains("truncated"), "{report}");

    let out = seglog(&["check", "logs/t-0", "--json"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stdout));
    assert!(json_lines(&out).iter().all(|l| l["type"] != "problem"));
    // The last whole batch (offsets 25..=29) was the torn one; 25 records remain.
    let consumed = json_lines(&seglog(
        &["consume", "logs/t-0", "--from-beginning", "--json"],
        root.path(),
        b"",
    ));
    assert_eq!(consumed.len(), 25);
}

#[test]
fn demo_builds_a_log_that_check_accepts() {
    let root = tempfile::tempdir().unwrap();
    let out = seglog(&["demo", "sample"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    for needle in ["Appending", "offset", "timestamp", "baseOffset"] {
        assert!(stdout.contains(needle), "no {needle:?} in: {stdout}");
    }
    let partitions: Vec<_> = std::fs::read_dir(root.path().join("sample"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert!(!partitions.is_empty());
    for partition in partitions {
        let out = seglog(&["check", partition.to_str().unwrap()], root.path(), b"");
        assert!(out.status.success(), "{}", text(&out.stdout));
    }
}

fn repo_root() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_path_buf()
}

#[test]
fn dump_max_bytes_stops_at_the_last_whole_batch_inside_the_limit() {
    let root = repo_root();
    let file = "testdata/segment/00000000000000000000.log";
    let full = text(&seglog(&["dump", "--files", file], &root, b"").stdout);
    let ends: Vec<u64> = full
        .lines()
        .filter(|l| l.starts_with("baseOffset:"))
        .map(|l| {
            let field = |name: &str| -> u64 {
                let rest = &l[l.find(name).unwrap() + name.len()..];
                rest.split_whitespace().next().unwrap().parse().unwrap()
            };
            field(" position: ") + field(" size: ")
        })
        .collect();
    assert!(ends.len() > 3);
    // Kafka slices the file at --max-bytes: three whole batches fit, the fourth is cut, and the
    // cut is not reported as invalid bytes.
    let limit = (ends[2] + 5).to_string();
    let out = seglog(
        &["dump", "--files", file, "--max-bytes", &limit],
        &root,
        b"",
    );
    assert!(out.status.success());
    let cut = text(&out.stdout);
    let expected: Vec<&str> = full
        .lines()
        .filter(|l| l.starts_with("baseOffset:"))
        .take(3)
        .collect();
    let got: Vec<&str> = cut
        .lines()
        .filter(|l| l.starts_with("baseOffset:"))
        .collect();
    assert_eq!(got, expected);
    assert!(!cut.contains("invalid bytes"), "{cut}");
}

#[test]
fn dump_verify_index_is_an_alias_of_verify_index_only() {
    let root = repo_root();
    let file = "testdata/segment/00000000000000000000.index";
    let only = seglog(
        &["dump", "--files", file, "--verify-index-only"],
        &root,
        b"",
    );
    let alias = seglog(&["dump", "--files", file, "--verify-index"], &root, b"");
    assert!(only.status.success() && alias.status.success());
    assert_eq!(alias.stdout, only.stdout);
    assert_eq!(alias.stderr, only.stderr);
    let all = seglog(&["dump", "--files", file], &root, b"");
    assert_ne!(
        all.stdout, only.stdout,
        "--verify-index-only prints no entries"
    );
}
