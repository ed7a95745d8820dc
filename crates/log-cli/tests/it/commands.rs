//! Every command and flag of `seglog`, run as a user would: round trips for every codec, and bad
//! input (missing files, wrong suffixes, torn and garbage files, a directory that is not a
//! partition, unknown flags, a locked directory), each with one clear line and the documented exit
//! status, no panic and no change to the data.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    reason = "tests"
)]

use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

fn seglog(args: &[&str], cwd: &Path, stdin: Option<&[u8]>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // A command that fails early closes its stdin; that is not the test's failure.
    let _ = input.write_all(stdin.unwrap_or_default());
    drop(input);
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_no_panic(out: &Output) {
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("panicked"), "panic: {stderr}");
}

#[test]
fn produce_consume_check_round_trip_for_every_codec() {
    let root = tempfile::tempdir().unwrap();
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let dir = format!("logs/{codec}-0");
        let input: String = (0..250)
            .map(|i| format!("key-{i}|value {codec} {i}\n"))
            .collect();
        let out = seglog(
            &[
                "produce",
                &dir,
                "--create",
                "--compression",
                codec,
                "--batch-records",
                "7",
                "--key-separator",
                "|",
                "--print-acks",
                "--config",
                "internal.segment.bytes=4096",
            ],
            root.path(),
            Some(input.as_bytes()),
        );
        assert!(out.status.success(), "{codec}: {}", text(&out.stderr));
        let acks = text(&out.stdout);
        assert_eq!(acks.lines().last().unwrap(), "acked 249", "{codec}");

        let out = seglog(
            &["consume", &dir, "--from-beginning", "--json"],
            root.path(),
            None,
        );
        assert!(out.status.success());
        let lines: Vec<serde_json::Value> = text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 250, "{codec}");
        for (i, line) in lines.iter().enumerate() {
            assert_eq!(line["offset"], i);
            assert_eq!(line["payload"], format!("value {codec} {i}"));
            assert_eq!(line["key"], format!("key-{i}"));
            assert_eq!(line["tstype"], "create");
        }
        let out = seglog(&["check", &dir], root.path(), None);
        assert!(out.status.success(), "{codec}: {}", text(&out.stdout));
        assert!(text(&out.stdout).contains("0 problems"));
    }
}

#[test]
fn consume_starts_and_stops_where_asked_and_offsets_answer() {
    let root = tempfile::tempdir().unwrap();
    let input: String = (0..100).map(|i| format!("v{i}\n")).collect();
    let out = seglog(
        &["produce", "logs/t-0", "--create"],
        root.path(),
        Some(input.as_bytes()),
    );
    assert!(out.status.success());
    let out = seglog(
        &[
            "consume",
            "logs/t-0",
            "--from-offset",
            "95",
            "--max-records",
            "3",
        ],
        root.path(),
        None,
    );
    assert_eq!(text(&out.stdout), "v95\nv96\nv97\n");
    let out = seglog(&["offsets", "logs/t-0", "--latest"], root.path(), None);
    assert_eq!(text(&out.stdout), "t:0:100\n");
    let out = seglog(
        &["offsets", "logs/t-0", "--earliest", "--json"],
        root.path(),
        None,
    );
    assert_eq!(
        text(&out.stdout),
        "{\"offset\":0,\"partition\":0,\"timestamp\":null,\"topic\":\"t\"}\n"
    );
    let out = seglog(
        &[
            "offsets",
            "logs/t-0",
            "--timestamp",
            "99999999999999",
            "--json",
        ],
        root.path(),
        None,
    );
    assert_eq!(
        text(&out.stdout),
        "{\"offset\":null,\"partition\":0,\"timestamp\":null,\"topic\":\"t\"}\n"
    );
    let out = seglog(
        &[
            "consume",
            "logs/t-0",
            "--from-timestamp",
            "0",
            "--max-records",
            "1",
        ],
        root.path(),
        None,
    );
    assert_eq!(text(&out.stdout), "v0\n");
    let out = seglog(&["stats", "logs/t-0", "--json"], root.path(), None);
    let total = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "total")
        .unwrap();
    assert_eq!(total["records"], 100);
}

