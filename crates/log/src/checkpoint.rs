//! Kafka's text checkpoint files (`server-common CheckpointFile`, `OffsetCheckpointFile`):
//! `recovery-point-offset-checkpoint`, `log-start-offset-checkpoint`, `cleaner-offset-checkpoint` and
//! `replication-offset-checkpoint`; and a partition's `leader-epoch-checkpoint`
//! (`LeaderEpochCheckpointFile`), the same framing with `epoch start-offset` lines.
//!
//! ```text
//! 0                 version
//! 2                 entry count
//! orders 0 1500     topic partition offset
//! orders 1 1499
//! ```
//!
//! A write goes to `<file>.tmp`, is fsynced, atomically renamed over the file, and the directory is
//! fsynced, so a crash leaves either the old or the new checkpoint, never a torn one.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use seglog_fs::{File, FileSystem, OpenMode};

use crate::error::{Error, Result};
use crate::topic_partition::TopicPartition;

/// The version of every offset checkpoint file.
pub const OFFSET_CHECKPOINT_VERSION: i32 = 0;

/// The recovery points of a log directory.
pub const RECOVERY_POINT_CHECKPOINT: &str = "recovery-point-offset-checkpoint";
/// The log start offsets of a log directory.
pub const LOG_START_OFFSET_CHECKPOINT: &str = "log-start-offset-checkpoint";
/// The cleaner's first dirty offsets.
pub const CLEANER_OFFSET_CHECKPOINT: &str = "cleaner-offset-checkpoint";
/// The high watermarks (written by Kafka's `ReplicaManager`).
pub const REPLICATION_OFFSET_CHECKPOINT: &str = "replication-offset-checkpoint";

/// The version of a `leader-epoch-checkpoint` file.
pub const LEADER_EPOCH_CHECKPOINT_VERSION: i32 = 0;

/// A partition's leader epochs, in the partition directory.
pub const LEADER_EPOCH_CHECKPOINT: &str = "leader-epoch-checkpoint";

/// One entry of a leader epoch cache: the first offset written under `epoch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct EpochEntry {
    /// The leader epoch.
    pub epoch: i32,
    /// The first offset of that epoch.
    pub start_offset: i64,
}

/// A partition's `leader-epoch-checkpoint` (Kafka's `LeaderEpochCheckpointFile`): version 0, the
/// entry count, then one `epoch start-offset` line per entry, epochs and offsets increasing.
///
/// ```text
/// 0
/// 2
/// 0 0
/// 3 1500
/// ```
///
/// Kafka reads it when it loads the partition and trusts it for fetches from followers
/// (`OffsetsForLeaderEpoch`) and for truncation. seglog neither keeps nor needs a leader epoch
/// cache; this type lets a tool that writes batches into a broker's partition keep the broker's
/// cache true (see docs/kafka-compat.md). Writes are atomic as for [`OffsetCheckpoint`].
#[derive(Debug, Clone)]
pub struct LeaderEpochCheckpoint<F: FileSystem> {
    fs: F,
    path: PathBuf,
}

