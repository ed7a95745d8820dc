//! # seglog-log
//!
//! The partition log (a `topic-N` directory of segments) and the log directory (many partition logs, the
//! checkpoints, the `.lock` file and the clean-shutdown marker), behaving as Kafka's `UnifiedLog`,
//! `LocalLog`, `LogLoader` and `LogManager` do.
//!
//! It builds on `seglog-segment`. It holds the configuration ([`LogConfig`]), topic-partition directory
//! names ([`TopicPartition`]), Kafka's text checkpoints ([`OffsetCheckpoint`]), the clean-shutdown marker
//! ([`CleanShutdownMarker`]), the partition log ([`PartitionLog`]) and the log directory
//! ([`LogDir`]).
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")
)]

mod checkpoint;
mod clean_shutdown;
mod config;
mod error;
mod log_dir;
mod partition;
mod time;
mod topic_partition;

pub use checkpoint::{
    CLEANER_OFFSET_CHECKPOINT, LOG_START_OFFSET_CHECKPOINT, OFFSET_CHECKPOINT_VERSION,
    OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT,
};
pub use clean_shutdown::{CLEAN_SHUTDOWN_FILE, CleanShutdownMarker};
pub use config::{CleanupPolicy, CompressionType, KEYS, LogConfig, MessageTimestampType, defaults};
pub use error::{Error, Result};
pub use log_dir::{
    LoadProgress, LogDir, LogDirOptions, LogDirReport, PARTITION_CONFIG_FILE, ProgressFn,
    SchedulerConfig,
};
pub use partition::{
    AppendInfo, FetchDataInfo, Isolation, ListOffset, LoadOptions, LoadReport, PartitionLog,
    RetentionReport,
};
pub use time::{MockClock, SystemClock, Time};
pub use topic_partition::{DirKind, TopicPartition};
