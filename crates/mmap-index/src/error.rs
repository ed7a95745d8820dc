//! The crate's one error type. Every variant but [`Error::LoanHeld`] (a [`MappedFile`]'s, which
//! knows no path: its owner names the file) names the index file it concerns, and the messages
//! of the variants that mirror a Kafka exception reproduce Kafka's message text.
//!
//! [`MappedFile`]: crate::MappedFile
#![forbid(unsafe_code)]

use std::fmt;
use std::io;
use std::path::PathBuf;

/// `Result` with this crate's [`Error`] as the default error type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Which of the two index files an error or report concerns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IndexKind {
    /// An offset index (`.index`, 8-byte entries).
    Offset,
    /// A time index (`.timeindex`, 12-byte entries).
    Time,
}

impl IndexKind {
    /// The size of one entry of this kind, in bytes.
    pub const fn entry_size(self) -> usize {
        match self {
            Self::Offset => 8,
            Self::Time => 12,
        }
    }
}

impl fmt::Display for IndexKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Offset => "index",
            Self::Time => "time index",
        })
    }
}

/// What Kafka's `sanityCheck` found wrong with an index (Kafka's `CorruptIndexException`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CorruptKind {
    /// The index is not empty but its last entry's offset is below the segment's base offset.
    LastOffsetBelowBase {
        /// The offset of the last entry.
        last_offset: i64,
        /// The segment's base offset.
        base_offset: i64,
    },
    /// Time index only: the last entry's timestamp is below the first entry's timestamp. This is
    /// how Kafka catches a zero-filled tail (last timestamp 0).
    LastTimestampBelowFirst {
        /// The timestamp of the last entry.
        last_timestamp: i64,
        /// The timestamp of the first entry.
        first_timestamp: i64,
    },
    /// The file length is not a multiple of the entry size.
    LengthNotMultiple {
        /// The file length in bytes.
        length: u64,
        /// The entry size in bytes.
        entry_size: usize,
    },
}

/// Everything that can go wrong in this crate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O call on the index file failed.
    #[error("{op} failed on index file {}: {source}", file.display())]
    Io {
        /// The index file.
        file: PathBuf,
        /// The operation that failed (`"open"`, `"mmap"`, `"set_len"`, ...).
        op: &'static str,
        /// The underlying error.
        source: io::Error,
    },
    /// A new index file was requested with a maximum size smaller than one entry.
    #[error("Invalid max index size: {max_index_size} ({})", file.display())]
    InvalidMaxIndexSize {
        /// The index file.
        file: PathBuf,
        /// The requested maximum size in bytes.
        max_index_size: u32,
    },
    /// An append found no free slot (Kafka's `IllegalArgumentException` for a full index).
    #[error("Attempt to append to a full {kind} (size = {entries}). ({})", file.display())]
    IndexFull {
        /// The index file.
        file: PathBuf,
        /// Offset or time index.
        kind: IndexKind,
        /// The number of entries.
        entries: usize,
    },
    /// A time index append with `skip_full_check` met a mapping whose every slot is used, for
    /// example a zero-filled, untrimmed file reopened after a crash (KAFKA-12734, KAFKA-19200).
    /// Kafka overflows its buffer here; we refuse.
    #[error(
        "Attempt to append to time index {} whose mapping is completely used ({entries} of \
         {max_entries} slots)",
        file.display()
    )]
    MappingFull {
        /// The index file.
        file: PathBuf,
        /// The number of entries.
        entries: usize,
        /// The number of slots of the mapping.
        max_entries: usize,
    },
    /// An appended offset does not follow the last one (Kafka's `InvalidOffsetException`).
    /// The offset index needs a strictly larger offset, the time index an equal or larger one.
    #[error(
        "Attempt to append an offset {offset} to slot {slot} no larger than the last offset \
         appended ({last_offset}) to {}",
        file.display()
    )]
    InvalidOffset {
        /// The index file.
        file: PathBuf,
        /// The offset that was refused.
        offset: i64,
        /// The slot it would have gone to.
        slot: usize,
        /// The offset of the last entry.
        last_offset: i64,
    },
    /// A time index append carried a timestamp below the last one (Kafka's
    /// `IllegalStateException`).
    #[error(
        "Attempt to append a timestamp ({timestamp}) to slot {slot} no larger than the last \
         timestamp appended ({last_timestamp}) to {}",
        file.display()
    )]
    TimestampNotIncreasing {
        /// The index file.
        file: PathBuf,
        /// The timestamp that was refused.
        timestamp: i64,
        /// The slot it would have gone to.
        slot: usize,
        /// The timestamp of the last entry.
        last_timestamp: i64,
    },
    /// The offset cannot be stored relative to the base offset: it is below it, or more than
    /// `i32::MAX` past it (Kafka's `IndexOffsetOverflowException`).
    #[error("Integer overflow for offset: {offset} ({})", file.display())]
    OffsetOverflow {
        /// The index file.
        file: PathBuf,
        /// The offset that does not fit.
        offset: i64,
    },
    /// `entry(n)` was asked for a slot at or past the number of entries.
    #[error(
        "Attempt to fetch the {slot}th entry from {kind} {}, which has size {entries}",
        file.display()
    )]
    EntryOutOfRange {
        /// The index file.
        file: PathBuf,
        /// Offset or time index.
        kind: IndexKind,
        /// The requested slot.
        slot: usize,
        /// The number of entries.
        entries: usize,
    },
    /// A resize would cut off live entries. Kafka shrinks the file first and then fails; we
    /// refuse before touching anything.
    #[error(
        "Cannot resize {kind} {} to {new_size} bytes: it holds {entries} entries",
        file.display()
    )]
    ResizeBelowEntries {
        /// The index file.
        file: PathBuf,
        /// Offset or time index.
        kind: IndexKind,
        /// The requested size, already rounded down to a whole number of entries.
        new_size: u64,
        /// The number of entries.
        entries: usize,
    },
    /// The index was opened read-only and the operation would modify it.
    #[error("{kind} {} was opened read-only", file.display())]
    ReadOnly {
        /// The index file.
        file: PathBuf,
        /// Offset or time index.
        kind: IndexKind,
    },
    /// The index was closed, unmapped or deleted (Kafka throws a `NullPointerException` here).
    #[error("{kind} {} is closed", file.display())]
    Closed {
        /// The index file.
        file: PathBuf,
        /// Offset or time index.
        kind: IndexKind,
    },
    /// The index's file name holds no base offset (Kafka's names start with it: 20 digits, then
    /// `.index` or `.timeindex`), and none was given.
    #[error("index file {} has no base offset in its name; give one", file.display())]
    NoBaseOffsetInName {
        /// The index file.
        file: PathBuf,
    },
    /// The base offset given differs from the one the index's file name holds.
    #[error(
        "index file {} is named for base offset {from_name}, not the {given} given",
        file.display()
    )]
    BaseOffsetMismatch {
        /// The index file.
        file: PathBuf,
        /// The base offset in the file name.
        from_name: i64,
        /// The base offset given.
        given: i64,
    },
    /// The sanity check failed (Kafka's `CorruptIndexException`); the message is Kafka's.
    #[error("{}", corrupt_message(*kind, file, corruption))]
    CorruptIndex {
        /// The index file.
        file: PathBuf,
        /// Offset or time index.
        kind: IndexKind,
        /// What is wrong.
        corruption: CorruptKind,
    },
    /// A shrink or close of a [`MappedFile`](crate::MappedFile) was asked for by a thread that
    /// holds a loan of its bytes ([`MappedFile::with_published`](crate::MappedFile::with_published)
    /// further up its stack). It would wait for that loan to end, which cannot happen while
    /// this thread waits; it was refused, and nothing was changed. The mapped file knows no
    /// path: its owner (a segment) names the file in its own error.
    #[error(
        "a mapped file cannot be shrunk or closed by a thread that holds a loan of its bytes \
         (it would wait for that loan forever)"
    )]
    LoanHeld,
}

