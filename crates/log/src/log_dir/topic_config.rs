//! A topic's changed configuration applied to its open partitions, as Kafka's
//! `LogManager.updateTopicConfig`: each partition's `seglog.properties` replaced (durably,
//! through a temporary file), then the log's configuration (`PartitionLog::update_config`).

use seglog_fs::FileSystem;

use super::{LogDir, PARTITION_CONFIG_FILE};
use crate::checkpoint::write_atomically;
use crate::config::LogConfig;
use crate::error::Result;

impl<F: FileSystem> LogDir<F> {
    /// Gives every open partition of `topic` the configuration `config` (checked first: an
    /// invalid one changes nothing), kept in its `seglog.properties` so that the next open reads
    /// it, and applied to the open log as [`PartitionLog::update_config`] does. Returns how many
    /// partitions took it (0 when the directory holds none of `topic`).
    ///
    /// [`PartitionLog::update_config`]: crate::PartitionLog::update_config
    ///
    /// ```
    /// use seglog_log::{LogConfig, LogDir, LogDirOptions, RealFs, TopicPartition};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let root = tempfile::tempdir()?;
    /// let (dir, _) = LogDir::open(RealFs, root.path(), LogDirOptions::default())?;
    /// for p in 0..2 {
    ///     dir.create_log(&TopicPartition::new("orders", p), None)?;
    /// }
    /// let zstd = LogConfig::parse("compression.type=zstd\nmin.insync.replicas=2")?;
    /// assert_eq!(dir.update_topic_config("orders", &zstd)?, 2);
    /// let log = dir.log(&TopicPartition::new("orders", 1)).expect("open");
    /// assert_eq!(*log.config(), zstd);
    /// # dir.close()?;
    /// # drop(dir);
    /// // The next open reads it back.
    /// let (dir, _) = LogDir::open(RealFs, root.path(), LogDirOptions::default())?;
    /// assert_eq!(*dir.log(&TopicPartition::new("orders", 0)).expect("open").config(), zstd);
    /// # Ok(())
    /// # }
    /// ```
    pub fn update_topic_config(&self, topic: &str, config: &LogConfig) -> Result<usize> {
        config.validate()?;
        let logs: Vec<_> = self
            .logs()
            .into_iter()
            .filter(|log| log.topic_partition().topic == topic)
            .collect();
        let text = config.to_properties();
        for log in &logs {
            write_atomically(&self.fs, &log.dir().join(PARTITION_CONFIG_FILE), &text)?;
            log.update_config(config.clone())?;
        }
        Ok(logs.len())
    }
}
