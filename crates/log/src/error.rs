//! The log crate's error type.

use std::fmt;
use std::io;
use std::path::PathBuf;

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the log layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration value failed Kafka's validator.
    #[error("invalid value {value:?} for configuration {key}: must be {allowed}")]
    InvalidConfig {
        /// The configuration key.
        key: String,
        /// The rejected value.
        value: String,
        /// What the validator accepts.
        allowed: String,
    },
    /// A configuration key that is not a topic-level log config.
    #[error("unknown configuration {key}")]
    UnknownConfig {
        /// The key as given.
        key: String,
    },
    /// An I/O error on a named file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A file or directory that a read-only inspection could not list, open or measure;
    /// `what` says which (`"cannot list"`, `"cannot open"`, `"cannot stat"`).
    #[error("{}: {what}: {source}", path.display())]
    Unreadable {
        /// The file or directory.
        path: PathBuf,
        /// What could not be done.
        what: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A path given to inspection that is neither a partition directory nor a log directory.
    #[error(
        "{}: neither a partition directory (topic-N) nor a log directory",
        path.display()
    )]
    NotALogDir {
        /// The path.
        path: PathBuf,
    },
    /// A checkpoint file that does not follow Kafka's text format.
    #[error("{}: line {line}: {problem}", path.display())]
    Checkpoint {
        /// The checkpoint file.
        path: PathBuf,
        /// The 1-based line number.
        line: usize,
        /// What is wrong, in Kafka's words where Kafka has them.
        problem: String,
    },
    /// A file changed between recovery's plan and its action: another process wrote to it.
    #[error("{}: {reason}", path.display())]
    Changed {
        /// The file.
        path: PathBuf,
        /// What differed.
        reason: String,
    },
    /// A segment operation failed.
    #[error(transparent)]
    Segment(#[from] seglog_segment::Error),
    /// Kafka's `OffsetOutOfRangeException`: a [`read`](crate::PartitionLog::read) outside
    /// `[log start, log end]`, or a [`sync_up_to`](crate::PartitionLog::sync_up_to) past the log
    /// end.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{Error, Isolation, LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
    /// # use seglog_fs::RealFs;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let dir = root.path().join("orders-0");
    /// # let time = Arc::new(SystemClock);
    /// # let (log, _) =
    /// #     PartitionLog::open(RealFs, &dir, LogConfig::default(), LoadOptions::default(), time)?;
    /// # let records = (0..3).map(|i| NewRecord::new(i, 1_700_000_000_000, None, Some(b"v")));
    /// # let mut batch = Vec::new();
    /// # BatchBuilder::new().build(&BatchOptions::new(0, Compression::None), records, &mut batch)?;
    /// log.append_as_leader(&mut batch)?; // offsets 0..=2
    /// // The log end offset reads nothing; past it is out of range.
    /// assert_eq!(log.read(3, 1 << 20, Isolation::LogEnd, true)?.region.length, 0);
    /// let err = log.read(4, 1 << 20, Isolation::LogEnd, true).unwrap_err();
    /// assert!(err.is_offset_out_of_range());
    /// assert_eq!(
    ///     err.to_string(),
    ///     "Received request for offset 4 for partition orders-0, \
    ///      but we only have log segments from offset 0 up to 3"
    /// );
    /// let Error::OffsetOutOfRange { offset, log_start_offset, log_end_offset, .. } = err else {
    ///     unreachable!("checked above")
    /// };
    /// assert_eq!((offset, log_start_offset, log_end_offset), (4, 0, 3));
    /// # Ok(())
    /// # }
    /// ```
    #[error(
        "Received request for offset {offset} for partition {partition}, but we only have log segments from offset {log_start_offset} up to {log_end_offset}"
    )]
    OffsetOutOfRange {
        /// The partition.
        partition: String,
        /// The offset asked for.
        offset: i64,
        /// The log start offset.
        log_start_offset: i64,
        /// The log end offset.
        log_end_offset: i64,
    },
    /// Records handed to an append that Kafka would refuse (bad CRC, too large, offsets out of
    /// order, not whole batches); `position` is the byte position in the appended buffer.
    #[error("append to {partition} refused at byte {position} of the input: {reason}")]
    InvalidRecords {
        /// The partition.
        partition: String,
        /// Where in the input the bad batch starts.
        position: u64,
        /// What is wrong, in Kafka's words where Kafka has them.
        reason: String,
    },
    /// A request that contradicts the log's state (Kafka's `IllegalArgumentException` and
    /// `KafkaException` cases), such as raising the log start offset past the high watermark.
    #[error("{partition}: {reason}")]
    InvalidRequest {
        /// The partition.
        partition: String,
        /// What is wrong.
        reason: String,
    },
    /// A topic id given for a partition whose `partition.metadata` holds another (Kafka's
    /// `InconsistentTopicIdException`, in its words).
    #[error(
        "Tried to assign topic ID {assigned} to log for topic partition {partition},but log already contained topic ID {found}"
    )]
    InconsistentTopicId {
        /// The partition.
        partition: String,
        /// The id given.
        assigned: crate::TopicId,
        /// The id the partition has.
        found: crate::TopicId,
    },
    /// The log directory is locked by another process or handle: another seglog command, or a
    /// running Kafka broker (seglog takes the same POSIX lock on `.lock` that Kafka takes).
    #[error("Failed to acquire lock on file .lock in {}: another process or handle holds it (another seglog command, or a running Kafka broker)", path.display())]
    Locked {
        /// The log directory.
        path: PathBuf,
    },
    /// A partition directory locked by another writer (another process or handle).
    #[error("{}: the partition is locked by another writer (another process or handle has it open)", path.display())]
    PartitionLocked {
        /// The partition directory.
        path: PathBuf,
    },
    /// A partition directory that failed to load when its log directory opened: it is not
    /// open, and nothing may write to it until the cause is repaired.
    #[error("{}: the partition failed to load and is not open: {cause}", path.display())]
    PartitionUnavailable {
        /// The partition directory.
        path: PathBuf,
        /// Why it failed to load.
        cause: String,
    },
    /// Background work on a partition failed: the partition is set aside (see
    /// [`LogDir::failed_partitions`](crate::LogDir::failed_partitions)) and the others go on.
    #[error("{}: {work} failed, the partition is set aside: {source}", path.display())]
    SetAside {
        /// The partition directory.
        path: PathBuf,
        /// What failed.
        work: Work,
        /// The error.
        source: std::sync::Arc<Error>,
    },
    /// A partition's `seglog.properties` that does not parse or validate.
    #[error("{}: {cause}", path.display())]
    PartitionConfig {
        /// The properties file.
        path: PathBuf,
        /// What is wrong with it.
        cause: String,
    },
    /// A directory name that is not `topic-partition` (optionally with a `.<uuid>-delete|-future|-stray`
    /// suffix).
    #[error(
        "{}: not in the form of topic-partition or topic-partition.uniqueId-delete",
        path.display()
    )]
    NotAPartitionDir {
        /// The directory.
        path: PathBuf,
    },
    /// A producer state `.snapshot` file Kafka's `readSnapshot` refuses
    /// (`CorruptSnapshotException`); `message` is Kafka's, `position` where the problem is.
    #[error("{}: corrupt producer snapshot at byte {position}: {message}", path.display())]
    CorruptSnapshot {
        /// The snapshot file.
        path: PathBuf,
        /// The byte position of the bad field.
        position: u64,
        /// Kafka's `CorruptSnapshotException` message.
        message: String,
    },
    /// An append that producer-state validation refuses (epoch, sequence, transaction state).
    #[error(transparent)]
    Producer(#[from] crate::producer::ProducerError),
}

