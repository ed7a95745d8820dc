//! The log crate's error type.

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
