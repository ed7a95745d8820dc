//! Regression: `seglog produce --print-acks` fed one line at a time (an interactive producer)
//! acknowledges each line before the next one arrives. It used to ask the pipe whether more
//! input was waiting, which blocks until the next line comes, so each ack lagged one line behind.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn each_line_is_acked_before_the_next_arrives() {
    let root = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(["produce", "logs/t-0", "--create", "--sync", "--print-acks"])
        .args(["--batch-records", "100"])
        .current_dir(root.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in stdout.lines() {
            if tx.send(line.unwrap()).is_err() {
                return;
            }
        }
    });
    for i in 0..3 {
        writeln!(stdin, "line {i}").unwrap();
        stdin.flush().unwrap();
        // Generous for a loaded machine; without the fix no ack ever comes while we wait.
        let ack = rx.recv_timeout(Duration::from_mins(1));
        assert_eq!(
            ack.ok(),
            Some(format!("acked {i}")),
            "line {i} was not acked"
        );
    }
    drop(stdin);
    assert!(child.wait().unwrap().success());
    reader.join().unwrap();
}
