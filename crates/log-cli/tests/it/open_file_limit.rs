//! The `seglog` binary raises its soft open-file limit (`ulimit -n`) to the hard one at start-up,
//! before any log opens, so that the default `seglog.max.open.segment.files` (half the soft limit)
//! is as large as the process may have. The child starts under a soft limit of 64, acknowledges
//! one produced line (so it is well past start-up), and its limits are read from `/proc`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

const SOFT: u64 = 64;

/// The soft and hard "Max open files" of process `pid`.
fn open_file_limits(pid: u32) -> (String, String) {
    let text = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Max open files"))
        .unwrap();
    let fields: Vec<&str> = line.split_whitespace().collect();
    (fields[3].to_owned(), fields[4].to_owned())
}

#[test]
fn the_binary_raises_its_soft_open_file_limit_to_the_hard_one() {
    let (_, hard) = open_file_limits(std::process::id());
    if hard.parse::<u64>().is_ok_and(|h| h <= SOFT) {
        eprintln!("the hard open-file limit {hard} leaves nothing to raise: skipped");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -Sn {SOFT} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_seglog"))
        .args(["produce", "logs/t-0", "--create", "--print-acks"])
        .current_dir(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(stdin, "one").unwrap();
    stdin.flush().unwrap();
    let mut ack = String::new();
    stdout.read_line(&mut ack).unwrap();
    assert_eq!(ack.trim_end(), "acked 0");
    let (soft, child_hard) = open_file_limits(child.id());
    drop(stdin);
    assert!(child.wait().unwrap().success());
    assert_eq!(child_hard, hard, "the hard limit is left as it was");
    assert_eq!(soft, hard, "the soft limit was not raised from {SOFT}");
}
