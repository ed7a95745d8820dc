//! [`plan_recovery`]: what [`LogDir::open`](crate::LogDir::open) would change in a log directory,
//! computed without changing anything: no lock, no marker taken, every file opened read-only.
//! The same inputs as the open (the clean-shutdown marker, the checkpoints, each partition's
//! `seglog.properties`) and the same planner, partition by partition.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;

use crate::checkpoint::{LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT};
use crate::clean_shutdown::CleanShutdownMarker;
use crate::error::{Error, Result};
use crate::log_dir::{LogDirOptions, read_partition_config};
use crate::partition::{LoadOptions, RecoveryPlan, plan_partition};
use crate::topic_partition::{DirKind, TopicPartition};

/// What opening a log directory would change.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogDirPlan {
    /// Whether the clean-shutdown marker is there (then only damaged active segments are
    /// recovered, unless the options say `recover_all`).
    pub had_clean_shutdown: bool,
    /// Partition directories pending deletion (`-delete`), removed by the open.
    pub deleted_dirs: Vec<PathBuf>,
    /// Each partition's plan.
    pub partitions: BTreeMap<TopicPartition, RecoveryPlan>,
}

/// Plans the open of the log directory `path` with `options` (its `recover_all`, `recover_from`,
/// `discard` and `default_config`), partition by partition, changing nothing.
pub fn plan_recovery<F: FileSystem>(
    fs: &F,
    path: &Path,
    options: &LogDirOptions,
) -> Result<LogDirPlan> {
    let marker = CleanShutdownMarker::new(fs.clone(), path).exists();
    let read = |name: &str| {
        OffsetCheckpoint::new(fs.clone(), path.join(name))
            .read()
            .unwrap_or_default()
    };
    let (recovery_points, had_clean_shutdown) = if options.recover_all {
        (BTreeMap::new(), false)
    } else {
        (read(RECOVERY_POINT_CHECKPOINT), marker)
    };
    let log_starts = read(LOG_START_OFFSET_CHECKPOINT);
    let mut plan = LogDirPlan {
        had_clean_shutdown: marker,
        ..LogDirPlan::default()
    };
    let mut entries = fs.read_dir(path).map_err(|e| Error::io(path, e))?;
    entries.sort();
    for entry in entries {
        let name = entry
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with('.') || !fs.is_dir(&entry) {
            continue;
        }
        match TopicPartition::parse_dir(&entry)? {
            (tp, DirKind::Live) => {
                let config = read_partition_config(fs, &entry, &options.default_config)?;
                let (recovery_point, had_clean_shutdown) = options.load_point(
                    &tp,
                    recovery_points.get(&tp).copied().unwrap_or(0),
                    had_clean_shutdown,
                );
                let load = LoadOptions {
                    recovery_point,
                    log_start_offset: log_starts.get(&tp).copied().unwrap_or(0),
                    had_clean_shutdown,
                    discard: options.discard,
                    ..LoadOptions::default()
                };
                let interval = u32::try_from(config.index_interval_bytes).unwrap_or(0);
                let max_index_size = u32::try_from(config.segment_index_bytes).unwrap_or(0);
                let planned = plan_partition(fs, &entry, interval, max_index_size, load)?;
                plan.partitions.insert(tp, planned);
            }
            (_, DirKind::Delete) => plan.deleted_dirs.push(entry),
            (_, DirKind::Future | DirKind::Stray) => {}
        }
    }
    Ok(plan)
}
