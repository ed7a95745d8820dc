//! `compact_1g` on seglog, in a process of its own (`--part compact`): a compacted partition of
//! `dataset_mib` MiB of 1 KiB records whose keys repeat ten times (90% of the records overwritten),
//! cleaned whole with `PartitionLog::clean` and Kafka's default dedupe buffer; the answer is read
//! back: one record per key, the last one written. The time is measured in this process; the peak
//! memory in fresh processes that only open a copy and clean it (`--part compact-clean`), so that
//! the data's building is not counted.

#![allow(
    clippy::field_reassign_with_default,
    reason = "the options structs are becoming #[non_exhaustive]: a field is set on a default, never in a literal"
)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use seglog_log::record::records;
use seglog_log::{
    CleanOptions, CleanReport, Isolation, LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock,
};

use serde_json::Value;

use crate::peak_memory::{self, Peak};
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

/// Where the source dataset is built, and where a round cleans its copy.
fn source_dir(params: &Params) -> PathBuf {
    params.dir.join("compact-source").join("bench-0")
}

fn work_dir(params: &Params) -> PathBuf {
    params.dir.join("compact").join("bench-0")
}

/// Builds the dataset (untimed) into [`source_dir`].
fn build(params: &Params) -> Result<()> {
    let (count, keys) = sizes(params);
    let source = source_dir(params);
    std::fs::create_dir_all(&source)?;
    let log = open(&source, config(params))?;
    for base in (0..count).step_by(16) {
        log.append_as_follower(&keyed_batch(base, 16, keys)?)?;
    }
    log.roll()?;
    log.close()?;
    Ok(())
}

/// One round: copies the source, opens the copy, and cleans it through `clean` (which times it or
/// measures its memory), then checks the answer: one record per key, each the key's last.
fn round<T>(
    params: &Params,
    clean: impl FnOnce(&PartitionLog) -> Result<(CleanReport, T)>,
) -> Result<T> {
    let (count, keys) = sizes(params);
    let work = work_dir(params);
    copy_dir(&source_dir(params), &work)?;
    let log = open(&work, config(params))?;
    log.set_high_watermark(log.log_end_offset());
    let (report, measured) = clean(&log)?;
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
    Ok(measured)
}

/// `--part compact-clean`: the fresh process of [`peak_in_fresh_process`]. It cleans one copy of
/// the source and prints the cleaning's [`Peak`] as JSON.
pub(crate) fn clean_child(params: &Params) -> Result<Value> {
    let peak = round(params, |log| {
        peak_memory::during(|| Ok(log.clean(&CleanOptions::default())?))
    })?;
    Ok(peak.to_json())
}

/// The peak memory of one cleaning of the dataset built in [`source_dir`] (by [`build`], with the
/// same `params`), measured in a fresh process of this binary that only copies the source, opens
/// it, cleans it (the part measured, see `peak_memory`), and reads the answer back.
pub(crate) fn peak_in_fresh_process(params: &Params) -> Result<Peak> {
    let exe = std::env::current_exe()?;
    let output = Command::new(&exe)
        .arg("seglog")
        .args(params.to_args("compact-clean"))
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("running {}", exe.display()))?;
    ensure!(
        output.status.success(),
        "the cleaning process failed: {}",
        output.status
    );
    let doc: Value =
        serde_json::from_slice(&output.stdout).context("the cleaning process's output")?;
    Peak::from_json(&doc)
}

pub(crate) fn run(params: &Params) -> Result<Vec<Figure>> {
    let (count, keys) = sizes(params);
    build(params)?;
    let samples = measure(
        params,
        || {
            round(params, |log| {
                let started = Instant::now();
                let report = log.clean(&CleanOptions::default())?;
                Ok((report, started.elapsed()))
            })
        },
        ms,
    )?;
    let peaks = (0..params.samples)
        .map(|_| peak_in_fresh_process(params))
        .collect::<Result<Vec<_>>>()?;
    std::fs::remove_dir_all(params.dir.join("compact"))?;
    std::fs::remove_dir_all(params.dir.join("compact-source"))?;
    let budget = CleanOptions::default().dedupe_buffer_bytes >> 20;
    let figure = |workload: &str, f: fn(&Peak) -> f64, note: &str| Figure {
        workload: workload.to_owned(),
        unit: "MiB",
        samples: peaks.iter().map(f).collect(),
        note: note.to_owned(),
    };
    Ok(vec![
        Figure {
            workload: "compact_1g".to_owned(),
            unit: "ms",
            samples,
            note: format!(
                "PartitionLog::clean of {count} records, {keys} keys, dedupe buffer {budget} MiB"
            ),
        },
        figure(
            "compact_1g_peak_memory",
            |p| p.hwm_mib,
            "VmHWM of a fresh process during PartitionLog::clean alone (reset when it starts; all resident pages, mapped files included)",
        ),
        figure(
            "compact_1g_peak_anon",
            |p| p.anon_mib,
            "largest RssAnon sampled every 2 ms during PartitionLog::clean (heap, stacks)",
        ),
        figure(
            "compact_1g_peak_file",
            |p| p.file_mib,
            "largest RssFile sampled every 2 ms during PartitionLog::clean (mapped file pages: the binary, indexes, .log)",
        ),
    ])
}
