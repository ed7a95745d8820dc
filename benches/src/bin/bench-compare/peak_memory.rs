//! The peak memory of one operation in this process: the kernel's `VmHWM`, reset just before the
//! operation (`/proc/self/clear_refs` 5), and the largest `RssAnon` and `RssFile` a thread sampled
//! from `/proc/self/status` every 2 ms while it ran. Run it in a fresh process that does only the
//! operation (`compact_system::peak_in_fresh_process`), so that nothing an earlier phase left
//! resident (the data's building, freed heap the allocator kept) is counted.
//!
//! What counts: `VmHWM` is the resident set, anonymous memory (heap, stacks), mapped file pages
//! (the binary, mapped indexes and `.log` files) and shared memory together, including what was
//! resident when the operation started. Page cache that the process reads through `pread` is not
//! in it: it belongs to the kernel, not to the process.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use serde_json::{Value, json};

/// How often the sampling thread reads `/proc/self/status`.
const SAMPLE_EVERY: Duration = Duration::from_millis(2);

/// One operation's peak memory, in MiB.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Peak {
    /// `VmHWM` at the end, reset at the start: the exact peak resident set.
    pub(crate) hwm_mib: f64,
    /// The resident set when the operation started (what the peak includes before it did anything).
    pub(crate) start_mib: f64,
    /// The largest `RssAnon` sampled (heap and stacks).
    pub(crate) anon_mib: f64,
    /// The largest `RssFile` sampled (mapped file pages).
    pub(crate) file_mib: f64,
    /// How many samples the thread took.
    pub(crate) samples: u64,
}

impl Peak {
    pub(crate) fn to_json(self) -> Value {
        json!({
            "hwm_mib": self.hwm_mib,
            "start_mib": self.start_mib,
            "anon_mib": self.anon_mib,
            "file_mib": self.file_mib,
            "samples": self.samples,
        })
    }

    pub(crate) fn from_json(v: &Value) -> Result<Self> {
        let get = |name: &str| {
            v.get(name)
                .and_then(Value::as_f64)
                .with_context(|| format!("no {name} in {v}"))
        };
        Ok(Self {
            hwm_mib: get("hwm_mib")?,
            start_mib: get("start_mib")?,
            anon_mib: get("anon_mib")?,
            file_mib: get("file_mib")?,
            samples: get("samples")? as u64,
        })
    }
}

/// The fields of `/proc/self/status` named, in KiB, in the order asked.
fn status_kib<const N: usize>(names: [&str; N]) -> Result<[u64; N]> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let mut out = [0; N];
    for (name, slot) in names.iter().zip(&mut out) {
        *slot = status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
            .with_context(|| format!("no {name} in /proc/self/status"))?;
    }
    Ok(out)
}

fn mib(kib: u64) -> f64 {
    kib as f64 / 1024.0
}

/// Runs `op` and returns its result with the process's peak memory while it ran.
pub(crate) fn during<T>(op: impl FnOnce() -> Result<T>) -> Result<(T, Peak)> {
    // Linux 4.0+: resets VmHWM to the current resident set.
    std::fs::write("/proc/self/clear_refs", "5").context("resetting VmHWM")?;
    let [start] = status_kib(["VmRSS"])?;
    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || -> Result<(u64, u64, u64)> {
            let (mut anon, mut file, mut samples) = (0, 0, 0);
            loop {
                let [a, f] = status_kib(["RssAnon", "RssFile"])?;
                (anon, file, samples) = (anon.max(a), file.max(f), samples + 1);
                if done.load(Ordering::Acquire) {
                    return Ok((anon, file, samples));
                }
                std::thread::sleep(SAMPLE_EVERY);
            }
        })
    };
    let outcome = op();
    done.store(true, Ordering::Release);
    let sampled = sampler
        .join()
        .map_err(|_| anyhow::anyhow!("the memory sampler panicked"))?;
    let value = outcome?;
    let (anon, file, samples) = sampled?;
    let [hwm] = status_kib(["VmHWM"])?;
    Ok((
        value,
        Peak {
            hwm_mib: mib(hwm),
            start_mib: mib(start),
            anon_mib: mib(anon),
            file_mib: mib(file),
            samples,
        },
    ))
}
