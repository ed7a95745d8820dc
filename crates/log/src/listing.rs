//! A partition directory's entries, classified by name: the one place that says which entry is a
//! segment's `.log` or index, the leftover of an interrupted deletion, cleaning or swap, a
//! checkpoint, the lock, a stray entry that only looks like a segment file, or something else.
//! The loader and [`inspect`](crate::inspect) both list a partition through it. Classifying reads
//! names and the kind `readdir` gives, so listing a partition of many segments costs one
//! directory read and no `stat` per entry. It also classifies a log directory's entries
//! ([`log_dir_entries`]): partition directories and the directories that are not one.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::naming;

use crate::producer::SnapshotFile;
use crate::topic_partition::{DirKind, TopicPartition};

/// The quarantine: a directory inside the partition directory, where recovery sets aside what it
/// drops. Kafka's loader reads only regular files of a partition directory (`LogLoader` filters
/// on `isFile`), so a broker starts with it present; a directory of its own in the log directory
/// would not parse as `topic-partition` and would take the whole log directory offline.
pub const QUARANTINE_DIR: &str = "seglog-quarantine";

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
    /// `<offset>.snapshot`: a producer-state snapshot (Kafka's `ProducerStateManager`).
    Snapshot,
    /// `<offset>.snapshot.tmp`: a snapshot whose write did not finish (seglog writes snapshots
    /// to a temporary file renamed into place); recovery removes it.
    SnapshotTemp,
    /// The `.lock` of a log directory.
    Lock,
    /// Named like a segment file (`.log`, an index, or one of them `.cleaned` or `.swap`) but
    /// not one: the part before the first `.` is not a base offset of exactly 20 digits
    /// (`123.log`, `abc.index`, `00000000000000000000.x.log`). No loader step reads it; recovery
    /// sets it aside.
    Stray,
    /// Anything else.
    Unknown,
}

impl FileKind {
    /// Classifies an entry's file name. The leftover suffixes win: `x.log.deleted` is a
    /// [`FileKind::Deleted`].
    pub fn of(name: &str) -> Self {
        let kind = Self::of_suffix(name);
        if matches!(kind, Self::Cleaned | Self::Swap) || kind.is_index() || kind == Self::Log {
            // Kafka's `offsetFromFileName` parses what precedes the first `.` and opens the
            // segment under its own 20-digit name, so `123.log` would load as an empty segment
            // 123 beside it, and `abc.log` would fail the whole load: only the exact names are
            // segment files.
            if !is_segment_file_name(name) {
                return Self::Stray;
            }
        }
        kind
    }