#[test]
fn recover_repairs_a_torn_tail_and_check_reports_it_first() {
    let root = tempfile::tempdir().unwrap();
    let input: String = (0..50).map(|i| format!("v{i}\n")).collect();
    assert!(
        seglog(
            &["produce", "logs/t-0", "--create"],
            root.path(),
            Some(input.as_bytes())
        )
        .status
        .success()
    );
    let log = root.path().join("logs/t-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let good = bytes.len();
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 1, 0, 1, 2, 3, 4, 5, 6, 7]);
    std::fs::write(&log, &bytes).unwrap();
    let out = seglog(&["check", "logs/t-0", "--json"], root.path(), None);
    assert_eq!(out.status.code(), Some(1));
    let problem: serde_json::Value =
        serde_json::from_str(text(&out.stdout).lines().next().unwrap()).unwrap();
    assert_eq!(problem["type"], "problem");
    assert_eq!(problem["kind"], "torn_tail");
    assert_eq!(problem["position"], good);
    assert_eq!(
        std::fs::read(&log).unwrap().len(),
        bytes.len(),
        "check changed the data"
    );
    let out = seglog(&["recover", "logs/t-0"], root.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("(19 bytes, offsets from 50 on)"),
        "{}",
        text(&out.stdout)
    );
    assert!(
        seglog(&["check", "logs/t-0"], root.path(), None)
            .status
            .success()
    );
    assert_eq!(std::fs::read(&log).unwrap().len(), good);
}