impl<F: FileSystem> LeaderEpochCheckpoint<F> {
    /// The checkpoint of the partition directory `partition_dir`.
    pub fn in_dir(fs: F, partition_dir: &Path) -> Self {
        Self {
            fs,
            path: partition_dir.join(LEADER_EPOCH_CHECKPOINT),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the entries. A missing or empty file is no entries, as in Kafka. Entries whose
    /// epochs or start offsets go backwards are an error naming the line (Kafka's cache would
    /// drop them on load; a checkpoint like that was not written by Kafka or by us).
    pub fn read(&self) -> Result<Vec<EpochEntry>> {
        let bytes = match self.fs.open(&self.path, OpenMode::ReadOnly) {
            Ok(file) => read_all(&file).map_err(|e| Error::io(&self.path, e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let text = String::from_utf8(bytes).map_err(|e| Error::Checkpoint {
            path: self.path.clone(),
            line: 0,
            problem: format!("not UTF-8: {e}"),
        })?;
        parse_epochs(&self.path, &text)
    }

    /// Writes `entries`: temp file, fsync, atomic rename, directory fsync.
    ///
    /// # Panics
    ///
    /// If the epochs do not strictly increase or the start offsets go backwards (a caller's bug:
    /// Kafka's cache would not hold such entries).
    pub fn write(&self, entries: &[EpochEntry]) -> Result<()> {
        assert!(
            entries
                .iter()
                .zip(entries.iter().skip(1))
                .all(|(a, b)| a.epoch < b.epoch && a.start_offset <= b.start_offset),
            "leader epoch entries must increase: {entries:?}"
        );
        write_atomically(&self.fs, &self.path, &render_epochs(entries))
    }
}

/// The text of a `leader-epoch-checkpoint` holding `entries`.
pub(crate) fn render_epochs(entries: &[EpochEntry]) -> String {
    let mut text = format!("{LEADER_EPOCH_CHECKPOINT_VERSION}\n{}\n", entries.len());
    for e in entries {
        let _ = writeln!(text, "{} {}", e.epoch, e.start_offset);
    }
    text
}

/// Parses a `leader-epoch-checkpoint` with Kafka's framing rules (`CheckpointFile.read`).
pub(crate) fn parse_epochs(path: &Path, text: &str) -> Result<Vec<EpochEntry>> {
    let mut entries: Vec<EpochEntry> = Vec::new();
    parse_framed(path, text, LEADER_EPOCH_CHECKPOINT_VERSION, |parts| {
        let [epoch, offset] = parts else {
            return Err(None);
        };
        let entry = EpochEntry {
            epoch: epoch.parse().map_err(|_| None)?,
            start_offset: offset.parse().map_err(|_| None)?,
        };
        if let Some(last) = entries.last()
            && (entry.epoch <= last.epoch || entry.start_offset < last.start_offset)
        {
            return Err(Some(format!(
                "leader epoch entry {} {} does not follow {} {}",
                entry.epoch, entry.start_offset, last.epoch, last.start_offset
            )));
        }
        entries.push(entry);
        Ok(())
    })?;
    Ok(entries)
}

/// Kafka's `CheckpointFile.read` framing, shared by every checkpoint file: a version line that
/// must equal `version`, a count line, then `count` entry lines (anything after them is ignored),
/// each split on whitespace and handed to `entry`. An empty file, or one without a count line,
/// has no entries. `entry` returns `Err(None)` for a malformed line (Kafka's message) and
/// `Err(Some(problem))` for any other problem with it.
fn parse_framed(
    path: &Path,
    text: &str,
    version: i32,
    mut entry: impl FnMut(&[&str]) -> std::result::Result<(), Option<String>>,
) -> Result<()> {
    let err = |line: usize, problem: String| Error::Checkpoint {
        path: path.to_path_buf(),
        line,
        problem,
    };
    let malformed = |line: usize, content: &str| {
        err(
            line,
            format!(
                "Malformed line in checkpoint file [{}]: {content}",
                path.display()
            ),
        )
    };
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let Some((n, version_line)) = lines.next() else {
        return Ok(());
    };
    let found_version: i32 = version_line
        .trim()
        .parse()
        .map_err(|_| malformed(n, version_line))?;
    if found_version != version {
        return Err(err(
            n,
            format!(
                "Unrecognised version:{found_version}, expected version: {version} in checkpoint file at: {}",
                path.display()
            ),
        ));
    }
    let Some((n, count_line)) = lines.next() else {
        return Ok(());
    };
    let count: usize = count_line
        .trim()
        .parse()
        .map_err(|_| malformed(n, count_line))?;
    let mut found = 0;
    for (n, line) in lines {
        if found == count {
            break;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        entry(&parts).map_err(|problem| match problem {
            None => malformed(n, line),
            Some(problem) => err(n, problem),
        })?;
        found += 1;
    }
    if found != count {
        return Err(err(
            0,
            format!(
                "Expected [{count}] entries in checkpoint file [{}], but found only [{found}]",
                path.display()
            ),
        ));
    }
    Ok(())
}

/// Writes `text` to `path` through `<path>.tmp`: write, fsync, rename, directory fsync.
pub(crate) fn write_atomically<F: FileSystem>(fs: &F, path: &Path, text: &str) -> Result<()> {
    write_and_rename(fs, path, text)?;
    sync_parent(fs, path)
}

/// `text` written to `<path>.tmp`, fsynced and renamed to `path`: durable once `path`'s
/// directory is fsynced.
fn write_and_rename<F: FileSystem>(fs: &F, path: &Path, text: &str) -> Result<()> {
    let mut tmp = path.to_path_buf().into_os_string();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let io_err = |e| Error::io(&tmp, e);
    let _ = fs.remove_file(&tmp);
    let file = fs.open(&tmp, OpenMode::CreateNew).map_err(io_err)?;
    file.write_all_at(text.as_bytes(), 0).map_err(io_err)?;
    file.sync_data().map_err(io_err)?;
    drop(file);
    fs.rename(&tmp, path).map_err(|e| Error::io(path, e))
}

fn sync_parent<F: FileSystem>(fs: &F, path: &Path) -> Result<()> {
    match path.parent() {
        Some(dir) => fs.sync_dir(dir).map_err(|e| Error::io(dir, e)),
        None => Ok(()),
    }
}

/// Writes offset checkpoints as [`OffsetCheckpoint::write`] does, each file
/// written, fsynced and renamed in turn, with one fsync of the directory at the end covering
/// every rename (a log directory's recovery points and log start offsets; one fsync per
/// directory): when this returns
/// all are durable. A crash before may leave any of them old, each whole, as Kafka's
/// separately scheduled checkpoints can.
pub(crate) fn write_offset_checkpoints<F: FileSystem>(
    fs: &F,
    files: &[(&Path, &BTreeMap<TopicPartition, i64>)],
) -> Result<()> {
    let mut dirs: Vec<&Path> = Vec::new();
    for (path, entries) in files {
        write_and_rename(fs, path, &render(entries))?;
        if let Some(dir) = path.parent()
            && !dirs.contains(&dir)
        {
            dirs.push(dir);
        }
    }
    for dir in dirs {
        fs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
    }
    Ok(())
}

/// One offset checkpoint file.
#[derive(Debug, Clone)]
pub struct OffsetCheckpoint<F: FileSystem> {
    fs: F,
    path: PathBuf,
}

impl<F: FileSystem> OffsetCheckpoint<F> {
    /// The checkpoint at `path`.
    pub fn new(fs: F, path: impl Into<PathBuf>) -> Self {
        Self {
            fs,
            path: path.into(),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the checkpoint. A missing or empty file, or one with no count line, is an empty map,
    /// as in Kafka.
    pub fn read(&self) -> Result<BTreeMap<TopicPartition, i64>> {
        let bytes = match self.fs.open(&self.path, OpenMode::ReadOnly) {
            Ok(file) => read_all(&file).map_err(|e| Error::io(&self.path, e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let text =
            String::from_utf8(bytes).map_err(|e| self.problem(0, format!("not UTF-8: {e}")))?;
        parse(&self.path, &text)
    }

    /// Writes the checkpoint: temp file, fsync, atomic rename, directory fsync.
    pub fn write(&self, entries: &BTreeMap<TopicPartition, i64>) -> Result<()> {
        write_atomically(&self.fs, &self.path, &render(entries))
    }

    fn problem(&self, line: usize, problem: String) -> Error {
        Error::Checkpoint {
            path: self.path.clone(),
            line,
            problem,
        }
    }
}

fn read_all<T: File>(file: &T) -> io::Result<Vec<u8>> {
    let len = usize::try_from(file.len()?).map_err(io::Error::other)?;
    let mut buf = vec![0; len];
    file.read_exact_at(&mut buf, 0)?;
    Ok(buf)
}

/// The file's text for `entries`.
pub(crate) fn render(entries: &BTreeMap<TopicPartition, i64>) -> String {
    let mut text = format!("{OFFSET_CHECKPOINT_VERSION}\n{}\n", entries.len());
    for (tp, offset) in entries {
        let _ = writeln!(text, "{} {} {offset}", tp.topic, tp.partition);
    }
    text
}

/// Parses a checkpoint's text with Kafka's rules and messages.
pub(crate) fn parse(path: &Path, text: &str) -> Result<BTreeMap<TopicPartition, i64>> {
    let mut entries = BTreeMap::new();
    parse_framed(path, text, OFFSET_CHECKPOINT_VERSION, |parts| {
        let [topic, partition, offset] = parts else {
            return Err(None);
        };
        let partition: i32 = partition.parse().map_err(|_| None)?;
        let offset: i64 = offset.parse().map_err(|_| None)?;
        entries.insert(TopicPartition::new(*topic, partition), offset);
        Ok(())
    })?;
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use seglog_fs::sim::{SimFs, Tear};

    use super::*;

    fn sample() -> BTreeMap<TopicPartition, i64> {
        BTreeMap::from([
            (TopicPartition::new("orders", 0), 1500),
            (TopicPartition::new("orders", 1), 1499),
        ])
    }

    #[test]
    fn renders_kafkas_text_exactly() {
        assert_eq!(render(&sample()), "0\n2\norders 0 1500\norders 1 1499\n");
        assert_eq!(render(&BTreeMap::new()), "0\n0\n");
    }

    #[test]
    fn reads_what_kafka_writes_and_splits_on_any_whitespace() {
        let p = Path::new("/x/recovery-point-offset-checkpoint");
        assert_eq!(
            parse(p, "0\n2\norders 0 1500\norders\t1   1499\n").unwrap(),
            sample()
        );
        assert!(parse(p, "").unwrap().is_empty());
        assert!(parse(p, "0\n").unwrap().is_empty());
    }

    #[test]
    fn rejects_bad_checkpoints_with_kafkas_messages() {
        let p = Path::new("/x/cp");
        let cases = [
            ("1\n0\n", "Unrecognised version:1"),
            ("x\n0\n", "Malformed line"),
            ("0\nx\n", "Malformed line"),
            ("0\n1\norders 0\n", "Malformed line"),
            ("0\n1\norders zero 5\n", "Malformed line"),
            ("0\n2\norders 0 5\n", "Expected [2] entries"),
        ];
        for (text, expected) in cases {
            let err = parse(p, text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn leader_epochs_render_and_parse_as_kafka_writes_them() {
        let entries = [
            EpochEntry {
                epoch: 0,
                start_offset: 0,
            },
            EpochEntry {
                epoch: 3,
                start_offset: 1500,
            },
        ];
        // Kafka's framing: version, count, `epoch start-offset` lines (Kafka 4.4.0 wrote
        // "0\n1\n0 0\n" for a partition led from offset 0 in epoch 0).
        assert_eq!(render_epochs(&entries), "0\n2\n0 0\n3 1500\n");
        assert_eq!(render_epochs(&entries[..1]), "0\n1\n0 0\n");
        assert_eq!(render_epochs(&[]), "0\n0\n");
        let p = Path::new("/x/leader-epoch-checkpoint");
        assert_eq!(parse_epochs(p, "0\n2\n0 0\n3\t1500\n").unwrap(), entries);
        assert!(parse_epochs(p, "").unwrap().is_empty());
        let cases = [
            ("1\n0\n", "Unrecognised version:1"),
            ("0\n1\n0\n", "Malformed line"),
            ("0\n1\n0 0 0\n", "Malformed line"),
            ("0\n1\nx 0\n", "Malformed line"),
            ("0\n2\n0 0\n", "Expected [2] entries"),
            ("0\n2\n3 10\n2 20\n", "does not follow"),
            ("0\n2\n2 20\n3 10\n", "does not follow"),
        ];
        for (text, expected) in cases {
            let err = parse_epochs(p, text).unwrap_err().to_string();
            assert!(err.contains(expected), "{text:?}: {err}");
        }
    }

    #[test]
    fn leader_epoch_write_is_durable_and_read_back() {
        let fs = SimFs::new();
        fs.create_dir_all(Path::new("/logs/t-0")).unwrap();
        let cp = LeaderEpochCheckpoint::in_dir(fs.clone(), Path::new("/logs/t-0"));
        assert!(cp.read().unwrap().is_empty());
        let entries = [EpochEntry {
            epoch: 7,
            start_offset: 42,
        }];
        cp.write(&entries).unwrap();
        let after = LeaderEpochCheckpoint::in_dir(fs.crash(Tear::DropAll), Path::new("/logs/t-0"));
        assert_eq!(after.read().unwrap(), entries);
        assert_eq!(after.path(), Path::new("/logs/t-0/leader-epoch-checkpoint"));
    }

    #[test]
    #[should_panic(expected = "leader epoch entries must increase")]
    fn leader_epoch_write_refuses_decreasing_entries() {
        let fs = SimFs::new();
        let cp = LeaderEpochCheckpoint::in_dir(fs, Path::new("/logs/t-0"));
        let e = |epoch, start_offset| EpochEntry {
            epoch,
            start_offset,
        };
        let _ = cp.write(&[e(2, 0), e(1, 5)]);
    }

    #[test]
    fn write_is_atomic_and_durable() {
        let fs = SimFs::new();
        fs.create_dir_all(Path::new("/logs")).unwrap();
        let cp = OffsetCheckpoint::new(fs.clone(), "/logs/recovery-point-offset-checkpoint");
        assert!(cp.read().unwrap().is_empty());
        cp.write(&sample()).unwrap();
        assert_eq!(cp.read().unwrap(), sample());
        // Everything was synced: a power loss right after keeps the new checkpoint.
        let after = OffsetCheckpoint::new(fs.crash(Tear::DropAll), cp.path());
        assert_eq!(after.read().unwrap(), sample());
        assert!(!fs.exists(Path::new("/logs/recovery-point-offset-checkpoint.tmp")));
    }

    #[test]
    fn checkpoints_written_together_are_durable() {
        let fs = SimFs::new();
        fs.create_dir_all(Path::new("/logs")).unwrap();
        let recovery = Path::new("/logs/recovery-point-offset-checkpoint");
        let starts = Path::new("/logs/log-start-offset-checkpoint");
        let mut later = sample();
        for offset in later.values_mut() {
            *offset += 1;
        }
        write_offset_checkpoints(&fs, &[(recovery, &sample()), (starts, &later)]).unwrap();
        // One directory fsync covered both renames: a power loss right after keeps both.
        let crashed = fs.crash(Tear::DropAll);
        assert_eq!(
            OffsetCheckpoint::new(crashed.clone(), recovery)
                .read()
                .unwrap(),
            sample()
        );
        assert_eq!(
            OffsetCheckpoint::new(crashed.clone(), starts)
                .read()
                .unwrap(),
            later
        );
        assert!(!crashed.exists(Path::new("/logs/log-start-offset-checkpoint.tmp")));
    }
}