/// Kafka's `CorruptIndexException` messages, word for word.
fn corrupt_message(kind: IndexKind, file: &std::path::Path, corruption: &CorruptKind) -> String {
    let file = file.display();
    match (kind, *corruption) {
        (
            IndexKind::Offset,
            CorruptKind::LastOffsetBelowBase {
                last_offset,
                base_offset,
            },
        ) => {
            format!(
                "Corrupt index found, index file {file} has non-zero size but the last offset \
                 is {last_offset} which is less than the base offset {base_offset}"
            )
        }
        (
            IndexKind::Time,
            CorruptKind::LastOffsetBelowBase {
                last_offset,
                base_offset,
            },
        ) => {
            format!(
                "Corrupt time index found, time index file ({file}) has non-zero size but the \
                 last offset is {last_offset} which is less than the first offset {base_offset}"
            )
        }
        (
            _,
            CorruptKind::LastTimestampBelowFirst {
                last_timestamp,
                first_timestamp,
            },
        ) => {
            format!(
                "Corrupt time index found, time index file ({file}) has non-zero size but the \
                 last timestamp is {last_timestamp} which is less than the first timestamp \
                 {first_timestamp}"
            )
        }
        (IndexKind::Offset, CorruptKind::LengthNotMultiple { length, entry_size }) => format!(
            "Index file {file} is corrupt, found {length} bytes which is neither positive nor a \
             multiple of {entry_size}"
        ),
        (IndexKind::Time, CorruptKind::LengthNotMultiple { length, entry_size }) => format!(
            "Time index file {file} is corrupt, found {length} bytes which is neither positive \
             nor a multiple of {entry_size}"
        ),
    }
}

impl Error {
    /// The index file this error concerns; empty for [`Error::LoanHeld`], which concerns a
    /// mapped data file whose path the mapping does not know.
    pub fn file(&self) -> &std::path::Path {
        match self {
            Self::Io { file, .. }
            | Self::InvalidMaxIndexSize { file, .. }
            | Self::IndexFull { file, .. }
            | Self::MappingFull { file, .. }
            | Self::InvalidOffset { file, .. }
            | Self::TimestampNotIncreasing { file, .. }
            | Self::OffsetOverflow { file, .. }
            | Self::EntryOutOfRange { file, .. }
            | Self::ResizeBelowEntries { file, .. }
            | Self::ReadOnly { file, .. }
            | Self::Closed { file, .. }
            | Self::NoBaseOffsetInName { file }
            | Self::BaseOffsetMismatch { file, .. }
            | Self::CorruptIndex { file, .. } => file,
            Self::LoanHeld => std::path::Path::new(""),
        }
    }

    pub(crate) fn io(file: &std::path::Path, op: &'static str, source: io::Error) -> Self {
        Self::Io {
            file: file.to_path_buf(),
            op,
            source,
        }
    }
}
