//! Topic-level log configuration with Kafka's names, defaults and validators (`LogConfig`).
//!
//! [`LogConfig::parse`] reads Kafka-style `key=value` properties text; [`LogConfig::set`] applies one
//! pair. Every value is checked with Kafka's validator, and an invalid value is an error that names the
//! key, the value and the allowed range. As in Kafka 4.x, `segment.bytes` must be at least 1 MiB, and
//! the internal `internal.segment.bytes` (used by Kafka's own tests) overrides it without that minimum.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

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
#[derive(Debug, Clone, PartialEq)]
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
    /// `compression.type`.
    pub compression_type: CompressionType,
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
    /// segments read at random never needs `vm.max_map_count` raised (KAFKA-6343). -1 (the
    /// default) is no limit, as in Kafka; otherwise at least 16. Mappings are per process, so size
    /// it with every log of the process in mind: the kernel's default limit is 65,530.
    pub max_segment_mappings: i64,
}

/// Kafka's defaults (`LogConfig`, `ServerLogConfigs`, Kafka 4.x).
pub mod defaults {
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
}

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
            delete_retention_ms: defaults::DELETE_RETENTION_MS,
            min_compaction_lag_ms: 0,
            max_compaction_lag_ms: i64::MAX,
            min_cleanable_dirty_ratio: defaults::MIN_CLEANABLE_DIRTY_RATIO,
            max_segment_mappings: -1,
        }
    }
}

/// Every key [`LogConfig::set`] accepts, in Kafka's documentation order.
pub const KEYS: &[&str] = &[
    "segment.bytes",
    "internal.segment.bytes",
    "segment.ms",
    "segment.jitter.ms",
    "segment.index.bytes",
    "index.interval.bytes",
    "flush.messages",
    "flush.ms",
    "retention.ms",
    "retention.bytes",
    "file.delete.delay.ms",
    "max.message.bytes",
    "message.timestamp.type",
    "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms",
    "preallocate",
    "cleanup.policy",
    "compression.type",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "min.cleanable.dirty.ratio",
    "seglog.max.segment.mappings",
];

fn invalid(key: &str, value: &str, allowed: impl fmt::Display) -> Error {
    Error::InvalidConfig {
        key: key.to_owned(),
        value: value.to_owned(),
        allowed: allowed.to_string(),
    }
}

fn number<T>(key: &str, value: &str, min: T, max: T) -> Result<T>
where
    T: FromStr + PartialOrd + fmt::Display + Copy,
{
    let allowed = || format!("an integer in [{min}, {max}]");
    let parsed: T = value
        .trim()
        .parse()
        .map_err(|_| invalid(key, value, allowed()))?;
    if parsed < min || parsed > max {
        return Err(invalid(key, value, allowed()));
    }
    Ok(parsed)
}

fn boolean(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(key, value, "true or false")),
    }
}

