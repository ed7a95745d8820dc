//! A partition directory's entries, classified by name: the one place that says which entry is a
//! segment's `.log` or index, the leftover of an interrupted deletion, cleaning or swap, a
//! checkpoint, the lock or something else. The loader and [`inspect`](crate::inspect) both list a
//! partition through it. Classifying reads names only, so listing a partition of many segments
//! costs one directory read and no `stat` per entry.

use std::io;
use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::naming;

/// What a directory entry is, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum FileKind {
    /// `<offset>.log`: a segment's record batches.
    Log,
    /// `<offset>.index`: a segment's offset index.
    OffsetIndex,
    /// `<offset>.timeindex`: a segment's time index.
    TimeIndex,
    /// `<offset>.txnindex`: a segment's aborted-transaction index.
    TxnIndex,
    /// `*.deleted`: a file scheduled for deletion.
    Deleted,
    /// `*.cleaned`: the uncommitted output of a cleaning or split.
    Cleaned,
    /// `*.swap`: a committed replacement not yet renamed into place.
    Swap,
    /// A checkpoint or metadata file: `*-checkpoint`, `*.checkpoint`, `partition.metadata`.
    Checkpoint,
    /// The `.lock` of a log directory.
    Lock,
    /// Anything else (including a directory).
    Unknown,
}

impl FileKind {
    /// Classifies an entry's file name. The leftover suffixes win: `x.log.deleted` is a
    /// [`FileKind::Deleted`].
    pub fn of(name: &str) -> Self {
        let suffixes = [
            (naming::DELETED_FILE_SUFFIX, Self::Deleted),
            (naming::CLEANED_FILE_SUFFIX, Self::Cleaned),
            (naming::SWAP_FILE_SUFFIX, Self::Swap),
            (naming::LOG_FILE_SUFFIX, Self::Log),
            (naming::INDEX_FILE_SUFFIX, Self::OffsetIndex),
            (naming::TIME_INDEX_FILE_SUFFIX, Self::TimeIndex),
            (naming::TXN_INDEX_FILE_SUFFIX, Self::TxnIndex),
        ];
        if let Some((_, kind)) = suffixes.iter().find(|(s, _)| name.ends_with(s)) {
            return *kind;
        }
        if name == ".lock" {
            Self::Lock
        } else if name.ends_with("-checkpoint")
            || name.ends_with(".checkpoint")
            || name == "partition.metadata"
        {
            Self::Checkpoint
        } else {
            Self::Unknown
        }
    }

    /// Whether this is one of a segment's index files (offset, time or transaction index).
    pub fn is_index(self) -> bool {
        matches!(self, Self::OffsetIndex | Self::TimeIndex | Self::TxnIndex)
    }

    /// Whether this is the leftover of an interrupted deletion, cleaning or swap.
    pub fn is_leftover(self) -> bool {
        matches!(self, Self::Deleted | Self::Cleaned | Self::Swap)
    }
}

/// One entry of a partition directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFile {
    path: PathBuf,
    kind: FileKind,
    base_offset: Option<i64>,
}

impl PartitionFile {
    /// Classifies `path` by its file name.
    pub fn new(path: PathBuf) -> Self {
        let name = file_name(&path);
        let kind = FileKind::of(name);
        let base_offset = naming::offset_from_file_name(name);
        Self {
            path,
            kind,
            base_offset,
        }
    }

    /// The entry's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entry's path, owned.
    pub fn into_path(self) -> PathBuf {
        self.path
    }

    /// The entry's file name (empty if it is not UTF-8).
    pub fn name(&self) -> &str {
        file_name(&self.path)
    }

    /// What the entry is.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// Kafka's `offsetFromFileName`: the digits before the first `.`, if they parse.
    pub fn base_offset(&self) -> Option<i64> {
        self.base_offset
    }

    /// The base offset if this is a segment's `.log`.
    pub fn log_base_offset(&self) -> Option<i64> {
        self.base_offset.filter(|_| self.kind == FileKind::Log)
    }

    /// Whether the entry can be a segment file: segment files always have a dot in their name,
    /// so an entry without one is a directory or a file that no loader step touches.
    pub fn may_be_segment_file(&self) -> bool {
        self.name().contains('.')
    }
}

/// A path's file name, or `""`.
pub(crate) fn file_name(path: &Path) -> &str {
    path.file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default()
}

/// Lists the entries directly inside the partition directory `dir`, sorted by path, classified.
pub(crate) fn list<F: FileSystem>(fs: &F, dir: &Path) -> io::Result<Vec<PartitionFile>> {
    Ok(fs
        .read_dir(dir)?
        .into_iter()
        .map(PartitionFile::new)
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_classified_as_kafka_names_them() {
        let cases = [
            ("00000000000000000000.log", FileKind::Log),
            ("00000000000000000000.index", FileKind::OffsetIndex),
            ("00000000000000000000.timeindex", FileKind::TimeIndex),
            ("00000000000000000000.txnindex", FileKind::TxnIndex),
            ("00000000000000000000.log.deleted", FileKind::Deleted),
            ("00000000000000000000.index.cleaned", FileKind::Cleaned),
            ("00000000000000000000.log.swap", FileKind::Swap),
            ("leader-epoch-checkpoint", FileKind::Checkpoint),
            (
                "00000000000000000010-0000000001.checkpoint",
                FileKind::Checkpoint,
            ),
            ("partition.metadata", FileKind::Checkpoint),
            (".lock", FileKind::Lock),
            ("notes.txt", FileKind::Unknown),
        ];
        for (name, kind) in cases {
            assert_eq!(FileKind::of(name), kind, "{name}");
        }
        let file = PartitionFile::new(PathBuf::from("/d/00000000000000000042.log"));
        assert_eq!(file.log_base_offset(), Some(42));
        let index = PartitionFile::new(PathBuf::from("/d/00000000000000000042.index"));
        assert_eq!(
            (index.base_offset(), index.log_base_offset()),
            (Some(42), None)
        );
        assert!(!PartitionFile::new(PathBuf::from("/d/sub")).may_be_segment_file());
    }
}
