//! `seglog recover` plans first: `--dry-run` prints the plan and changes no byte, name or mtime
//! (and leaves no `.lock`); the real run sets aside what it drops in the partition's quarantine
//! (or deletes it with `--discard`), says so, and leaves a valid index alone.

#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::run::{seglog, text};

/// Every entry under `dir`: its bytes (files) and its modification time.
fn tree(dir: &Path, out: &mut BTreeMap<PathBuf, (Option<Vec<u8>>, SystemTime)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let meta = std::fs::metadata(&path).unwrap();
        if meta.is_dir() {
            tree(&path, out);
            out.insert(path, (None, meta.modified().unwrap()));
        } else {
            let bytes = std::fs::read(&path).unwrap();
            out.insert(path, (Some(bytes), meta.modified().unwrap()));
        }
    }
}

fn snapshot(dir: &Path) -> BTreeMap<PathBuf, (Option<Vec<u8>>, SystemTime)> {
    let mut out = BTreeMap::new();
    tree(dir, &mut out);
    out
}

/// A log directory with one partition of several 1 MiB segments, a damaged batch in the middle
/// of the third, and no clean-shutdown marker (as after a crash). Returns the segment `.log`s.
fn damaged(root: &Path) -> Vec<PathBuf> {
    let mut lines = String::new();
    for i in 0..60_000 {
        lines.push_str("record ");
        lines.push_str(&i.to_string());
        lines.push_str(" with some padding\n");
    }
    let out = seglog(
        &[
            "produce",
            "logs/t-0",
            "--create",
            "--config",
            "segment.bytes=1048576",
        ],
        root,
        lines.as_bytes(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = root.join("logs/t-0");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    assert!(logs.len() >= 3, "{logs:?}");
    let mut bytes = std::fs::read(&logs[1]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    std::fs::write(&logs[1], &bytes).unwrap();
    std::fs::remove_file(root.join("logs/.kafka_cleanshutdown")).unwrap();
    std::fs::remove_file(root.join("logs/recovery-point-offset-checkpoint")).unwrap();
    std::fs::remove_file(root.join("logs/.lock")).unwrap();
    logs
}

#[test]
fn a_dry_run_prints_the_plan_and_changes_nothing() {
    let root = tempfile::tempdir().unwrap();
    let logs = damaged(root.path());
    let before = snapshot(&root.path().join("logs"));
    for args in [
        &["recover", "--dry-run", "logs/t-0"][..],
        &["recover", "--dry-run", "--json", "logs"],
        &["recover", "--dry-run", "--full", "--discard", "logs/t-0"],
    ] {
        let out = seglog(args, root.path(), b"");
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            text(&out.stderr)
        );
        let stdout = text(&out.stdout);
        assert!(
            stdout.contains("drop segment") || stdout.contains("\"dropped\""),
            "{stdout}"
        );
        assert!(
            !stdout.contains("Invalid(") && !stdout.contains("{ "),
            "Debug output: {stdout}"
        );
        assert_eq!(
            snapshot(&root.path().join("logs")),
            before,
            "{args:?} changed the directory"
        );
    }
    assert!(!root.path().join("logs/.lock").exists());
    let out = seglog(
        &["recover", "--dry-run", "--json", "logs/t-0"],
        root.path(),
        b"",
    );
    let plan: serde_json::Value = serde_json::from_str(text(&out.stdout).trim()).unwrap();
    assert_eq!(plan["type"], "plan");
    assert_eq!(plan["cuts"][0]["file"], logs[1].display().to_string());
    assert_eq!(plan["dropped"].as_array().unwrap().len(), logs.len() - 2);
}

#[test]
fn recover_sets_aside_what_it_drops_and_leaves_valid_indexes_alone() {
    let root = tempfile::tempdir().unwrap();
    let logs = damaged(root.path());
    let dir = root.path().join("logs/t-0");
    let first_index = logs[0].with_extension("index");
    let index_before = (
        std::fs::read(&first_index).unwrap(),
        std::fs::metadata(&first_index).unwrap().modified().unwrap(),
    );
    let later: Vec<Vec<u8>> = logs[2..]
        .iter()
        .map(|p| std::fs::read(p).unwrap())
        .collect();
    let damaged_len = std::fs::metadata(&logs[1]).unwrap().len();

    let out = seglog(&["recover", "logs/t-0"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(stdout.contains("seglog-quarantine/1"), "{stdout}");
    assert!(stdout.contains("To put the data back"), "{stdout}");
    let quarantine = dir.join("seglog-quarantine/1");
    for (path, bytes) in logs[2..].iter().zip(&later) {
        assert!(!path.exists(), "{} still there", path.display());
        assert_eq!(
            &std::fs::read(quarantine.join(path.file_name().unwrap())).unwrap(),
            bytes
        );
    }
    let kept = std::fs::metadata(&logs[1]).unwrap().len();
    let tail = quarantine.join(format!(
        "{}.cut-at-{kept}",
        logs[1].file_name().unwrap().to_str().unwrap()
    ));
    assert_eq!(std::fs::metadata(&tail).unwrap().len(), damaged_len - kept);
    assert!(quarantine.join("plan.txt").exists() && quarantine.join("done").exists());
    // The first segment's index was valid: not rewritten.
    let index_after = (
        std::fs::read(&first_index).unwrap(),
        std::fs::metadata(&first_index).unwrap().modified().unwrap(),
    );
    assert_eq!(index_after, index_before);
    let out = seglog(&["check", "logs/t-0"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stdout));

    // Run again: nothing to do, nothing rewritten.
    let before = snapshot(&dir);
    let out = seglog(&["recover", "logs/t-0"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("nothing needed recovery"),
        "{}",
        text(&out.stdout)
    );
    assert_eq!(snapshot(&dir), before);
}

#[test]
fn discard_deletes_instead() {
    let root = tempfile::tempdir().unwrap();
    let logs = damaged(root.path());
    let out = seglog(&["recover", "--discard", "logs/t-0"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("deleted"),
        "{}",
        text(&out.stdout)
    );
    assert!(!root.path().join("logs/t-0/seglog-quarantine").exists());
    assert!(logs[2..].iter().all(|p| !p.exists()));
}

/// Regression (found by `cargo xtask damage-matrix`): a copied `.log` without indexes, named
/// inside its source's range, was planned twice: cut to empty by the missing-index pass and then
/// dropped as overlapping, so the report counted its bytes twice. It is set aside once, whole.
#[test]
fn an_overlapping_copy_without_indexes_is_set_aside_once() {
    let root = tempfile::tempdir().unwrap();
    let lines: String = (0..2_000).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "record {i}");
        s
    });
    let out = seglog(
        &["produce", "logs/t-0", "--create"],
        root.path(),
        lines.as_bytes(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dir = root.path().join("logs/t-0");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let source = &logs[logs.len() - 1];
    let base: i64 = source
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    let copy = dir.join(format!("{:020}.log", base + 1));
    std::fs::copy(source, &copy).unwrap();
    let size = std::fs::metadata(&copy).unwrap().len();
    let out = seglog(
        &["recover", "--full", "--json", "logs/t-0"],
        root.path(),
        b"",
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["bytes_dropped"], size, "{report}");
    assert_eq!(report["cuts"], serde_json::json!([]), "{report}");
    assert_eq!(report["dropped"][0]["reason"], "overlapping", "{report}");
    let aside = std::fs::read_dir(dir.join("seglog-quarantine"))
        .unwrap()
        .map(|e| e.unwrap().path().join(copy.file_name().unwrap()))
        .find(|p| p.exists())
        .unwrap();
    assert_eq!(
        std::fs::read(aside).unwrap(),
        std::fs::read(source).unwrap()
    );
}
