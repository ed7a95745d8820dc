//! Reading and writing a configuration as Kafka-style properties, one key at a time with Kafka's
//! validators.

use std::fmt;
use std::str::FromStr;

use super::{CleanupPolicy, CompressionType, LogConfig, MessageTimestampType, defaults, invalid};
use crate::error::{Error, Result};

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
