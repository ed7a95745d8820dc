//! A changed configuration applied to an open log, as Kafka's `UnifiedLog.updateConfig` (and
//! `LocalLog.updateConfig`) apply it: the new configuration replaces the old whole, and each
//! setting takes effect where it is next read. Roll (`segment.bytes`, `segment.ms`,
//! `segment.jitter.ms`) at the next append's roll check; index settings (`segment.index.bytes`,
//! `index.interval.bytes`, `preallocate`) for the segments created from then on, the active one
//! keeping its own as in Kafka; retention, cleaner and flush settings at their next run;
//! `compression.type`, timestamps and `max.message.bytes` at the next append.
//!
//! seglog's own `seglog.max.segment.mappings` and `seglog.max.open.segment.files` size budgets
//! made when the log opens: a change to them is kept and applies at the next open.

use seglog_fs::FileSystem;

use super::PartitionLog;
use crate::config::LogConfig;
use crate::error::Result;

impl<F: FileSystem> PartitionLog<F> {
    /// Replaces the log's configuration with `config` (checked first: an invalid one changes
    /// nothing) and returns the old one, as Kafka's `UnifiedLog.updateConfig`. It waits for a
    /// running append, roll or retention pass, so each sees one configuration whole.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use seglog_log::{LoadOptions, LogConfig, PartitionLog, SystemClock};
    /// # use seglog_fs::RealFs;
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// # let time = Arc::new(SystemClock);
    /// let (log, _) = PartitionLog::open(
    ///     RealFs,
    ///     &root.path().join("orders-0"),
    ///     LogConfig::default(),
    ///     LoadOptions::default(),
    ///     time,
    /// )?;
    /// let old = log.update_config(LogConfig::parse("segment.bytes=2097152\nretention.ms=-1")?)?;
    /// assert_eq!(old.segment_bytes, 1 << 30);
    /// assert_eq!((log.config().segment_bytes, log.config().retention_ms), (2 << 20, -1));
    /// # Ok(())
    /// # }
    /// ```
    pub fn update_config(&self, config: LogConfig) -> Result<std::sync::Arc<LogConfig>> {
        config.validate()?;
        let _writer = self.inner.writer.lock();
        let new = std::sync::Arc::new(config);
        Ok(std::mem::replace(&mut *self.inner.config.write(), new))
    }
}
