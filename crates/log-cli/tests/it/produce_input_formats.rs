//! `seglog produce`'s input formats through the binary: `--header`, `--parse-headers` (Kafka's
//! console producer's syntax, defaults and messages), `--null-marker`, `--ignore-error`,
//! `--timestamp`, `--timestamp-field`, `--file` and `--delimiter`. What was written is read
//! back with `seglog dump --json`, whose records carry every byte (base64).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use base64::Engine as _;

use crate::run::{seglog, text};

const SEGMENT: &str = "logs/t-0/00000000000000000000.log";

/// A record as dump --json gives it back: timestamp, key, value, headers (bytes).
#[derive(Debug, PartialEq)]
struct Back {
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(String, Option<Vec<u8>>)>,
}

fn bytes(v: &serde_json::Value) -> Option<Vec<u8>> {
    v.as_str()
        .map(|s| base64::engine::general_purpose::STANDARD.decode(s).unwrap())
}

/// The records of the partition's first segment, and each batch's (timestamp type, max timestamp).
fn read_back(cwd: &Path) -> (Vec<Back>, Vec<(String, i64)>) {
    let out = seglog(
        &["dump", "--json", "--deep-iteration", "--files", SEGMENT],
        cwd,
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut records = Vec::new();
    let mut batches = Vec::new();
    for line in text(&out.stdout).lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        match v["type"].as_str() {
            Some("record") => records.push(Back {
                timestamp: v["timestamp"].as_i64().unwrap(),
                key: bytes(&v["key"]),
                value: bytes(&v["value"]),
                headers: v["headers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|h| (h["key"].as_str().unwrap().to_owned(), bytes(&h["value"])))
                    .collect(),
            }),
            Some("batch") => batches.push((
                v["timestamp_type"].as_str().unwrap().to_owned(),
                v["max_timestamp"].as_i64().unwrap(),
            )),
            other => panic!("unexpected line {other:?}: {line}"),
        }
    }
    (records, batches)
}

fn produce(cwd: &Path, args: &[&str], input: &[u8]) -> std::process::Output {
    let mut all = vec!["produce", "logs/t-0", "--create"];
    all.extend_from_slice(args);
    seglog(&all, cwd, input)
}

#[expect(clippy::unnecessary_wraps, reason = "compared with nullable fields")]
fn some(s: &str) -> Option<Vec<u8>> {
    Some(s.as_bytes().to_vec())
}

#[test]
fn headers_from_flags_and_from_each_line_as_kafka_s_console_producer_reads_them() {
    let root = tempfile::tempdir().unwrap();
    let out = produce(
        root.path(),
        &[
            "--header",
            "app=billing",
            "-H",
            "flag",
            "--parse-headers",
            "--key-separator",
            "\\t",
        ],
        b"h1:v1,h2:v2\tk1\tv1\ntrace:a:b,\tk2\tv2\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (records, _) = read_back(root.path());
    let fixed = [
        ("app".to_owned(), some("billing")),
        ("flag".to_owned(), None),
    ];
    let mut first = fixed.to_vec();
    first.extend([("h1".to_owned(), some("v1")), ("h2".to_owned(), some("v2"))]);
    // The value of a header is what follows its first key separator; a trailing separator
    // adds no header (Java's split drops trailing empty parts).
    let mut second = fixed.to_vec();
    second.push(("trace".to_owned(), some("a:b")));
    assert_eq!(records[0].headers, first);
    assert_eq!(records[1].headers, second);
    assert_eq!(
        (records[0].key.clone(), records[0].value.clone()),
        (some("k1"), some("v1"))
    );
    assert_eq!(records[1].key, some("k2"));
}

#[test]
fn a_bad_line_gets_kafka_s_message_after_the_lines_before_it_were_appended() {
    let root = tempfile::tempdir().unwrap();
    let out = produce(
        root.path(),
        &["--parse-headers", "--batch-records", "1"],
        b"a:1\tfirst\nno delimiter here\nb:2\tthird\n",
    );
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("No headers delimiter found on line number 2: 'no delimiter here'"),
        "{stderr}"
    );
    let (records, _) = read_back(root.path());
    assert_eq!(records.len(), 1, "only the line before the bad one");
    assert_eq!(records[0].value, some("first"));

    let pair = produce(root.path(), &["--parse-headers"], b"nokeysep\tv\n");
    assert!(
        text(&pair.stderr)
            .contains("No header key separator found in pair 'nokeysep' on line number 1"),
        "{}",
        text(&pair.stderr)
    );
    // Kafka's configure checks.
    let same = produce(
        root.path(),
        &["--parse-headers", "--headers-separator", ":"],
        b"",
    );
    assert!(
        text(&same.stderr).contains("headers.separator and headers.key.separator may not be equal")
    );
    let bad_escape = produce(root.path(), &["--delimiter", "\\q"], b"");
    assert!(text(&bad_escape.stderr).contains("unknown escape"));
}

#[test]
fn ignore_error_and_the_null_marker() {
    let root = tempfile::tempdir().unwrap();
    let out = produce(
        root.path(),
        &[
            "--parse-headers",
            "--ignore-error",
            "--null-marker",
            "NULL",
            "--key-separator",
            "=",
        ],
        b"plain value\nh:NULL,bare\tk=NULL\nNULL\tNULL=v\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (records, _) = read_back(root.path());
    // No headers delimiter: no headers, the whole line is the record.
    assert_eq!(records[0].headers, vec![]);
    assert_eq!(records[0].value, some("plain value"));
    // A pair without its key separator is a header with a null value; NULL is null.
    assert_eq!(
        records[1].headers,
        vec![("h".to_owned(), None), ("bare".to_owned(), None)]
    );
    assert_eq!(
        (records[1].key.clone(), records[1].value.clone()),
        (some("k"), None)
    );
    // Headers equal to the marker: none; a key equal to it: null.
    assert_eq!(records[2].headers, vec![]);
    assert_eq!(
        (records[2].key.clone(), records[2].value.clone()),
        (None, some("v"))
    );

    let key_null = produce(
        root.path(),
        &["--parse-headers", "--null-marker", "N"],
        b"N:x\tv\n",
    );
    assert!(
        text(&key_null.stderr).contains(
            "Header keys should not be equal to the null marker 'N' as they can't be null"
        )
    );
}

#[test]
fn timestamps_fixed_per_line_and_under_log_append_time() {
    let root = tempfile::tempdir().unwrap();
    let out = produce(root.path(), &["--timestamp", "1000"], b"a\nb\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (records, _) = read_back(root.path());
    let stamps: Vec<i64> = records.iter().map(|r| r.timestamp).collect();
    assert_eq!(stamps, [1000, 1000]);
    // A partition of its own: a segment whose first timestamp is 1970's rolls at the next
    // append (segment.ms), as Kafka's does.
    let field = tempfile::tempdir().unwrap();
    let out = produce(
        field.path(),
        &["--timestamp-field", "--timestamp-separator", ","],
        b"1700000000000,x\n1600000000000,y\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (records, batches) = read_back(field.path());
    let stamps: Vec<i64> = records.iter().map(|r| r.timestamp).collect();
    assert_eq!(stamps, [1_700_000_000_000, 1_600_000_000_000]);
    assert_eq!(records[0].value, some("x"));
    assert_eq!(batches[0], ("CreateTime".to_owned(), 1_700_000_000_000));

    let bad = produce(root.path(), &["--timestamp-field"], b"-5\tv\n");
    assert!(
        text(&bad.stderr)
            .contains("Invalid timestamp: -5. Timestamp should always be non-negative"),
        "{}",
        text(&bad.stderr)
    );
    let none = produce(root.path(), &["--timestamp-field"], b"no separator\n");
    assert!(text(&none.stderr).contains("No timestamp separator found on line number 1"));
    let both = produce(root.path(), &["--timestamp", "1", "--timestamp-field"], b"");
    assert_eq!(both.status.code(), Some(2), "clap refuses the pair");

    // A LogAppendTime topic stamps the append time over the producer's CreateTime, as Kafka's
    // broker does: readers see the batch's LogAppendTime.
    let lat = tempfile::tempdir().unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis();
    let out = produce(
        lat.path(),
        &[
            "--config",
            "message.timestamp.type=LogAppendTime",
            "--timestamp",
            "5",
        ],
        b"a\nb\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (records, batches) = read_back(lat.path());
    assert_eq!(batches[0].0, "LogAppendTime");
    assert!(i128::from(batches[0].1) >= i128::try_from(before).unwrap());
    assert!(records.iter().all(|r| r.timestamp == batches[0].1));
}

/// Deterministic bytes (an LCG), every value 0..=255 likely, NUL and newlines included.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 56) as u8
        })
        .collect()
}

#[test]
fn any_bytes_round_trip_from_a_file_with_a_multi_byte_delimiter() {
    let root = tempfile::tempdir().unwrap();
    let delimiter = b"\xff\x00\xfe";
    let mut values: Vec<Vec<u8>> = (0..200_u64)
        .map(|i| noise(i, usize::try_from(i % 37).unwrap() * 7))
        .filter(|v| !v.windows(3).any(|w| w == delimiter))
        .collect();
    // Invalid UTF-8, NUL, CR and LF, and an empty record.
    values.push(b"\xed\xa0\x80\r\n\0\xc0".to_vec());
    values.push(Vec::new());
    values.push(b"a\r".to_vec());
    let mut input = Vec::new();
    for v in &values {
        input.extend_from_slice(v);
        input.extend_from_slice(delimiter);
    }
    std::fs::write(root.path().join("in.bin"), &input).unwrap();
    let out = produce(
        root.path(),
        &[
            "--file",
            "in.bin",
            "--delimiter",
            "\\xff\\0\\xfe",
            "--batch-records",
            "7",
        ],
        b"ignored: --file replaces stdin\n",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (records, _) = read_back(root.path());
    let back: Vec<Vec<u8>> = records.into_iter().map(|r| r.value.unwrap()).collect();
    assert_eq!(back, values);

    // NUL-delimited, the last record without a delimiter, through stdin.
    let nul = tempfile::tempdir().unwrap();
    let out = produce(nul.path(), &["-D", "\\0"], b"one\n\xff\0two\r\n\0three");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let (records, _) = read_back(nul.path());
    let back: Vec<Vec<u8>> = records.into_iter().map(|r| r.value.unwrap()).collect();
    assert_eq!(
        back,
        [
            b"one\n\xff".to_vec(),
            b"two\r\n".to_vec(),
            b"three".to_vec()
        ]
    );

    let missing = produce(nul.path(), &["--file", "nope.bin"], b"");
    assert!(text(&missing.stderr).contains("--file nope.bin: cannot open"));
}
