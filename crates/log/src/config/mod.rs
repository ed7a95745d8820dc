//! Topic-level log configuration with Kafka's names, defaults and validators (`LogConfig`).
//!
//! [`LogConfig::parse`] reads Kafka-style `key=value` properties text; [`LogConfig::set`] applies one
//! pair. Every value is checked with Kafka's validator, and an invalid value is an error that names the
//! key, the value and the allowed range. As in Kafka 4.x, `segment.bytes` must be at least 1 MiB, and
//! the internal `internal.segment.bytes` (used by Kafka's own tests) overrides it without that minimum.

/// Kafka's defaults (`LogConfig`, `ServerLogConfigs`, Kafka 4.x).
pub mod defaults;
mod inert;
mod parse;
mod process_defaults;
mod validate;

use std::fmt;

use crate::error::Error;
use crate::setters::with_setters;

pub use inert::{INERT_KEYS, InertConfig};
pub use parse::KEYS;
pub use process_defaults::{FALLBACK_MAX_MAP_COUNT, ProcessDefaults};

/// `cleanup.policy`: any combination of `delete` and `compact` (Kafka trunk also allows neither).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CleanupPolicy {
    /// Old segments are deleted by time, size and log start offset.
    pub delete: bool,
    /// The log is compacted: only the latest record per key is kept.
    pub compact: bool,
}

/// `message.timestamp.type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MessageTimestampType {
    /// Keep the producer's timestamps.
    CreateTime,
    /// Overwrite timestamps with the broker's append time.
    LogAppendTime,
}

/// `compression.type`: the codec the log writes, or `producer` to keep what the producer sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompressionType {
    /// Keep the producer's codec.
    Producer,
    /// No compression.
    Uncompressed,
    /// gzip.
    Gzip,
    /// snappy (xerial framing).
    Snappy,
    /// lz4 (Kafka's frame).
    Lz4,
    /// zstd.
    Zstd,
}

/// A partition log's configuration. Field names are Kafka's topic config names with units last.
/// Build one from `Default` (Kafka's defaults) with the `with_*` setters, or from properties
/// text with [`LogConfig::parse`]; the setters do not validate (a partition validates its
/// configuration when it opens), [`LogConfig::set`] does.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct LogConfig {
    /// `segment.bytes`: roll when a segment would grow past this. Default 1 GiB.
    pub segment_bytes: i32,
    /// `segment.ms`: roll when the segment's first timestamp is this old. Default 7 days.
    pub segment_ms: i64,
    /// `segment.jitter.ms`: random jitter subtracted from `segment.ms`, drawn once per segment.
    pub segment_jitter_ms: i64,
    /// `segment.index.bytes`: the preallocated size of each index file. Default 10 MiB.
    pub segment_index_bytes: i32,
    /// `index.interval.bytes`: bytes between offset index entries. Default 4096.
    pub index_interval_bytes: i32,
    /// `flush.messages`: fsync after this many messages. Default `i64::MAX` (never).
    pub flush_messages: i64,
    /// `flush.ms`: fsync when the last flush is this old. Default `i64::MAX` (never).
    pub flush_ms: i64,
    /// `retention.ms`: delete segments whose largest timestamp is older. -1 = forever. Default 7 days.
    pub retention_ms: i64,
    /// `retention.bytes`: delete old segments while the log is larger. -1 = unlimited (default).
    pub retention_bytes: i64,
    /// `file.delete.delay.ms`: how long `.deleted` files wait before removal. Default 60 s.
    pub file_delete_delay_ms: i64,
    /// `max.message.bytes`: the largest record batch accepted. Default 1048588.
    pub max_message_bytes: i32,
    /// `message.timestamp.type`.
    pub message_timestamp_type: MessageTimestampType,
    /// `message.timestamp.before.max.ms`: how far in the past a CreateTime timestamp may be.
    pub message_timestamp_before_max_ms: i64,
    /// `message.timestamp.after.max.ms`: how far in the future a CreateTime timestamp may be (1 h).
    pub message_timestamp_after_max_ms: i64,
    /// `preallocate`: create new `.log` files at full `segment.bytes` length.
    pub preallocate: bool,
    /// `cleanup.policy`.
    pub cleanup_policy: CleanupPolicy,
    /// `compression.type`: a leader append whose batch is in another codec is recompressed to
    /// this one (Kafka's `LogValidator`), `producer` keeps the producer's.
    pub compression_type: CompressionType,
    /// `compression.gzip.level` (KIP-390): 1 to 9, or -1 (default) for zlib's default, 6.
    pub compression_gzip_level: i32,
    /// `compression.lz4.level` (KIP-390): 1 to 17, default 9. Kafka compresses with lz4's high
    /// compressor at any level but 9; seglog's lz4 (`lz4_flex`) has only the fast compressor, so
    /// its lz4 batches are Kafka's at level 9 whatever this says (any reader reads both).
    pub compression_lz4_level: i32,
    /// `compression.zstd.level` (KIP-390): -131072 to 22, default 3.
    pub compression_zstd_level: i32,
    /// `delete.retention.ms`: how long tombstones survive after the first cleaning saw them. 1 day.
    pub delete_retention_ms: i64,
    /// `min.compaction.lag.ms`: records younger than this are not compacted. Default 0.
    pub min_compaction_lag_ms: i64,
    /// `max.compaction.lag.ms`: records older than this force a cleaning. Default `i64::MAX`.
    pub max_compaction_lag_ms: i64,
    /// `min.cleanable.dirty.ratio`: clean when the dirty share is strictly above this. Default 0.5.
    pub min_cleanable_dirty_ratio: f64,
    /// `seglog.max.segment.mappings` (seglog's own key, not Kafka's): the most memory mappings
    /// this log's segments hold at once, counting each `.index`, `.timeindex` and `.log` mapping
    /// as one. When a new mapping would pass it, the least recently used mappings are unmapped
    /// (after the reads inside them finish) and made again on next use, so a log of 100,000
    /// segments read at random never needs `vm.max_map_count` raised (KAFKA-6343). 0 (the
    /// default): half the process's `vm.max_map_count` ([`ProcessDefaults`]), one budget shared
    /// by every log of a [`LogDir`](crate::LogDir) ([`SegmentLimits`](crate::SegmentLimits));
    /// -1: no limit, as in Kafka; otherwise at least 16, a budget of this log's own.
    pub max_segment_mappings: i64,
    /// `seglog.max.open.segment.files` (seglog's own key, not Kafka's): the most `.log` files of
    /// this log's inactive segments held open at once. Past it the least recently used are
    /// closed (once synced, and once the reads using them return) and opened again on next use,
    /// so a log of more segments than the open-file limit (`ulimit -n`) opens and reads, where
    /// Kafka fails with "Too many open files". The active segment is never counted nor closed;
    /// the `.txnindex` holds a descriptor only while unsynced. 0 (the default): half the
    /// process's soft open-file limit ([`ProcessDefaults`]; no cap when it is unlimited), one
    /// cache shared by every log of a [`LogDir`](crate::LogDir); -1: no cap (a descriptor per
    /// segment, as Kafka); otherwise at least 1, a cache of this log's own.
    pub max_open_segment_files: i64,
    /// The keys only a broker's replication, tiered storage or group coordinator reads
    /// ([`INERT_KEYS`]): kept, without effect here.
    pub inert: InertConfig,
}

