//! seglog and a Kafka broker exclude each other from a log directory: a JVM holding
//! `FileChannel.tryLock` on `.lock` (what Kafka's `LogManager` takes) makes every writing
//! command refuse, and while seglog writes, the JVM's `tryLock` fails. Needs `java` (11+, to
//! run a single source file); without it the test says so and passes.
#![allow(clippy::unwrap_used, reason = "tests")]

use std::io::{BufRead as _, BufReader, Write as _};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::run::{seglog, text};

/// `hold <file>`: takes the lock, prints "held", keeps it until stdin ends.
/// `probe <file>`: prints "free" if `tryLock` gets it (and releases it), else "taken".
const LOCKER: &str = r#"
import java.io.*;
import java.nio.channels.*;
import java.nio.file.*;
public class Locker {
    public static void main(String[] a) throws Exception {
        try (FileChannel ch = FileChannel.open(Path.of(a[1]), StandardOpenOption.CREATE,
                StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            FileLock lock;
            try { lock = ch.tryLock(); } catch (OverlappingFileLockException e) { lock = null; }
            if (a[0].equals("probe")) {
                System.out.println(lock == null ? "taken" : "free");
                return;
            }
            if (lock == null) { System.out.println("taken"); return; }
            System.out.println("held");
            System.out.flush();
            while (System.in.read() >= 0) { }
        }
    }
}
"#;

fn java_available() -> bool {
    Command::new("java")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

fn locker(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("java");
    cmd.arg("-XX:TieredStopAtLevel=1")
        .arg("-XX:+UseSerialGC")
        .arg(dir.join("Locker.java"))
        .args(args);
    cmd
}

fn probe(dir: &Path, lock: &Path) -> String {
    let out = locker(dir, &["probe", lock.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout).trim().to_owned()
}

/// A `seglog produce` that has opened the partition (so holds the locks) and waits on stdin.
fn producing(root: &Path) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(["produce", "logs/t-0"])
        .current_dir(root)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.as_mut().unwrap().write_all(b"one\n").unwrap();
    child.stdin.as_mut().unwrap().flush().unwrap();
    child
}

#[test]
fn seglog_and_a_jvm_exclude_each_other_on_the_log_dir_lock() {
    if !java_available() {
        println!("skipped: java is not installed (the test runs a JVM that holds .lock)");
        return;
    }
    let root = tempfile::tempdir().unwrap();
    std::fs::write(root.path().join("Locker.java"), LOCKER).unwrap();
    let out = seglog(&["produce", "logs/t-0", "--create"], root.path(), b"a\nb\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lock = root.path().join("logs/.lock");
    assert_eq!(probe(root.path(), &lock), "free", "no seglog holds it now");

    // seglog holds it: the JVM's tryLock fails.
    let mut child = producing(root.path());
    let deadline = Instant::now() + Duration::from_mins(1);
    loop {
        if probe(root.path(), &lock) == "taken" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the JVM took .lock while seglog produce ran"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(probe(root.path(), &lock), "free");

    // The JVM holds it: every writing command refuses, with exit 2, naming the directory.
    let mut holder = locker(root.path(), &["hold", lock.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "held");
    for args in [
        &["produce", "logs/t-0"][..],
        &["recover", "logs"],
        &["recover", "logs/t-0"],
        &["compact", "logs/t-0", "--force"],
    ] {
        let out = seglog(args, root.path(), b"c\n");
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.contains("logs") && err.contains(".lock") && err.contains("Kafka broker"),
            "{args:?}: {err}"
        );
    }
    drop(holder.stdin.take());
    assert!(holder.wait().unwrap().success());

    // Released: seglog writes again, and nothing was written while the JVM held it.
    let out = seglog(&["produce", "logs/t-0"], root.path(), b"d\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let out = seglog(&["consume", "logs/t-0"], root.path(), b"");
    assert_eq!(text(&out.stdout), "a\nb\none\nd\n");
}
