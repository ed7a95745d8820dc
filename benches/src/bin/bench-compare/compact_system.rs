//! `compact_1g` on seglog, in a process of its own (`--part compact`) so that its peak memory is the
//! cleaner's: a compacted partition of `dataset_mib` MiB of 1 KiB records whose keys repeat ten
//! times (90% of the records overwritten), cleaned whole with `PartitionLog::clean` and Kafka's
//! default dedupe buffer; the answer is read back: one record per key, the last one written.

#![allow(
    clippy::field_reassign_with_default,
    reason = "the options structs are becoming #[non_exhaustive]: a field is set on a default, never in a literal"
)]

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use seglog_log::record::records;
use seglog_log::{
    CleanOptions, Isolation, LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock,
};

use crate::{FETCH_MIB_BYTES, Figure, Params, keyed_batch, log_append_bytes, measure, ms};

/// Records in the dataset and distinct keys.
pub(crate) fn sizes(params: &Params) -> (i64, i64) {
    let records = ((params.dataset_mib << 20) / 1024).max(160) as i64;
    let records = records - records % 160;
    (records, records / 10)
}

fn config(params: &Params) -> LogConfig {
    let mut config = LogConfig::default();
    config.cleanup_policy.delete = false;
    config.cleanup_policy.compact = true;
    config.segment_bytes = log_append_bytes(params.dataset_mib);
    config
}

fn open(dir: &Path, config: LogConfig) -> Result<PartitionLog> {
    let (log, _) = PartitionLog::open(
        RealFs,
        dir,
        config,
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .with_context(|| format!("opening {}", dir.display()))?;
    Ok(log)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        std::fs::remove_dir_all(to)?;
    }
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        std::fs::copy(entry.path(), to.join(entry.file_name()))?;
    }
    Ok(())
}

/// The process's peak resident set (`VmHWM`), in MiB.
pub(crate) fn peak_rss_mib() -> Result<f64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("no VmHWM in /proc/self/status")?;
    Ok(kib / 1024.0)
}

pub(crate) fn run(params: &Params) -> Result<Vec<Figure>> {
    let (count, keys) = sizes(params);
    let source = params.dir.join("compact-source").join("bench-0");
    std::fs::create_dir_all(&source)?;
    {
        let log = open(&source, config(params))?;
        for base in (0..count).step_by(16) {
            log.append_as_follower(&keyed_batch(base, 16, keys)?)?;
        }
        log.roll()?;
        log.close()?;
    }
    let work = params.dir.join("compact").join("bench-0");
    let samples = measure(
        params,
        || {
            copy_dir(&source, &work)?;
            let log = open(&work, config(params))?;
            log.set_high_watermark(log.log_end_offset());
            let started = Instant::now();
            let report = log.clean(&CleanOptions::default())?;
            let elapsed = started.elapsed();
            // Read back: one record per key, each the key's last (offsets count - keys and up).
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
                kept == keys && lowest == count - keys && !report.aborted,
                "cleaning kept {kept} records from offset {lowest}, expected {keys} from {} ({report:?})",
                count - keys
            );
            log.close()?;
            Ok(elapsed)
        },
        ms,
    )?;
    std::fs::remove_dir_all(params.dir.join("compact"))?;
    std::fs::remove_dir_all(params.dir.join("compact-source"))?;
    let budget = CleanOptions::default().dedupe_buffer_bytes >> 20;
    Ok(vec![
        Figure {
            workload: "compact_1g".to_owned(),
            unit: "ms",
            samples,
            note: format!("PartitionLog::clean of {count} records, {keys} keys, dedupe buffer {budget} MiB"),
        },
        Figure {
            workload: "compact_1g_peak_memory".to_owned(),
            unit: "MiB",
            samples: vec![peak_rss_mib()?],
            note: "VmHWM of the compaction process (building the data included; mapped .log pages count)".to_owned(),
        },
    ])
}