/// What a Kafka broker leaves in an active segment it did not close (after SIGKILL, and always in
/// its `__cluster_metadata-0` log, which it recovers on every start): both indexes preallocated
/// to `segment.index.bytes`, a zero tail after the real entries. Kafka recovers such a segment;
/// `check` must not report it, including the sanity rule the zero last slot breaks (the last
/// timestamp, 0, is below the first) and an index preallocated before its first entry (zeros from
/// slot 0), while the same tail on an inactive segment is reported.
#[test]
fn check_accepts_the_preallocated_indexes_of_an_active_segment() {
    let root = tempfile::tempdir().unwrap();
    let input: String = (0..400)
        .map(|i| format!("value-{i:04}-{}\n", "x".repeat(40)))
        .collect();
    let out = seglog(
        &[
            "produce",
            "logs/t-0",
            "--create",
            "--batch-records",
            "10",
            "--config",
            "index.interval.bytes=100",
            "--config",
            "internal.segment.bytes=8192",
        ],
        root.path(),
        Some(input.as_bytes()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = root.path().join("logs/t-0");
    let mut logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    assert!(logs.len() > 1, "expected rolled segments: {logs:?}");
    let preallocate = |log: &Path| {
        for (ext, len) in [("index", 10_485_760), ("timeindex", 10_485_756)] {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(log.with_extension(ext))
                .unwrap();
            assert!(f.metadata().unwrap().len() > 0, "{ext} has entries");
            f.set_len(len).unwrap();
        }
    };
    let active = logs.last().unwrap();
    preallocate(active);
    let out = seglog(&["check", "logs/t-0"], root.path(), None);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // Preallocated before its first entry: zeros from slot 0 on, which read as an entry for the
    // base offset at byte 0 and timestamp 0 if taken literally.
    for ext in ["index", "timeindex"] {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(active.with_extension(ext))
            .unwrap();
        let len = f.metadata().unwrap().len();
        f.set_len(0).unwrap();
        f.set_len(len).unwrap();
    }
    let out = seglog(&["check", "logs/t-0"], root.path(), None);
    assert!(
        out.status.success(),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    // The same on an inactive segment is a problem, and recover trims it: after a clean
    // shutdown only with --full, since neither Kafka nor recover rescans a cleanly closed log.
    preallocate(&logs[0]);
    let out = seglog(&["check", "logs/t-0", "--json"], root.path(), None);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("index_zero_tail"),
        "{}",
        text(&out.stdout)
    );
    let out = seglog(&["recover", "--full", "logs/t-0"], root.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = seglog(&["check", "logs/t-0"], root.path(), None);
    assert!(out.status.success(), "{}", text(&out.stdout));
}

#[test]
fn bad_input_gives_one_clear_line_and_the_documented_status() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(root.path().join("not-a-partition")).unwrap();
    std::fs::write(
        root.path().join("00000000000000000007.log"),
        vec![0xAB; 100],
    )
    .unwrap();
    std::fs::write(root.path().join("00000000000000000000.txt"), b"x").unwrap();
    std::fs::write(root.path().join("not-an-offset.log"), b"").unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        // A file that cannot be opened or is misnamed is an I/O failure or bad usage (2), not
        // corrupt bytes (1).
        (
            &["dump", "--files", "00000000000000000042.log"],
            2,
            "cannot open",
        ),
        (
            &["dump", "--files", "not-an-offset.log"],
            2,
            "does not start with a base offset",
        ),
        (
            &["dump", "--files", "00000000000000000007.log"],
            1,
            "corrupt batch at byte 0",
        ),
        (
            &["dump", "--files", "00000000000000000000.txt"],
            0,
            "Ignoring unknown file",
        ),
        (
            &["consume", "not-a-partition"],
            2,
            "not a partition directory",
        ),
        (&["consume", "missing-0"], 2, "missing-0"),
        (
            &["check", "not-a-partition"],
            2,
            "neither a partition directory",
        ),
        (&["stats", "missing-0"], 2, "missing-0"),
        (&["produce", "nowhere-0"], 2, "use --create"),
        (&["dump", "--no-such-flag"], 2, "unexpected argument"),
        (&["offsets", "x-0"], 2, "required"),
    ];
    for (args, code, needle) in cases {
        let out = seglog(args, root.path(), None);
        assert_no_panic(&out);
        assert_eq!(
            out.status.code(),
            Some(*code),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let stderr = text(&out.stderr);
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    // A dump of a torn file reports its invalid bytes; nothing is changed.
    let input: String = (0..10).map(|i| format!("v{i}\n")).collect();
    assert!(
        seglog(
            &["produce", "logs/t-0", "--create"],
            root.path(),
            Some(input.as_bytes())
        )
        .status
        .success()
    );
    let log = root.path().join("logs/t-0/00000000000000000000.log");
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..bytes.len() - 5]).unwrap();
    let out = seglog(
        &["dump", "--files", "logs/t-0/00000000000000000000.log"],
        root.path(),
        None,
    );
    assert!(text(&out.stdout).contains("invalid bytes at the end of 00000000000000000000.log"));
    assert_eq!(std::fs::read(&log).unwrap().len(), bytes.len() - 5);
}

#[test]
fn a_locked_log_directory_is_refused_clearly() {
    let root = tempfile::tempdir().unwrap();
    let logs = root.path().join("logs");
    let options = seglog_log::LogDirOptions::default()
        .with_default_config(seglog_log::LogConfig::default())
        .with_recovery_threads(1)
        .with_time(Arc::new(seglog_log::SystemClock));
    let (held, _) = seglog_log::LogDir::open(seglog_log::RealFs, &logs, options).unwrap();
    let out = seglog(
        &["produce", "logs/t-0", "--create"],
        root.path(),
        Some(b"x\n"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("Failed to acquire lock"),
        "{}",
        text(&out.stderr)
    );
    drop(held);
    assert!(
        seglog(
            &["produce", "logs/t-0", "--create"],
            root.path(),
            Some(b"x\n")
        )
        .status
        .success()
    );
}

#[test]
fn every_subcommand_has_help_with_examples() {
    let root = tempfile::tempdir().unwrap();
    for cmd in [
        "dump",
        "check",
        "recover",
        "produce",
        "consume",
        "offsets",
        "stats",
        "demo",
        "log-dirs",
        "completions",
        "man",
    ] {
        let out = seglog(&[cmd, "--help"], root.path(), None);
        assert!(out.status.success(), "{cmd}");
        assert!(
            text(&out.stdout).contains("Examples:"),
            "{cmd}: {}",
            text(&out.stdout)
        );
    }
}

#[test]
fn compact_keeps_the_latest_value_per_key() {
    let root = tempfile::tempdir().unwrap();
    let input: String = (0..300).map(|i| format!("k{}:v{i}\n", i % 7)).collect();
    let out = seglog(
        &[
            "produce",
            "logs/users-0",
            "--create",
            "--key-separator",
            ":",
            "--batch-records",
            "10",
            "--config",
            "cleanup.policy=compact",
            "--config",
            "internal.segment.bytes=1024",
        ],
        root.path(),
        Some(input.as_bytes()),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = seglog(&["compact", "logs/users-0", "--json"], root.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let summary: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert!(summary["records_kept"].as_u64().unwrap() < summary["records_read"].as_u64().unwrap());
    let out = seglog(
        &["consume", "logs/users-0", "--print-key"],
        root.path(),
        None,
    );
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    // Every key's latest value survives, and below the active segment each key appears once.
    for k in 0..7 {
        let last = (0..300).filter(|i| i % 7 == k).max().unwrap();
        assert!(lines.contains(&format!("k{k}\tv{last}")), "k{k}: {lines:?}");
    }
    assert!(lines.len() < 300);
    assert!(
        seglog(&["check", "logs/users-0"], root.path(), None)
            .status
            .success()
    );
    // Kafka's dump of every rewritten index finds each offset entry in its .log. Its time index
    // check takes the max over a batch's records, so a batch the cleaner emptied (kept for its
    // offsets, header max timestamp kept, as Kafka's `filterTo` keeps it and indexes it) reads as
    // "log timestamp: -1" there, in Kafka's dump as in ours; any other timestamp mismatch fails.
    let mut indexes: Vec<String> = std::fs::read_dir(root.path().join("logs/users-0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| {
            let ext = Path::new(n).extension().unwrap_or_default();
            ext == "index" || ext == "timeindex"
        })
        .map(|n| format!("logs/users-0/{n}"))
        .collect();
    indexes.sort();
    assert!(indexes.len() >= 4, "{indexes:?}");
    let out = seglog(&["dump", "--files", &indexes.join(",")], root.path(), None);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stderr = text(&out.stderr);
    assert!(!stderr.contains("Mismatches"), "{stderr}");
    assert!(!stderr.contains("not found"), "{stderr}");
    for line in stderr.lines().filter(|l| l.contains("Index timestamp")) {
        assert!(line.ends_with("log timestamp: -1"), "{stderr}");
    }
    assert_eq!(text(&out.stdout).matches("Dumping ").count(), indexes.len());
}

#[test]
#[expect(clippy::too_many_lines, reason = "one check per JSON item type")]
fn dump_json_has_the_documented_fields() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap();
    let parse = |out: &Output| -> Vec<serde_json::Value> {
        text(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    };
    let out = seglog(
        &[
            "dump",
            "--json",
            "--deep-iteration",
            "--files",
            "testdata/segment/00000000000000000000.log",
        ],
        &root,
        None,
    );
    assert!(out.status.success());
    let items = parse(&out);
    let batch = items.iter().find(|v| v["type"] == "batch").unwrap();
    for field in [
        "base_offset",
        "last_offset",
        "count",
        "position",
        "size",
        "magic",
        "compression",
        "crc",
        "crc_valid",
        "timestamp_type",
        "max_timestamp",
        "producer_id",
        "producer_epoch",
        "base_sequence",
        "partition_leader_epoch",
        "is_transactional",
        "is_control",
    ] {
        assert!(batch.get(field).is_some(), "batch lacks {field}");
    }
    let record = items.iter().find(|v| v["type"] == "record").unwrap();
    for field in ["offset", "timestamp", "key", "value", "headers"] {
        assert!(record.get(field).is_some(), "record lacks {field}");
    }
    // As many records as Kafka's own deep dump of the same file lists.
    let kafka = std::fs::read_to_string(root.join("testdata/kafka-dump/log.deep.stdout")).unwrap();
    let kafka_records = kafka.lines().filter(|l| l.starts_with("| offset:")).count();
    assert_eq!(
        items.iter().filter(|v| v["type"] == "record").count(),
        kafka_records
    );
    let out = seglog(
        &[
            "dump",
            "--json",
            "--files",
            "testdata/segment/00000000000000000000.index,testdata/segment/00000000000000000000.timeindex",
        ],
        &root,
        None,
    );
    let items = parse(&out);
    assert_eq!(
        items.iter().filter(|v| v["type"] == "index_entry").count(),
        12
    );
    assert_eq!(
        items
            .iter()
            .filter(|v| v["type"] == "time_index_entry")
            .count(),
        4
    );
    assert!(items.iter().all(|v| v["type"] != "problem"));
    // Problems name the file and the byte position.
    let out = seglog(
        &[
            "dump",
            "--json",
            "--files",
            "testdata/segment-torn/00000000000000000000.log",
        ],
        &root,
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    let last = parse(&out).pop().unwrap();
    assert_eq!(last["type"], "problem");
    assert_eq!(last["kind"], "invalid_bytes");
    assert_eq!(last["position"], 4288);
    let out = seglog(
        &[
            "dump",
            "--json",
            "--files",
            "testdata/kafka-dump/extra/index-errors/00000000000000000000.index",
        ],
        &root,
        None,
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(parse(&out).iter().any(|v| v["kind"] == "index_mismatch"));
}