with_setters!(LogConfig {
    segment_bytes: i32 => with_segment_bytes,
    segment_ms: i64 => with_segment_ms,
    segment_jitter_ms: i64 => with_segment_jitter_ms,
    segment_index_bytes: i32 => with_segment_index_bytes,
    index_interval_bytes: i32 => with_index_interval_bytes,
    flush_messages: i64 => with_flush_messages,
    flush_ms: i64 => with_flush_ms,
    retention_ms: i64 => with_retention_ms,
    retention_bytes: i64 => with_retention_bytes,
    file_delete_delay_ms: i64 => with_file_delete_delay_ms,
    max_message_bytes: i32 => with_max_message_bytes,
    message_timestamp_type: MessageTimestampType => with_message_timestamp_type,
    message_timestamp_before_max_ms: i64 => with_message_timestamp_before_max_ms,
    message_timestamp_after_max_ms: i64 => with_message_timestamp_after_max_ms,
    preallocate: bool => with_preallocate,
    cleanup_policy: CleanupPolicy => with_cleanup_policy,
    compression_type: CompressionType => with_compression_type,
    compression_gzip_level: i32 => with_compression_gzip_level,
    compression_lz4_level: i32 => with_compression_lz4_level,
    compression_zstd_level: i32 => with_compression_zstd_level,
    delete_retention_ms: i64 => with_delete_retention_ms,
    min_compaction_lag_ms: i64 => with_min_compaction_lag_ms,
    max_compaction_lag_ms: i64 => with_max_compaction_lag_ms,
    min_cleanable_dirty_ratio: f64 => with_min_cleanable_dirty_ratio,
    max_segment_mappings: i64 => with_max_segment_mappings,
    max_open_segment_files: i64 => with_max_open_segment_files,
    inert: InertConfig => with_inert,
});

