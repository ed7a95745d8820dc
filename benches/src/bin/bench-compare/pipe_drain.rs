//! The far end of a zero-copy fetch (what a socket's peer does): a FIFO whose reader is a separate
//! drainer process, `seglog-bench-compare drain --fifo F [--mode splice|read]`. seglog, the limit
//! and Kafka's harness all write into such a FIFO with the same drainer, so the reader's cost is
//! the same for all (a Java thread could only drain with copies). The drainer raises the pipe to
//! 1 MiB (one fetch) and, by default, splices it into /dev/null, which moves page references
//! and copies nothing; `--mode read` reads into a reused 1 MiB buffer instead (one copy per byte).

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};

use crate::cpu_clock;
use rustix::pipe::{SpliceFlags, fcntl_setpipe_size, splice};

/// The pipe's capacity: one whole fetch.
const PIPE_BYTES: usize = 1 << 20;

/// The writing side: the FIFO opened for writing, and the drainer process reading it.
pub(crate) struct Drain {
    write: File,
    child: Child,
    stdout: BufReader<ChildStdout>,
    fifo: PathBuf,
}

impl Drain {
    /// Creates the FIFO `dir/drain.fifo`, starts the drainer on it and waits until it is ready
    /// (the pipe enlarged), so the measured part starts with an empty, full-sized pipe.
    pub(crate) fn new(dir: &Path) -> Result<Self> {
        let fifo = dir.join("drain.fifo");
        let _ = std::fs::remove_file(&fifo);
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .with_context(|| format!("mkfifo {}", fifo.display()))?;
        let mode = std::env::var("SEGLOG_BENCH_DRAIN_MODE").unwrap_or_else(|_| "splice".into());
        let mut child = Command::new(std::env::current_exe()?)
            .args(["drain", "--fifo"])
            .arg(&fifo)
            .args(["--mode", &mode])
            .stdout(Stdio::piped())
            .spawn()
            .context("starting the drainer")?;
        let mut stdout = BufReader::new(child.stdout.take().context("the drainer's stdout")?);
        // Opening a FIFO for writing waits for its reader: only once the drainer is about to
        // open it (so that a drainer that failed to start is an error, not a hang).
        let said = line(&mut stdout)?;
        ensure!(said == "open", "the drainer said {said:?}");
        let write = File::options().write(true).open(&fifo)?;
        let said = line(&mut stdout)?;
        ensure!(said == "ready", "the drainer said {said:?}");
        Ok(Self {
            write,
            child,
            stdout,
            fifo,
        })
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.write.as_fd()
    }

    /// Closes the write end and waits until the drainer has read everything; returns the bytes
    /// it read and the time from `started` (a reading of `clock`, a [`crate::round_clock`]) to then, the drainer's
    /// exit not counted. Under `SEGLOG_BENCH_CPU_CLOCK=1` the time is CPU time: the writing
    /// thread's plus the drainer's.
    pub(crate) fn finish(
        self,
        clock: &impl Fn() -> Duration,
        started: Duration,
    ) -> Result<(u64, Duration)> {
        let Self {
            write,
            mut child,
            mut stdout,
            fifo,
        } = self;
        drop(write);
        let mut line = String::new();
        stdout.read_line(&mut line)?;
        let elapsed = clock().saturating_sub(started);
        let status = child.wait()?;
        std::fs::remove_file(&fifo)?;
        ensure!(status.success(), "the drainer failed: {status}");
        let (count, cpu) = line
            .trim()
            .split_once(' ')
            .and_then(|(c, t)| Some((c.parse().ok()?, t.parse().ok()?)))
            .with_context(|| format!("the drainer's count {line:?}"))?;
        let drainer = if cpu_clock() {
            Duration::from_nanos(cpu)
        } else {
            Duration::ZERO
        };
        Ok((count, elapsed + drainer))
    }
}

fn line(from: &mut impl BufRead) -> Result<String> {
    let mut line = String::new();
    from.read_line(&mut line)?;
    Ok(line.trim().to_owned())
}

/// The drainer process: `drain --fifo F [--mode splice|read]`. Prints `open` before it opens the
/// FIFO, `ready` once the pipe is enlarged, and at the end of the stream the byte count and its
/// CPU time since `ready` in ns.
pub(crate) fn run(mut args: impl Iterator<Item = String>) -> Result<()> {
    let (mut fifo, mut mode) = (None, "splice".to_owned());
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--fifo" => fifo = Some(PathBuf::from(value)),
            "--mode" => mode = value,
            other => bail!("drain: unknown flag {other}"),
        }
    }
    let fifo = fifo.context("drain: missing --fifo")?;
    ensure!(
        ["splice", "read"].contains(&mode.as_str()),
        "drain: unknown --mode {mode}"
    );
    let mut out = std::io::stdout().lock();
    writeln!(out, "open")?;
    out.flush()?;
    let mut input = File::open(&fifo).with_context(|| format!("opening {}", fifo.display()))?;
    let size = fcntl_setpipe_size(&input, PIPE_BYTES).context("F_SETPIPE_SZ")?;
    ensure!(size >= PIPE_BYTES, "the pipe holds {size} bytes");
    writeln!(out, "ready")?;
    out.flush()?;
    let cpu_at_ready = process_cpu_time();
    let mut total = 0_u64;
    match mode.as_str() {
        "splice" => {
            let null = File::options().write(true).open("/dev/null")?;
            loop {
                match splice(&input, None, &null, None, PIPE_BYTES, SpliceFlags::MORE) {
                    Ok(0) => break,
                    Ok(n) => total += n as u64,
                    Err(rustix::io::Errno::INTR) => {}
                    Err(e) => return Err(e).context("splice"),
                }
            }
        }
        "read" => {
            let mut buf = vec![0_u8; PIPE_BYTES];
            loop {
                match input.read(&mut buf)? {
                    0 => break,
                    n => total += n as u64,
                }
            }
        }
        other => bail!("drain: unknown --mode {other} (splice or read)"),
    }
    let cpu = process_cpu_time().saturating_sub(cpu_at_ready);
    writeln!(out, "{total} {}", cpu.as_nanos())?;
    out.flush()?;
    Ok(())
}

fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
