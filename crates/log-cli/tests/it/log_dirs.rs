//! `seglog log-dirs` and `seglog stats` on a log directory, through the binary: a log directory
//! made by seglog with two topics of two partitions, a future replica in a second directory and a
//! partition marked for deletion; the JSON held to the shape of Kafka 4.4's `LogDirsCommand`.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use crate::run::{seglog, text};

const FUTURE: &str = "a-0.0123456789abcdef0123456789abcdef-future";
const DELETE: &str = "b-1.0123456789abcdef0123456789abcdef-delete";

fn produce(root: &Path, partition: &str, records: usize) {
    let input = (0..records)
        .map(|i| format!("v{i}"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let out = seglog(&["produce", partition, "--create"], root, input.as_bytes());
    assert!(out.status.success(), "{}", text(&out.stderr));
}

/// logs/{a-0,a-1,b-0,b-1} (a-0 with 105 records, the others 100), logs/meta.properties naming
/// node 7, a __cluster_metadata-0 beside them, logs2/ holding a future copy of a-0 at 100 records, and b-1's copy marked -delete.
fn setup(root: &Path) {
    for p in ["logs/a-0", "logs/a-1", "logs/b-0", "logs/b-1"] {
        produce(root, p, 100);
    }
    // A KRaft node's metadata log shares the log directory; Kafka's describeLogDirs omits it.
    copy_dir(
        &root.join("logs/b-0"),
        &root.join("logs/__cluster_metadata-0"),
    );
    std::fs::create_dir_all(root.join("logs2")).unwrap();
    copy_dir(&root.join("logs/a-0"), &root.join("logs2").join(FUTURE));
    copy_dir(&root.join("logs/b-1"), &root.join("logs").join(DELETE));
    produce(root, "logs/a-0", 5);
    // Written by Java's Properties.store: a comment line, escapes.
    std::fs::write(
        root.join("logs/meta.properties"),
        "#\n#Tue Dec 01 18:00:00 UTC 2026\nnode.id=7\ndirectory.id=abc\\=\nversion=1\ncluster.id=x\n",
    )
    .unwrap();
}

/// Copies a directory tree.
fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &to.join(entry.file_name()));
        } else {
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }
}

/// Bytes as KiB, for the one-decimal figure the text output shows.
fn kib(bytes: u64) -> f64 {
    f64::from(u32::try_from(bytes).unwrap()) / 1024.0
}

fn log_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum()
}