    fn of_suffix(name: &str) -> Self {
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
        if name.ends_with(".snapshot") {
            return Self::Snapshot;
        }
        if name.ends_with(".snapshot.tmp") {
            return Self::SnapshotTemp;
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

/// Whether `name` is `<20 digits>` then `.log`, `.index`, `.timeindex` or `.txnindex`, then
/// optionally `.cleaned` or `.swap`, the digits a base offset that fits in an `i64`.
fn is_segment_file_name(name: &str) -> bool {
    let Some((digits, rest)) = name.split_at_checked(20) else {
        return false;
    };
    if !digits.bytes().all(|b| b.is_ascii_digit()) || digits.parse::<i64>().is_err() {
        return false;
    }
    let rest = rest
        .strip_suffix(naming::CLEANED_FILE_SUFFIX)
        .or_else(|| rest.strip_suffix(naming::SWAP_FILE_SUFFIX))
        .unwrap_or(rest);
    [
        naming::LOG_FILE_SUFFIX,
        naming::INDEX_FILE_SUFFIX,
        naming::TIME_INDEX_FILE_SUFFIX,
        naming::TXN_INDEX_FILE_SUFFIX,
    ]
    .contains(&rest)
}

/// One entry of a partition directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartitionFile {
    path: PathBuf,
    /// Where the file name lies in `path`'s bytes (the name is asked for often).
    name_at: std::ops::Range<usize>,
    kind: FileKind,
    base_offset: Option<i64>,
    is_dir: bool,
}

impl PartitionFile {
    /// Classifies `path` by its file name, as a file.
    pub fn new(path: PathBuf) -> Self {
        Self::with_kind(path, false)
    }

    /// Classifies `path` by its file name and whether it is a directory.
    pub fn with_kind(path: PathBuf, is_dir: bool) -> Self {
        let name = file_name(&path);
        let kind = FileKind::of(name);
        let base_offset = if kind == FileKind::Stray || is_dir {
            None
        } else {
            naming::offset_from_file_name(name)
        };
        // `name` borrows from `path` unless empty.
        let start = name
            .as_ptr()
            .addr()
            .wrapping_sub(path.as_os_str().as_encoded_bytes().as_ptr().addr());
        let name_at = if name.is_empty() {
            0..0
        } else {
            start..start + name.len()
        };
        Self {
            path,
            name_at,
            kind,
            base_offset,
            is_dir,
        }
    }

    /// Whether the entry is a directory (or a symlink to one).
    pub fn is_dir(&self) -> bool {
        self.is_dir
    }

    /// Why the entry is stray, if it is: it looks like a segment or metadata file, but no
    /// loader step may treat it as one. Recovery sets it aside in the quarantine
    /// ([`PartitionFile::is_set_aside`]), or deletes it with `--discard`; never loads it.
    pub fn stray_reason(&self) -> Option<&'static str> {
        if !self.is_dir && self.name() == QUARANTINE_DIR {
            Some(
                "a file where recovery's quarantine directory goes: recover cannot set data aside until it is moved away",
            )
        } else if self.is_dir && FileKind::of(self.name()) != FileKind::Unknown {
            Some(
                "a directory with the name of a segment or metadata file (Kafka's loader skips it, and a file of that name cannot be made)",
            )
        } else if self.kind == FileKind::Stray {
            Some(
                "named like a segment file, but its base offset is not 20 digits (Kafka never reads its bytes: it loads an empty segment by the number in its place, or fails on it)",
            )
        } else {
            None
        }
    }

    /// Whether recovery moves the entry to the quarantine (or deletes it with `--discard`): every
    /// stray entry but a file where the quarantine itself goes, which recovery cannot move into it.
    pub fn is_set_aside(&self) -> bool {
        (self.is_dir || self.name() != QUARANTINE_DIR) && self.stray_reason().is_some()
    }

    /// Whether the entry is the partition's quarantine directory ([`QUARANTINE_DIR`]): ours, and
    /// no loader step (seglog's or Kafka's) reads it.
    pub fn is_quarantine(&self) -> bool {
        self.is_dir && self.name() == QUARANTINE_DIR
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
        let bytes = self.path.as_os_str().as_encoded_bytes();
        bytes
            .get(self.name_at.clone())
            .and_then(|b| std::str::from_utf8(b).ok())
            .unwrap_or_default()
    }

    /// What the entry is.
    pub fn kind(&self) -> FileKind {
        self.kind
    }

    /// Kafka's `offsetFromFileName`: the digits before the first `.`, if they parse (`None` for
    /// a stray entry or a directory).
    pub fn base_offset(&self) -> Option<i64> {
        self.base_offset
    }

    /// The base offset if this is a segment's `.log`.
    pub fn log_base_offset(&self) -> Option<i64> {
        self.base_offset.filter(|_| self.kind == FileKind::Log)
    }

    /// Whether the entry can be a segment file: never a directory or a [`FileKind::Stray`];
    /// segment files always have a dot in their name, so an entry without one is a file that no
    /// loader step touches.
    pub fn may_be_segment_file(&self) -> bool {
        !self.is_dir && self.kind != FileKind::Stray && self.name().contains('.')
    }
}

pub(crate) use seglog_segment::naming::file_name;

/// Which index files a segment's `.log` has beside it, from a listing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct ListedSegment {
    pub(crate) index: bool,
    pub(crate) time_index: bool,
    pub(crate) txn_index: bool,
}