impl Default for LogConfig {
    fn default() -> Self {
        Self {
            segment_bytes: defaults::SEGMENT_BYTES,
            segment_ms: defaults::SEGMENT_MS,
            segment_jitter_ms: 0,
            segment_index_bytes: defaults::SEGMENT_INDEX_BYTES,
            index_interval_bytes: defaults::INDEX_INTERVAL_BYTES,
            flush_messages: i64::MAX,
            flush_ms: i64::MAX,
            retention_ms: defaults::RETENTION_MS,
            retention_bytes: -1,
            file_delete_delay_ms: defaults::FILE_DELETE_DELAY_MS,
            max_message_bytes: defaults::MAX_MESSAGE_BYTES,
            message_timestamp_type: MessageTimestampType::CreateTime,
            message_timestamp_before_max_ms: i64::MAX,
            message_timestamp_after_max_ms: defaults::MESSAGE_TIMESTAMP_AFTER_MAX_MS,
            preallocate: false,
            cleanup_policy: CleanupPolicy {
                delete: true,
                compact: false,
            },
            compression_type: CompressionType::Producer,
            compression_gzip_level: defaults::COMPRESSION_GZIP_LEVEL,
            compression_lz4_level: defaults::COMPRESSION_LZ4_LEVEL,
            compression_zstd_level: defaults::COMPRESSION_ZSTD_LEVEL,
            delete_retention_ms: defaults::DELETE_RETENTION_MS,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            min_cleanable_dirty_ratio: defaults::MIN_CLEANABLE_DIRTY_RATIO,
            max_segment_mappings: defaults::MAX_SEGMENT_MAPPINGS,
            max_open_segment_files: defaults::MAX_OPEN_SEGMENT_FILES,
            inert: InertConfig::default(),
        }
    }
}

fn invalid(key: &str, value: &str, allowed: impl fmt::Display) -> Error {
    Error::InvalidConfig {
        key: key.to_owned(),
        value: value.to_owned(),
        allowed: allowed.to_string(),
    }
}

impl LogConfig {
    /// The effective roll time (`LogConfig.maxSegmentMs`): for a compacted log with a max compaction
    /// lag, the smaller of that lag and `segment.ms`.
    pub fn max_segment_ms(&self) -> i64 {
        if self.cleanup_policy.compact && self.max_compaction_lag_ms > 0 {
            self.segment_ms.min(self.max_compaction_lag_ms)
        } else {
            self.segment_ms
        }
    }

    /// The roll jitter for a new segment from a random draw (`LogConfig.randomSegmentJitter`):
    /// `|random| % min(segment.jitter.ms, segment.ms)`, or 0 without jitter.
    pub fn segment_jitter_from(&self, random: u64) -> i64 {
        if self.segment_jitter_ms <= 0 {
            return 0;
        }
        let bound = self
            .segment_jitter_ms
            .min(self.segment_ms)
            .max(1)
            .unsigned_abs();
        i64::try_from(random % bound).unwrap_or(0)
    }

