//! The segment crate's error type.

use std::io;
use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in a segment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An I/O call failed on a segment file.
    #[error("{op} failed on {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done (`"open"`, `"write"`, `"read"`, `"fsync"`, ...).
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// An index operation failed.
    #[error(transparent)]
    Index(#[from] seglog_mmap_index::Error),
    /// The bytes of the `.log` are corrupt at a file position.
    #[error("{}: at byte {position}: {source}", path.display())]
    Corrupt {
        /// The `.log` file.
        path: PathBuf,
        /// The byte position in the file where the bad batch or field starts.
        position: u64,
        /// What record-format found.
        #[source]
        source: seglog_record_format::Error,
    },
    /// Kafka's `LogSegmentOffsetOverflowException`: an offset that cannot be stored relative to the
    /// segment's base offset (below it, or more than `i32::MAX` past it).
    #[error("Detected offset overflow at offset {offset} in segment {}", path.display())]
    OffsetOverflow {
        /// The `.log` file.
        path: PathBuf,
        /// The offset that does not fit.
        offset: i64,
    },
    /// The segment would grow past Kafka's 2 GiB limit (`Int.MAX` bytes).
    #[error(
        "The size of segment {} ({size}) is larger than the maximum allowed segment size of {}",
        path.display(),
        i32::MAX
    )]
    SegmentTooLarge {
        /// The `.log` file.
        path: PathBuf,
        /// The size it has or would have.
        size: u64,
    },
    /// Bytes given to `append` that are not a whole number of batches.
    #[error("append to {} refused: {reason}", path.display())]
    InvalidRecords {
        /// The `.log` file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A read with a negative maximum size (Kafka's `IllegalArgumentException`).
    #[error("Invalid max size {max_size} for log read from segment {}", path.display())]
    InvalidMaxSize {
        /// The `.log` file.
        path: PathBuf,
        /// The size asked for.
        max_size: i64,
    },
    /// A truncation, recovery, close or delete of a segment was asked for by a thread that holds
    /// a loan of its `.log`'s bytes (it runs inside a closure of
    /// [`LogSegment::with_region`](crate::LogSegment::with_region) on this segment, such as a
    /// callback of a read that decodes in place). The operation would wait for that loan to end,
    /// which cannot happen while this thread waits: it was refused before changing anything.
    #[error(
        "{op} of {} refused: this thread holds a loan of its bytes (it is inside a callback of a \
         read of this segment), which the {op} would wait for forever",
        path.display()
    )]
    LoanHeld {
        /// The `.log` file.
        path: PathBuf,
        /// What was refused (`"truncate"`, `"recover"`, `"close"`, `"delete"`).
        op: &'static str,
    },
    /// Kafka's `TransactionIndex.append` precondition (its `IllegalArgumentException`).
    #[error(
        "The last offset of appended transactions must increase sequentially, but {last_offset} is not greater than current last offset {current} of index {}",
        path.display()
    )]
    TxnIndexOrder {
        /// The `.txnindex` file.
        path: PathBuf,
        /// The last offset of the entry refused.
        last_offset: i64,
        /// The last offset of the entry appended before.
        current: i64,
    },
    /// A `.txnindex` entry of a version Kafka 4.4 cannot read (its iterator's `KafkaException`).
    #[error(
        "Unexpected aborted transaction version {version} in transaction index {}, supported version range is 0 to 0 (the entry at byte {position})",
        path.display()
    )]
    TxnIndexVersion {
        /// The `.txnindex` file.
        path: PathBuf,
        /// The byte position of the entry.
        position: u64,
        /// The version found.
        version: i16,
    },
    /// Kafka's `TransactionIndex.sanityCheck` (`CorruptIndexException`): an entry whose last
    /// offset is below the segment's base offset.
    #[error(
        "Last offset of aborted transaction AbortedTxn(producerId={producer_id}, firstOffset={first_offset}, lastOffset={last_offset}, lastStableOffset={last_stable_offset}) in index {} is less than start offset {start_offset} (the entry at byte {position})",
        path.display()
    )]
    TxnIndexBelowStart {
        /// The `.txnindex` file.
        path: PathBuf,
        /// The byte position of the entry.
        position: u64,
        /// The entry's producer id.
        producer_id: i64,
        /// The entry's first offset.
        first_offset: i64,
        /// The entry's last offset.
        last_offset: i64,
        /// The entry's last stable offset.
        last_stable_offset: i64,
        /// The segment's base offset.
        start_offset: i64,
    },
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, op: &'static str, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            op,
            source,
        }
    }

    /// The `.log` byte position of a corruption error, if this is one.
    pub fn corrupt_position(&self) -> Option<u64> {
        match self {
            Self::Corrupt { position, .. } => Some(*position),
            _ => None,
        }
    }
}
