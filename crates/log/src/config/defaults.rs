/// `segment.bytes`.
pub const SEGMENT_BYTES: i32 = 1024 * 1024 * 1024;
/// `segment.ms`: 7 days.
pub const SEGMENT_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// `segment.index.bytes`.
pub const SEGMENT_INDEX_BYTES: i32 = 10 * 1024 * 1024;
/// `index.interval.bytes`.
pub const INDEX_INTERVAL_BYTES: i32 = 4096;
/// `retention.ms`: 7 days.
pub const RETENTION_MS: i64 = 7 * 24 * 60 * 60 * 1000;
/// `file.delete.delay.ms`.
pub const FILE_DELETE_DELAY_MS: i64 = 60_000;
/// `max.message.bytes`: 1 MiB plus the 12-byte log overhead.
pub const MAX_MESSAGE_BYTES: i32 = 1024 * 1024 + 12;
/// `message.timestamp.after.max.ms`: 1 hour (Kafka 4.0, KIP-1030).
pub const MESSAGE_TIMESTAMP_AFTER_MAX_MS: i64 = 60 * 60 * 1000;
/// `delete.retention.ms`: 1 day.
pub const DELETE_RETENTION_MS: i64 = 24 * 60 * 60 * 1000;
/// `min.cleanable.dirty.ratio`.
pub const MIN_CLEANABLE_DIRTY_RATIO: f64 = 0.5;
/// The smallest `segment.bytes` Kafka 4.x accepts.
pub const MIN_SEGMENT_BYTES: i32 = 1024 * 1024;
/// The smallest `internal.segment.bytes` that still fits one minimal batch (`LOG_OVERHEAD` + 2).
pub const MIN_INTERNAL_SEGMENT_BYTES: i32 = 14;
/// The smallest `seglog.max.segment.mappings` other than -1 (no limit): an active segment holds
/// three mappings, and every reading thread may need a few more.
pub const MIN_MAX_SEGMENT_MAPPINGS: i64 = 16;
/// `seglog.max.segment.mappings` and `seglog.max.open.segment.files` at this value take their
/// cap from the process's limits ([`ProcessDefaults`](super::ProcessDefaults)), shared by the
/// logs of a [`LogDir`](crate::LogDir) (see [`SegmentLimits`](crate::SegmentLimits)).
pub const FROM_PROCESS_LIMITS: i64 = 0;
/// The default `seglog.max.segment.mappings`: from the process's limits.
pub const MAX_SEGMENT_MAPPINGS: i64 = FROM_PROCESS_LIMITS;
/// The default `seglog.max.open.segment.files`: from the process's limits.
pub const MAX_OPEN_SEGMENT_FILES: i64 = FROM_PROCESS_LIMITS;
/// `compression.gzip.level`: -1, zlib's default (6).
pub const COMPRESSION_GZIP_LEVEL: i32 = -1;
/// `compression.lz4.level`.
pub const COMPRESSION_LZ4_LEVEL: i32 = 9;
/// `compression.zstd.level`.
pub const COMPRESSION_ZSTD_LEVEL: i32 = 3;
