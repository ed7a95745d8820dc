//! The paths and tools of one run: building seglog, its writer and the Maven harness, and running
//! a command with its output in files under the work directory.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use super::TOOL_JAVA_OPTS;
use super::guard::Guard;

/// Paths and tools of one run.
pub(super) struct Ctx {
    pub(super) root: PathBuf,
    pub(super) work: PathBuf,
    pub(super) run_sh: PathBuf,
    pub(super) seglog: PathBuf,
    pub(super) writer: PathBuf,
}

impl Ctx {
    pub(super) fn new(root: &Path) -> Result<Self> {
        let work = root.join("target").join("kafka-interop");
        if work.exists() {
            fs::remove_dir_all(&work).with_context(|| format!("removing {}", work.display()))?;
        }
        fs::create_dir_all(&work)?;
        let target =
            std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from);
        Ok(Self {
            root: root.to_path_buf(),
            work,
            run_sh: root.join("interop").join("kafka").join("run.sh"),
            seglog: target.join("debug").join("seglog"),
            writer: target.join("debug").join("seglog-kafka-interop-writer"),
        })
    }

    pub(super) fn build(&self) -> Result<()> {
        crate::cargo(
            &self.root,
            &[
                "build",
                "--locked",
                "-p",
                "seglog-cli",
                "--bin",
                "seglog",
                "-p",
                "seglog-harness",
                "--bin",
                "seglog-kafka-interop-writer",
                "--bin",
                "seglog-leader-append",
            ],
            &[],
        )?;
        // The harness and its Kafka jars (Maven downloads them into $SEGLOG_M2 the first time).
        let m2 = std::env::var_os("SEGLOG_M2")
            .map_or_else(|| self.root.join("target").join("m2"), PathBuf::from);
        let mut cmd = Command::new(&self.run_sh);
        cmd.arg("build").env("SEGLOG_M2", m2);
        self.run_to_files(cmd, "harness-build", Duration::from_mins(8))?;
        Ok(())
    }

    /// A harness command (`run.sh <args>`) with the short-lived JVM options.
    pub(super) fn oracle(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.run_sh);
        cmd.args(args).env("SEGLOG_JAVA_OPTS", TOOL_JAVA_OPTS);
        if std::env::var_os("SEGLOG_M2").is_none() {
            cmd.env("SEGLOG_M2", self.root.join("target").join("m2"));
        }
        cmd
    }

    /// Runs `cmd` with stdout and stderr in `<work>/<name>.stdout|.stderr`, killing it at the
    /// deadline. Returns the exit status and stdout.
    pub(super) fn run_to_files(
        &self,
        cmd: Command,
        name: &str,
        timeout: Duration,
    ) -> Result<(ExitStatus, String)> {
        let (stdout, stderr) = self.log_paths(name);
        let mut guard = Guard::spawn(cmd, name, &stdout, &stderr, false)?;
        let status = guard.wait_until(Instant::now() + timeout)?;
        let out = fs::read_to_string(&stdout).unwrap_or_default();
        Ok((status, out))
    }

    /// As [`Ctx::run_to_files`], failing unless the command exits 0.
    pub(super) fn run_ok(&self, cmd: Command, name: &str, timeout: Duration) -> Result<String> {
        let (status, out) = self.run_to_files(cmd, name, timeout)?;
        if !status.success() {
            let (_, stderr) = self.log_paths(name);
            bail!(
                "{name} exited with {status}; stderr ({}):\n{}",
                stderr.display(),
                tail(&fs::read_to_string(&stderr).unwrap_or_default(), 30)
            );
        }
        Ok(out)
    }

    pub(super) fn log_paths(&self, name: &str) -> (PathBuf, PathBuf) {
        (
            self.work.join(format!("{name}.stdout")),
            self.work.join(format!("{name}.stderr")),
        )
    }
}

fn tail(text: &str, lines: usize) -> String {
    let all: Vec<&str> = text.lines().collect();
    all.get(all.len().saturating_sub(lines)..)
        .unwrap_or_default()
        .join("\n")
}

pub(super) fn seglog_cmd(ctx: &Ctx, args: &[&str], path: &Path) -> Command {
    let mut cmd = Command::new(&ctx.seglog);
    cmd.args(args).arg(path);
    cmd
}
