//! `seglog consume --follow` wakes on a file change (inotify), not on a timer: with the fallback
//! poll set to ten minutes, a record appended by another process still comes out, from the
//! partition it went to, when the consumer follows every partition of a topic. Prints how long
//! each record took from the producer's acknowledgement to the consumer's line.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::run::{seglog, text};

#[test]
fn follow_wakes_on_an_append_without_polling() {
    let root = tempfile::tempdir().unwrap();
    for p in ["f-0", "f-1"] {
        let out = seglog(
            &["produce", &format!("logs/{p}"), "--create"],
            root.path(),
            format!("{p} first\n").as_bytes(),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    // A missed event would hold the record back for ten minutes; the idle timeout ends the
    // consumer (without the line, failing the test) long before that.
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args([
            "consume",
            "logs",
            "--topic",
            "f",
            "--follow",
            "--poll-ms",
            "600000",
            "--timeout-ms",
            "60000",
            "--format",
            r"%p %s\n",
        ])
        .current_dir(root.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut next = || lines.next().unwrap().unwrap();
    assert_eq!(next(), "0 f-0 first");
    assert_eq!(next(), "1 f-1 first");
    // One interactive producer a partition in turn (a log directory takes one writer): each
    // line is acknowledged once appended, and the consumer must print it with no timer to wake it.
    let mut waits = Vec::new();
    for p in ["f-1", "f-0"] {
        let mut producer = Command::new(env!("CARGO_BIN_EXE_seglog"))
            .args(["produce", &format!("logs/{p}"), "--print-acks"])
            .current_dir(root.path())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut input = producer.stdin.take().unwrap();
        let mut acks = BufReader::new(producer.stdout.take().unwrap()).lines();
        for round in 0..4 {
            let value = format!("{p} {round}");
            writeln!(input, "{value}").unwrap();
            input.flush().unwrap();
            assert!(acks.next().unwrap().unwrap().starts_with("acked"));
            let acked = Instant::now();
            assert_eq!(next(), format!("{} {value}", &p[2..]));
            waits.push(acked.elapsed());
        }
        drop(input);
        assert!(producer.wait().unwrap().success());
    }
    child.kill().unwrap();
    child.wait().unwrap();
    waits.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    eprintln!(
        "follow woke in {:.1} ms (median of {}), {:.1} ms at most",
        ms(waits[waits.len() / 2]),
        waits.len(),
        ms(waits[waits.len() - 1])
    );
}
