//! A partition's `partition.metadata` (Kafka's `PartitionMetadataFile`, read by
//! `PartitionMetadataReadBuffer`): the topic id, which Kafka checks against the cluster's
//! metadata when it loads the partition.
//!
//! ```text
//! version: 0
//! topic_id: vvO5N3IYR1ezBKXzHaP3xg
//! ```
//!
//! Kafka writes exactly those two lines with no newline after the second, UTF-8, through
//! `partition.metadata.tmp`: written, fsynced, atomically renamed, the directory fsynced
//! (`Utils.atomicMoveWithFallback`). It reads two lines, each `key: value` split at the first
//! `:` followed by whitespace; a version below 0 is refused and one above 0 accepted (for
//! downgrades); the id must parse and must not be the zero id. Anything after the second line is
//! ignored.

use std::io;
use std::path::{Path, PathBuf};

use seglog_fs::{FileSystem, OpenMode};

use crate::checkpoint::{read_all, write_atomically};
use crate::error::{Error, Result};
use crate::topic_id::TopicId;

/// The file's name in a partition directory.
pub const PARTITION_METADATA_FILE: &str = "partition.metadata";

/// The version Kafka 4.4 writes.
pub const PARTITION_METADATA_VERSION: i32 = 0;

/// What a `partition.metadata` holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// The file's version (0; Kafka reads any version from 0 on).
    pub version: i32,
    /// The topic id.
    pub topic_id: TopicId,
}

/// A partition directory's `partition.metadata`.
#[derive(Debug, Clone)]
pub struct PartitionMetadataFile<F: FileSystem> {
    fs: F,
    path: PathBuf,
}

impl<F: FileSystem> PartitionMetadataFile<F> {
    /// The file of the partition directory `partition_dir`.
    pub fn in_dir(fs: F, partition_dir: &Path) -> Self {
        Self {
            fs,
            path: partition_dir.join(PARTITION_METADATA_FILE),
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file: `None` when there is none. A file Kafka's reader refuses is
    /// [`Error::Checkpoint`] naming the line, with Kafka's message.
    pub fn read(&self) -> Result<Option<PartitionMetadata>> {
        let bytes = match self.fs.open(&self.path, OpenMode::ReadOnly) {
            Ok(file) => read_all(&file).map_err(|e| Error::io(&self.path, e))?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let text = String::from_utf8(bytes).map_err(|e| Error::Checkpoint {
            path: self.path.clone(),
            line: 0,
            problem: format!("not UTF-8: {e}"),
        })?;
        parse(&self.path, &text).map(Some)
    }

    /// Writes `topic_id` as Kafka does: the temp file, fsync, atomic rename, directory fsync.
    pub fn write(&self, topic_id: TopicId) -> Result<()> {
        write_atomically(&self.fs, &self.path, &render(topic_id))
    }
}

/// The file's text for `topic_id` (Kafka's `PartitionMetadata.encode`: no final newline).
pub(crate) fn render(topic_id: TopicId) -> String {
    format!("version: {PARTITION_METADATA_VERSION}\ntopic_id: {topic_id}")
}

/// Parses the file's text as `PartitionMetadataReadBuffer.read` does.
pub(crate) fn parse(path: &Path, text: &str) -> Result<PartitionMetadata> {
    let location = path.display();
    let malformed = |line: usize, content: Option<&str>| Error::Checkpoint {
        path: path.to_path_buf(),
        line,
        problem: format!(
            "Malformed line in partition metadata file [{location}]: {}",
            content.unwrap_or("null")
        ),
    };
    let mut lines = java_lines(text);
    let version_line = lines.next();
    let version = value_of(version_line, "version")
        .and_then(|v| v.parse::<i32>().ok())
        .ok_or_else(|| malformed(1, version_line))?;
    if version < PARTITION_METADATA_VERSION {
        return Err(Error::Checkpoint {
            path: path.to_path_buf(),
            line: 1,
            problem: format!(
                "Unrecognized version of partition metadata file ({location}): {version}"
            ),
        });
    }
    let id_line = lines.next();
    let topic_id = value_of(id_line, "topic_id")
        .and_then(|v| v.parse::<TopicId>().ok())
        .ok_or_else(|| malformed(2, id_line))?;
    if topic_id.is_zero() {
        return Err(Error::Checkpoint {
            path: path.to_path_buf(),
            line: 2,
            problem: format!("Invalid topic ID in partition metadata file ({location})"),
        });
    }
    Ok(PartitionMetadata { version, topic_id })
}

/// The value of a `key: value` line whose key is `key`: Java's `line.split(":\\s+", 2)`, split
/// at the first colon followed by whitespace, the whitespace run dropped.
fn value_of<'a>(line: Option<&'a str>, key: &str) -> Option<&'a str> {
    let line = line?;
    let (at, _) = line.char_indices().find(|&(i, c)| {
        c == ':'
            && line
                .get(i + 1..)
                .and_then(|r| r.chars().next())
                .is_some_and(java_space)
    })?;
    let (found, rest) = (line.get(..at)?, line.get(at + 1..)?);
    (found == key).then(|| rest.trim_start_matches(java_space))
}

/// Java's regex `\s`: space, tab, newline, vertical tab, form feed, carriage return.
fn java_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\u{b}' | '\u{c}' | '\r')
}

