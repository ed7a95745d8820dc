//! Loading the partition logs of a directory on `recovery_threads` threads, each locked first and
//! then opened with its own `seglog.properties` or the directory's default configuration, and
//! the directory's shared limits. A partition that fails does not stop the others.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use parking_lot::Mutex;
use seglog_fs::{File, FileSystem, OpenMode};

use super::{LoadProgress, LogDirOptions, LogDirReport, PARTITION_CONFIG_FILE, PartitionFailure};
use crate::config::LogConfig;
use crate::error::{Error, Result};
use crate::partition::{LoadOptions, LoadReport, PartitionLog};
use crate::producer::DeferredSyncs;
use crate::segment_limits::SegmentLimits;
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
    LogConfig::parse(&String::from_utf8_lossy(&buf)).map_err(|e| Error::PartitionConfig {
        path,
        cause: e.to_string(),
    })
}

/// A loaded partition: its log, what loading did, and the lock on its directory.
pub(super) type Loaded<F> = (PartitionLog<F>, LoadReport, <F as FileSystem>::Lock);

/// Locks the partition directory `dir` (see [`FileSystem::try_lock_dir`]).
pub(super) fn lock_partition<F: FileSystem>(fs: &F, dir: &Path) -> Result<F::Lock> {
    fs.try_lock_dir(dir).map_err(|e| {
        if e.kind() == std::io::ErrorKind::WouldBlock {
            Error::PartitionLocked {
                path: dir.to_path_buf(),
            }
        } else {
            Error::io(dir, e)
        }
    })
}

/// Locks and loads one partition directory.
pub(super) fn load_one<F: FileSystem>(
    fs: &F,
    dir: &Path,
    default_config: &LogConfig,
    load: LoadOptions,
    time: &Arc<dyn crate::time::Time>,
    limits: &SegmentLimits,
) -> Result<Loaded<F>> {
    let (log, report, lock, syncs) =
        load_one_deferring(fs, dir, default_config, load, time, limits)?;
    syncs.sync(fs, dir)?;
    Ok((log, report, lock))
}

/// [`load_one`], with the syncs of the snapshots the open wrote still to make.
fn load_one_deferring<F: FileSystem>(
    fs: &F,
    dir: &Path,
    default_config: &LogConfig,
    load: LoadOptions,
    time: &Arc<dyn crate::time::Time>,
    limits: &SegmentLimits,
) -> Result<(PartitionLog<F>, LoadReport, F::Lock, DeferredSyncs)> {
    let lock = lock_partition(fs, dir)?;
    let config = read_partition_config(fs, dir, default_config)?;
    let (log, report, syncs) = PartitionLog::open_deferring_syncs(
        fs.clone(),
        dir,
        config,
        load,
        Arc::clone(time),
        limits,
    )?;
    Ok((log, report, lock, syncs))
}

/// Most threads that make the loaded partitions' deferred snapshot syncs at once: syncs made
/// together share the journal's commits, where one after another each waits for its own.
const SYNC_THREADS: usize = 32;

/// Makes the deferred snapshot syncs of every loaded partition (each one's snapshots, then its
/// directory), on up to [`SYNC_THREADS`] threads; a partition whose syncs fail fails to load.
fn sync_loaded<F: FileSystem>(
    fs: &F,
    partitions: &[(TopicPartition, PathBuf)],
    results: &mut [Option<Result<Loaded<F>>>],
    syncs: &[Option<DeferredSyncs>],
) {
    let work: Vec<usize> = (0..partitions.len())
        .filter(|i| {
            syncs
                .get(*i)
                .and_then(Option::as_ref)
                .is_some_and(|s| !s.is_empty())
        })
        .collect();
    let next = AtomicUsize::new(0);
    let failed: Mutex<Vec<(usize, Error)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..work.len().min(SYNC_THREADS) {
            s.spawn(|| {
                while let Some(&i) = work.get(next.fetch_add(1, Ordering::Relaxed)) {
                    let (Some((_, dir)), Some(Some(deferred))) = (partitions.get(i), syncs.get(i))
                    else {
                        continue;
                    };
                    if let Err(e) = deferred.sync(fs, dir) {
                        failed.lock().push((i, e));
                    }
                }
            });
        }
    });
    for (i, e) in failed.into_inner() {
        if let Some(slot) = results.get_mut(i) {
            *slot = Some(Err(e));
        }
    }
}

