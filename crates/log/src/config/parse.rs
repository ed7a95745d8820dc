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
    "compression.gzip.level",
    "compression.lz4.level",
    "compression.zstd.level",
    "delete.retention.ms",
    "min.compaction.lag.ms",
    "max.compaction.lag.ms",
    "min.cleanable.dirty.ratio",
    "seglog.max.segment.mappings",
    "seglog.max.open.segment.files",
    "max.decompressed.message.bytes",
    "unclean.leader.election.enable",
    "min.insync.replicas",
    "leader.replication.throttled.replicas",
    "follower.replication.throttled.replicas",
    "remote.storage.enable",
    "local.retention.ms",
    "local.retention.bytes",
    "remote.log.copy.disable",
    "remote.copy.lag.ms",
    "remote.copy.lag.bytes",
    "remote.log.delete.on.disable",
    "errors.deadletterqueue.group.enable",
];

pub(super) fn number<T>(key: &str, value: &str, min: T, max: T) -> Result<T>
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

pub(super) fn boolean(key: &str, value: &str) -> Result<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(invalid(key, value, "true or false")),
    }
}

impl LogConfig {
    /// Parses Kafka-style properties text on top of the defaults, then checks the cross-field
    /// rules. The text is read as Java's `Properties.load(Reader)` reads it (the `java-properties`
    /// crate): `key=value`, `key: value` or `key value` lines, `#` and `!` comments, a line ending
    /// in an odd number of backslashes continued on the next, and the escapes `\uXXXX`, `\t`,
    /// `\n`, `\=`, `\:` and `\\`; a later line for a key wins, as in Java.
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
        for (key, value) in read_properties(text)? {
            config.set(key.trim(), value.trim())?;
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
            "compression.gzip.level" => {
                let level = value.trim().parse::<i32>().ok();
                self.compression_gzip_level = match level {
                    Some(l) if l == -1 || (1..=9).contains(&l) => l,
                    _ => return Err(invalid(key, value, "[1,...,9] or -1")),
                };
            }
            "compression.lz4.level" => self.compression_lz4_level = number(key, value, 1, 17)?,
            "compression.zstd.level" => {
                self.compression_zstd_level = number(key, value, -131_072, 22)?;
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
            "seglog.max.segment.mappings" | "seglog.max.open.segment.files" => {
                self.set_seglog(key, value)?;
            }
            _ => {
                if !self.set_inert(key, value)? {
                    return Err(Error::UnknownConfig {
                        key: key.to_owned(),
                    });
                }
            }
        }
        Ok(())
    }

    /// The keys of seglog's own (`seglog.*`), each a cap with -1 for none and 0 for the default
    /// derived from the process's limits.
    fn set_seglog(&mut self, key: &str, value: &str) -> Result<()> {
        match key {
            "seglog.max.segment.mappings" => {
                let max = number(key, value, -1, i64::MAX)?;
                if (1..defaults::MIN_MAX_SEGMENT_MAPPINGS).contains(&max) {
                    return Err(invalid(
                        key,
                        value,
                        format!(
                            "-1 (no limit), 0 (from the process's limits) or an integer in [{}, {}]",
                            defaults::MIN_MAX_SEGMENT_MAPPINGS,
                            i64::MAX
                        ),
                    ));
                }
                self.max_segment_mappings = max;
            }
            "seglog.max.open.segment.files" => {
                self.max_open_segment_files = number(key, value, -1, i64::MAX)?;
            }
            _ => {
                return Err(Error::UnknownConfig {
                    key: key.to_owned(),
                });
            }
        }
        Ok(())
    }

    /// The configuration as properties text that [`LogConfig::parse`] reads back, one
    /// `key=value` line per key in [`KEYS`] order (written by the `java-properties` crate, which
    /// escapes what Java's `Properties.store` escapes).
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
        let pairs: [(&str, String); 26] = [
            (segment_key, self.segment_bytes.to_string()),
            ("segment.ms", self.segment_ms.to_string()),
            ("segment.jitter.ms", self.segment_jitter_ms.to_string()),
            ("segment.index.bytes", self.segment_index_bytes.to_string()),
            (
                "index.interval.bytes",
                self.index_interval_bytes.to_string(),
            ),
            ("flush.messages", self.flush_messages.to_string()),
            ("flush.ms", self.flush_ms.to_string()),
            ("retention.ms", self.retention_ms.to_string()),
            ("retention.bytes", self.retention_bytes.to_string()),
            (
                "file.delete.delay.ms",
                self.file_delete_delay_ms.to_string(),
            ),
            ("max.message.bytes", self.max_message_bytes.to_string()),
            ("message.timestamp.type", timestamp_type.to_owned()),
            (
                "message.timestamp.before.max.ms",
                self.message_timestamp_before_max_ms.to_string(),
            ),
            (
                "message.timestamp.after.max.ms",
                self.message_timestamp_after_max_ms.to_string(),
            ),
            ("preallocate", self.preallocate.to_string()),
            ("cleanup.policy", policy.to_owned()),
            ("compression.type", compression.to_owned()),
            (
                "compression.gzip.level",
                self.compression_gzip_level.to_string(),
            ),
            (
                "compression.lz4.level",
                self.compression_lz4_level.to_string(),
            ),
            (
                "compression.zstd.level",
                self.compression_zstd_level.to_string(),
            ),
            ("delete.retention.ms", self.delete_retention_ms.to_string()),
            (
                "min.compaction.lag.ms",
                self.min_compaction_lag_ms.to_string(),
            ),
            (
                "max.compaction.lag.ms",
                self.max_compaction_lag_ms.to_string(),
            ),
            (
                "min.cleanable.dirty.ratio",
                self.min_cleanable_dirty_ratio.to_string(),
            ),
            (
                "seglog.max.segment.mappings",
                self.max_segment_mappings.to_string(),
            ),
            (
                "seglog.max.open.segment.files",
                self.max_open_segment_files.to_string(),
            ),
        ];
        let inert = self.inert_pairs();
        write_properties(
            pairs
                .iter()
                .chain(inert.iter())
                .map(|(k, v)| (*k, v.as_str())),
        )
    }
}

