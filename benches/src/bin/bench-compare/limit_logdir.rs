//! `recover_logdir`'s limit: the least any recovery of that log directory does. Each partition's
//! `.log` read once in 256 KiB chunks with the CRC-32C of every batch checked (the segment
//! `recovery` limit's `read_and_check`), on 2 threads taking partitions from one shared counter
//! as `LogDir::open`'s recovery threads do. No record decode, no index, no producer state, no
//! snapshot or fsync: Kafka's recovery, too, reads and checks the CRC of every byte.

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::{Context, Result, ensure};

use crate::limit::read_and_check;
use crate::logdir_system::{PARTITIONS, Producers, build};
use crate::{Figure, Params, measure, ms};

/// The threads, as many as the workload's recovery threads.
const THREADS: usize = 2;

pub(crate) fn run(params: &Params) -> Result<Vec<Figure>> {
    Producers::ALL.iter().map(|p| run_one(params, *p)).collect()
}

/// The same reads of either directory: the producer ids change no byte the limit reads.
fn run_one(params: &Params, producers: Producers) -> Result<Figure> {
    let (root, _) = build(params, producers)?;
    let logs: Vec<PathBuf> = (0..PARTITIONS)
        .map(|p| {
            root.join(format!("bench-{p}"))
                .join("00000000000000000000.log")
        })
        .collect();
    let mut total = 0;
    for log in &logs {
        total += std::fs::metadata(log)
            .with_context(|| format!("{}", log.display()))?
            .len();
    }
    let samples = measure(
        params,
        || {
            let next = AtomicUsize::new(0);
            let started = Instant::now();
            let checked = std::thread::scope(|s| {
                let workers: Vec<_> = (0..THREADS)
                    .map(|_| {
                        s.spawn(|| -> Result<u64> {
                            let mut checked = 0;
                            while let Some(log) = logs.get(next.fetch_add(1, Ordering::Relaxed)) {
                                checked += read_and_check(log)?;
                            }
                            Ok(checked)
                        })
                    })
                    .collect();
                workers.into_iter().try_fold(0, |sum, w| {
                    let checked = w
                        .join()
                        .map_err(|_| anyhow::anyhow!("a reader panicked"))??;
                    Ok::<u64, anyhow::Error>(sum + checked)
                })
            })?;
            let elapsed = started.elapsed();
            ensure!(checked == total, "checked {checked} of {total} bytes");
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
            "{PARTITIONS} partitions' .log read once in 256 KiB chunks with the CRC-32C of every batch, on {THREADS} threads (no record decode, no index, no producer state, no fsync)"
        ),
    })
}
