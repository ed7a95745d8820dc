//! The far end of a zero-copy fetch (what a socket's peer does): a FIFO whose reader is a separate
//! drainer process, `seglog-bench-compare drain --fifo F [--mode splice|splice-block|read]`.
//! seglog, the limit and Kafka's harness all write into such a FIFO with the same drainer, so the
//! reader's cost is the same for all (a Java thread could only drain with copies). The drainer
//! raises the pipe to 1 MiB (one fetch) and, by default, splices it into /dev/null, which moves
//! page references and copies nothing; `--mode read` reads into a reused 1 MiB buffer instead (one
//! copy per byte).
//!
//! In wall-clock rounds the default drainer polls an empty pipe (non-blocking `splice`, yielding
//! the core between tries) for up to [`POLL`] before it sleeps: a socket's far end is drained by
//! the network stack and wakes no process per fetch, but a drainer that sleeps whenever the pipe
//! is empty costs a cross-core wake-up per fetch to any writer that spends more than about 1 us
//! between two fetches, which every real system does (docs/perf/consume.md section 5).
//! `--mode splice-block` is the sleeping drainer, kept for comparison; under
//! `SEGLOG_BENCH_CPU_CLOCK=1` the drainer never polls, as its CPU time is counted.

use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use crate::cpu_clock;
use rustix::pipe::{SpliceFlags, fcntl_setpipe_size, splice};

/// The pipe's capacity: one whole fetch.
const PIPE_BYTES: usize = 1 << 20;

/// How long the default drainer polls an empty pipe before it sleeps: longer than a writer's
/// work between two fetches, shorter than a round.
const POLL: Duration = Duration::from_millis(1);

/// The drainer's modes: see the module's documentation.
const MODES: [&str; 3] = ["splice", "splice-block", "read"];

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

/// The drainer process: `drain --fifo F [--mode splice|splice-block|read]`. Prints `open` before it
/// opens the FIFO, `ready` once the pipe is enlarged, and at the end of the stream the byte count
/// and its CPU time since `ready` in ns. Under `SEGLOG_BENCH_DRAIN_STATS=1` it also prints its
/// context switches to stderr (how often it slept waiting for the writer).
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
        MODES.contains(&mode.as_str()),
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
        "splice" | "splice-block" => {
            total = splice_to_null(&input, mode == "splice" && !cpu_clock())?;
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
        other => bail!("drain: unknown --mode {other} (splice, splice-block or read)"),
    }
    let cpu = process_cpu_time().saturating_sub(cpu_at_ready);
    if std::env::var_os("SEGLOG_BENCH_DRAIN_STATS").is_some_and(|v| v == "1") {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let switches: Vec<&str> = status
            .lines()
            .filter(|l| l.contains("ctxt_switches"))
            .collect();
        eprintln!("drainer {mode}: {}", switches.join(", "));
    }
    writeln!(out, "{total} {}", cpu.as_nanos())?;
    out.flush()?;
    Ok(())
}

/// Splices `input` (a pipe) into /dev/null until its write end is closed; returns the bytes moved.
/// With `poll`, an empty pipe is tried again without blocking, the core yielded between tries, for
/// up to [`POLL`] before a blocking `splice` waits for the writer.
fn splice_to_null(input: &impl AsFd, poll: bool) -> Result<u64> {
    let null = File::options().write(true).open("/dev/null")?;
    let mut total = 0_u64;
    // When the pipe was found empty while polling, since the last bytes moved.
    let mut empty_since: Option<Instant> = None;
    loop {
        let polling = poll && empty_since.is_none_or(|t| t.elapsed() < POLL);
        let flags = if polling {
            SpliceFlags::MORE | SpliceFlags::NONBLOCK
        } else {
            SpliceFlags::MORE
        };
        match splice(input, None, &null, None, PIPE_BYTES, flags) {
            Ok(0) => return Ok(total),
            Ok(n) => {
                total += n as u64;
                empty_since = None;
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) if polling => {
                empty_since.get_or_insert_with(Instant::now);
                // A writer sharing this core gets it; alone, this returns at once.
                std::thread::yield_now();
            }
            Err(e) => return Err(e).context("splice"),
        }
    }
}

fn process_cpu_time() -> Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::indexing_slicing, reason = "tests")]
    use super::*;

    /// Both drains move every byte and stop only at the end: pauses shorter and longer than
    /// [`POLL`] (the polling drain then sleeps in a blocking splice) are not the end.
    #[test]
    fn splice_to_null_drains_across_pauses_until_the_writer_closes() -> Result<()> {
        for poll in [true, false] {
            let (read, write) = rustix::pipe::pipe()?;
            let writer = std::thread::spawn(move || -> Result<()> {
                let chunk = vec![7_u8; 64 * 1024];
                for pause in [Duration::ZERO, POLL / 4, POLL * 5, Duration::ZERO] {
                    std::thread::sleep(pause);
                    let mut rest = &chunk[..];
                    while !rest.is_empty() {
                        rest = &rest[rustix::io::write(&write, rest)?..];
                    }
                }
                Ok(())
            });
            assert_eq!(splice_to_null(&read, poll)?, 4 * 64 * 1024, "poll {poll}");
            writer
                .join()
                .map_err(|_| anyhow::anyhow!("the writer panicked"))??;
        }
        Ok(())
    }
}
