//! Stray entries named like segment files (`123.log`, `abc.index`, a directory
//! `00000000000000000099.log`) are reported by `check`; `recover --dry-run` lists them and changes
//! no byte, name or mtime; `recover` moves them whole into the quarantine (or deletes them with
//! `--discard`), after which `check` exits 0 and every record is still there.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::run::{seglog, text};

type Tree = BTreeMap<PathBuf, (Option<Vec<u8>>, SystemTime)>;

/// Every entry under `dir` (the directory itself included): its bytes (files) and mtime.
fn snapshot(dir: &Path) -> Tree {
    let mut out = BTreeMap::new();
    let meta = std::fs::metadata(dir).unwrap();
    out.insert(dir.to_path_buf(), (None, meta.modified().unwrap()));
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(snapshot(&path));
        } else {
            let meta = std::fs::metadata(&path).unwrap();
            out.insert(
                path.clone(),
                (
                    Some(std::fs::read(&path).unwrap()),
                    meta.modified().unwrap(),
                ),
            );
        }
    }
    out
}

const STRAY_FILES: [(&str, &[u8]); 2] = [("123.log", b"not a segment"), ("abc.index", b"")];
const STRAY_DIR: &str = "00000000000000000099.log";

/// A healthy partition `logs/t-0` of three records, cleanly closed, with the strays beside its
/// segment; returns the partition directory.
fn partition_with_strays(root: &Path) -> PathBuf {
    let out = seglog(&["produce", "logs/t-0", "--create"], root, b"a\nb\nc\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let dir = root.join("logs/t-0");
    for (name, bytes) in STRAY_FILES {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    std::fs::create_dir(dir.join(STRAY_DIR)).unwrap();
    std::fs::write(dir.join(STRAY_DIR).join("inside"), b"kept").unwrap();
    dir
}

fn strays() -> impl Iterator<Item = &'static str> {
    STRAY_FILES.iter().map(|(n, _)| *n).chain([STRAY_DIR])
}

/// The JSON line of the partition's plan or recovery.
fn partition_line(stdout: &[u8]) -> serde_json::Value {
    text(stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["partition"] == "t-0")
        .unwrap()
}

fn consume(root: &Path) -> Vec<String> {
    let out = seglog(&["consume", "logs/t-0", "--from-beginning"], root, b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout).lines().map(str::to_owned).collect()
}

#[test]
fn check_reports_each_stray_and_a_dry_run_lists_them_and_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_with_strays(root.path());
    let before = snapshot(&root.path().join("logs"));

    let out = seglog(&["check", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let report = text(&out.stdout);
    for stray in strays() {
        assert!(
            report
                .lines()
                .any(|l| l.contains(&format!("t-0/{stray}")) && l.contains("stray_file")),
            "{stray}: {report}"
        );
    }

    let out = seglog(&["recover", "--dry-run", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let plan = text(&out.stdout);
    for stray in strays() {
        assert!(
            plan.lines()
                .any(|l| l.contains("set aside the stray") && l.contains(&format!("t-0/{stray}"))),
            "{stray}: {plan}"
        );
    }
    assert!(plan.contains("dry run: nothing was changed"), "{plan}");

    let out = seglog(
        &["recover", "--dry-run", "--json", "logs/t-0"],
        root.path(),
        b"",
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let line = partition_line(&out.stdout);
    let listed: Vec<(String, bool, Option<u64>)> = line["strays"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["path"].as_str().unwrap().to_owned(),
                s["dir"].as_bool().unwrap(),
                s["bytes"].as_u64(),
            )
        })
        .collect();
    let path = |name: &str| dir.join(name).display().to_string();
    assert_eq!(
        listed,
        [
            (path(STRAY_DIR), true, None),
            (path("123.log"), false, Some(13)),
            (path("abc.index"), false, Some(0)),
        ]
    );
    assert_eq!(line["bytes_dropped"], 0, "{line}");
    assert_eq!(snapshot(&root.path().join("logs")), before);
}

#[test]
fn recover_moves_the_strays_whole_into_the_quarantine_and_check_passes_after() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_with_strays(root.path());
    let originals = snapshot(&dir);

    let out = seglog(&["recover", "--json", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let line = partition_line(&out.stdout);
    let q = dir.join("seglog-quarantine/1");
    assert_eq!(line["quarantine"], q.display().to_string(), "{line}");
    assert_eq!(line["moved"].as_array().unwrap().len(), 3, "{line}");
    assert_eq!(
        (&line["bytes_dropped"], &line["records_dropped"]),
        (&0.into(), &0.into())
    );

    for stray in strays() {
        assert!(
            !dir.join(stray).exists(),
            "{stray} is still in the partition"
        );
    }
    for (name, bytes) in STRAY_FILES {
        assert_eq!(std::fs::read(q.join(name)).unwrap(), bytes, "{name}");
    }
    assert_eq!(
        std::fs::read(q.join(STRAY_DIR).join("inside")).unwrap(),
        b"kept"
    );
    assert!(q.join("done").exists());
    // plan.txt says where each came from.
    let plan = std::fs::read_to_string(q.join("plan.txt")).unwrap();
    for stray in strays() {
        assert!(
            plan.contains(&dir.join(stray).display().to_string()),
            "{plan}"
        );
    }
    // The segment's files are untouched.
    let now = snapshot(&dir);
    for (path, entry) in &originals {
        if path
            .extension()
            .is_some_and(|e| e == "log" || e == "index" || e == "timeindex")
            && path.parent() == Some(&dir)
            && !strays().any(|s| path.ends_with(s))
        {
            assert_eq!(
                now.get(path).map(|e| &e.0),
                Some(&entry.0),
                "{}",
                path.display()
            );
        }
    }

    let out = seglog(&["check", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert!(
        text(&out.stdout).contains("stray entries"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(consume(root.path()), ["a", "b", "c"]);
    // A second recover has nothing to do and leaves the quarantine as it is.
    let out = seglog(&["recover", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("nothing needed recovery"),
        "{}",
        text(&out.stdout)
    );
    assert!(!dir.join("seglog-quarantine/2").exists());
}

#[test]
fn discard_deletes_the_strays() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition_with_strays(root.path());
    let out = seglog(&["recover", "--discard", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let summary = text(&out.stdout);
    for stray in strays() {
        assert!(!dir.join(stray).exists(), "{stray}");
        assert!(
            summary
                .lines()
                .any(|l| l.contains("deleted") && l.contains(&format!("t-0/{stray}"))),
            "{stray}: {summary}"
        );
    }
    assert!(!dir.join("seglog-quarantine").exists());
    let out = seglog(&["check", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    assert_eq!(consume(root.path()), ["a", "b", "c"]);
}

/// A symlink named like a segment, to a directory outside the partition: `--discard` removes the
/// link, never what it points to.
#[test]
fn discard_removes_a_symlink_not_its_target() {
    let root = tempfile::tempdir().unwrap();
    let out = seglog(&["produce", "logs/t-0", "--create"], root.path(), b"a\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let outside = root.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("precious"), b"x").unwrap();
    let link = root.path().join("logs/t-0").join(STRAY_DIR);
    std::os::unix::fs::symlink(&outside, &link).unwrap();
    let out = seglog(&["recover", "--discard", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(
        std::fs::symlink_metadata(&link).is_err(),
        "the link is gone"
    );
    assert_eq!(std::fs::read(outside.join("precious")).unwrap(), b"x");
}

/// An empty `.log` named past the end is a segment Kafka keeps (its loader takes it as the active
/// segment, and the log end offset becomes its base offset): `check` notes the gap and exits 0,
/// and recover keeps the segment.
#[test]
fn an_empty_segment_past_the_end_is_a_note_naming_the_gap() {
    let root = tempfile::tempdir().unwrap();
    let out = seglog(
        &["produce", "logs/t-0", "--create"],
        root.path(),
        b"a\nb\nc\n",
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let empty = root.path().join("logs/t-0/00000000000000000099.log");
    std::fs::write(&empty, b"").unwrap();

    let out = seglog(&["check", "--json", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let lines: Vec<serde_json::Value> = text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let gap: Vec<&serde_json::Value> = lines
        .iter()
        .filter(|v| v["kind"] == "empty_segment_after_gap")
        .collect();
    assert_eq!(gap.len(), 1, "{lines:?}");
    let detail = gap[0]["detail"].as_str().unwrap();
    assert!(detail.contains("offsets 3..=98"), "{detail}");
    assert!(detail.contains("log end offset is 99"), "{detail}");
    let file = gap[0]["file"].as_str().unwrap();
    assert!(file.ends_with("t-0/00000000000000000099.log"), "{file}");
    assert_eq!(gap[0]["severity"], "note", "{:?}", gap[0]);

    let out = seglog(&["recover", "--json", "logs/t-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(partition_line(&out.stdout)["log_end_offset"], 99);
    assert!(empty.is_file());
    assert_eq!(consume(root.path()), ["a", "b", "c"]);
}