    /// The length a new `.log` file is created with: `segment.bytes` when preallocating, else 0.
    pub fn initial_file_size(&self) -> u64 {
        if self.preallocate {
            u64::try_from(self.segment_bytes).unwrap_or(0)
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_kafkas() {
        let c = LogConfig::default();
        assert_eq!(c.segment_bytes, 1_073_741_824);
        assert_eq!(c.segment_ms, 604_800_000);
        assert_eq!(c.segment_index_bytes, 10_485_760);
        assert_eq!(c.index_interval_bytes, 4096);
        assert_eq!(c.flush_messages, i64::MAX);
        assert_eq!(c.retention_bytes, -1);
        assert_eq!(c.retention_ms, 604_800_000);
        assert_eq!(c.max_message_bytes, 1_048_588);
        assert_eq!(c.file_delete_delay_ms, 60_000);
        assert_eq!(c.delete_retention_ms, 86_400_000);
        assert_eq!(
            c.cleanup_policy,
            CleanupPolicy {
                delete: true,
                compact: false
            }
        );
        assert!((c.min_cleanable_dirty_ratio - 0.5).abs() < f64::EPSILON);
    }

    #[test]
    fn parses_properties_text() {
        let c = LogConfig::parse(
            "# a comment\n! another\nsegment.bytes = 2097152\nretention.ms: -1\n\
             cleanup.policy=compact,delete\nmessage.timestamp.type=LogAppendTime\npreallocate=TRUE\n",
        )
        .unwrap();
        assert_eq!(c.segment_bytes, 2_097_152);
        assert_eq!(c.retention_ms, -1);
        assert_eq!(
            c.cleanup_policy,
            CleanupPolicy {
                delete: true,
                compact: true
            }
        );
        assert_eq!(
            c.message_timestamp_type,
            MessageTimestampType::LogAppendTime
        );
        assert!(c.preallocate);
    }

    #[test]
    fn invalid_values_name_key_value_and_range() {
        let err = LogConfig::from_pairs([("segment.bytes", "1000")]).unwrap_err();
        let text = err.to_string();
        assert!(
            text.contains("segment.bytes") && text.contains("1000"),
            "{text}"
        );
        assert!(text.contains("1048576"), "{text}");
        for (key, value) in [
            ("segment.ms", "0"),
            ("segment.index.bytes", "3"),
            ("index.interval.bytes", "-1"),
            ("flush.messages", "0"),
            ("retention.ms", "-2"),
            ("max.compaction.lag.ms", "0"),
            ("min.cleanable.dirty.ratio", "1.5"),
            ("cleanup.policy", "archive"),
            ("compression.type", "brotli"),
            ("preallocate", "yes"),
            ("segment.ms", "not_a_number"),
        ] {
            let err = LogConfig::from_pairs([(key, value)]).unwrap_err();
            assert!(
                matches!(err, Error::InvalidConfig { .. }),
                "{key}={value}: {err}"
            );
        }
        assert!(matches!(
            LogConfig::from_pairs([("segment.byte", "1")]).unwrap_err(),
            Error::UnknownConfig { .. }
        ));
    }

    #[test]
    fn max_segment_mappings_is_minus_one_zero_or_at_least_sixteen() {
        assert_eq!(LogConfig::default().max_segment_mappings, 0);
        for (text, value) in [("16", 16), ("0", 0), ("-1", -1)] {
            let c = LogConfig::from_pairs([("seglog.max.segment.mappings", text)]).unwrap();
            assert_eq!(c.max_segment_mappings, value);
            assert_eq!(LogConfig::parse(&c.to_properties()).unwrap(), c);
            assert!(c.validate().is_ok(), "{text}");
        }
        for bad in ["1", "15", "-2", "many"] {
            let err = LogConfig::from_pairs([("seglog.max.segment.mappings", bad)]).unwrap_err();
            assert!(
                err.to_string().contains("seglog.max.segment.mappings"),
                "{bad}: {err}"
            );
        }
        for direct in [1, 15, -2] {
            let c = LogConfig::default().with_max_segment_mappings(direct);
            assert!(c.validate().is_err(), "{direct}");
        }
    }

    #[test]
    fn max_open_segment_files_is_minus_one_zero_or_positive() {
        assert_eq!(LogConfig::default().max_open_segment_files, 0);
        for (text, value) in [("-1", -1), ("0", 0), ("1", 1)] {
            let c = LogConfig::from_pairs([("seglog.max.open.segment.files", text)]).unwrap();
            assert_eq!(c.max_open_segment_files, value);
            assert_eq!(LogConfig::parse(&c.to_properties()).unwrap(), c);
            assert!(c.validate().is_ok(), "{text}");
        }
        for bad in ["-2", "many"] {
            let err = LogConfig::from_pairs([("seglog.max.open.segment.files", bad)]).unwrap_err();
            assert!(
                err.to_string().contains("seglog.max.open.segment.files"),
                "{bad}: {err}"
            );
        }
        for direct in [-2, i64::MIN] {
            let c = LogConfig::default().with_max_open_segment_files(direct);
            assert!(c.validate().is_err(), "{direct}");
        }
    }

    #[test]
    fn internal_segment_bytes_bypasses_the_minimum() {
        let c = LogConfig::from_pairs([("internal.segment.bytes", "1024")]).unwrap();
        assert_eq!(c.segment_bytes, 1024);
        assert!(LogConfig::from_pairs([("internal.segment.bytes", "13")]).is_err());
    }

    #[test]
    fn min_compaction_lag_cannot_exceed_max() {
        let err = LogConfig::from_pairs([
            ("max.compaction.lag.ms", "100"),
            ("min.compaction.lag.ms", "200"),
        ])
        .unwrap_err();
        assert!(err.to_string().contains("min.compaction.lag.ms"));
    }

    #[test]
    fn max_segment_ms_and_jitter_follow_kafka() {
        let mut c = LogConfig {
            segment_ms: 1000,
            ..LogConfig::default()
        };
        assert_eq!(c.max_segment_ms(), 1000);
        c.cleanup_policy.compact = true;
        c.max_compaction_lag_ms = 400;
        assert_eq!(c.max_segment_ms(), 400);
        assert_eq!(c.segment_jitter_from(12345), 0);
        c.segment_jitter_ms = 5000;
        assert_eq!(c.segment_jitter_from(12345), 12345 % 1000);
    }

    #[test]
    fn properties_round_trip() {
        let c = LogConfig::from_pairs([
            ("internal.segment.bytes", "4096"),
            ("cleanup.policy", "compact"),
            ("compression.type", "zstd"),
            ("min.cleanable.dirty.ratio", "0.25"),
        ])
        .unwrap();
        assert_eq!(LogConfig::parse(&c.to_properties()).unwrap(), c);
        assert_eq!(
            LogConfig::parse(&LogConfig::default().to_properties()).unwrap(),
            LogConfig::default()
        );
    }
}
