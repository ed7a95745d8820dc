//! Regression: one cut gave hundreds of `check` lines (one per index entry after it) in Rust's
//! `Debug` formatting; exit codes disagreed with `--help` (`dump` of a missing file exited 1,
//! "corrupt"); messages suggested flags a command lacks (`compact`: "use --create"), printed the
//! OS error twice, or gave no path; `check .` and `consume .` refused a partition given as `.`.
//! Each is checked here with the binary.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    reason = "tests"
)]

use std::path::Path;

use crate::run::{seglog, text};

/// No Rust `Debug` rendering in what a user reads.
fn assert_no_debug(what: &str, output: &str) {
    for marker in ["Some(", "None", "Ok(", "Err(", " { ", "\\\"", "Kind("] {
        assert!(
            !output.contains(marker),
            "{what}: Debug formatting ({marker:?}) in: {output}"
        );
    }
}

/// `logs/t-0`: 5,000 records in batches of 10, an index entry every 100 bytes, one segment.
fn partition(root: &Path, extra: &[&str]) {
    let lines: String = (0..5_000).map(|i| format!("k{}:{i}\n", i % 20)).collect();
    let mut args = vec![
        "produce",
        "logs/t-0",
        "--create",
        "--key-separator",
        ":",
        "--batch-records",
        "10",
        "--config",
        "index.interval.bytes=100",
    ];
    args.extend(extra);
    let out = seglog(&args, root, lines.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn a_cut_is_one_problem_per_file_with_a_count_in_words() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    partition(root, &[]);
    let log = root.join("logs/t-0/00000000000000000000.log");
    let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    file.set_len(20_000).unwrap();
    drop(file);

    let out = seglog(&["check", "logs"], root, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert_no_debug("check", &stdout);
    let kinds: Vec<&str> = stdout
        .lines()
        .filter_map(|l| {
            l.split(": ")
                .find(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '_') && w.contains('_'))
        })
        .collect();
    // The torn tail, the index entries past it, the time index entries past it, the producer
    // snapshot that produce's close took at the old log end (5000; Kafka's recovery deletes a
    // snapshot past the log end, so it is a cause of its own, in its own file), and the
    // checkpoint that is now beyond the log end: five causes, five lines (and the summary).
    assert_eq!(
        kinds,
        [
            "torn_tail",
            "index_past_log_end",
            "time_index_past_log_end",
            "snapshot_past_log_end",
            "checkpoint_ahead_of_log"
        ],
        "{stdout}"
    );
    let index_line = stdout
        .lines()
        .find(|l| l.contains("index_past_log_end"))
        .unwrap();
    assert!(
        index_line.starts_with("logs/t-0/00000000000000000000.index: at byte "),
        "{index_line}"
    );
    let out = seglog(&["check", "--json", "logs"], root, b"");
    let findings: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let index = findings
        .iter()
        .find(|f| f["kind"] == "index_past_log_end")
        .unwrap();
    assert!(index["count"].as_u64().unwrap() > 100, "{index}");
    assert!(index["position"].as_u64().is_some(), "{index}");
    let snapshot = findings
        .iter()
        .find(|f| f["kind"] == "snapshot_past_log_end")
        .unwrap();
    assert!(
        snapshot["file"]
            .as_str()
            .unwrap()
            .ends_with("00000000000000005000.snapshot"),
        "{snapshot}"
    );
    assert_eq!(findings.last().unwrap()["problems"], 5);

    // Damaged indexes too are reported in words.
    std::fs::write(
        root.join("logs/t-0/00000000000000000000.index"),
        vec![7_u8; 803],
    )
    .unwrap();
    std::fs::write(
        root.join("logs/t-0/00000000000000000000.timeindex"),
        vec![9_u8; 120],
    )
    .unwrap();
    let out = seglog(&["check", "logs/t-0"], root, b"");
    assert_eq!(out.status.code(), Some(1));
    assert_no_debug("check of garbage indexes", &text(&out.stdout));
}

#[test]
fn every_read_command_states_its_exit_codes() {
    let root = tempfile::tempdir().unwrap();
    for command in ["dump", "check", "consume", "offsets", "stats"] {
        let out = seglog(&[command, "--help"], root.path(), b"");
        assert_eq!(out.status.code(), Some(0), "{command}");
        let help = text(&out.stdout).replace('\n', " ");
        let words: Vec<&str> = help.split_whitespace().collect();
        let help = words.join(" ");
        let stated = help.split("Exit status: ").nth(1).unwrap_or_default();
        for code in ["0 when", ", 1 when", ", 2 on bad usage"] {
            assert!(
                stated.contains(code),
                "{command} --help: {code:?} in: {stated}"
            );
        }
    }
}

/// Runs `args` in `root` (in `root/nowhere-0` for a path `.`): it must exit `code`, name `names`,
/// print the OS error at most once and no `Debug` rendering.
fn expect_exit(root: &Path, args: &[&str], code: i32, names: &str) {
    let cwd = if args.last() == Some(&".") {
        root.join("nowhere-0")
    } else {
        root.to_path_buf()
    };
    let out = seglog(args, &cwd, b"");
    let stderr = text(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "{args:?}: {stderr}{}",
        text(&out.stdout)
    );
    // dump --json reports on stdout, as JSON.
    let said = format!("{stderr}{}", text(&out.stdout));
    assert!(
        said.contains(names),
        "{args:?}: the message names {names}: {said}"
    );
    assert!(
        stderr.matches("(os error").count() <= 1,
        "{args:?}: the OS error is printed twice: {stderr}"
    );
    // clap's own usage message (for the unknown flag) is not ours to word.
    if !args.contains(&"--no-such-flag") {
        assert_no_debug(&format!("{args:?}"), &stderr);
    }
}

#[test]
fn exit_codes_are_the_ones_help_gives() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    partition(root, &[]);
    std::fs::write(root.join("00000000000000000000.log"), {
        let mut b = std::fs::read(root.join("logs/t-0/00000000000000000000.log")).unwrap();
        b.truncate(400);
        // The first batch's length zeroed: Kafka's reader stops there (CorruptRecordException).
        b[8..12].fill(0);
        b
    })
    .unwrap();
    std::fs::write(root.join("notes.log"), b"").unwrap();
    // A partition directory holding only the damaged file.
    std::fs::create_dir(root.join("nowhere-0")).unwrap();
    std::fs::copy(
        root.join("00000000000000000000.log"),
        root.join("nowhere-0/00000000000000000000.log"),
    )
    .unwrap();
    let damaged = "nowhere-0/00000000000000000000.log: at byte 0";
    let cases: &[(&[&str], i32, &str)] = &[
        // 2: bad usage or an I/O failure, naming the path.
        (&["dump", "--files", "missing.log"], 2, "missing.log"),
        (&["dump", "--files", "missing.index"], 2, "missing.index"),
        // Its .log is there: the index's own open fails (its OS error was printed twice).
        (
            &["dump", "--files", "00000000000000000000.index"],
            2,
            "00000000000000000000.index",
        ),
        (
            &["dump", "--json", "--files", "missing.timeindex"],
            2,
            "missing.timeindex",
        ),
        (&["dump", "--files", "notes.log"], 2, "notes.log"),
        (&["check", "missing"], 2, "missing"),
        (&["consume", "logs/none-0"], 2, "logs/none-0"),
        (&["offsets", "logs/none-0", "--latest"], 2, "logs/none-0"),
        (&["stats", "logs/none-0"], 2, "logs/none-0"),
        (&["consume", "logs"], 2, "logs"),
        (&["check", "--no-such-flag", "logs"], 2, "--no-such-flag"),
        // 1: problems found.
        (
            &["dump", "--files", "00000000000000000000.log"],
            1,
            "00000000000000000000.log",
        ),
        (&["check", "."], 1, ""),
        // Damage found by the read-only commands, named with its file and byte.
        (&["consume", "nowhere-0"], 1, damaged),
        (&["offsets", "nowhere-0", "--latest"], 1, damaged),
        (&["offsets", "nowhere-0", "--max-timestamp"], 1, damaged),
        (&["offsets", "nowhere-0", "--timestamp", "0"], 1, damaged),
        (&["stats", "nowhere-0"], 1, damaged),
        (
            &["check", "nowhere-0"],
            1,
            "nowhere-0/00000000000000000000.log",
        ),
        // 0.
        (&["check", "logs"], 0, ""),
        (&["consume", "logs/t-0"], 0, ""),
        (&["offsets", "logs/t-0", "--latest"], 0, ""),
        (&["offsets", "logs/t-0", "--max-timestamp"], 0, ""),
        (&["stats", "logs/t-0"], 0, ""),
        (
            &[
                "dump",
                "--deep-iteration",
                "--files",
                "logs/t-0/00000000000000000000.log",
            ],
            0,
            "",
        ),
        (
            &["dump", "--files", "logs/t-0/00000000000000000000.index"],
            0,
            "",
        ),
    ];
    for (args, code, names) in cases {
        expect_exit(root, args, *code, names);
    }
    // Read-only commands never hint at a flag: they have no --create.
    for args in [
        &["consume", "logs/none-0"][..],
        &["stats", "logs/none-0"],
        &["check", "missing"],
    ] {
        let out = seglog(args, root, b"");
        assert!(
            !text(&out.stderr).contains("--"),
            "{args:?}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn dot_and_relative_paths_work_everywhere() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    partition(root, &["--config", "cleanup.policy=compact"]);
    let t0 = root.join("logs/t-0");
    let inside: &[&[&str]] = &[
        &["check", "."],
        &["check", "--json", "."],
        &["consume", ".", "--max-records", "3"],
        &["consume", "../t-0", "--max-records", "3"],
        &["consume", "./", "--from-offset", "4998"],
        &["offsets", ".", "--latest"],
        &["stats", "."],
        &["recover", "."],
        &["compact", "."],
    ];
    for args in inside {
        let out = seglog(args, &t0, b"");
        assert!(
            out.status.success(),
            "{args:?} inside the partition: {}",
            text(&out.stderr)
        );
    }
    // Keyed: the topic is compacted, and a leader refuses a record without a key there.
    let out = seglog(
        &["produce", ".", "--key-separator", ":"],
        &t0,
        b"a:one\nb:two\n",
    );
    assert!(out.status.success(), "produce .: {}", text(&out.stderr));
    let out = seglog(&["offsets", ".", "--latest"], &t0, b"");
    assert_eq!(text(&out.stdout), "t:0:5002\n");
    let out = seglog(
        &["consume", "t-0/.", "--from-offset", "5001"],
        &root.join("logs"),
        b"",
    );
    assert_eq!(text(&out.stdout), "two\n", "{}", text(&out.stderr));
    // The log directory as `.` and as `..`.
    for (args, cwd) in [
        (&["check", "."][..], root.join("logs")),
        (&["recover", "."], root.join("logs")),
        (&["check", ".."], t0.clone()),
        (&["recover", ".."], t0.clone()),
    ] {
        let out = seglog(args, &cwd, b"");
        assert!(
            out.status.success(),
            "{args:?} in {}: {}",
            cwd.display(),
            text(&out.stderr)
        );
    }
}
