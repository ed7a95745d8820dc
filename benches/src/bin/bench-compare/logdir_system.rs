//! `recover_logdir` on seglog: `LogDir::open` of a log directory of [`PARTITIONS`] partitions after
//! an unclean shutdown (no clean-shutdown marker, no recovery points: every segment recovered), with
//! Kafka's default of 2 recovery threads. Each partition holds `dataset_mib * 50 / 1024` MiB (50 MiB
//! in a full run) of 1 KiB x 16 batches. The answer: every partition open at its log end offset, every
//! segment recovered. `recover_logdir_idempotent` is the same directory written by an idempotent
//! producer per partition (Kafka's producers are idempotent by default since 3.0), so that recovery
//! also rebuilds producer state from every batch.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use seglog_log::{
    LoadOptions, LogConfig, LogDir, LogDirOptions, PartitionLog, RealFs, SystemClock,
};

use crate::{Figure, Params, SHAPES, idempotent_batches, kafka_batches, measure, ms};

/// Partitions in the log directory.
pub(crate) const PARTITIONS: usize = 20;

/// MiB per partition: 50 for the full 1 GiB dataset, at least 1.
pub(crate) fn partition_mib(params: &Params) -> u64 {
    (params.dataset_mib * 50 / 1024).max(1)
}

/// Back to the state of an unclean shutdown: the log directory's own files (checkpoints, the
/// marker) and the partitions' producer snapshots, which a close writes, removed.
pub(crate) fn make_unclean(root: &Path) -> Result<()> {
    for entry in std::fs::read_dir(root)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            for file in std::fs::read_dir(entry.path())? {
                let file = file?.path();
                if file.extension().is_some_and(|e| e == "snapshot") {
                    std::fs::remove_file(file)?;
                }
            }
        } else {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}

/// Who wrote the log directory's batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Producers {
    /// Batches without a producer id, appended as a follower (`recover_logdir`).
    None,
    /// One idempotent producer per partition, appended as a leader (`recover_logdir_idempotent`).
    Idempotent,
}

impl Producers {
    pub(crate) const ALL: [Producers; 2] = [Producers::None, Producers::Idempotent];

    pub(crate) fn workload(self) -> &'static str {
        match self {
            Producers::None => "recover_logdir",
            Producers::Idempotent => "recover_logdir_idempotent",
        }
    }
}

/// The log directory of the workload, written and closed: its path and each partition's log end
/// offset. The limit's side (`limit_logdir`) reads the same files.
pub(crate) fn build(params: &Params, producers: Producers) -> Result<(PathBuf, i64)> {
    let shape = SHAPES[0];
    let count = shape.batches_for(partition_mib(params));
    let root = params.dir.join("logdir").join(producers.workload());
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let mut end = 0;
    for p in 0..PARTITIONS {
        let (log, _) = PartitionLog::open(
            RealFs,
            &root.join(format!("bench-{p}")),
            LogConfig::default(),
            LoadOptions::default(),
            Arc::new(SystemClock),
        )?;
        match producers {
            Producers::None => {
                for (_, bytes) in &kafka_batches(shape, count)? {
                    log.append_as_follower(bytes)?;
                }
            }
            Producers::Idempotent => {
                for mut bytes in idempotent_batches(shape, count)? {
                    log.append_as_leader(&mut bytes)?;
                }
                ensure!(log.producer_id_count() == 1, "one producer expected");
            }
        }
        end = log.log_end_offset();
        log.close()?;
    }
    Ok((root, end))
}

pub(crate) fn run(params: &Params) -> Result<Vec<Figure>> {
    Producers::ALL.iter().map(|p| run_one(params, *p)).collect()
}

fn run_one(params: &Params, producers: Producers) -> Result<Figure> {
    let (root, end) = build(params, producers)?;
    let samples = measure(
        params,
        || {
            make_unclean(&root)?;
            // Kafka 4.x's num.recovery.threads.per.data.dir, seglog's default too.
            let options = LogDirOptions::default().with_recovery_threads(2);
            let started = Instant::now();
            let (dir, report) = LogDir::open(RealFs, &root, options)
                .with_context(|| format!("opening {}", root.display()))?;
            let elapsed = started.elapsed();
            let logs = dir.logs();
            ensure!(
                !report.had_clean_shutdown
                    && report.failed.is_empty()
                    && logs.len() == PARTITIONS
                    && logs.iter().all(|l| l.log_end_offset() == end)
                    && report.logs.values().all(|r| r.segments_scanned == 1),
                "opened {} partitions ({} failed), expected {PARTITIONS} ending at {end}, each scanned",
                logs.len(),
                report.failed.len()
            );
            drop(logs);
            dir.close()?;
            Ok(elapsed)
        },
        ms,
    )?;
    std::fs::remove_dir_all(&root)?;
    Ok(Figure {
        workload: producers.workload().to_owned(),
        unit: "ms",
        samples,
        note: format!(
            "LogDir::open after an unclean shutdown: {PARTITIONS} partitions of {} MiB{}, every segment recovered, 2 recovery threads",
            partition_mib(params),
            match producers {
                Producers::None => "",
                Producers::Idempotent => " each written by one idempotent producer",
            }
        ),
    })
}
