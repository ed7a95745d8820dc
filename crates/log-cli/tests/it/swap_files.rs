//! `.swap` files beside healthy segments (issue 17, point 8). A zero-filled or garbage
//! `.log.swap` (Kafka's loader fails on it): `check` names it; `recover` sets it aside in the
//! quarantine with its index swaps and keeps the segments it would have replaced, so every record
//! stays and the partition takes writes. A valid `.swap`, the output of a compaction stopped
//! after its rename to `.swap`, is completed as Kafka's loader completes it: the segments in its
//! offset range replaced, the swap renamed into place.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::case_sensitive_file_extension_comparisons,
    reason = "tests"
)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::Arc;

use seglog_log::{
    CleanOptions, LoadOptions, LogConfig, PartitionLog, QUARANTINE_DIR, RealFs, StopAfter,
    SystemClock,
};

const CONFIG: [(&str, &str); 2] = [
    ("internal.segment.bytes", "4096"),
    ("cleanup.policy", "compact"),
];

use crate::run::{seglog, text};

fn ok(out: &Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\nstdout: {}\nstderr: {}",
        out.status,
        text(&out.stdout),
        text(&out.stderr)
    );
    text(&out.stdout)
}

/// `logs/t-0` under `root`: 3,000 records, the first 100 with keys of their own (`u<i>:v<i>`),
/// the others over 10 keys (`k<i % 10>:v<i>`), in segments of 4 KiB, written by `seglog
/// produce` and closed cleanly.
fn partition(root: &Path) -> PathBuf {
    let lines: String = (0..3000)
        .map(|i| {
            if i < 100 {
                format!("u{i}:v{i}\n")
            } else {
                format!("k{}:v{i}\n", i % 10)
            }
        })
        .collect();
    let mut args = vec![
        "produce",
        "logs/t-0",
        "--create",
        "--key-separator",
        ":",
        "--batch-records",
        "20",
    ];
    let configs: Vec<String> = CONFIG.iter().map(|(k, v)| format!("{k}={v}")).collect();
    for c in &configs {
        args.extend(["--config", c]);
    }
    ok(&seglog(&args, root, lines.as_bytes()), "produce");
    root.join("logs/t-0")
}

/// The records of `logs/t-0` under `root`, as `seglog consume --json` prints them.
fn records(root: &Path) -> Vec<String> {
    let out = seglog(
        &["consume", "logs/t-0", "--from-beginning", "--json"],
        root,
        b"",
    );
    ok(&out, "consume").lines().map(str::to_owned).collect()
}

/// The files directly in `dir`, with their bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .map(|p| {
            let name = p.file_name().unwrap().to_str().unwrap().to_owned();
            (name, std::fs::read(&p).unwrap())
        })
        .collect()
}

/// The base offsets of the segments (`.log` files) in `dir`, in order.
fn segment_bases(dir: &Path) -> Vec<String> {
    files(dir)
        .into_keys()
        .filter_map(|n| n.strip_suffix(".log").map(str::to_owned))
        .collect()
}

/// Deterministic non-zero junk.
fn garbage(len: usize) -> Vec<u8> {
    let mut x = 0x9E37_79B9_7F4A_7C15_u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_be_bytes()[3]
        })
        .collect()
}

/// Appends lines without `--create`, and checks that the partition has them after `before`.
fn takes_writes(root: &Path, before: &[String]) {
    let out = seglog(
        &["produce", "logs/t-0", "--key-separator", ":"],
        root,
        b"k1:after-1\nk2:after-2\n",
    );
    ok(&out, "produce after recovery");
    let after = records(root);
    assert_eq!(after.len(), before.len() + 2);
    assert_eq!(&after[..before.len()], before);
    // The new records come after the old ones, in order.
    let offsets: Vec<i64> = after
        .iter()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["offset"].as_i64().unwrap()
        })
        .collect();
    assert!(offsets.windows(2).all(|w| w[0] < w[1]), "{offsets:?}");
    let out = seglog(&["check", "logs/t-0"], root, b"");
    ok(&out, "check after the writes");
}

