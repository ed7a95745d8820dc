//! A pseudo-terminal for the tests that run `seglog` as an operator does, at a terminal: the
//! child's stdout and stderr (and stdin, unless the test pipes it) are the terminal's slave side,
//! so `isatty` is true and the progress bars draw; the test reads everything the terminal showed
//! from the master side. Every run has a hard time limit: past it the child is killed and the test
//! fails with the transcript, so a hang fails the test instead of hanging the suite.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rustix::fs::{Mode, OFlags};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

/// How long one command may take. Every command here takes well under ten seconds on a loaded
/// machine; the bound only turns a hang into a failure.
pub(crate) const LIMIT: Duration = Duration::from_mins(2);

/// What the child's stdin is.
pub(crate) enum Input<'a> {
    /// The terminal: the test types with [`Running::type_text`].
    Terminal,
    /// A pipe fed these bytes, then closed (`seq 1 1000 | seglog produce ...` at a terminal).
    Piped(&'a [u8]),
}

/// A `seglog` started at a fresh terminal.
pub(crate) struct Running {
    child: Child,
    master: std::fs::File,
    transcript: mpsc::Receiver<Vec<u8>>,
    seen: Vec<u8>,
    started: Instant,
    what: String,
}

/// The end of a run: how it exited and every byte the terminal showed.
pub(crate) struct Finished {
    pub(crate) status: ExitStatus,
    pub(crate) transcript: String,
}

impl Finished {
    /// Fails unless the process exited by itself (no signal) with `code`.
    pub(crate) fn assert_exit(&self, code: i32, what: &str) {
        assert_eq!(
            self.status.signal(),
            None,
            "{what}: killed by a signal\n{}",
            self.transcript
        );
        assert_eq!(
            self.status.code(),
            Some(code),
            "{what}: exit status\n{}",
            self.transcript
        );
    }
}

/// Starts `seglog args` in `cwd` with a new 100x30 terminal as its stdout and stderr.
pub(crate) fn spawn(args: &[&str], cwd: &Path, input: &Input<'_>) -> Running {
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave: OwnedFd = rustix::fs::open(
        name.as_c_str(),
        OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    let size = Winsize {
        ws_row: 30,
        ws_col: 100,
        ws_xpixel: 0,
        ws_ypixel: 0,
    };
    tcsetwinsize(&slave, size).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_seglog"));
    command
        .args(args)
        .current_dir(cwd)
        .env("TERM", "xterm-256color")
        .stdout(Stdio::from(slave.try_clone().unwrap()))
        .stderr(Stdio::from(slave.try_clone().unwrap()));
    match input {
        Input::Terminal => command.stdin(Stdio::from(slave.try_clone().unwrap())),
        Input::Piped(_) => command.stdin(Stdio::piped()),
    };
    let mut child = command.spawn().unwrap();
    // Only the child may hold the slave side now, so the master reads EOF (EIO) once it exits.
    drop(command);
    drop(slave);
    if let Input::Piped(bytes) = input {
        let mut stdin = child.stdin.take().unwrap();
        let bytes = bytes.to_vec();
        std::thread::spawn(move || {
            // A command that fails early closes its stdin; that is not the test's failure.
            let _ = stdin.write_all(&bytes);
        });
    }
    let master = std::fs::File::from(master);
    let mut reader = master.try_clone().unwrap();
    let (tx, transcript) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = [0_u8; 8192];
        // EIO once the last slave descriptor closes: the end of the transcript.
        while let Ok(n @ 1..) = reader.read(&mut buf) {
            if tx.send(buf[..n].to_vec()).is_err() {
                return;
            }
        }
    });
    Running {
        child,
        master,
        transcript,
        seen: Vec::new(),
        started: Instant::now(),
        what: format!("seglog {}", args.join(" ")),
    }
}

impl Running {
    fn deadline(&self) -> Instant {
        self.started + LIMIT
    }

    fn text(&self) -> String {
        String::from_utf8_lossy(&self.seen).into_owned()
    }

    /// Kills the child and fails the test: it ran past its time limit.
    fn timed_out(&mut self, waiting_for: &str) -> ! {
        let _ = self.child.kill();
        let _ = self.child.wait();
        while let Ok(chunk) = self.transcript.try_recv() {
            self.seen.extend(chunk);
        }
        panic!(
            "{}: still running after {LIMIT:?} ({waiting_for}); killed. The terminal showed:\n{}",
            self.what,
            self.text()
        );
    }

    /// Waits until the terminal has shown `needle`.
    pub(crate) fn wait_for(&mut self, needle: &str) {
        while !self.text().contains(needle) {
            let left = self.deadline().saturating_duration_since(Instant::now());
            match self.transcript.recv_timeout(left) {
                Ok(chunk) => self.seen.extend(chunk),
                Err(mpsc::RecvTimeoutError::Timeout) => self.timed_out(needle),
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    panic!(
                        "{}: ended before showing {needle:?}:\n{}",
                        self.what,
                        self.text()
                    )
                }
            }
        }
    }

    /// Types `text` at the terminal (`\x04` at the start of a line is end of input).
    pub(crate) fn type_text(&mut self, text: &str) {
        self.master.write_all(text.as_bytes()).unwrap();
        self.master.flush().unwrap();
    }

    /// Sends `signal` to the child, as a terminal's Ctrl-C or a `kill` would.
    /// Fails at once, and says why, if the child cannot see `signal`: a child inherits ignored
    /// signals, and a shell's background job without job control (`cmd &` in a script) starts
    /// with SIGINT and SIGQUIT ignored, so the test would otherwise wait out its time limit.
    pub(crate) fn signal(&self, signal: rustix::process::Signal) {
        assert!(
            !inherited_ignored(signal),
            "signal {signal:?} is ignored by this test process (SigIgn in /proc/self/status), so \
             the child ignores it too; run the tests from a shell with job control (`set -m`) or \
             in the foreground"
        );
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, signal).unwrap();
    }

    /// Waits, within the time limit, for the child to exit and the terminal to close.
    pub(crate) fn finish(mut self) -> Finished {
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                break status;
            }
            if Instant::now() >= self.deadline() {
                self.timed_out("its exit");
            }
            match self.transcript.recv_timeout(Duration::from_millis(20)) {
                Ok(chunk) => self.seen.extend(chunk),
                Err(mpsc::RecvTimeoutError::Timeout | mpsc::RecvTimeoutError::Disconnected) => {}
            }
        };
        // The rest of what it wrote; the reader ends when the terminal closes.
        loop {
            let left = self.deadline().saturating_duration_since(Instant::now());
            match self
                .transcript
                .recv_timeout(left.max(Duration::from_secs(5)))
            {
                Ok(chunk) => self.seen.extend(chunk),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    panic!("{}: the terminal never closed:\n{}", self.what, self.text())
                }
            }
        }
        Finished {
            status,
            transcript: self.text(),
        }
    }
}

/// Runs `seglog args` at a terminal to its end.
pub(crate) fn run(args: &[&str], cwd: &Path, input: &Input<'_>) -> Finished {
    spawn(args, cwd, input).finish()
}

/// Whether this process ignores `signal`, from the `SigIgn` mask of /proc/self/status (bit
/// `n - 1` for signal `n`).
fn inherited_ignored(signal: rustix::process::Signal) -> bool {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let mask = status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .map(|hex| u64::from_str_radix(hex.trim(), 16).unwrap())
        .unwrap();
    let bit = signal.as_raw() - 1;
    mask >> bit & 1 == 1
}
