//! A full disk, for real: the `seglog` binary on a small tmpfs and on a small loop-mounted ext4
//! produces until the disk is full, then produces again, recovers, checks and consumes. No run
//! may end by a signal (the untrimmed, sparse 10 MiB indexes used to end in `SIGBUS`), a failure
//! names the file, and every acknowledged record reads back. Mounting needs root (CI has it);
//! where it is refused, the test says why on stderr and does nothing else.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::io::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const SEGLOG: &str = env!("CARGO_BIN_EXE_seglog");

/// Unmounts on drop.
struct Mount(PathBuf);

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
    }
}

/// Says on the real stderr (not captured by the test harness) why a test does nothing.
fn skip(test: &str, reason: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{test}: SKIPPED: {reason}");
}

fn run(args: &[&str], mount: &Path) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .arg(mount)
        .output()
        .map_err(|e| format!("{}: {e}", args[0]))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

fn mount_tmpfs(dir: &Path, size: &str) -> Result<Mount, String> {
    let option = format!("size={size}");
    run(&["mount", "-t", "tmpfs", "-o", &option, "tmpfs"], dir)?;
    Ok(Mount(dir.to_path_buf()))
}

fn mount_ext4(image: &Path, dir: &Path, bytes: u64) -> Result<Mount, String> {
    std::fs::File::create(image)
        .and_then(|f| f.set_len(bytes))
        .map_err(|e| e.to_string())?;
    let image = image.to_str().unwrap();
    // -m 0: no blocks reserved for root, who runs CI; 1 KiB blocks, smaller than a page.
    run(
        &["mkfs.ext4", "-q", "-F", "-m", "0", "-b", "1024"],
        Path::new(image),
    )?;
    run(&["mount", "-o", "loop", image], dir)?;
    Ok(Mount(dir.to_path_buf()))
}

/// Runs `seglog args`, feeding `stdin`; fails the test if a signal ended it.
fn seglog(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(SEGLOG)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    // The producer may stop reading when the disk is full: a broken pipe is expected.
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.signal().is_none(),
        "seglog {args:?} died by signal {:?}; stderr: {}",
        out.status.signal(),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The last offset acknowledged in `--print-acks` output.
fn last_ack(stdout: &[u8]) -> Option<i64> {
    text(stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("acked "))
        .filter_map(|n| n.trim().parse().ok())
        .next_back()
}

fn line(i: usize) -> String {
    format!("record-{i:08}-{}", "x".repeat(40))
}

/// Fills the disk under `mount`, then runs every command against it.
fn fill_then_use(mount: &Path) {
    let partition = mount.join("logs/fill-0");
    let partition = partition.to_str().unwrap();
    let input: String = (0..200_000).map(|i| line(i) + "\n").collect();

    let first = seglog(
        &["produce", partition, "--create", "--print-acks"],
        input.as_bytes(),
    );
    let err = text(&first.stderr);
    assert!(!first.status.success(), "the disk never filled: {err}");
    assert!(
        err.contains("No space left on device") && err.contains(&*mount.to_string_lossy()),
        "a clear message naming the file: {err}"
    );
    let mut acked = last_ack(&first.stdout).expect("some records were acknowledged");
    assert!(acked > 1_000, "acked only {acked}");

    // Produce again on the full disk: it may fail, cleanly; what it acks must survive too.
    let again = seglog(&["produce", partition, "--print-acks"], b"one more\n");
    let again_acked = last_ack(&again.stdout);
    if let Some(offset) = again_acked {
        acked = offset;
    } else {
        assert!(
            text(&again.stderr).contains(&*mount.to_string_lossy()),
            "{}",
            text(&again.stderr)
        );
    }

    let recover = seglog(&["recover", partition], b"");
    if !recover.status.success() {
        assert!(
            text(&recover.stderr).contains(&*mount.to_string_lossy()),
            "{}",
            text(&recover.stderr)
        );
    }
    seglog(&["check", partition], b"");
    let consume = seglog(&["consume", partition], b"");
    assert!(consume.status.success(), "{}", text(&consume.stderr));
    let values = text(&consume.stdout);
    let values: Vec<&str> = values.lines().collect();
    let count = usize::try_from(acked + 1).unwrap();
    assert!(
        values.len() >= count,
        "{} of {count} acked records",
        values.len()
    );
    let produced_first = count - usize::from(again_acked.is_some());
    for (i, value) in values.iter().take(produced_first).enumerate() {
        assert_eq!(*value, line(i), "record {i}");
    }
    if again_acked.is_some() {
        assert_eq!(values[count - 1], "one more");
    }
    // A check after recovery (or after the indexes were trimmed at close) finds nothing.
    let check = seglog(&["check", partition], b"");
    assert!(check.status.success(), "{}", text(&check.stdout));
    println!(
        "full disk at {}: {count} records acknowledged before ENOSPC, {} read back after recover",
        mount.display(),
        values.len()
    );
}

#[test]
fn a_full_tmpfs_ends_no_command_by_a_signal_and_keeps_every_acked_record() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("mnt");
    std::fs::create_dir(&dir).unwrap();
    let mount = match mount_tmpfs(&dir, "2m") {
        Ok(m) => m,
        Err(reason) => return skip("full_disk tmpfs", &reason),
    };
    fill_then_use(&mount.0);
}

#[test]
fn a_full_ext4_ends_no_command_by_a_signal_and_keeps_every_acked_record() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("mnt");
    std::fs::create_dir(&dir).unwrap();
    let mount = match mount_ext4(&root.path().join("ext4.img"), &dir, 8 << 20) {
        Ok(m) => m,
        Err(reason) => return skip("full_disk ext4", &reason),
    };
    fill_then_use(&mount.0);
}
