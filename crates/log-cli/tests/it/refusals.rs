//! Regression: `recover` on a directory that is neither a partition nor a log directory
//! (`logs/orders`, the `-0` forgotten) exited 0 and wrote `.lock`, a clean-shutdown marker and
//! checkpoints into it; `compact` on a `cleanup.policy=delete` topic compacted it (10 of 49,100
//! records left, exit 0). Now `recover`, `produce` and `compact` refuse what is not theirs:
//! exit 2, a message naming the path and saying why, and the directory byte-identical.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    reason = "tests"
)]

use std::path::Path;

use super::snapshot::{assert_unchanged, tree};

use crate::run::{seglog, text};

fn records(n: u32) -> Vec<u8> {
    (0..n)
        .map(|i| format!("key-{}:value {i}\n", i % 10))
        .collect::<String>()
        .into_bytes()
}

/// `logs/` with a delete-policy topic `events-0` and a compact-policy topic `users-0`, both
/// rolled into several segments; beside it `orders/` (a partition's files in a directory not
/// named topic-N), `notes/` (unrelated files), `empty/`, and a plain file `file.txt`.
fn sample(root: &Path) {
    let small = ["--config", "internal.segment.bytes=4096"];
    for (dir, policy) in [("logs/events-0", "delete"), ("logs/users-0", "compact")] {
        let policy = format!("cleanup.policy={policy}");
        let mut args = vec!["produce", dir, "--create", "--key-separator", ":"];
        args.extend(small);
        args.extend(["--config", &policy]);
        let out = seglog(&args, root, &records(2_000));
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    std::fs::create_dir(root.join("orders")).unwrap();
    for entry in std::fs::read_dir(root.join("logs/events-0")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, root.join("orders").join(path.file_name().unwrap())).unwrap();
    }
    std::fs::create_dir(root.join("notes")).unwrap();
    std::fs::write(root.join("notes/todo.txt"), b"buy milk\n").unwrap();
    std::fs::create_dir(root.join("empty")).unwrap();
    std::fs::write(root.join("file.txt"), b"not a directory\n").unwrap();
    std::fs::create_dir(root.join("logs/gone-0.0123456789abcdef0123456789abcdef-delete")).unwrap();
}

/// Runs `args`, and asserts exit 2, a stderr naming `path` and containing `why`, and no change
/// anywhere under `root`.
fn assert_refused(root: &Path, args: &[&str], path: &str, why: &str) {
    let before = tree(root);
    let out = seglog(args, root, b"one\ntwo\n");
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.starts_with(&format!("seglog: {path}: ")) && stderr.contains(why),
        "{args:?}: the message should name {path} and say {why:?}: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
    assert!(out.stdout.is_empty(), "{args:?}: {}", text(&out.stdout));
    assert_unchanged(&before, &tree(root), &format!("{args:?}"));
}

#[test]
fn recover_refuses_what_is_neither_a_partition_nor_a_log_directory() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    sample(root);
    let missing = "is the partition number missing";
    assert_refused(root, &["recover", "orders"], "orders", missing);
    assert_refused(
        root,
        &["recover", "notes"],
        "notes",
        "neither a partition directory",
    );
    assert_refused(root, &["recover", "empty"], "empty", "an empty directory");
    assert_refused(root, &["recover", "file.txt"], "file.txt", "it is a file");
    let delete = "logs/gone-0.0123456789abcdef0123456789abcdef-delete";
    assert_refused(root, &["recover", delete], delete, "marked for deletion");
    assert_refused(
        root,
        &["recover", "nowhere"],
        "nowhere",
        "no such directory",
    );
    // What is ours is recovered: a partition, and the log directory.
    for dir in ["logs/users-0", "logs"] {
        let out = seglog(&["recover", dir], root, b"");
        assert!(out.status.success(), "recover {dir}: {}", text(&out.stderr));
    }
}

#[test]
fn produce_refuses_what_is_not_a_partition() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    sample(root);
    let p = ["produce"];
    let refusals: &[(&[&str], &str, &str)] = &[
        (
            &["logs"],
            "logs",
            "it is a log directory, not a partition directory",
        ),
        (&["orders"], "orders", "is the partition number missing"),
        (
            &["orders", "--create"],
            "orders",
            "is the partition number missing",
        ),
        (
            &["notes/t-0", "--create"],
            "notes/t-0",
            "is not a log directory",
        ),
        (
            &["file.txt/t-0", "--create"],
            "file.txt/t-0",
            "is a file, not a log directory",
        ),
        (&["file.txt"], "file.txt", "it is a file"),
        (
            &["logs/new-0"],
            "logs/new-0",
            "no such partition directory (use --create to make one)",
        ),
        (
            &["logs/gone-0.0123456789abcdef0123456789abcdef-delete"],
            "logs/gone-0.0123456789abcdef0123456789abcdef-delete",
            "marked for deletion",
        ),
    ];
    for (args, path, why) in refusals {
        let args: Vec<&str> = p.iter().chain(args.iter()).copied().collect();
        assert_refused(root, &args, path, why);
    }
    // The first partition of a new or an empty log directory is ours to make.
    for dir in ["fresh/t-0", "empty/t-0", "logs/new-0"] {
        let out = seglog(&["produce", dir, "--create"], root, b"a\nb\n");
        assert!(out.status.success(), "produce {dir}: {}", text(&out.stderr));
    }
}

#[test]
fn compact_refuses_a_delete_topic_unless_forced_and_anything_not_a_partition() {
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    sample(root);
    assert_refused(root, &["compact", "logs"], "logs", "a log directory");
    assert_refused(
        root,
        &["compact", "orders"],
        "orders",
        "is the partition number missing",
    );
    assert_refused(
        root,
        &["compact", "notes"],
        "notes",
        "neither a partition directory",
    );
    // No hint for a flag compact lacks.
    assert_refused(
        root,
        &["compact", "logs/none-0"],
        "logs/none-0",
        "no such partition directory",
    );
    let out = seglog(&["compact", "logs/none-0"], root, b"");
    assert!(
        !text(&out.stderr).contains("--create"),
        "{}",
        text(&out.stderr)
    );
    // cleanup.policy=delete: nothing changes, and the message says how to go on.
    assert_refused(
        root,
        &["compact", "logs/events-0"],
        "logs/events-0",
        "its cleanup.policy is delete (from logs/events-0/seglog.properties), and compaction keeps only the latest record of each key; pass --force",
    );
    // A broker's partition without seglog.properties has Kafka's default policy, delete.
    std::fs::remove_file(root.join("logs/events-0/seglog.properties")).unwrap();
    assert_refused(
        root,
        &["compact", "logs/events-0"],
        "logs/events-0",
        "Kafka's default",
    );
    // With --force it compacts (ten keys: ten records are left of the cleaned part).
    let out = seglog(
        &["compact", "logs/events-0", "--force", "--json"],
        root,
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert!(report["records_kept"].as_u64().unwrap() < report["records_read"].as_u64().unwrap());
    // The compact topic compacts without --force.
    let out = seglog(&["compact", "logs/users-0"], root, b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
}
