//! Runs one `seglog` command under a time limit and says how it ended: exit code, killed by a
//! signal, panicked, or timed out.

use std::io::Read as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

/// A process may take this long; past it, the case fails as a hang.
const LIMIT: Duration = Duration::from_secs(30);

pub(super) struct Ran {
    pub(super) code: i32,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

/// Runs `seglog args...`; an error for a signal, a panic message, a timeout, or an exit code
/// outside `codes`.
pub(super) fn seglog(bin: &Path, args: &[&str], codes: &[i32]) -> Result<Ran> {
    let what = format!("seglog {}", args.join(" "));
    let mut child = Command::new(bin)
        .args(args)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {what}"))?;
    // the pipes are drained on threads so a chatty process cannot block on a full pipe
    let mut out = child.stdout.take().context("stdout")?;
    let mut err = child.stderr.take().context("stderr")?;
    let out_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = out.read_to_end(&mut s);
        s
    });
    let err_t = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = err.read_to_end(&mut s);
        s
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{what}: no exit within {LIMIT:?} (a hang)");
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    let stdout = String::from_utf8_lossy(&out_t.join().unwrap_or_default()).into_owned();
    let stderr = String::from_utf8_lossy(&err_t.join().unwrap_or_default()).into_owned();
    if let Some(signal) = status.signal() {
        bail!(
            "{what}: killed by signal {signal}; stderr: {}",
            short(&stderr)
        );
    }
    if stderr.contains("panicked at") {
        bail!("{what}: panicked: {}", short(&stderr));
    }
    let code = status.code().unwrap_or(-1);
    if !codes.contains(&code) {
        bail!(
            "{what}: exit {code}, expected {codes:?}; stdout: {}; stderr: {}",
            short(&stdout),
            short(&stderr)
        );
    }
    Ok(Ran {
        code,
        stdout,
        stderr,
    })
}

pub(super) fn short(s: &str) -> String {
    let s = s.trim();
    if s.len() > 600 {
        let mut end = 600;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...", s.get(..end).unwrap_or_default())
    } else {
        s.to_owned()
    }
}