/// Errors of the partition log itself.
impl Error {
    /// Whether this is an operation refused because this thread is inside a callback of a read
    /// of the segment it would change ([`seglog_segment::Error::LoanHeld`]: it would wait for
    /// that callback forever); nothing was changed, and it succeeds once the callback returned.
    pub fn is_loan_held(&self) -> bool {
        matches!(self, Self::Segment(seglog_segment::Error::LoanHeld { .. }))
    }

    /// Whether this is Kafka's `OffsetOutOfRange` condition.
    pub fn is_offset_out_of_range(&self) -> bool {
        matches!(self, Self::OffsetOutOfRange { .. })
    }

    /// Whether this is damage found in the data (a `.log`'s bytes corrupt at a position, or
    /// offsets its segment cannot hold), as opposed to an I/O failure or a refused request: what
    /// the read-only commands report with exit status 1.
    pub fn is_damaged_data(&self) -> bool {
        matches!(
            self,
            Self::Segment(
                seglog_segment::Error::Corrupt { .. }
                    | seglog_segment::Error::OffsetOverflow { .. }
            )
        )
    }
}

impl Error {
    /// Wraps an I/O error with the path it happened on.
    pub fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Self::Io {
            path: path.into(),
            source,
        }
    }
}

/// The background work that failed on a partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Work {
    /// A flush (Kafka's `flushDirtyLogs`), the deletion of files whose `file.delete.delay.ms`
    /// passed, or the flush of a clean close.
    Flush,
    /// Retention (Kafka's `deleteOldSegments`).
    Retention,
    /// A cleaning, or the reckoning of a log's dirty bytes that picks the log to clean.
    Cleaning,
}

impl fmt::Display for Work {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Flush => "flush",
            Self::Retention => "retention",
            Self::Cleaning => "cleaning",
        })
    }
}
