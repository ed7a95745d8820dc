//! Where `seglog dump` follows Java and Kafka 4.4's `DumpLogSegments` beyond the goldens of
//! `dump_matches_kafka`: Java's replacement of ill-formed UTF-8 (against the cases Java itself
//! decoded, `testdata/java-utf8/cases.txt`), paths as `java.io.File` prints them, a negative
//! `--max-bytes`, a batch over `--max-message-size`, and `--skip-batch-metadata`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};

use crate::run::{seglog, text};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// A partition of `lines` records (batches of 5, 136 bytes each), with an index entry for every
/// batch but the first (Kafka's rule: an entry once more than index.interval.bytes were written).
fn partition(cwd: &Path, lines: usize) {
    let input: Vec<u8> = (0..lines)
        .flat_map(|i| format!("record-{i}\n").into_bytes())
        .collect();
    let out = seglog(
        &[
            "produce",
            "logs/t-0",
            "--create",
            "--batch-records",
            "5",
            "--config",
            "index.interval.bytes=1",
        ],
        cwd,
        &input,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn keys_and_values_decode_as_java_decodes_them() {
    let cases = std::fs::read_to_string(root().join("testdata/java-utf8/cases.txt")).unwrap();
    let cases: Vec<(Vec<u8>, Vec<u8>)> = cases
        .lines()
        .map(|l| {
            let (input, decoded) = l.split_once(' ').unwrap();
            (hex(input), hex(decoded))
        })
        .collect();
    assert!(cases.len() > 1800, "{} cases", cases.len());
    // Every case as a value and as a key (`<case>=<case>`), NUL-delimited: no case holds a NUL,
    // a newline or '='.
    let mut input = Vec::new();
    for (bytes, _) in &cases {
        input.extend_from_slice(bytes);
        input.push(b'=');
        input.extend_from_slice(bytes);
        input.push(0);
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = seglog(
        &[
            "produce",
            "logs/t-0",
            "--create",
            "-D",
            "\\0",
            "--key-separator",
            "=",
        ],
        tmp.path(),
        &input,
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = seglog(
        &[
            "dump",
            "--print-data-log",
            "--skip-record-metadata",
            "--files",
            "logs/t-0/00000000000000000000.log",
        ],
        tmp.path(),
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<&[u8]> = out
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| l.starts_with(b"| key: "))
        .collect();
    assert_eq!(lines.len(), cases.len());
    let mut wrong = Vec::new();
    for ((input, java), line) in cases.iter().zip(lines) {
        let mut want = b"| key: ".to_vec();
        want.extend_from_slice(java);
        want.extend_from_slice(b" payload: ");
        want.extend_from_slice(java);
        if line != want.as_slice() {
            wrong.push(format!("{input:02x?}: {}", String::from_utf8_lossy(line)));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} cases differ from Java: {wrong:#?}",
        wrong.len()
    );
}

#[test]
fn paths_print_as_java_io_file_prints_them() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path(), 20);
    let dir = tmp.path().join("logs/t-0");
    // A wrong first entry (3 where its batch, the second, ends at 9): a mismatch.
    let index = dir.join("00000000000000000000.index");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes[..4].copy_from_slice(&3_i32.to_be_bytes());
    std::fs::write(&index, bytes).unwrap();
    // Java keeps `.` and `..`, collapses `//` and drops a trailing `/`; the absolute form puts
    // the working directory (as getcwd gives it) in front.
    let given = "./logs//t-0/../t-0/00000000000000000000.index/";
    let out = seglog(
        &["dump", "--verify-index-only", "--files", given],
        tmp.path(),
        b"",
    );
    let cwd = tmp.path().canonicalize().unwrap();
    assert_eq!(
        text(&out.stdout),
        "Dumping ./logs/t-0/../t-0/00000000000000000000.index\n"
    );
    assert_eq!(
        text(&out.stderr),
        format!(
            "Mismatches in :{}/./logs/t-0/../t-0/00000000000000000000.index\n  Index offset: 3, log offset: 9\n",
            cwd.display()
        )
    );
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_negative_max_bytes_stops_at_the_first_log_as_kafka_s_tool_does() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path(), 10);
    let log = "logs/t-0/00000000000000000000.log";
    let size = std::fs::metadata(tmp.path().join(log)).unwrap().len();
    let files = format!("logs/t-0/00000000000000000000.index,{log},{log}");
    let out = seglog(
        &["dump", "--max-bytes", "-1", "--files", &files],
        tmp.path(),
        b"",
    );
    // The index does not read --max-bytes; the first .log stops the run (Kafka 4.4.0's output,
    // its stack trace left out).
    let stdout = text(&out.stdout);
    assert!(
        stdout.ends_with(&format!("Dumping {log}\nLog starting offset: 0\n")),
        "{stdout}"
    );
    assert_eq!(stdout.matches("Dumping").count(), 2);
    assert_eq!(
        text(&out.stderr),
        format!(
            "Exception in thread \"main\" java.lang.IllegalArgumentException: Invalid size: -1 in read from FileRecords(size={size}, file={log}, start=0, end=2147483647)\n"
        )
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_batch_over_max_message_size_is_no_mismatch_and_the_report_says_where_kafka_throws() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path(), 20);
    let index = "logs/t-0/00000000000000000000.index";
    let whole = seglog(&["dump", "--files", index], tmp.path(), b"");
    let small = seglog(
        &["dump", "--files", index, "--max-message-size", "40"],
        tmp.path(),
        b"",
    );
    assert_eq!(text(&small.stdout), text(&whole.stdout));
    assert!(text(&whole.stderr).is_empty(), "{}", text(&whole.stderr));
    let stderr = text(&small.stderr);
    assert!(!stderr.contains("Mismatches"), "{stderr}");
    let cwd = tmp.path().canonicalize().unwrap();
    assert!(
        stderr.starts_with(&format!(
            "Over --max-message-size in :{}/{index}: the batch of index offset 9 at position 136 is 136 bytes, over 40; ",
            cwd.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains(
        "Kafka's kafka-dump-log.sh throws java.util.NoSuchElementException at this entry"
    ));
    assert_eq!(stderr.lines().count(), 1, "one note per file: {stderr}");
    assert_eq!(small.status.code(), Some(0));

    // A wrong entry is still a mismatch under a small --max-message-size.
    let path = tmp.path().join(index);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[8..12].copy_from_slice(&8_i32.to_be_bytes());
    std::fs::write(&path, bytes).unwrap();
    let wrong = seglog(
        &["dump", "--files", index, "--max-message-size", "40"],
        tmp.path(),
        b"",
    );
    assert!(
        text(&wrong.stderr).contains("  Index offset: 8, log offset: 14\n"),
        "{}",
        text(&wrong.stderr)
    );
}

#[test]
fn skip_batch_metadata_is_skip_record_metadata() {
    let tmp = tempfile::tempdir().unwrap();
    partition(tmp.path(), 7);
    let log = "logs/t-0/00000000000000000000.log";
    let a = seglog(
        &[
            "dump",
            "--print-data-log",
            "--skip-record-metadata",
            "--files",
            log,
        ],
        tmp.path(),
        b"",
    );
    let b = seglog(
        &[
            "dump",
            "--print-data-log",
            "--skip-batch-metadata",
            "--files",
            log,
        ],
        tmp.path(),
        b"",
    );
    assert!(a.status.success());
    assert_eq!(text(&a.stdout), text(&b.stdout));
    assert!(text(&a.stdout).contains("| payload: record-6\n"));
}