#[test]
fn json_has_kafkas_shape_and_figures() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    setup(root);
    let out = seglog(&["log-dirs", "logs,logs2", "--json"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    // LogDirsCommand's HashMaps, as Jackson writes them: these keys in this order.
    assert!(
        stdout.starts_with(
            "{\"brokers\":[{\"broker\":7,\"logDirs\":[{\"partitions\":[{\"partition\":"
        ),
        "{stdout}"
    );
    assert!(stdout.ends_with("]}],\"version\":1}\n"), "{stdout}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let dirs = json["brokers"][0]["logDirs"].as_array().unwrap();
    assert_eq!(dirs.len(), 2);
    let abs = |p: &str| root.canonicalize().unwrap().join(p).display().to_string();
    let logs = dirs.iter().find(|d| d["logDir"] == abs("logs")).unwrap();
    let logs2 = dirs.iter().find(|d| d["logDir"] == abs("logs2")).unwrap();
    assert_eq!(logs["error"], serde_json::Value::Null);
    let names: Vec<&str> = logs["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["partition"].as_str().unwrap())
        .collect();
    // The -delete directory and the metadata log are not described; the order is a Java HashMap's.
    assert_eq!(names, ["a-1", "a-0", "b-1", "b-0"]);
    for p in logs["partitions"].as_array().unwrap() {
        let dir = root.join("logs").join(p["partition"].as_str().unwrap());
        assert_eq!(p["size"], log_size(&dir), "{p}");
        assert_eq!(p["offsetLag"], 0);
        assert_eq!(p["isFuture"], false);
    }
    let future = &logs2["partitions"][0];
    assert_eq!(future["partition"], "a-0");
    assert_eq!(future["isFuture"], true);
    assert_eq!(future["size"], log_size(&root.join("logs2").join(FUTURE)));
    // The current a-0 ends at 105, the future copy at 100.
    assert_eq!(future["offsetLag"], 5);

    // Without the current log's directory the future's lag is unknown: Kafka's -1.
    let out = seglog(&["log-dirs", "logs2", "--json"], root, b"");
    let json: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    assert_eq!(
        json["brokers"][0]["logDirs"][0]["partitions"][0]["offsetLag"],
        -1
    );
    // No meta.properties: broker -1.
    assert_eq!(json["brokers"][0]["broker"], -1);

    // --topic (or Kafka's --topic-list, comma-separated) keeps those topics only.
    let out = seglog(
        &["log-dirs", "logs", "--topic-list", "b", "--json"],
        root,
        b"",
    );
    let json: serde_json::Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let parts = json["brokers"][0]["logDirs"][0]["partitions"]
        .as_array()
        .unwrap();
    assert_eq!(parts.len(), 2);
    assert!(
        parts
            .iter()
            .all(|p| p["partition"].as_str().unwrap().starts_with("b-"))
    );
}

#[test]
fn table_is_readable() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    setup(root);
    let out = seglog(&["log-dirs", "logs", "logs2"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.starts_with("broker 7 (from logs/meta.properties)\n"),
        "{stdout}"
    );
    assert!(stdout.contains(": 4 partitions, "), "{stdout}");
    assert!(stdout.contains("PARTITION  REPLICA"), "{stdout}");
    let row = stdout
        .lines()
        .find(|l| l.starts_with("a-0 ") && l.contains("current"))
        .unwrap();
    let cells: Vec<&str> = row.split_whitespace().collect();
    // a-0 current <size> KiB 1 0 105 0 <time>: the size in KiB to one decimal.
    let kib = format!("{:.1}", kib(log_size(&root.join("logs/a-0"))));
    assert_eq!(cells[2..5], [kib.as_str(), "KiB", "1"], "{row}");
    assert_eq!(cells[5..8], ["0", "105", "0"], "{row}");
    assert!(cells[8].ends_with('Z') && cells[8].len() == 24, "{row}");
    let future = stdout.lines().find(|l| l.contains("future")).unwrap();
    assert!(future.split_whitespace().any(|c| c == "5"), "{future}");
    assert!(
        stdout.contains(&format!("not described: {DELETE}: marked for deletion")),
        "{stdout}"
    );
    assert!(
        stdout.contains("not described: __cluster_metadata-0: the KRaft metadata log"),
        "{stdout}"
    );
}

#[test]
fn refusals() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    setup(root);
    let out = seglog(&["log-dirs", "logs/a-0"], root, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("a partition directory, not a log directory"));
    let out = seglog(&["log-dirs", "nowhere"], root, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("nowhere: no such directory"));
    let out = seglog(&["log-dirs", "logs/meta.properties"], root, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("a file, not a log directory"));
    // A ZooKeeper-era meta.properties names the broker as broker.id; the same id agrees.
    std::fs::write(
        root.join("logs2/meta.properties"),
        "version=0\nbroker.id=7\n",
    )
    .unwrap();
    let out = seglog(&["log-dirs", "logs,logs2", "--json"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).starts_with("{\"brokers\":[{\"broker\":7,"));
    // An empty directory is a log directory without partitions.
    std::fs::create_dir(root.join("empty")).unwrap();
    let out = seglog(&["log-dirs", "empty", "--json"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains("{\"partitions\":[],\"error\":null,\"logDir\":"));
    std::fs::write(root.join("logs2/meta.properties"), "node.id=8\n").unwrap();
    let out = seglog(&["log-dirs", "logs,logs2"], root, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("not one broker's log directories"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn stats_on_a_log_directory() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    setup(root);
    let out = seglog(&["stats", "logs"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    // Every live partition directory, the metadata log's too: stats describes what is on disk.
    for p in ["__cluster_metadata-0", "a-0", "a-1", "b-0", "b-1"] {
        assert!(stdout.contains(&format!("{p} (logs/{p}):\n")), "{stdout}");
    }
    assert!(!stdout.contains(DELETE), "{stdout}");
    assert!(
        stdout.contains("log directory total: 5 partitions, 5 segments"),
        "{stdout}"
    );
    assert!(stdout.contains("505 records"), "{stdout}");
    let size = log_size(&root.join("logs/b-0"));
    let total = format!("{:.1} KiB ({size} bytes), 100 records", kib(size));
    assert!(stdout.contains(&total), "{stdout}");

    let out = seglog(&["stats", "logs", "--topic", "a", "--json"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let totals: Vec<_> = lines.iter().filter(|l| l["type"] == "total").collect();
    assert_eq!(totals.len(), 2);
    assert_eq!(totals[0]["topic"], "a");
    assert_eq!(totals[0]["partition"], 0);
    assert_eq!(totals[0]["records"], 105);
    let all = lines.last().unwrap();
    assert_eq!(all["type"], "log_dir_total");
    assert_eq!(all["records"], 205);
    assert_eq!(
        all["size"],
        log_size(&root.join("logs/a-0")) + log_size(&root.join("logs/a-1"))
    );
    let out = seglog(&["stats", "logs/a-0", "--topic", "a"], root, b"");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("--topic picks partitions of a log directory"));
    // Raw numbers in JSON: epoch milliseconds.
    assert!(lines[0]["max_timestamp"].as_i64().unwrap() > 1_600_000_000_000);
}

#[test]
fn json_matches_a_kafka_brokers_answer() {
    // A Kafka 4.4 KRaft broker's log directory and what its kafka-log-dirs.sh --describe printed
    // (testdata/README-kafka.md says how they were made).
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/kafka-log-dirs");
    let root = tempfile::tempdir().unwrap();
    copy_dir(&golden.join("logs"), &root.path().join("logs"));
    let out = seglog(&["log-dirs", "logs", "--json"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let logs = root.path().canonicalize().unwrap().join("logs");
    let ours = text(&out.stdout).replace(&format!("\"{}\"", logs.display()), "\"LOGDIR\"");
    let kafka = std::fs::read_to_string(golden.join("kafka-log-dirs.stdout")).unwrap();
    // Kafka's two lines before the JSON are not printed with --json.
    assert_eq!(ours, kafka.lines().nth(2).unwrap().to_owned() + "\n");
}
