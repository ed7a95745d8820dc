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
//!
//! ```
//! use std::sync::Arc;
//!
//! use seglog_log::{Isolation, ListOffset, LogConfig, LogDir, LogDirOptions, SystemClock, TopicPartition};
//! use seglog_record_format::{BatchBuilder, BatchOptions, Compression, NewRecord};
//! use seglog_fs::RealFs;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = tempfile::tempdir()?;
//! let options = LogDirOptions::default();
//! let (dir, _report) = LogDir::open(RealFs, root.path(), options)?;
//! let log = dir.create_log(&TopicPartition::new("orders", 0), None)?;
//!
//! // A producer batch (base offset 0); the log assigns offsets and returns once it is durable.
//! let records = (0..3).map(|i| NewRecord::new(i, 1_700_000_000_000, Some(b"k"), Some(b"v")));
//! let mut batch = Vec::new();
//! BatchBuilder::new().build(&BatchOptions::new(0, Compression::Zstd), records, &mut batch)?;
//! let ack = log.append_durable(&mut batch)?;
//! assert_eq!((ack.first_offset, ack.last_offset), (0, 2));
//!
//! let fetch = log.read(1, 1 << 20, Isolation::LogEnd, true)?;
//! let mut bytes = Vec::new();
//! fetch.read_into(&mut bytes)?;
//! assert!(!bytes.is_empty());
//! assert_eq!(log.offset_for_timestamp(ListOffset::Latest)?.map(|t| t.offset), Some(3));
//! dir.close()?; // flush, checkpoints, clean-shutdown marker
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(
    test,
    allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")
)]

mod checkpoint;
mod clean_shutdown;
mod config;
mod consumer_records;
mod error;
pub mod inspect;
mod listing;
mod log_dir;
mod log_dir_plan;
mod loom;
mod offset_map;
mod partition;
pub mod producer;
pub mod record;
mod setters;
mod snapshot;
mod time;
mod topic_partition;

pub use checkpoint::{
    CLEANER_OFFSET_CHECKPOINT, EpochEntry, LEADER_EPOCH_CHECKPOINT,
    LEADER_EPOCH_CHECKPOINT_VERSION, LOG_START_OFFSET_CHECKPOINT, LeaderEpochCheckpoint,
    OFFSET_CHECKPOINT_VERSION, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
};
pub use clean_shutdown::{CLEAN_SHUTDOWN_FILE, CleanShutdownMarker};
pub use config::{CleanupPolicy, CompressionType, KEYS, LogConfig, MessageTimestampType, defaults};
pub use consumer_records::{
    AbortedTransaction, ConsumerFilter, ConsumerRecords, IsolationLevel, consumer_records,
};
pub use error::{Error, Result};
pub use log_dir::{
    CleanerSettings, LoadProgress, LogDir, LogDirOptions, LogDirReport, PARTITION_CONFIG_FILE,
    PartitionFailure, ProgressFn, SchedulerConfig, Scope,
};
pub use log_dir_plan::{LogDirPlan, plan_recovery};
pub use partition::{
    AppendInfo, BadSwap, CleanOptions, CleanReport, Cut, DropReason, DroppedSegment,
    DroppedSnapshot, FetchDataInfo, Isolation, ListOffset, LoadOptions, LoadReport, PartitionLog,
    QUARANTINE_DIR, RESTORE_HINT, RecoveryPlan, Removal, RetentionReport, SnapshotDrop, StopAfter,
    Stray, plan_partition,
};
pub use seglog_fs::{File, FileSystem, OpenMode, RealFs};
pub use seglog_segment::naming;
pub use seglog_segment::{RecoveryReport, RecoveryStop, StopReason, TimestampAndOffset};
pub use time::{MockClock, SystemClock, Time};
pub use topic_partition::{DirKind, TopicPartition};