/// What the loader reads of a partition's listing: its segments and its producer snapshots.
#[derive(Debug, Default)]
pub(crate) struct LoadListing {
    pub(crate) segments: BTreeMap<i64, ListedSegment>,
    pub(crate) snapshots: Option<Vec<SnapshotFile>>,
}

impl LoadListing {
    pub(crate) fn of(files: &[PartitionFile]) -> Self {
        Self {
            segments: listed_segments(files),
            snapshots: listed_snapshots(files),
        }
    }
}

/// The producer snapshots of a listing (regular `<offset>.snapshot` files), as
/// [`list_snapshot_files`](crate::producer::list_snapshot_files) gives them; `None` if a
/// snapshot's name gives no offset (the producer state lists them itself, and fails on it).
fn listed_snapshots(files: &[PartitionFile]) -> Option<Vec<SnapshotFile>> {
    let mut snapshots = Vec::new();
    for file in files {
        if file.is_dir() || file.kind() != FileKind::Snapshot {
            continue;
        }
        snapshots.push(SnapshotFile {
            offset: file.base_offset()?,
            path: file.path().to_path_buf(),
        });
    }
    snapshots.sort_by_key(|s| s.offset);
    Some(snapshots)
}

/// The segments of a listing: each `<offset>.log`'s base offset with the index files listed
/// beside it (no suffix), so that opening a segment needs no `stat` to know them.
fn listed_segments(files: &[PartitionFile]) -> BTreeMap<i64, ListedSegment> {
    let mut segments: BTreeMap<i64, ListedSegment> = files
        .iter()
        .filter_map(PartitionFile::log_base_offset)
        .map(|base| (base, ListedSegment::default()))
        .collect();
    for file in files {
        let (Some(base), false) = (file.base_offset(), file.is_dir()) else {
            continue;
        };
        let Some(listed) = segments.get_mut(&base) else {
            continue;
        };
        match file.kind() {
            FileKind::OffsetIndex => listed.index = true,
            FileKind::TimeIndex => listed.time_index = true,
            FileKind::TxnIndex => listed.txn_index = true,
            _ => {}
        }
    }
    segments
}

/// Lists the entries directly inside the partition directory `dir`, sorted by path, classified.
pub(crate) fn list<F: FileSystem>(fs: &F, dir: &Path) -> io::Result<Vec<PartitionFile>> {
    Ok(fs
        .read_dir_kinds(dir)?
        .into_iter()
        .map(|e| PartitionFile::with_kind(e.path, e.is_dir))
        .collect())
}

/// What a directory inside a log directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LogDirEntry {
    /// A partition directory (`topic-N`, or one with a `-delete`, `-future` or `-stray` suffix).
    Partition(TopicPartition, DirKind),
    /// A directory whose name is not a partition's (`lost+found`, `orders`): Kafka refuses the
    /// whole log directory; seglog reports it and leaves it alone.
    NotAPartition,
}

/// Directories Kafka itself keeps in a log directory that are not partitions.
const KAFKA_DIRS: [&str; 1] = ["remote-log-index-cache"];

/// The directories directly inside the log directory `dir`, sorted by path, classified; files
/// (`.lock`, checkpoints, `meta.properties`, anything else) are not listed, as Kafka loads none.
pub(crate) fn log_dir_entries<F: FileSystem>(
    fs: &F,
    dir: &Path,
) -> io::Result<Vec<(PathBuf, LogDirEntry)>> {
    Ok(fs
        .read_dir_kinds(dir)?
        .into_iter()
        .filter(|e| e.is_dir && !KAFKA_DIRS.contains(&file_name(&e.path)))
        .map(|e| {
            let kind = match TopicPartition::parse_dir(&e.path) {
                Ok((tp, kind)) => LogDirEntry::Partition(tp, kind),
                Err(_) => LogDirEntry::NotAPartition,
            };
            (e.path, kind)
        })
        .collect())
}

