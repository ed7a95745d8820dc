//! Regression: `seglog recover DIR` and `seglog compact DIR` hung forever at a terminal, because
//! the main thread held the stderr lock for the whole run while indicatif drew its bar from its
//! tick thread. No test ran the binary at a terminal, so CI never saw it. Here every command
//! runs at a real pseudo-terminal ([`super::pty`]) under a hard time limit, and must exit by
//! itself with its documented status, show its progress bar where it has one, clear it, and
//! keep its stdout lines whole.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    reason = "tests"
)]

use std::path::Path;
use std::process::{Command, Stdio};

use super::pty::{self, Input};

/// Builds `logs/<name>` with `lines` records through a pipe (not a terminal).
fn produce(root: &Path, name: &str, lines: u32, extra: &[&str]) {
    let input: String = (0..lines)
        .map(|i| format!("k{}:value {i}\n", i % 500))
        .collect();
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(["produce", &format!("logs/{name}"), "--create"])
        .args(["--key-separator", ":", "--batch-records", "50"])
        .args(extra)
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A log directory of several partitions with several segments each.
fn sample(root: &Path) {
    for p in 0..4 {
        produce(
            root,
            &format!("t-{p}"),
            20_000,
            &["--config", "internal.segment.bytes=65536"],
        );
    }
    produce(
        root,
        "users-0",
        20_000,
        &[
            "--config",
            "cleanup.policy=compact",
            "--config",
            "internal.segment.bytes=65536",
        ],
    );
}

/// The lines the terminal shows at the end: each line of output as left by the carriage returns
/// and line clears (`ESC [2K`) that the bars draw with.
fn screen_lines(transcript: &str) -> Vec<&str> {
    transcript
        .split("\r\n")
        .map(|line| {
            let line = line.rsplit("\x1b[2K").next().unwrap_or(line);
            line.rsplit('\r').next().unwrap_or(line)
        })
        .collect()
}

/// The terminal shows `line` as a line of its own: no bar was drawn into it or left beside it.
fn assert_whole_line(run: &pty::Finished, line: &str) {
    assert!(
        screen_lines(&run.transcript).contains(&line),
        "{line:?} is not a whole line on the terminal:\n{:?}",
        run.transcript
    );
}

/// The progress bar `what` was drawn, and the terminal's last line is not a bar left behind.
fn assert_bar_shown_and_cleared(run: &pty::Finished, what: &str) {
    assert!(
        run.transcript.contains(&format!("{what} [")),
        "no {what:?} progress bar on the terminal:\n{:?}",
        run.transcript
    );
    let lines = screen_lines(&run.transcript);
    let left = lines.iter().find(|l| l.contains(&format!("{what} [")));
    assert!(left.is_none(), "a bar was left on the terminal: {left:?}");
}

#[test]
fn recover_at_a_terminal_exits_and_shows_its_bar() {
    let root = tempfile::tempdir().unwrap();
    sample(root.path());
    let run = pty::run(&["recover", "logs"], root.path(), &Input::Terminal);
    run.assert_exit(0, "recover logs");
    assert_bar_shown_and_cleared(&run, "recovering");
    assert!(
        run.transcript.contains("t-3: nothing needed recovery"),
        "{}",
        run.transcript
    );
    let run = pty::run(&["recover", "logs/t-1"], root.path(), &Input::Terminal);
    run.assert_exit(0, "recover logs/t-1");
    assert!(
        run.transcript.contains("t-1: nothing needed recovery"),
        "{}",
        run.transcript
    );
    // A failure while the bar is up (the log directory is locked by a producer waiting for its
    // input): exit 2, the bar cleared, the message a whole line.
    let mut producer = pty::spawn(
        &["produce", "logs/t-0", "--print-acks"],
        root.path(),
        &Input::Terminal,
    );
    producer.type_text("one more\n");
    producer.wait_for("acked 20000");
    let run = pty::run(&["recover", "logs"], root.path(), &Input::Terminal);
    run.assert_exit(2, "recover of a locked log directory");
    assert_bar_shown_and_cleared(&run, "recovering");
    assert!(
        screen_lines(&run.transcript)
            .iter()
            .any(|l| l.starts_with("seglog: ") && l.contains(".lock")),
        "{:?}",
        run.transcript
    );
    producer.type_text("\x04");
    producer
        .finish()
        .assert_exit(0, "the producer holding the lock");
}

#[test]
fn compact_at_a_terminal_exits_and_shows_its_bar() {
    let root = tempfile::tempdir().unwrap();
    sample(root.path());
    let run = pty::run(&["compact", "logs/users-0"], root.path(), &Input::Terminal);
    run.assert_exit(0, "compact");
    assert_bar_shown_and_cleared(&run, "compacting");
    assert!(
        run.transcript.contains("users-0: cleaned offsets"),
        "{}",
        run.transcript
    );
}

#[test]
fn check_and_stats_at_a_terminal_exit_and_show_their_bars() {
    let root = tempfile::tempdir().unwrap();
    sample(root.path());
    let run = pty::run(&["check", "logs"], root.path(), &Input::Terminal);
    run.assert_exit(0, "check");
    assert_bar_shown_and_cleared(&run, "checking");
    assert_whole_line(&run, "checked 35 segments in 5 partitions: 0 problems");
    let run = pty::run(&["stats", "logs/t-0"], root.path(), &Input::Terminal);
    run.assert_exit(0, "stats");
    assert_bar_shown_and_cleared(&run, "reading segments");
    assert!(
        run.transcript.contains("total: 7 segments"),
        "{}",
        run.transcript
    );
    // Problems found: exit 1, still by itself.
    std::fs::write(
        root.path().join("logs/t-2/00000000000000000000.log"),
        b"garbage",
    )
    .unwrap();
    let run = pty::run(&["check", "logs"], root.path(), &Input::Terminal);
    run.assert_exit(1, "check of a damaged log");
}

#[test]
fn demo_at_a_terminal_exits_with_whole_lines() {
    let root = tempfile::tempdir().unwrap();
    let run = pty::run(&["demo", "d"], root.path(), &Input::Terminal);
    run.assert_exit(0, "demo");
    assert_bar_shown_and_cleared(&run, "appending");
    assert!(
        run.transcript
            .contains("seglog demo: a Kafka-format partition log in"),
        "{}",
        run.transcript
    );
    let appended = screen_lines(&run.transcript)
        .into_iter()
        .find(|l| l.contains("appended and fsynced"))
        .unwrap_or_else(|| panic!("no append line:\n{:?}", run.transcript));
    assert!(appended.starts_with("   appended"), "{appended:?}");
}

#[test]
fn produce_at_a_terminal_piped_and_typed() {
    let root = tempfile::tempdir().unwrap();
    // `seq ... | seglog produce` with the terminal as stdout and stderr.
    let input: String = (0..200_000).map(|i| format!("{i}\n")).collect();
    let run = pty::run(
        &["produce", "logs/p-0", "--create"],
        root.path(),
        &Input::Piped(input.as_bytes()),
    );
    run.assert_exit(0, "piped produce");
    assert_whole_line(&run, "appended 200000 records to logs/p-0");
    // Lines typed at the terminal, each acked, then end of input (Ctrl-D).
    let mut typing = pty::spawn(
        &["produce", "logs/p-0", "--print-acks"],
        root.path(),
        &Input::Terminal,
    );
    typing.type_text("typed one\n");
    typing.wait_for("acked 200000");
    typing.type_text("typed two\n");
    typing.wait_for("acked 200001");
    typing.type_text("\x04");
    let run = typing.finish();
    run.assert_exit(0, "typed produce");
    assert!(
        run.transcript.contains("appended 2 records"),
        "{}",
        run.transcript
    );
    // A refused target at a terminal: exit 2 with the reason, no hang.
    let run = pty::run(&["produce", "logs/p"], root.path(), &Input::Piped(b"x\n"));
    run.assert_exit(2, "produce into a non-partition");
}

#[test]
fn consume_offsets_and_dump_at_a_terminal() {
    let root = tempfile::tempdir().unwrap();
    produce(root.path(), "c-0", 1_000, &[]);
    let run = pty::run(
        &["consume", "logs/c-0", "--print-key"],
        root.path(),
        &Input::Terminal,
    );
    run.assert_exit(0, "consume");
    assert_whole_line(&run, "k499\tvalue 999");
    let run = pty::run(
        &["offsets", "logs/c-0", "--latest"],
        root.path(),
        &Input::Terminal,
    );
    run.assert_exit(0, "offsets");
    assert_whole_line(&run, "c:0:1000");
    let run = pty::run(
        &[
            "dump",
            "--deep-iteration",
            "--files",
            "logs/c-0/00000000000000000000.log,logs/c-0/00000000000000000000.index",
        ],
        root.path(),
        &Input::Terminal,
    );
    run.assert_exit(0, "dump");
    assert!(
        run.transcript.contains("| offset: 999 "),
        "{}",
        run.transcript
    );
}

#[test]
fn consume_follow_at_a_terminal_ends_by_its_time_limit_or_a_signal() {
    let root = tempfile::tempdir().unwrap();
    produce(root.path(), "f-0", 10, &[]);
    // --timeout-ms: it waits, sees nothing new, and exits 0 by itself.
    let run = pty::run(
        &["consume", "logs/f-0", "--follow", "--timeout-ms", "300"],
        root.path(),
        &Input::Terminal,
    );
    run.assert_exit(0, "consume --follow --timeout-ms");
    assert_whole_line(&run, "value 9");
    // Ctrl-C (SIGINT) ends a follow at once; what it printed is on the terminal.
    let mut follow = pty::spawn(
        &["consume", "logs/f-0", "--follow"],
        root.path(),
        &Input::Terminal,
    );
    follow.wait_for("value 9\r\n");
    produce(root.path(), "f-0", 1, &[]);
    follow.wait_for("value 0\r\n");
    follow.signal(rustix::process::Signal::INT);
    let run = follow.finish();
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&run.status),
        Some(2),
        "a follow ends by Ctrl-C as `tail -f` does: {:?}",
        run.status
    );
}