/// The `(key, value)` pairs of properties text, in file order, escapes and continuations
/// resolved. A malformed escape is refused with its line number.
fn read_properties(text: &str) -> Result<Vec<(String, String)>> {
    let mut pairs = Vec::new();
    java_properties::PropertiesIter::new_with_encoding(text.as_bytes(), encoding_rs::UTF_8)
        .read_into(|key, value| pairs.push((key, value)))
        .map_err(|e| {
            let line = e
                .line_number()
                .map_or_else(|| "text".to_owned(), |n| format!("line {n}"));
            let text = e.to_string();
            let what = text.split(" (line_number").next().unwrap_or_default();
            invalid(&line, "", format!("well-formed properties text ({what})"))
        })?;
    Ok(pairs)
}

/// `pairs` as properties text, each key and value escaped as Java's `Properties.store` escapes.
fn write_properties<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a str)>) -> String {
    let mut bytes = Vec::new();
    let mut writer =
        java_properties::PropertiesWriter::new_with_encoding(&mut bytes, encoding_rs::UTF_8);
    // Writing UTF-8 into memory cannot fail: nothing is unmappable and a Vec takes every byte.
    for (key, value) in pairs {
        writer
            .write(key, value)
            .expect("writing properties into memory");
    }
    writer.finish().expect("writing properties into memory");
    drop(writer);
    String::from_utf8(bytes).expect("UTF-8 written as UTF-8")
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
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn java_escapes_continuations_and_comments() {
        let text = "! a Java comment\n\
                    # another\n\
                    segment.\\u006Ds = 60000\n\
                    retention\\.ms\\=x: 1\n\
                    cleanup.policy = compact,\\\n    delete\n\
                    message.timestamp.type LogAppendTime\n\
                    compression.type:\\u007a\\u0073td\n";
        // `retention\.ms\=x` is one key, "retention.ms=x" (an escaped `=` is not a separator).
        let err = LogConfig::parse(text).unwrap_err();
        assert!(
            matches!(&err, Error::UnknownConfig { key } if key == "retention.ms=x"),
            "{err}"
        );
        let config =
            LogConfig::parse(&text.replace("retention\\.ms\\=x: 1", "retention.ms: 1")).unwrap();
        assert_eq!(config.segment_ms, 60_000);
        assert_eq!(config.retention_ms, 1);
        assert_eq!(
            config.cleanup_policy,
            CleanupPolicy {
                delete: true,
                compact: true
            }
        );
        assert_eq!(
            config.message_timestamp_type,
            MessageTimestampType::LogAppendTime
        );
        assert_eq!(config.compression_type, CompressionType::Zstd);
    }

    #[test]
    fn an_escaped_colon_stays_in_the_key_and_a_later_line_wins() {
        let err = LogConfig::parse("flush\\:ms=1\n").unwrap_err();
        assert!(
            matches!(&err, Error::UnknownConfig { key } if key == "flush:ms"),
            "{err}"
        );
        let config = LogConfig::parse("flush.ms=1\nflush.ms=2\n").unwrap();
        assert_eq!(config.flush_ms, 2);
    }

    #[test]
    fn a_malformed_escape_names_its_line() {
        let err = LogConfig::parse("segment.ms=1\nflush.ms=\\u00zz\n").unwrap_err();
        let Error::InvalidConfig { key, allowed, .. } = &err else {
            panic!("{err}");
        };
        assert_eq!(key, "line 2");
        assert!(allowed.contains("not hex"), "{allowed}");
    }

    #[test]
    fn an_invalid_value_still_names_the_key() {
        let err = LogConfig::parse("min.cleanable.dirty.ratio = 1.5\n").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid value \"1.5\" for configuration min.cleanable.dirty.ratio: must be a number in [0.0, 1.0]"
        );
    }

    #[test]
    fn written_text_reads_back_and_escapes_what_java_escapes() {
        let mut config = LogConfig::default();
        config.set("cleanup.policy", "compact").unwrap();
        config.set("segment.ms", "12345").unwrap();
        config.set("min.cleanable.dirty.ratio", "0.25").unwrap();
        let text = config.to_properties();
        assert!(text.starts_with("segment.bytes=1073741824\n"), "{text}");
        assert_eq!(text.lines().count(), KEYS.len() - 1, "{text}");
        assert_eq!(LogConfig::parse(&text).unwrap(), config);
        // The writer escapes separators, comment characters and spaces, and the reader undoes it.
        let written = write_properties([("a key=x", "b:c #!\\ d")]);
        assert_eq!(written, "a\\ key\\=x=b\\:c\\ \\#\\!\\\\\\ d\n");
        assert_eq!(
            read_properties(&written).unwrap(),
            vec![("a key=x".to_owned(), "b:c #!\\ d".to_owned())]
        );
    }
}
