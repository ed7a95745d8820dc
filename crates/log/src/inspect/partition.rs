//! A partition directory opened for inspection: its files listed once, its segments, its log
//! start offset, and its segment files opened read-only.

use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_mmap_index::{OffsetIndex, TimeIndex};
use seglog_segment::naming;

use super::index::{open_offset_index, open_time_index};
use super::segment_log::SegmentLog;
use crate::checkpoint::{LOG_START_OFFSET_CHECKPOINT, OffsetCheckpoint};
use crate::error::{Error, Result};
use crate::listing::{self, PartitionFile};
use crate::topic_partition::TopicPartition;

/// One segment of a partition directory: its base offset and its `.log`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentEntry {
    /// The base offset, from the file name.
    pub base_offset: i64,
    /// The `.log` file.
    pub log: PathBuf,
}

/// A partition directory (`topic-N`), read-only: opening it lists its files and takes no lock;
/// nothing it does writes, so it can follow a log that another process is writing.
#[derive(Debug, Clone)]
pub struct PartitionView<F: FileSystem> {
    fs: F,
    dir: PathBuf,
    tp: TopicPartition,
    files: Vec<PartitionFile>,
}

impl<F: FileSystem> PartitionView<F> {
    /// Lists the partition directory `dir`, whose name must be `topic-N`.
    pub fn open(fs: F, dir: &Path) -> Result<Self> {
        let (tp, _) = TopicPartition::parse_dir(dir)?;
        let files = listing::list(&fs, dir).map_err(|source| Error::Unreadable {
            path: dir.to_path_buf(),
            what: "cannot list",
            source,
        })?;
        Ok(Self {
            fs,
            dir: dir.to_path_buf(),
            tp,
            files,
        })
    }

    /// The file system it reads through.
    pub fn fs(&self) -> &F {
        &self.fs
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The topic-partition its name gives.
    pub fn topic_partition(&self) -> &TopicPartition {
        &self.tp
    }

    /// Every entry of the directory as listed when it was opened, sorted by path: segment
    /// files, leftovers, checkpoints and unknown files alike.
    pub fn files(&self) -> &[PartitionFile] {
        &self.files
    }

    /// The segments (every `<offset>.log`), oldest first.
    pub fn segments(&self) -> Vec<SegmentEntry> {
        let mut out: Vec<SegmentEntry> = self
            .files
            .iter()
            .filter_map(|f| {
                f.log_base_offset().map(|base_offset| SegmentEntry {
                    base_offset,
                    log: f.path().to_path_buf(),
                })
            })
            .collect();
        out.sort_by_key(|s| s.base_offset);
        out
    }

    /// The log start offset: the one checkpointed in the log directory above if it is past the
    /// first segment, else the first segment's base offset (0 without segments).
    pub fn log_start_offset(&self) -> i64 {
        let first = self.segments().first().map_or(0, |s| s.base_offset);
        let checkpointed = self.dir.parent().and_then(|log_dir| {
            OffsetCheckpoint::new(self.fs.clone(), log_dir.join(LOG_START_OFFSET_CHECKPOINT))
                .read()
                .ok()?
                .get(&self.tp)
                .copied()
        });
        checkpointed.map_or(first, |c| c.max(first))
    }

    /// Opens a segment's `.log` read-only.
    pub fn open_log(&self, segment: &SegmentEntry) -> Result<SegmentLog<F>> {
        SegmentLog::open(&self.fs, &segment.log).map_err(|source| Error::Unreadable {
            path: segment.log.clone(),
            what: "cannot open",
            source,
        })
    }

    /// The path of the offset index of the segment based at `base_offset`.
    pub fn offset_index_path(&self, base_offset: i64) -> PathBuf {
        naming::offset_index_file(&self.dir, base_offset, "")
    }

    /// The path of the time index of the segment based at `base_offset`.
    pub fn time_index_path(&self, base_offset: i64) -> PathBuf {
        naming::time_index_file(&self.dir, base_offset, "")
    }

    /// Opens the offset index of the segment based at `base_offset` read-only.
    pub fn offset_index(&self, base_offset: i64) -> Result<OffsetIndex> {
        open_offset_index(&self.fs, &self.offset_index_path(base_offset), base_offset)
    }

    /// Opens the time index of the segment based at `base_offset` read-only.
    pub fn time_index(&self, base_offset: i64) -> Result<TimeIndex> {
        open_time_index(&self.fs, &self.time_index_path(base_offset), base_offset)
    }
}