/// The directories in the log directory `dir` that are not partitions' (none if it cannot be
/// listed).
pub(crate) fn not_partition_dirs<F: FileSystem>(fs: &F, dir: &Path) -> Vec<PathBuf> {
    log_dir_entries(fs, dir)
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, kind)| *kind == LogDirEntry::NotAPartition)
        .map(|(path, _)| path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listed_files_name_is_its_paths_file_name() {
        for path in ["t-0/00000000000000000000.log", "a/b/", "a/..", "", "a//b"] {
            let path = Path::new(path);
            let expected = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let entry = PartitionFile::new(path.to_path_buf());
            assert_eq!(entry.name(), expected, "{}", path.display());
        }
    }

    #[test]
    fn a_listing_gives_each_log_its_index_files_and_the_snapshots() {
        let dir = Path::new("t-0");
        let files: Vec<PartitionFile> = [
            "00000000000000000000.index",
            "00000000000000000000.log",
            "00000000000000000000.timeindex",
            "00000000000000000016.log",
            "00000000000000000016.txnindex",
            "00000000000000000016.index.swap",
            "00000000000000000032.index",
            "00000000000000000016.snapshot",
            "00000000000000000032.snapshot",
        ]
        .iter()
        .map(|n| PartitionFile::new(dir.join(n)))
        .collect();
        let listing = LoadListing::of(&files);
        let seg = |index, time_index, txn_index| ListedSegment {
            index,
            time_index,
            txn_index,
        };
        assert_eq!(
            listing.segments.into_iter().collect::<Vec<_>>(),
            [(0, seg(true, true, false)), (16, seg(false, false, true))]
        );
        let snapshots = listing.snapshots.unwrap();
        let offsets: Vec<i64> = snapshots.iter().map(|s| s.offset).collect();
        assert_eq!(offsets, [16, 32]);
        // A snapshot whose name gives no offset: the producer state lists (and fails) itself.
        let odd = [PartitionFile::new(dir.join("-5.snapshot"))];
        assert!(LoadListing::of(&odd).snapshots.is_none());
    }

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

    #[test]
    fn only_exact_segment_names_are_segment_files() {
        for stray in [
            "123.log",
            "abc.log",
            ".log",
            "0000000000000000000.log",
            "000000000000000000000.log",
            "99999999999999999999.log",
            "00000000000000000000.x.log",
            "123.index",
            "123.timeindex.swap",
            "abc.cleaned",
            "leader-epoch-checkpoint.swap",
        ] {
            let file = PartitionFile::new(PathBuf::from("/d").join(stray));
            assert_eq!(file.kind(), FileKind::Stray, "{stray}");
            assert!(file.stray_reason().is_some() && !file.may_be_segment_file());
            assert!(file.is_set_aside());
            assert_eq!((file.base_offset(), file.log_base_offset()), (None, None));
        }
        // Kafka deletes every `.deleted` file whatever its name.
        assert_eq!(FileKind::of("123.log.deleted"), FileKind::Deleted);
        assert_eq!(
            FileKind::of("09223372036854775807.log.swap"),
            FileKind::Swap
        );
        let dir = PartitionFile::with_kind(PathBuf::from("/d/00000000000000000000.log"), true);
        assert!(dir.stray_reason().is_some() && !dir.may_be_segment_file());
        assert!(dir.is_set_aside());
        assert_eq!(dir.log_base_offset(), None);
        let other = PartitionFile::with_kind(PathBuf::from("/d/notes"), true);
        assert!(other.stray_reason().is_none() && !other.may_be_segment_file());
        assert!(!other.is_set_aside());
        let quarantine = PartitionFile::with_kind(PathBuf::from("/d").join(QUARANTINE_DIR), true);
        assert!(quarantine.is_quarantine() && quarantine.stray_reason().is_none());
        assert!(!quarantine.is_set_aside());
        assert!(!quarantine.may_be_segment_file());
        let in_its_place = PartitionFile::new(PathBuf::from("/d").join(QUARANTINE_DIR));
        assert!(!in_its_place.is_quarantine() && in_its_place.stray_reason().is_some());
        assert!(!in_its_place.is_set_aside());
    }
}