#[test]
fn a_zero_filled_or_garbage_log_swap_is_set_aside_and_the_segments_it_would_replace_stay() {
    for (label, fill) in [
        ("zero-filled", vec![0_u8; 8192]),
        ("garbage", garbage(8192)),
    ] {
        let root = tempfile::tempdir().unwrap();
        let root = root.path();
        let dir = partition(root);
        let healthy = records(root);
        let bases = segment_bases(&dir);
        assert!(bases.len() >= 4, "{label}: {bases:?}");
        // Beside the second segment, covering (by its name) the segments after it.
        let stem = &bases[1];
        let swaps = [
            (format!("{stem}.log.swap"), fill.clone()),
            (format!("{stem}.index.swap"), fill[..80].to_vec()),
            (format!("{stem}.timeindex.swap"), fill[..96].to_vec()),
        ];
        for (name, bytes) in &swaps {
            std::fs::write(dir.join(name), bytes).unwrap();
        }
        let before = files(&dir);

        let out = seglog(&["check", "logs/t-0"], root, b"");
        let report = text(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{label}: {report}");
        assert!(
            report.contains(&format!(
                "logs/t-0/{stem}.log.swap: at byte 0: damaged_swap"
            )),
            "{label}: {report}"
        );

        let out = seglog(&["recover", "logs/t-0"], root, b"");
        let summary = ok(&out, "recover");
        assert!(
            summary.contains(&format!(
                "set aside the swap at base offset {}",
                stem.parse::<i64>().unwrap()
            )),
            "{label}: {summary}"
        );
        assert!(!summary.contains("drop segment"), "{label}: {summary}");
        // The swaps, byte for byte, in the quarantine; the partition exactly as before them.
        let set_aside = files(&dir.join(QUARANTINE_DIR).join("1"));
        for (name, bytes) in &swaps {
            assert_eq!(set_aside.get(name), Some(bytes), "{label}: {name}");
        }
        let mut kept = before.clone();
        for (name, _) in &swaps {
            kept.remove(name);
        }
        // The producer snapshots (the rolls' and the close's, at the log end) included: the
        // load finds the one at the log end after the clean shutdown and writes none.
        let after = files(&dir);
        assert_eq!(
            after.keys().collect::<Vec<_>>(),
            kept.keys().collect::<Vec<_>>(),
            "{label}"
        );
        for (name, bytes) in &kept {
            if name.ends_with(".log") || name.ends_with(".snapshot") {
                assert!(after.get(name) == Some(bytes), "{label}: {name} changed");
            }
        }
        assert_eq!(records(root), healthy, "{label}: records changed");

        let out = seglog(&["check", "logs/t-0"], root, b"");
        let report = ok(&out, "check after recover");
        assert!(
            report.contains("seglog-quarantine: note: quarantine:")
                && report.contains("damaged swaps")
                && report.contains("To put the data back"),
            "{label}: {report}"
        );
        takes_writes(root, &healthy);
    }
}

/// Kafka's `readNextOffset` of a `.log` file, read with nothing but the v2 batch header: the last
/// batch's base offset plus its lastOffsetDelta, plus one.
fn next_offset(log: &[u8]) -> i64 {
    let (mut at, mut next) = (0, 0);
    while at + 27 <= log.len() {
        let base = i64::from_be_bytes(log[at..at + 8].try_into().unwrap());
        let length = i32::from_be_bytes(log[at + 8..at + 12].try_into().unwrap());
        let delta = i32::from_be_bytes(log[at + 23..at + 27].try_into().unwrap());
        next = base + i64::from(delta) + 1;
        at += 12 + usize::try_from(length).unwrap();
    }
    next
}

#[test]
fn a_valid_swap_left_by_an_interrupted_compaction_is_completed_as_kafka_does() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let dir = partition(root);
    let before = records(root);
    // A compaction stopped right after its `.cleaned` files became `.swap` (as a crash there).
    let config = LogConfig::from_pairs(CONFIG).unwrap();
    let options = LoadOptions::default().with_had_clean_shutdown(true);
    let (log, _) =
        PartitionLog::open(RealFs, &dir, config, options, Arc::new(SystemClock)).unwrap();
    log.clean_until(&CleanOptions::default(), StopAfter::Swapped)
        .unwrap();
    drop(log);
    let swaps: Vec<String> = files(&dir)
        .into_keys()
        .filter(|n| n.ends_with(".swap"))
        .collect();
    let stem = swaps
        .iter()
        .find_map(|n| n.strip_suffix(".log.swap"))
        .unwrap()
        .to_owned();
    assert_eq!(swaps.len(), 3, "{swaps:?}");

    // What Kafka's loader makes of it, by hand: the segments whose base offset lies in
    // [swap base, swap's next offset) are deleted, the swap files lose their suffix.
    let swap_base: i64 = stem.parse().unwrap();
    let swap_next = next_offset(&std::fs::read(dir.join(format!("{stem}.log.swap"))).unwrap());
    let mut expected = files(&dir);
    expected.retain(|name, _| {
        let base: Option<i64> = name.split('.').next().and_then(|d| d.parse().ok());
        let replaced = !name.ends_with(".swap")
            && (name.ends_with(".log") || name.ends_with("index"))
            && base.is_some_and(|b| (swap_base..swap_next).contains(&b));
        !replaced
    });
    for name in &swaps {
        let bytes = expected.remove(name).unwrap();
        expected.insert(name.strip_suffix(".swap").unwrap().to_owned(), bytes);
    }
    let replaced = segment_bases(&dir).len() + 1 - segment_bases_of(&expected).len();
    assert!(replaced >= 1, "the swap replaces nothing");

    let out = seglog(&["check", "logs/t-0"], root, b"");
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    assert!(
        report.contains(&format!("logs/t-0/{stem}.log.swap: interrupted_swap")),
        "{report}"
    );

    let out = seglog(&["recover", "logs/t-0"], root, b"");
    let summary = ok(&out, "recover");
    assert!(
        summary.contains(&format!("complete the swap at base offset {swap_base}")),
        "{summary}"
    );
    assert!(!dir.join(QUARANTINE_DIR).exists(), "nothing was dropped");
    let after = files(&dir);
    let logs = |m: &BTreeMap<String, Vec<u8>>| -> BTreeMap<String, Vec<u8>> {
        m.iter()
            .filter(|(n, _)| n.ends_with(".log"))
            .map(|(n, b)| (n.clone(), b.clone()))
            .collect()
    };
    assert_eq!(
        logs(&after),
        logs(&expected),
        "the segments are not Kafka's"
    );
    assert!(after.keys().all(|n| !n.ends_with(".swap")), "{after:?}");

    // Compaction keeps each key's latest record, and nothing else changed places.
    let recovered = records(root);
    let latest = |lines: &[String]| -> BTreeMap<String, String> {
        lines
            .iter()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["key"].to_string(), l.clone())
            })
            .collect()
    };
    assert_eq!(latest(&recovered), latest(&before));
    assert!(recovered.len() < before.len(), "nothing was compacted");
    assert!(recovered.iter().all(|l| before.contains(l)));
    ok(
        &seglog(&["check", "logs/t-0"], root, b""),
        "check after recover",
    );
    takes_writes(root, &recovered);
}

fn segment_bases_of(files: &BTreeMap<String, Vec<u8>>) -> Vec<&str> {
    files
        .keys()
        .filter_map(|n| n.strip_suffix(".log"))
        .collect()
}
