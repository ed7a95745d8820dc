//! A child process in its own process group, killed with its group when the guard drops.

use std::fs;
use std::os::unix::process::CommandExt as _;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// A child process in its own process group; dropping the guard kills the whole group.
pub(super) struct Guard {
    child: Child,
    name: String,
    done: bool,
}

impl Guard {
    /// Starts `cmd` with stdout and stderr going to files. With `stdin_pipe`, its stdin is a pipe
    /// we hold (the broker exits when it closes); otherwise it is /dev/null.
    pub(super) fn spawn(
        mut cmd: Command,
        name: &str,
        stdout: &Path,
        stderr: &Path,
        stdin_pipe: bool,
    ) -> Result<Self> {
        let out = fs::File::create(stdout)?;
        let err = fs::File::create(stderr)?;
        cmd.stdout(out)
            .stderr(err)
            .stdin(if stdin_pipe {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .process_group(0);
        let child = cmd
            .spawn()
            .with_context(|| format!("could not start {name}: {cmd:?}"))?;
        Ok(Self {
            child,
            name: name.to_owned(),
            done: false,
        })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `signal` (a `kill` name such as TERM or KILL) to the process group, while the child is
    /// not reaped (so the group id is still ours).
    pub(super) fn signal_group(&self, signal: &str) {
        if self.done {
            return;
        }
        let _ = Command::new("kill")
            .args([&format!("-{signal}"), "--", &format!("-{}", self.pid())])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    pub(super) fn try_wait(&mut self) -> Result<Option<ExitStatus>> {
        let status = self.child.try_wait()?;
        if status.is_some() {
            self.done = true;
        }
        Ok(status)
    }

    /// Waits for the exit; at the deadline, kills the group and fails.
    pub(super) fn wait_until(&mut self, deadline: Instant) -> Result<ExitStatus> {
        loop {
            if let Some(status) = self.try_wait()? {
                return Ok(status);
            }
            if Instant::now() >= deadline {
                self.kill();
                bail!("{} did not finish in time and was killed", self.name);
            }
            sleep(Duration::from_millis(50));
        }
    }

    /// SIGKILLs the group and reaps the child. Once the child is reaped its process group id can
    /// be reused by an unrelated process, so a reaped child's group is never signalled.
    pub(super) fn kill(&mut self) {
        if self.done {
            return;
        }
        self.signal_group("KILL");
        // In case `kill` could not run: at least the child itself.
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.done = true;
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        self.kill();
    }
}