/// Loads every partition of `partitions`; each one's result, in the order given.
pub(super) fn load_in_parallel<F: FileSystem>(
    fs: &F,
    partitions: &[(TopicPartition, PathBuf)],
    options: &LogDirOptions,
    recovery_points: &BTreeMap<TopicPartition, i64>,
    log_starts: &BTreeMap<TopicPartition, i64>,
    high_watermarks: &BTreeMap<TopicPartition, i64>,
    had_clean_shutdown: bool,
) -> Vec<(TopicPartition, PathBuf, Result<Loaded<F>>)> {
    let next = AtomicUsize::new(0);
    let done = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Result<Loaded<F>>>>> =
        Mutex::new(partitions.iter().map(|_| None).collect());
    let syncs: Mutex<Vec<Option<DeferredSyncs>>> =
        Mutex::new(partitions.iter().map(|_| None).collect());
    let threads = options.recovery_threads.clamp(1, partitions.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((tp, dir)) = partitions.get(i) else {
                        return;
                    };
                    let (recovery_point, had_clean_shutdown) = options.load_point(
                        tp,
                        recovery_points.get(tp).copied().unwrap_or(0),
                        had_clean_shutdown,
                    );
                    let load = LoadOptions {
                        recovery_point,
                        log_start_offset: log_starts.get(tp).copied().unwrap_or(0),
                        had_clean_shutdown,
                        discard: options.discard,
                        topic_id: None,
                        high_watermark: high_watermarks.get(tp).copied(),
                    };
                    let result = load_one_deferring(
                        fs,
                        dir,
                        &options.default_config,
                        load,
                        &options.time,
                        &options.limits,
                    )
                    .map(|(log, report, lock, deferred)| {
                        if let Some(slot) = syncs.lock().get_mut(i) {
                            *slot = Some(deferred);
                        }
                        (log, report, lock)
                    });
                    if let Some(slot) = results.lock().get_mut(i) {
                        *slot = Some(result);
                    }
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
    // The snapshots' syncs, before any log is handed out.
    let mut results = results.into_inner();
    sync_loaded(fs, partitions, &mut results, &syncs.into_inner());
    partitions
        .iter()
        .zip(results)
        .filter_map(|((tp, dir), result)| Some((tp.clone(), dir.clone(), result?)))
        .collect()
}

/// The loaded logs with their partition locks, and the partitions that failed to load (their
/// directory and error), each failure also in `report`.
#[expect(
    clippy::type_complexity,
    reason = "the three maps LogDir keeps, built in one pass"
)]
pub(super) fn sort_loaded<F: FileSystem>(
    loaded: Vec<(TopicPartition, PathBuf, Result<Loaded<F>>)>,
    report: &mut LogDirReport,
) -> (
    BTreeMap<TopicPartition, PartitionLog<F>>,
    BTreeMap<TopicPartition, F::Lock>,
    BTreeMap<TopicPartition, (PathBuf, String)>,
) {
    let mut logs = BTreeMap::new();
    let mut locks = BTreeMap::new();
    let mut unavailable = BTreeMap::new();
    for (tp, dir, result) in loaded {
        match result {
            Ok((log, load, partition_lock)) => {
                report.logs.insert(tp.clone(), load);
                logs.insert(tp.clone(), log);
                locks.insert(tp, partition_lock);
            }
            Err(error) => {
                unavailable.insert(tp.clone(), (dir.clone(), error.to_string()));
                report.failed.push(PartitionFailure {
                    topic_partition: tp,
                    path: dir,
                    error,
                });
            }
        }
    }
    (logs, locks, unavailable)
}
