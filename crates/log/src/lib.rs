//! # seglog-log
//!
//! The partition log (a `topic-N` directory of segments) and the log directory (many partition logs, the
//! checkpoints, the `.lock` file and the clean-shutdown marker), behaving as Kafka's `UnifiedLog`,
//! `LocalLog`, `LogLoader` and `LogManager` do.
//!
//! It builds on `seglog-segment`. It holds the configuration ([`LogConfig`]), topic-partition directory
//! names ([`TopicPartition`]), Kafka's text checkpoints ([`OffsetCheckpoint`]), the clean-shutdown marker
//! ([`CleanShutdownMarker`]), the partition log ([`PartitionLog`]) and the log directory
//! ([`LogDir`]). Depending on this crate alone is enough to embed it: the file system
//! ([`RealFs`]), record building and decoding ([`record`]) and the read-only view ([`inspect`])
//! are all here. Unix only, as `seglog-fs` is. The codec features (`gzip`, `snappy`, `lz4`,
//! `zstd`, all on by default) pass down to `seglog-record-format`.
//!
//! ```
//! use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
//! use seglog_log::{Isolation, ListOffset, LogDir, LogDirOptions, RealFs, TopicPartition};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = tempfile::tempdir()?;
//! let (dir, _report) = LogDir::open(RealFs, root.path(), LogDirOptions::default())?;
//! let log = dir.create_log(&TopicPartition::new("orders", 0), None)?;
//!
//! // A producer batch (base offset 0); the log assigns offsets and returns once it is durable.
//! let records = (0..3).map(|i| NewRecord::new(i, 1_700_000_000_000, Some(b"k"), Some(b"v")));
//! let mut batch = Vec::new();
//! BatchBuilder::new().build(&BatchOptions::new(0, Compression::Zstd), records, &mut batch)?;
//! let ack = log.append_durable(&mut batch)?;
//! assert_eq!((ack.first_offset, ack.last_offset), (0, 2));
//!
//! // A read returns whole batches (for a zero-copy send), or their records.
//! let fetch = log.read(1, 1 << 20, Isolation::LogEnd, true)?;
//! let mut bytes = Vec::new();
//! let offsets: Vec<i64> = fetch.records(&mut bytes)?.map(|r| r.map(|r| r.offset)).collect::<Result<_, _>>()?;
//! assert_eq!(offsets, [0, 1, 2]); // from the batch holding offset 1
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
pub mod epoch;
mod error;
pub mod inspect;
mod listing;
mod log_dir;
mod log_dir_plan;
mod loom;
mod offset_map;
mod partition;
mod partition_metadata;
pub mod producer;
pub mod record;
mod segment_limits;
mod setters;
mod snapshot;
mod time;
mod time_lookup;
mod topic_id;
mod topic_partition;

pub use checkpoint::{
    CLEANER_OFFSET_CHECKPOINT, EpochEntry, LEADER_EPOCH_CHECKPOINT,
    LEADER_EPOCH_CHECKPOINT_VERSION, LOG_START_OFFSET_CHECKPOINT, LeaderEpochCheckpoint,
    OFFSET_CHECKPOINT_VERSION, OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
};
pub use clean_shutdown::{CLEAN_SHUTDOWN_FILE, CleanShutdownMarker};
pub use config::{
    CleanupPolicy, CompressionType, FALLBACK_MAX_MAP_COUNT, INERT_KEYS, InertConfig, KEYS,
    LogConfig, MessageTimestampType, ProcessDefaults, defaults,
};
pub use consumer_records::{
    AbortedTransaction, ConsumerFilter, ConsumerRecords, IsolationLevel, consumer_records,
};
pub use epoch::LeaderEpochCache;
pub use error::{Error, Result};
pub use log_dir::{
    BackgroundFailure, CleanerSettings, LoadProgress, LogDir, LogDirOptions, LogDirReport,
    PARTITION_CONFIG_FILE, PartitionFailure, ProgressFn, SchedulerConfig, Scope, Work,
};
pub use log_dir_plan::{LogDirPlan, plan_recovery};
pub use partition::{
    AppendInfo, BadSwap, CleanOptions, CleanReport, Cut, DropReason, DroppedSegment,
    DroppedSnapshot, FetchDataInfo, Isolation, ListOffset, LoadOptions, LoadReport, OffsetAndEpoch,
    PartitionLog, QUARANTINE_DIR, RESTORE_HINT, RecoveryPlan, Removal, RetentionReport,
    SnapshotDrop, Split, SplitPiece, StopAfter, Stray, plan_partition,
};
pub use partition_metadata::{
    PARTITION_METADATA_FILE, PARTITION_METADATA_VERSION, PartitionMetadata, PartitionMetadataFile,
};
pub use seglog_fs::{File, FileSystem, OpenMode, ProcessLimits, RealFs};
pub use seglog_segment::naming;
pub use seglog_segment::{
    DescriptorCache, MappingBudget, RecoveryReport, RecoveryStop, StopReason, TimestampAndOffset,
};
pub use segment_limits::SegmentLimits;
pub use time::{MockClock, SystemClock, Time};
pub use topic_id::{InvalidTopicId, TopicId};
pub use topic_partition::{DirKind, TopicPartition};