/// `BufferedReader.readLine`'s lines: ended by `\n`, `\r` or `\r\n`.
fn java_lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = Some(text);
    std::iter::from_fn(move || {
        let s = rest?;
        if s.is_empty() {
            rest = None;
            return None;
        }
        let Some(at) = s.find(['\n', '\r']) else {
            rest = None;
            return Some(s);
        };
        let skip = if s.get(at..).unwrap_or_default().starts_with("\r\n") {
            2
        } else {
            1
        };
        rest = s.get(at + skip..);
        s.get(..at)
    })
}

#[cfg(test)]
mod tests {
    use seglog_fs::sim::{SimFs, Tear};

    use super::*;

    const ID: &str = "vvO5N3IYR1ezBKXzHaP3xg";

    fn parsed(text: &str) -> Result<PartitionMetadata> {
        parse(Path::new("t-0/partition.metadata"), text)
    }

    fn problem(text: &str) -> (usize, String) {
        match parsed(text) {
            Err(Error::Checkpoint { line, problem, .. }) => (line, problem),
            other => panic!("{text:?}: {other:?}"),
        }
    }

    #[test]
    fn renders_kafkas_text_exactly() -> Result<()> {
        let id: TopicId = ID.parse().map_err(|e| Error::Checkpoint {
            path: PathBuf::new(),
            line: 0,
            problem: format!("{e}"),
        })?;
        assert_eq!(render(id), format!("version: 0\ntopic_id: {ID}"));
        assert_eq!(parsed(&render(id))?.topic_id, id);
        Ok(())
    }

    #[test]
    fn reads_leniently_where_kafka_does() -> Result<()> {
        for text in [
            format!("version: 0\ntopic_id: {ID}"),
            format!("version: 0\ntopic_id: {ID}\n"),
            format!("version:\t 0\r\ntopic_id:  {ID}\rignored\n"),
            format!("version: 0\ntopic_id: {ID}==\nanything: at all"),
            format!("version: +0\ntopic_id: {ID}"),
        ] {
            assert_eq!(parsed(&text)?.topic_id.to_string(), ID, "{text:?}");
        }
        // A later version is read (Kafka allows downgrades).
        assert_eq!(parsed(&format!("version: 7\ntopic_id: {ID}"))?.version, 7);
        Ok(())
    }

    #[test]
    fn refuses_what_kafka_refuses_naming_the_line() {
        let at = "Malformed line in partition metadata file [t-0/partition.metadata]: ";
        assert_eq!(problem(""), (1, format!("{at}null")));
        assert_eq!(problem("version:0\n"), (1, format!("{at}version:0")));
        assert_eq!(problem("version: 0 \n"), (1, format!("{at}version: 0 ")));
        assert_eq!(problem("Version: 0\n"), (1, format!("{at}Version: 0")));
        assert_eq!(problem("version: 0"), (2, format!("{at}null")));
        assert_eq!(
            problem("version: 0\ntopic_id: nope"),
            (2, format!("{at}topic_id: nope"))
        );
        assert_eq!(
            problem(&format!("version: 0\ntopicid: {ID}")),
            (2, format!("{at}topicid: {ID}"))
        );
        assert_eq!(
            problem(&format!("version: -1\ntopic_id: {ID}")),
            (
                1,
                "Unrecognized version of partition metadata file (t-0/partition.metadata): -1"
                    .to_owned()
            )
        );
        assert_eq!(
            problem("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA"),
            (
                2,
                "Invalid topic ID in partition metadata file (t-0/partition.metadata)".to_owned()
            )
        );
    }

    #[test]
    fn write_is_durable_and_read_back() -> Result<()> {
        let fs = SimFs::new();
        let dir = Path::new("/d/t-0");
        fs.create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        let file = PartitionMetadataFile::in_dir(fs.clone(), dir);
        assert_eq!(file.read()?, None);
        let id = TopicId::from_bytes(*b"0123456789abcdef");
        file.write(id)?;
        // Everything was synced: a power loss right after keeps the file.
        let crashed = fs.crash(Tear::DropAll);
        let after = PartitionMetadataFile::in_dir(crashed.clone(), dir);
        assert_eq!(after.read()?.map(|m| m.topic_id), Some(id));
        assert!(!crashed.exists(&dir.join("partition.metadata.tmp")));
        Ok(())
    }
}
