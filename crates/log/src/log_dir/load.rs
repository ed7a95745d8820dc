//! Loading every partition log of a directory on `recovery_threads` threads, each with its own
//! `seglog.properties` or the directory's default configuration.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use parking_lot::Mutex;
use seglog_fs::{File, FileSystem, OpenMode};

use super::{LoadProgress, LogDirOptions, PARTITION_CONFIG_FILE};
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::partition::{LoadOptions, LoadReport, PartitionLog};
use crate::topic_partition::TopicPartition;

/// A partition's `seglog.properties`, or `default` when it has none.
pub(crate) fn read_partition_config<F: FileSystem>(
    fs: &F,
    dir: &Path,
    default: &LogConfig,
) -> Result<LogConfig> {
    let path = dir.join(PARTITION_CONFIG_FILE);
    let file = match fs.open(&path, OpenMode::ReadOnly) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(default.clone()),
        Err(e) => return Err(Error::io(&path, e)),
    };
    let len = usize::try_from(file.len().map_err(|e| Error::io(&path, e))?).unwrap_or(0);
    let mut buf = vec![0; len.min(1 << 20)];
    file.read_exact_at(&mut buf, 0)
        .map_err(|e| Error::io(&path, e))?;
    LogConfig::parse(&String::from_utf8_lossy(&buf))
}

type Loaded<F> = (TopicPartition, PartitionLog<F>, LoadReport);

pub(super) fn load_in_parallel<F: FileSystem>(
    fs: &F,
    partitions: &[(TopicPartition, PathBuf)],
    options: &LogDirOptions,
    recovery_points: &BTreeMap<TopicPartition, i64>,
    log_starts: &BTreeMap<TopicPartition, i64>,
    had_clean_shutdown: bool,
) -> Result<Vec<Loaded<F>>> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Result<Loaded<F>>>> = Mutex::new(Vec::new());
    let threads = options.recovery_threads.clamp(1, partitions.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((tp, dir)) = partitions.get(i) else {
                        return;
                    };
                    if failed.load(Ordering::Relaxed) {
                        return;
                    }
                    let load = LoadOptions {
                        recovery_point: recovery_points.get(tp).copied().unwrap_or(0),
                        log_start_offset: log_starts.get(tp).copied().unwrap_or(0),
                        had_clean_shutdown,
                        discard: options.discard,
                    };
                    let result = read_partition_config(fs, dir, &options.default_config).and_then(
                        |config| {
                            PartitionLog::open(
                                fs.clone(),
                                dir,
                                config,
                                load,
                                Arc::clone(&options.time),
                            )
                            .map(|(log, report)| (tp.clone(), log, report))
                        },
                    );
                    failed.fetch_or(result.is_err(), Ordering::Relaxed);
                    results.lock().push(result);
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if let Some(progress) = &options.progress {
                        progress(&LoadProgress {
                            total: partitions.len(),
                            done: finished,
                            partition: tp.clone(),
                        });
                    }
                }
            });
        }
    });
    results.into_inner().into_iter().collect()
}
