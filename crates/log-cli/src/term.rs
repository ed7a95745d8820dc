//! What the terminal shows: progress bars on stderr, and the stdout and stderr writers that keep
//! lines and bars apart.
//!
//! Bars draw only when the binary runs (`run`, not `run_with`) with stderr at a terminal. They
//! all belong to one process-wide [`MultiProgress`], and the writers the commands get suspend it
//! around each line they write, so a line never lands inside a bar. Nothing holds the stderr lock
//! across a command: indicatif draws from its tick thread and takes that lock for each frame (the
//! main thread holding it for the whole run was the hang of `recover` and `compact` at a terminal).
//! A bar is cleared when its command ends, whether it ends well or with an error.

use std::io::{IsTerminal, LineWriter, Write};
use std::sync::LazyLock;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether bars may draw: set once by [`enable`], when the binary's stderr is a terminal.
static ENABLED: AtomicBool = AtomicBool::new(false);

/// How many bars are on the terminal: a write hides them only while there are some, so that a
/// command printing a million lines and no bar pays nothing.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Every bar of the process, so that output can hide them all while it writes.
static BARS: LazyLock<MultiProgress> = LazyLock::new(|| {
    if ENABLED.load(Ordering::Acquire) {
        MultiProgress::with_draw_target(ProgressDrawTarget::stderr())
    } else {
        MultiProgress::with_draw_target(ProgressDrawTarget::hidden())
    }
});

/// Lets bars draw if stderr is a terminal. Only the binary calls it: a command run in-process
/// through `run_with` never draws on its host's terminal.
pub(crate) fn enable() {
    if std::io::stderr().is_terminal() {
        ENABLED.store(true, Ordering::Release);
    }
}

fn enabled() -> bool {
    ENABLED.load(Ordering::Acquire)
}

/// A progress bar, hidden unless bars are [enabled](enable); cleared when dropped, so that an
/// error ending a command never leaves a bar above its message.
#[derive(Debug)]
pub(crate) struct Progress {
    bar: ProgressBar,
    /// Whether it is counted in [`LIVE`] (drawn and not yet cleared).
    live: AtomicBool,
}

impl Progress {
    /// A bar of `len` steps named `what`, drawn now and every 200 ms even while nothing advances.
    pub(crate) fn new(len: u64, what: &str) -> Self {
        if !enabled() {
            return Self {
                bar: ProgressBar::hidden(),
                live: AtomicBool::new(false),
            };
        }
        LIVE.fetch_add(1, Ordering::AcqRel);
        let bar = BARS.add(ProgressBar::new(len));
        let style = ProgressStyle::with_template("{msg} [{bar:40}] {pos}/{len} ({eta})")
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_message(what.to_owned());
        // Drawn at once (not only at the tick thread's first tick), so even a short command shows it.
        bar.tick();
        bar.enable_steady_tick(Duration::from_millis(200));
        Self {
            bar,
            live: AtomicBool::new(true),
        }
    }

    /// Advances by `n` steps.
    pub(crate) fn inc(&self, n: u64) {
        self.bar.inc(n);
    }

    /// Sets the position.
    pub(crate) fn set_position(&self, position: u64) {
        self.bar.set_position(position);
    }

    /// Removes the bar from the terminal.
    pub(crate) fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
        BARS.remove(&self.bar);
        if self.live.swap(false, Ordering::AcqRel) {
            LIVE.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish_and_clear();
    }
}

/// A writer whose every write hides the bars first and draws them again after.
struct Suspending<W>(W);

impl<W: Write> Write for Suspending<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if LIVE.load(Ordering::Acquire) == 0 {
            return self.0.write(buf);
        }
        BARS.suspend(|| self.0.write(buf))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if LIVE.load(Ordering::Acquire) == 0 {
            return self.0.flush();
        }
        BARS.suspend(|| self.0.flush())
    }
}

/// The writer for a command's stdout: at a terminal where bars draw (it shows both), line by line
/// with the bars hidden around each line; else buffered.
pub(crate) fn stdout() -> Box<dyn Write> {
    let stdout = std::io::stdout().lock();
    if enabled() && stdout.is_terminal() {
        Box::new(LineWriter::new(Suspending(stdout)))
    } else {
        Box::new(std::io::BufWriter::new(stdout))
    }
}

/// The writer for a command's stderr: line by line, with the bars hidden around each line when
/// they draw. It never holds the stderr lock between writes, so the bars' tick thread can draw.
pub(crate) fn stderr() -> Box<dyn Write> {
    if enabled() {
        Box::new(LineWriter::new(Suspending(std::io::stderr())))
    } else {
        Box::new(std::io::stderr())
    }
}

/// Clears every bar, before a failure's message.
pub(crate) fn clear() {
    let _ = BARS.clear();
}
