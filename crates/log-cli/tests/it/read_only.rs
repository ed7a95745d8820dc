//! Regression: `dump` opened indexes read-write, so it failed on a read-only file system. Now
//! every read-only command (dump, check, consume, offsets, stats, with each of their flags that
//! reads another file) runs on a tmpfs remounted read-only, and the tree is byte- and
//! mtime-identical afterwards (no `.lock`, no marker, no checkpoint written even where writing
//! would have worked: the same commands run before the remount, on the writable mount).
//!
//! Mounting needs root (CI runs as root). Where the mount is refused, the test says so on the
//! terminal, past the test harness's capture, and skips.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::format_collect,
    reason = "tests"
)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::snapshot::{assert_unchanged, tree};

/// A tmpfs mounted on a fresh directory, unmounted (even when the test fails) when dropped.
struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    /// Mounts a 32 MiB tmpfs, or says why it cannot.
    fn mount() -> Result<Self, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=32m", "tmpfs"])
            .arg(dir.path())
            .output()
            .map_err(|e| format!("cannot run mount: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "mount -t tmpfs refused: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        Ok(Self { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn remount_read_only(&self) {
        let out = Command::new("mount")
            .args(["-o", "remount,ro"])
            .arg(self.path())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "remount,ro: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        // The file system itself refuses writes now.
        assert!(std::fs::write(self.path().join("probe"), b"x").is_err());
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.path()).output();
    }
}

/// Prints why the test is skipped where the test harness does not capture it.
fn skip(test: &str, why: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

fn seglog(args: &[&str], cwd: &Path, stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(stdin).unwrap();
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Two partitions in `logs/` (several segments each, one gzip), a partition directory with a
/// torn tail in `bad/`, all left as a cleanly stopped writer leaves them.
fn sample(root: &Path) {
    for (dir, codec) in [("logs/a-0", "none"), ("logs/b-0", "gzip")] {
        let input: String = (0..3_000)
            .map(|i| format!("k{}:value {i}\n", i % 7))
            .collect();
        let out = seglog(
            &[
                "produce",
                dir,
                "--create",
                "--compression",
                codec,
                "--key-separator",
                ":",
                "--batch-records",
                "20",
                "--config",
                "internal.segment.bytes=16384",
            ],
            root,
            input.as_bytes(),
        );
        assert!(out.status.success(), "{}", text(&out.stderr));
    }
    let out = seglog(&["produce", "bad/t-0", "--create"], root, b"x\ny\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = root.join("bad/t-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0]);
    std::fs::write(&log, bytes).unwrap();
}

/// Every read-only command, with the exit status each must give.
fn commands(root: &Path) -> Vec<(Vec<String>, i32)> {
    let seg = |dir: &str, name: &str| -> String { root.join(dir).join(name).display().to_string() };
    let a = "logs/a-0";
    let first = |suffix: &str| seg(a, &format!("00000000000000000000.{suffix}"));
    let later: PathBuf = std::fs::read_dir(root.join(a))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "index"))
        .max()
        .unwrap();
    let files = format!(
        "{},{},{},{}",
        first("log"),
        first("index"),
        first("timeindex"),
        later.display()
    );
    let owned = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
    let mut out = vec![
        (owned(&["dump", "--files", &files]), 0),
        (
            owned(&[
                "dump",
                "--deep-iteration",
                "--print-data-log",
                "--files",
                &files,
            ]),
            0,
        ),
        (
            owned(&["dump", "--verify-index-only", "--files", &files]),
            0,
        ),
        (
            owned(&["dump", "--index-sanity-check", "--files", &files]),
            0,
        ),
        (
            owned(&["dump", "--json", "--deep-iteration", "--files", &files]),
            0,
        ),
        (owned(&["check", "logs"]), 0),
        (owned(&["check", "--json", "logs/a-0"]), 0),
        (owned(&["check", "bad"]), 1),
        (owned(&["check", "bad/t-0"]), 1),
        (owned(&["stats", "logs/a-0"]), 0),
        (owned(&["stats", "--json", "logs/b-0"]), 0),
        (owned(&["consume", "logs/a-0"]), 0),
        (
            owned(&["consume", "logs/b-0", "--from-offset", "1500", "--json"]),
            0,
        ),
        (
            owned(&[
                "consume",
                "logs/a-0",
                "--from-timestamp",
                "0",
                "--max-records",
                "5",
            ]),
            0,
        ),
        (
            owned(&[
                "consume",
                "logs/a-0",
                "--follow",
                "--timeout-ms",
                "200",
                "--from-offset",
                "2990",
            ]),
            0,
        ),
        (owned(&["consume", "bad/t-0"]), 0),
        (owned(&["offsets", "logs/a-0", "--earliest"]), 0),
        (owned(&["offsets", "logs/a-0", "--latest"]), 0),
        (owned(&["offsets", "logs/a-0", "--max-timestamp"]), 0),
        (
            owned(&["offsets", "logs/b-0", "--timestamp", "0", "--json"]),
            0,
        ),
    ];
    // The same from inside a partition directory, as `.`.
    out.push((owned(&["check", "."]), 0));
    out.push((owned(&["stats", "."]), 0));
    out
}

fn run_all(root: &Path, when: &str) {
    for (args, code) in commands(root) {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let cwd = if args.last() == Some(&".") {
            root.join("logs/a-0")
        } else {
            root.to_path_buf()
        };
        let out = seglog(&args, &cwd, b"");
        let stderr = text(&out.stderr);
        assert_eq!(
            out.status.code(),
            Some(code),
            "{when}: {args:?}: {stderr}\n{}",
            text(&out.stdout)
        );
        assert!(
            !stderr.contains("Read-only file system") && !stderr.contains("os error"),
            "{when}: {args:?}: {stderr}"
        );
    }
}

#[test]
fn read_only_commands_work_on_a_read_only_file_system_and_change_nothing() {
    let fs = match Tmpfs::mount() {
        Ok(fs) => fs,
        Err(why) => {
            skip("read_only_commands_work_on_a_read_only_file_system", &why);
            return;
        }
    };
    let root = fs.path();
    sample(root);
    let before = tree(root);
    // On the writable mount they may write and must not.
    run_all(root, "writable");
    assert_unchanged(
        &before,
        &tree(root),
        "the read-only commands (writable mount)",
    );
    fs.remount_read_only();
    run_all(root, "read-only");
    assert_unchanged(
        &before,
        &tree(root),
        "the read-only commands (read-only mount)",
    );
}
