//! `seglog consume` as kcat's consumer, with the real binary: --offset (from the end too),
//! --from-time in milliseconds and ISO-8601, --to-offset, kcat's --format tokens and -J JSON on
//! records with a null key, headers and a binary value, a log directory with --topic.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, Header, NewRecord};
use seglog_log::{LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};

use crate::run::{seglog, text};

/// 2024-05-01T12:00:00.000Z.
pub(crate) const T0: i64 = 1_714_564_800_000;

/// One record to write: key, value, headers, timestamp.
pub(crate) type Rec<'a> = (Option<&'a [u8]>, Option<&'a [u8]>, &'a [Header<'a>], i64);

/// Writes `batches` (each a list of records) into the partition directory `dir`.
pub(crate) fn write_partition(dir: &Path, batches: &[&[Rec<'_>]]) {
    let (log, _) = PartitionLog::open(
        RealFs,
        dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let mut base = 0_i64;
    for records in batches {
        let mut bytes = Vec::new();
        let new = (0..)
            .zip(records.iter())
            .map(|(i, (key, value, headers, ts))| {
                NewRecord::new(i, *ts, *key, *value).with_headers(headers)
            });
        BatchBuilder::new()
            .build(&BatchOptions::new(base, Compression::None), new, &mut bytes)
            .unwrap();
        log.append_as_follower(&bytes).unwrap();
        base += i64::try_from(records.len()).unwrap();
    }
    log.close().unwrap();
}

/// `logs/m-0`, `m-1`, `m-2` and `m-10`: partition P holds P + 2 records `mP-i`, the i-th at
/// T0 + i seconds, one batch each; and `logs/other-0` with one record.
pub(crate) fn topic_m(root: &Path) {
    for p in [0, 1, 2, 10] {
        let values: Vec<String> = (0..p + 2).map(|i| format!("m{p}-{i}")).collect();
        let records: Vec<Rec<'_>> = (0..)
            .zip(&values)
            .map(|(i, v)| (None, Some(v.as_bytes()), &[][..], T0 + i * 1000))
            .collect();
        let batches: Vec<&[Rec<'_>]> = records.iter().map(std::slice::from_ref).collect();
        write_partition(&root.join(format!("logs/m-{p}")), &batches);
    }
    write_partition(
        &root.join("logs/other-0"),
        &[&[(None, Some(b"o".as_slice()), &[], T0)]],
    );
}

/// `logs/k-3`: a record with a null key, four headers (one null, one empty, one with a NUL)
/// and a binary value; one with key and value; one with an empty key and a null value.
fn odd_records(root: &Path) {
    let headers = [
        Header::new(b"h1", b"v1"),
        Header {
            key: b"h2",
            value: None,
        },
        Header::new(b"h3", b""),
        Header::new(b"h4", b"a\0b"),
    ];
    write_partition(
        &root.join("logs/k-3"),
        &[
            &[(None, Some(b"\x00\x01\xff\n".as_slice()), &headers, T0)],
            &[
                (
                    Some(b"k1".as_slice()),
                    Some(b"hello".as_slice()),
                    &[],
                    T0 + 1000,
                ),
                (Some(b"".as_slice()), None, &[], T0 + 2000),
            ],
        ],
    );
}

fn ok(root: &Path, args: &[&str]) -> Vec<u8> {
    let out = seglog(args, root, b"");
    assert!(
        out.status.success(),
        "{args:?}: {} {}",
        out.status,
        text(&out.stderr)
    );
    out.stdout
}

fn refused(root: &Path, args: &[&str], says: &str) {
    let out = seglog(args, root, b"");
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: {}",
        text(&out.stdout)
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains(says), "{args:?}: {stderr}");
}

#[test]
fn format_renders_every_token_as_kcat() {
    let root = tempfile::tempdir().unwrap();
    odd_records(root.path());
    let out = ok(
        root.path(),
        &[
            "consume",
            "logs/k-3",
            "--format",
            r"%t|%p|%o|%k|%K|%s|%S|%R|%T|%h|%%\n",
        ],
    );
    let mut want = Vec::new();
    want.extend_from_slice(
        b"k|3|0||-1|\x00\x01\xff\n|4|\x00\x00\x00\x04|1714564800000|h1=v1,h2=NULL,h3=,h4=a|%\n",
    );
    want.extend_from_slice(b"k|3|1|k1|2|hello|5|\x00\x00\x00\x05|1714564801000||%\n");
    want.extend_from_slice(b"k|3|2||0||-1|\xff\xff\xff\xff|1714564802000||%\n");
    assert_eq!(out, want, "{}", String::from_utf8_lossy(&out));
    // kcat's escapes, and no newline unless asked for.
    let out = ok(
        root.path(),
        &[
            "consume",
            "logs/k-3",
            "--offset",
            "1",
            "--format",
            r"%o\t\x41\66\0103\r",
        ],
    );
    assert_eq!(out, b"1\tABC\r2\tABC\r");
    refused(
        root.path(),
        &["consume", "logs/k-3", "--format", "%o %x"],
        "%x",
    );
    refused(
        root.path(),
        &["consume", "logs/k-3", "--format", "%o %"],
        "empty",
    );
    refused(
        root.path(),
        &["consume", "logs/k-3", "--format", "%o", "--json"],
        "cannot be used with",
    );
}

#[test]
fn json_is_kcats_shape_with_text_or_base64() {
    let root = tempfile::tempdir().unwrap();
    odd_records(root.path());
    let out = text(&ok(root.path(), &["consume", "logs/k-3", "--json"]));
    let want = concat!(
        r#"{"topic":"k","partition":3,"offset":0,"tstype":"create","ts":1714564800000,"broker":-1,"#,
        r#""headers":["h1","v1","h2",null,"h3","","h4","a\u0000b"],"key":null,"payload":"AAH/Cg==","payload_encoding":"base64"}"#,
        "\n",
        r#"{"topic":"k","partition":3,"offset":1,"tstype":"create","ts":1714564801000,"broker":-1,"key":"k1","payload":"hello"}"#,
        "\n",
        r#"{"topic":"k","partition":3,"offset":2,"tstype":"create","ts":1714564802000,"broker":-1,"key":"","payload":null}"#,
        "\n",
    );
    assert_eq!(out, want);
    for line in out.lines() {
        serde_json::from_str::<serde_json::Value>(line).unwrap();
    }
    let out = text(&ok(
        root.path(),
        &["consume", "logs/k-3", "--json", "--json-bytes", "base64"],
    ));
    let want = concat!(
        r#"{"topic":"k","partition":3,"offset":0,"tstype":"create","ts":1714564800000,"broker":-1,"#,
        r#""headers":["h1","djE=","h2",null,"h3","","h4","YQBi"],"key":null,"payload":"AAH/Cg=="}"#,
        "\n",
        r#"{"topic":"k","partition":3,"offset":1,"tstype":"create","ts":1714564801000,"broker":-1,"key":"azE=","payload":"aGVsbG8="}"#,
        "\n",
        r#"{"topic":"k","partition":3,"offset":2,"tstype":"create","ts":1714564802000,"broker":-1,"key":"","payload":null}"#,
        "\n",
    );
    assert_eq!(out, want);
    refused(
        root.path(),
        &["consume", "logs/k-3", "--json-bytes", "base64"],
        "--json",
    );
}

#[test]
fn offsets_count_back_from_the_end_and_stop_before_to_offset() {
    let root = tempfile::tempdir().unwrap();
    topic_m(root.path());
    let values = |args: &[&str]| {
        let mut all = vec!["consume"];
        all.extend_from_slice(args);
        text(&ok(root.path(), &all))
    };
    // m-2 holds m2-0 .. m2-3.
    assert_eq!(values(&["logs/m-2", "--offset", "-2"]), "m2-2\nm2-3\n");
    assert_eq!(values(&["logs/m-2", "--offset", "-1"]), "m2-3\n");
    // Past the start: from the log start offset, as a consumer reset to the earliest.
    assert_eq!(
        values(&["logs/m-2", "--offset", "-100"]),
        "m2-0\nm2-1\nm2-2\nm2-3\n"
    );
    assert_eq!(values(&["logs/m-2", "--offset", "2"]), "m2-2\nm2-3\n");
    assert_eq!(values(&["logs/m-2", "--from-offset", "3"]), "m2-3\n");
    assert_eq!(
        values(&["logs/m-2", "--offset", "beginning", "--max-records", "1"]),
        "m2-0\n"
    );
    assert_eq!(values(&["logs/m-2", "--offset", "end"]), "");
    assert_eq!(values(&["logs/m-2", "--to-offset", "2"]), "m2-0\nm2-1\n");
    assert_eq!(
        values(&["logs/m-2", "--offset", "-3", "--to-offset", "3"]),
        "m2-1\nm2-2\n"
    );
    // An end before the start prints nothing, and is no error.
    assert_eq!(
        values(&["logs/m-2", "--offset", "3", "--to-offset", "2"]),
        ""
    );
    assert_eq!(
        values(&["logs/m-2", "--offset", "-1", "--to-offset", "0"]),
        ""
    );
    refused(
        root.path(),
        &["consume", "logs/m-2", "--offset", "last"],
        "last",
    );
}

#[test]
fn from_time_takes_milliseconds_and_iso_8601_with_or_without_a_zone() {
    let root = tempfile::tempdir().unwrap();
    topic_m(root.path());
    let from = |time: &str| {
        text(&ok(
            root.path(),
            &[
                "consume",
                "logs/m-2",
                "--from-time",
                time,
                "--max-records",
                "1",
            ],
        ))
    };
    let second = (T0 + 1000).to_string();
    assert_eq!(from(&second), "m2-1\n");
    // No zone is UTC, as Kafka's tools read it (Utils.getDateTime appends Z).
    assert_eq!(from("2024-05-01T12:00:01.000"), "m2-1\n");
    assert_eq!(from("2024-05-01T12:00:01.000Z"), "m2-1\n");
    assert_eq!(from("2024-05-01T14:00:01.000+02:00"), "m2-1\n");
    assert_eq!(from("2024-05-01T14:00:01.000+0200"), "m2-1\n");
    assert_eq!(from("2024-05-01T07:00:01.001-05"), "m2-2\n");
    assert_eq!(from("2024-05-01T12:00:03.000"), "m2-3\n");
    assert_eq!(from("2024-05-01T12:00:03.001"), "");
    let out = text(&ok(
        root.path(),
        &[
            "consume",
            "logs/m-2",
            "--from-timestamp",
            &second,
            "--max-records",
            "1",
        ],
    ));
    assert_eq!(out, "m2-1\n");
    refused(
        root.path(),
        &["consume", "logs/m-2", "--from-time", "2024-05-01 12:00"],
        "2024-05-01 12:00",
    );
    refused(
        root.path(),
        &[
            "consume",
            "logs/m-2",
            "--from-time",
            "2024-05-01T12:00:00.000+25:00",
        ],
        "+25:00",
    );
}

#[test]
fn a_log_directory_with_topic_reads_each_partition_in_partition_order() {
    let root = tempfile::tempdir().unwrap();
    topic_m(root.path());
    let out = text(&ok(
        root.path(),
        &[
            "consume",
            "logs",
            "--topic",
            "m",
            "--format",
            r"%t-%p@%o %s\n",
        ],
    ));
    let mut want = String::new();
    for p in [0, 1, 2, 10] {
        for i in 0..p + 2 {
            writeln!(want, "m-{p}@{i} m{p}-{i}").unwrap();
        }
    }
    assert_eq!(out, want);
    // --offset and --to-offset apply to each partition; --max-records to all.
    let out = text(&ok(
        root.path(),
        &[
            "consume", "logs", "--topic", "m", "--offset", "-1", "--format", r"%p:%s ",
        ],
    ));
    assert_eq!(out, "0:m0-1 1:m1-2 2:m2-3 10:m10-11 ");
    let out = text(&ok(
        root.path(),
        &["consume", "logs", "--topic", "m", "--max-records", "3"],
    ));
    assert_eq!(out, "m0-0\nm0-1\nm1-0\n");
    let out = text(&ok(
        root.path(),
        &[
            "consume",
            "logs",
            "--topic",
            "m",
            "--json",
            "--to-offset",
            "1",
        ],
    ));
    let got: Vec<(String, i64, i64)> = out
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["topic"].as_str().unwrap().to_owned(),
                v["partition"].as_i64().unwrap(),
                v["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(String, i64, i64)> = [0, 1, 2, 10]
        .iter()
        .map(|&p| ("m".to_owned(), p, 0))
        .collect();
    assert_eq!(got, want);
    refused(root.path(), &["consume", "logs"], "--topic");
    refused(
        root.path(),
        &["consume", "logs", "--topic", "nope"],
        "m, other",
    );
    refused(
        root.path(),
        &["consume", "logs/m-0", "--topic", "other"],
        "other",
    );
}