impl LogConfig {
    /// Parses Kafka-style properties text (`key=value` or `key: value` lines; `#` and `!` start
    /// comments) on top of the defaults, then checks the cross-field rules.
    ///
    /// ```
    /// use seglog_log::{CleanupPolicy, Error, LogConfig};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let config = LogConfig::parse(
    ///     "# orders\nsegment.bytes=2097152\nretention.ms: -1\ncleanup.policy=compact,delete\n",
    /// )?;
    /// assert_eq!(config.segment_bytes, 2 << 20);
    /// assert_eq!(config.retention_ms, -1);
    /// assert_eq!(config.cleanup_policy, CleanupPolicy { delete: true, compact: true });
    /// assert_eq!(config.index_interval_bytes, 4096); // Kafka's default: the key is not set
    ///
    /// // An invalid value is refused with the key, the value and what is allowed.
    /// let err = LogConfig::parse("segment.bytes=1000").unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "invalid value \"1000\" for configuration segment.bytes: \
    ///      must be an integer in [1048576, 2147483647]"
    /// );
    /// let Error::InvalidConfig { key, value, allowed } = err else {
    ///     unreachable!("an invalid value")
    /// };
    /// assert_eq!((key.as_str(), value.as_str()), ("segment.bytes", "1000"));
    /// assert_eq!(allowed, "an integer in [1048576, 2147483647]");
    /// # Ok(())
    /// # }
    /// ```
    pub fn parse(text: &str) -> Result<Self> {
        let mut config = Self::default();
        for line in text.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') || line.starts_with('!') {
                continue;
            }
            let split = line
                .find(['=', ':'])
                .ok_or_else(|| invalid(line, "", "a key=value line"))?;
            let (key, value) = line.split_at(split);
            config.set(key.trim(), value.get(1..).unwrap_or_default().trim())?;
        }
        config.validate()?;
        Ok(config)
    }

    /// Parses `key=value` pairs (as given on a command line) on top of the defaults.
    pub fn from_pairs<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> Result<Self> {
        let mut config = Self::default();
        for (key, value) in pairs {
            config.set(key, value)?;
        }
        config.validate()?;
        Ok(config)
    }

    /// Sets one key with Kafka's validator. Unknown keys are rejected, so a typo cannot pass silently.
    ///
    /// ```
    /// use seglog_log::{Error, LogConfig};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let mut config = LogConfig::default();
    /// config.set("retention.bytes", "1073741824")?;
    /// assert_eq!(config.retention_bytes, 1 << 30);
    /// // `internal.segment.bytes` (for tests) bypasses the 1 MiB minimum of `segment.bytes`.
    /// assert!(config.set("segment.bytes", "4096").is_err());
    /// config.set("internal.segment.bytes", "4096")?;
    /// assert_eq!(config.segment_bytes, 4096);
    ///
    /// let typo = config.set("retention.byte", "1");
    /// assert!(matches!(typo, Err(Error::UnknownConfig { key }) if key == "retention.byte"));
    /// # Ok(())
    /// # }
    /// ```
    pub fn set(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "segment.bytes" => {
                self.segment_bytes = number(key, value, defaults::MIN_SEGMENT_BYTES, i32::MAX)?;
            }
            "internal.segment.bytes" => {
                self.segment_bytes =
                    number(key, value, defaults::MIN_INTERNAL_SEGMENT_BYTES, i32::MAX)?;
            }
            "segment.ms" => self.segment_ms = number(key, value, 1, i64::MAX)?,
            "segment.jitter.ms" => self.segment_jitter_ms = number(key, value, 0, i64::MAX)?,
            "segment.index.bytes" => self.segment_index_bytes = number(key, value, 4, i32::MAX)?,
            "index.interval.bytes" => self.index_interval_bytes = number(key, value, 0, i32::MAX)?,
            "flush.messages" => self.flush_messages = number(key, value, 1, i64::MAX)?,
            "flush.ms" => self.flush_ms = number(key, value, 0, i64::MAX)?,
            "retention.ms" => self.retention_ms = number(key, value, -1, i64::MAX)?,
            "retention.bytes" => self.retention_bytes = number(key, value, i64::MIN, i64::MAX)?,
            "file.delete.delay.ms" => self.file_delete_delay_ms = number(key, value, 0, i64::MAX)?,
            "max.message.bytes" => self.max_message_bytes = number(key, value, 0, i32::MAX)?,
            "message.timestamp.type" => {
                self.message_timestamp_type = match value.trim() {
                    "CreateTime" => MessageTimestampType::CreateTime,
                    "LogAppendTime" => MessageTimestampType::LogAppendTime,
                    _ => return Err(invalid(key, value, "one of CreateTime, LogAppendTime")),
                };
            }
            "message.timestamp.before.max.ms" => {
                self.message_timestamp_before_max_ms = number(key, value, 0, i64::MAX)?;
            }
            "message.timestamp.after.max.ms" => {
                self.message_timestamp_after_max_ms = number(key, value, 0, i64::MAX)?;
            }
            "preallocate" => self.preallocate = boolean(key, value)?,
            "cleanup.policy" => self.cleanup_policy = parse_cleanup_policy(key, value)?,
            "compression.type" => {
                self.compression_type = match value.trim() {
                    "producer" => CompressionType::Producer,
                    "uncompressed" => CompressionType::Uncompressed,
                    "gzip" => CompressionType::Gzip,
                    "snappy" => CompressionType::Snappy,
                    "lz4" => CompressionType::Lz4,
                    "zstd" => CompressionType::Zstd,
                    _ => {
                        return Err(invalid(
                            key,
                            value,
                            "one of uncompressed, zstd, lz4, snappy, gzip, producer",
                        ));
                    }
                };
            }
            "delete.retention.ms" => self.delete_retention_ms = number(key, value, 0, i64::MAX)?,
            "min.compaction.lag.ms" => {
                self.min_compaction_lag_ms = number(key, value, 0, i64::MAX)?;
            }
            "max.compaction.lag.ms" => {
                self.max_compaction_lag_ms = number(key, value, 1, i64::MAX)?;
            }
            "min.cleanable.dirty.ratio" => {
                let allowed = "a number in [0.0, 1.0]";
                let ratio: f64 = value
                    .trim()
                    .parse()
                    .map_err(|_| invalid(key, value, allowed))?;
                if !(0.0..=1.0).contains(&ratio) {
                    return Err(invalid(key, value, allowed));
                }
                self.min_cleanable_dirty_ratio = ratio;
            }
            "seglog.max.segment.mappings" => {
                let max = number(key, value, -1, i64::MAX)?;
                if (0..defaults::MIN_MAX_SEGMENT_MAPPINGS).contains(&max) {
                    return Err(invalid(
                        key,
                        value,
                        format!(
                            "-1 (no limit) or an integer in [{}, {}]",
                            defaults::MIN_MAX_SEGMENT_MAPPINGS,
                            i64::MAX
                        ),
                    ));
                }
                self.max_segment_mappings = max;
            }
            _ => {
                return Err(Error::UnknownConfig {
                    key: key.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// Checks the rules that involve more than one key, and the ranges of fields set directly.
    pub fn validate(&self) -> Result<()> {
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms {
            return Err(invalid(
                "min.compaction.lag.ms",
                &self.min_compaction_lag_ms.to_string(),
                format!(
                    "at most max.compaction.lag.ms ({})",
                    self.max_compaction_lag_ms
                ),
            ));
        }
        if (-1..defaults::MIN_MAX_SEGMENT_MAPPINGS).contains(&self.max_segment_mappings)
            && self.max_segment_mappings != -1
            || self.max_segment_mappings < -1
        {
            return Err(invalid(
                "seglog.max.segment.mappings",
                &self.max_segment_mappings.to_string(),
                format!(
                    "-1 (no limit) or at least {}",
                    defaults::MIN_MAX_SEGMENT_MAPPINGS
                ),
            ));
        }
        let checks: [(&str, i64, i64); 5] = [
            ("internal.segment.bytes", self.segment_bytes.into(), 14),
            ("segment.ms", self.segment_ms, 1),
            ("segment.index.bytes", self.segment_index_bytes.into(), 4),
            ("index.interval.bytes", self.index_interval_bytes.into(), 0),
            ("flush.messages", self.flush_messages, 1),
        ];
        for (key, value, min) in checks {
            if value < min {
                return Err(invalid(key, &value.to_string(), format!("at least {min}")));
            }
        }
        Ok(())
    }

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

    /// The configuration as properties text that [`LogConfig::parse`] reads back.
    pub fn to_properties(&self) -> String {
        let policy = match (self.cleanup_policy.delete, self.cleanup_policy.compact) {
            (true, true) => "delete,compact",
            (true, false) => "delete",
            (false, true) => "compact",
            (false, false) => "",
        };
        let timestamp_type = match self.message_timestamp_type {
            MessageTimestampType::CreateTime => "CreateTime",
            MessageTimestampType::LogAppendTime => "LogAppendTime",
        };
        let compression = match self.compression_type {
            CompressionType::Producer => "producer",
            CompressionType::Uncompressed => "uncompressed",
            CompressionType::Gzip => "gzip",
            CompressionType::Snappy => "snappy",
            CompressionType::Lz4 => "lz4",
            CompressionType::Zstd => "zstd",
        };
        let segment_key = if self.segment_bytes < defaults::MIN_SEGMENT_BYTES {
            "internal.segment.bytes"
        } else {
            "segment.bytes"
        };
        [
            format!("{segment_key}={}", self.segment_bytes),
            format!("segment.ms={}", self.segment_ms),
            format!("segment.jitter.ms={}", self.segment_jitter_ms),
            format!("segment.index.bytes={}", self.segment_index_bytes),
            format!("index.interval.bytes={}", self.index_interval_bytes),
            format!("flush.messages={}", self.flush_messages),
            format!("flush.ms={}", self.flush_ms),
            format!("retention.ms={}", self.retention_ms),
            format!("retention.bytes={}", self.retention_bytes),
            format!("file.delete.delay.ms={}", self.file_delete_delay_ms),
            format!("max.message.bytes={}", self.max_message_bytes),
            format!("message.timestamp.type={timestamp_type}"),
            format!(
                "message.timestamp.before.max.ms={}",
                self.message_timestamp_before_max_ms
            ),
            format!(
                "message.timestamp.after.max.ms={}",
                self.message_timestamp_after_max_ms
            ),
            format!("preallocate={}", self.preallocate),
            format!("cleanup.policy={policy}"),
            format!("compression.type={compression}"),
            format!("delete.retention.ms={}", self.delete_retention_ms),
            format!("min.compaction.lag.ms={}", self.min_compaction_lag_ms),
            format!("max.compaction.lag.ms={}", self.max_compaction_lag_ms),
            format!(
                "min.cleanable.dirty.ratio={}",
                self.min_cleanable_dirty_ratio
            ),
            format!("seglog.max.segment.mappings={}", self.max_segment_mappings),
        ]
        .join("\n")
            + "\n"
    }
}

fn parse_cleanup_policy(key: &str, value: &str) -> Result<CleanupPolicy> {
    let mut policy = CleanupPolicy {
        delete: false,
        compact: false,
    };
    for item in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item {
            "delete" => policy.delete = true,
            "compact" => policy.compact = true,
            _ => return Err(invalid(key, value, "a list of compact, delete")),
        }
    }
    Ok(policy)
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
    fn max_segment_mappings_is_minus_one_or_at_least_sixteen() {
        assert_eq!(LogConfig::default().max_segment_mappings, -1);
        let c = LogConfig::from_pairs([("seglog.max.segment.mappings", "16")]).unwrap();
        assert_eq!(c.max_segment_mappings, 16);
        assert_eq!(LogConfig::parse(&c.to_properties()).unwrap(), c);
        for bad in ["0", "15", "-2", "many"] {
            let err = LogConfig::from_pairs([("seglog.max.segment.mappings", bad)]).unwrap_err();
            assert!(
                err.to_string().contains("seglog.max.segment.mappings"),
                "{bad}: {err}"
            );
        }
        let direct = LogConfig {
            max_segment_mappings: 3,
            ..LogConfig::default()
        };
        assert!(direct.validate().is_err());
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
