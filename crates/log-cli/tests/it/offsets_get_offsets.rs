//! `seglog offsets` as kafka-get-offsets.sh (GetOffsetShell), with the real binary: --time with
//! -1/-2/-3/-4 and their names, milliseconds and ISO-8601; `topic:partition:offset` lines in
//! GetOffsetShell's order, no line where nothing matches; --json; a log directory with and
//! without --topic.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use crate::consume_kcat::{T0, topic_m};
use crate::run::{seglog, text};

fn offsets(root: &Path, args: &[&str]) -> String {
    let mut all = vec!["offsets"];
    all.extend_from_slice(args);
    let out = seglog(&all, root, b"");
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    text(&out.stdout)
}

#[test]
fn time_answers_as_kafka_get_offsets() {
    let root = tempfile::tempdir().unwrap();
    topic_m(root.path());
    let r = root.path();
    // m-2 holds offsets 0..=3 at T0 + 0..=3 seconds.
    for latest in ["-1", "latest"] {
        assert_eq!(offsets(r, &["logs/m-2", "--time", latest]), "m:2:4\n");
    }
    assert_eq!(offsets(r, &["logs/m-2", "--latest"]), "m:2:4\n");
    for earliest in ["-2", "earliest", "-4", "earliest-local"] {
        assert_eq!(offsets(r, &["logs/m-2", "--time", earliest]), "m:2:0\n");
    }
    for max in ["-3", "max-timestamp"] {
        assert_eq!(offsets(r, &["logs/m-2", "--time", max]), "m:2:3\n");
    }
    let ms = (T0 + 1500).to_string();
    assert_eq!(offsets(r, &["logs/m-2", "--time", &ms]), "m:2:2\n");
    assert_eq!(offsets(r, &["logs/m-2", "--timestamp", &ms]), "m:2:2\n");
    assert_eq!(
        offsets(r, &["logs/m-2", "--time", "2024-05-01T12:00:01.500"]),
        "m:2:2\n"
    );
    assert_eq!(
        offsets(r, &["logs/m-2", "--time", "2024-05-01T14:00:01.000+02:00"]),
        "m:2:1\n"
    );
    // No record that late: GetOffsetShell prints no line for the partition.
    assert_eq!(
        offsets(r, &["logs/m-2", "--time", "2024-05-01T12:00:03.001Z"]),
        ""
    );
    assert_eq!(
        offsets(
            r,
            &["logs/m-2", "--time", "2024-05-01T12:00:03.001Z", "--json"]
        ),
        "{\"offset\":null,\"partition\":2,\"timestamp\":null,\"topic\":\"m\"}\n"
    );
    assert_eq!(
        offsets(
            r,
            &["logs/m-2", "--time", "2024-05-01T12:00:02.000Z", "--json"]
        ),
        format!(
            "{{\"offset\":2,\"partition\":2,\"timestamp\":{},\"topic\":\"m\"}}\n",
            T0 + 2000
        )
    );
    for (bad, says) in [
        ("-5", "tiered"),
        ("latest-tiered", "tiered"),
        ("-6", "tiered"),
        ("-7", "negative"),
        ("2024-05-01", "2024-05-01"),
        ("soon", "soon"),
    ] {
        let out = seglog(&["offsets", "logs/m-2", "--time", bad], r, b"");
        assert_eq!(out.status.code(), Some(2), "{bad}");
        assert!(
            text(&out.stderr).contains(says),
            "{bad}: {}",
            text(&out.stderr)
        );
    }
}

#[test]
fn a_log_directory_gives_every_partition_in_get_offsets_order() {
    let root = tempfile::tempdir().unwrap();
    topic_m(root.path());
    let r = root.path();
    // GetOffsetShell sorts by "topic-N" as text: m-10 before m-2.
    assert_eq!(
        offsets(r, &["logs", "--topic", "m", "--time", "-1"]),
        "m:0:2\nm:1:3\nm:10:12\nm:2:4\n"
    );
    assert_eq!(
        offsets(r, &["logs", "--time", "earliest"]),
        "m:0:0\nm:1:0\nm:10:0\nm:2:0\nother:0:0\n"
    );
    // m-0 holds T0 and T0 + 1 s only: no line for it.
    assert_eq!(
        offsets(
            r,
            &["logs", "--topic", "m", "--time", "2024-05-01T12:00:02.000"]
        ),
        "m:1:2\nm:10:2\nm:2:2\n"
    );
    let lines: Vec<serde_json::Value> =
        offsets(r, &["logs", "--topic", "m", "--max-timestamp", "--json"])
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let got: Vec<(i64, i64, i64)> = lines
        .iter()
        .map(|v| {
            assert_eq!(v["topic"], "m");
            (
                v["partition"].as_i64().unwrap(),
                v["offset"].as_i64().unwrap(),
                v["timestamp"].as_i64().unwrap(),
            )
        })
        .collect();
    let want: Vec<(i64, i64, i64)> = [0_i64, 1, 10, 2]
        .iter()
        .map(|&p| (p, p + 1, T0 + (p + 1) * 1000))
        .collect();
    assert_eq!(got, want);
    let out = seglog(&["offsets", "logs", "--topic", "nope", "--latest"], r, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nope"), "{}", text(&out.stderr));
}
