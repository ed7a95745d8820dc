//! The scale compaction: a compacted partition of `mib` MiB of keyed 1 KiB records whose keys repeat
//! ten times (90% overwritten, as `compact_1g`), cleaned whole once with a fixed dedupe buffer
//! (`--dedupe-mib`, 128 by default) by [`clean_in_child`], which returns the cleaning's time and the
//! peak memory of the process that cleaned; then the answer is read back here: one record per key,
//! the last one written.
//!
//! One sample per size: a second one would need a copy of the source, twice the disk.

#![allow(
    clippy::field_reassign_with_default,
    reason = "the options structs are becoming #[non_exhaustive]: a field is set on a default, never in a literal"
)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use seglog_log::record::records;
use seglog_log::{
    CleanOptions, Isolation, LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock,
};
use serde_json::{Value, json};

use crate::peak_memory;
use crate::scale_params::{ScaleParams, segment_bytes};
use crate::{FETCH_MIB_BYTES, Figure, keyed_batch};

fn config(mib: u64) -> LogConfig {
    let mut config = LogConfig::default();
    config.cleanup_policy.delete = false;
    config.cleanup_policy.compact = true;
    config.segment_bytes = segment_bytes(mib);
    config
}

fn open(dir: &Path, mib: u64) -> Result<PartitionLog> {
    let (log, _) = PartitionLog::open(
        RealFs,
        dir,
        config(mib),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .with_context(|| format!("opening {}", dir.display()))?;
    Ok(log)
}

/// What cleaning one log cost.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CleanCost {
    /// Wall time of `PartitionLog::clean`, in ms.
    pub(crate) ms: f64,
    /// The cleaning process's peak memory, in MiB.
    pub(crate) peak_mib: f64,
}

/// Cleans the log in `dir` (written with `config(mib)`) in a child process of this binary
/// (`scale clean-child`), so that the peak memory is the cleaner's alone, and returns its cost.
/// The one place that says how the scale run measures a cleaning: point it at another measure
/// and every size follows.
pub(crate) fn clean_in_child(dir: &Path, mib: u64, dedupe_mib: u64) -> Result<CleanCost> {
    let exe = std::env::current_exe().context("finding seglog-bench-compare")?;
    let out = Command::new(exe)
        .args(["scale", "clean-child", "--dir"])
        .arg(dir)
        .args([
            "--mib",
            &mib.to_string(),
            "--dedupe-mib",
            &dedupe_mib.to_string(),
        ])
        .stderr(Stdio::inherit())
        .output()
        .context("starting the cleaning child")?;
    ensure!(
        out.status.success(),
        "the cleaning child exited with {}",
        out.status
    );
    let doc: Value = serde_json::from_slice(&out.stdout).context("the cleaning child's answer")?;
    Ok(CleanCost {
        ms: doc.get("ms").and_then(Value::as_f64).context("no ms")?,
        peak_mib: doc
            .get("peak_mib")
            .and_then(Value::as_f64)
            .context("no peak_mib")?,
    })
}

/// The child: opens the log, cleans it whole, prints its time and the cleaning's peak memory
/// (`peak_memory::during`, as `compact_1g_peak_memory` measures it).
pub(crate) fn child(p: &ScaleParams) -> Result<()> {
    let log = open(&p.dir, p.mib)?;
    log.set_high_watermark(log.log_end_offset());
    let mut options = CleanOptions::default();
    options.dedupe_buffer_bytes = (p.dedupe_mib << 20) as usize;
    let ((report, ms), peak) = peak_memory::during(|| {
        let started = Instant::now();
        let report = log.clean(&options)?;
        Ok((report, started.elapsed().as_secs_f64() * 1000.0))
    })?;
    ensure!(!report.aborted, "cleaning aborted: {report:?}");
    log.close()?;
    println!("{}", json!({ "ms": ms, "peak_mib": peak.hwm_mib }));
    Ok(())
}

pub(crate) fn run(p: &ScaleParams) -> Result<Vec<Figure>> {
    let total = ((p.mib << 20) / 1024).max(160) as i64;
    let count = total - total % 160;
    let keys = count / 10;
    let root = p.dir.join("scale-compact");
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let dir = root.join("bench-0");
    {
        let log = open(&dir, p.mib)?;
        for base in (0..count).step_by(16) {
            log.append_as_follower(&keyed_batch(base, 16, keys)?)?;
        }
        log.roll()?;
        log.close()?;
    }
    let cost = clean_in_child(&dir, p.mib, p.dedupe_mib)?;
    // Read back: one record per key, each the key's last (offsets count - keys and up).
    let log = open(&dir, p.mib)?;
    log.set_high_watermark(log.log_end_offset());
    let (mut offset, mut kept, mut lowest) = (0_i64, 0_i64, i64::MAX);
    let mut buf = Vec::new();
    while offset < log.log_end_offset() {
        let fetch = log.read(offset, FETCH_MIB_BYTES, Isolation::HighWatermark, true)?;
        fetch.read_into(&mut buf)?;
        ensure!(!buf.is_empty(), "empty read at {offset}");
        for record in records(&buf) {
            let record = record?;
            kept += 1;
            lowest = lowest.min(record.offset);
            offset = record.offset + 1;
        }
    }
    ensure!(
        kept == keys && lowest == count - keys,
        "cleaning kept {kept} records from offset {lowest}, expected {keys} from {}",
        count - keys
    );
    log.close()?;
    drop(log);
    std::fs::remove_dir_all(&root)?;
    Ok(vec![
        Figure {
            workload: "scale_compact".to_owned(),
            unit: "ms",
            samples: vec![cost.ms],
            note: format!(
                "PartitionLog::clean of {count} records, {keys} keys, dedupe buffer {} MiB, in a child process",
                p.dedupe_mib
            ),
        },
        Figure {
            workload: "scale_compact_peak_memory".to_owned(),
            unit: "MiB",
            samples: vec![cost.peak_mib],
            note: "VmHWM of the child that opened and cleaned the log (mapped .log pages count)"
                .to_owned(),
        },
    ])
}
