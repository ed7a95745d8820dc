//! Runs one bench process (a system's group, a scale size) from the repository root and removes
//! its work directory after it, whatever its outcome.

use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use serde_json::Value;

/// A finished process.
pub(super) struct Finished {
    pub(super) command: String,
    pub(super) status: ExitStatus,
    stdout: Vec<u8>,
    /// Its stderr when captured (already echoed), else empty: it went to ours as it came.
    pub(super) stderr: String,
    pub(super) elapsed: Duration,
}

impl Finished {
    /// The JSON document the process printed on stdout.
    pub(super) fn json(&self) -> Result<Value> {
        serde_json::from_slice(&self.stdout)
            .with_context(|| format!("{} printed no JSON document", self.command))
    }
}

/// Runs `argv` in `root`, its stderr passed through as it comes, or with `capture_stderr` kept
/// and echoed at the end; `log` prints the command line before it starts. Then removes `work`.
pub(super) fn run(
    root: &Path,
    argv: &[String],
    work: &Path,
    capture_stderr: bool,
    log: impl FnOnce(&str),
) -> Result<Finished> {
    let command = argv.join(" ");
    log(&command);
    let started = Instant::now();
    let (program, args) = argv.split_first().context("empty command")?;
    let output = Command::new(program)
        .args(args)
        .current_dir(root)
        .stderr(if capture_stderr {
            Stdio::piped()
        } else {
            Stdio::inherit()
        })
        .output()
        .with_context(|| format!("starting {command}"))?;
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    eprint!("{stderr}");
    let _ = std::fs::remove_dir_all(root.join(work));
    Ok(Finished {
        command,
        status: output.status,
        stdout: output.stdout,
        stderr,
        elapsed: started.elapsed(),
    })
}
