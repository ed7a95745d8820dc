//! A partition's high watermark and topic id as a broker left them, read-only: the
//! `replication-offset-checkpoint` of the log directory above it, and its `partition.metadata`.
//!
//! Offline there is no leader to ask: the checkpointed high watermark is what a Kafka consumer
//! would have been allowed to read when the broker last wrote it (at its checkpoint interval,
//! and on shutdown). Records past it were never exposed (a SIGKILLed broker's tail, not yet
//! replicated), so the read-only consumer and the offsets lookups stop there; a partition with
//! no entry reads to its log end.

use seglog_fs::FileSystem;

use super::partition::PartitionView;
use crate::checkpoint::{OffsetCheckpoint, REPLICATION_OFFSET_CHECKPOINT};
use crate::error::Result;
use crate::partition_metadata::{PartitionMetadata, PartitionMetadataFile};

impl<F: FileSystem> PartitionView<F> {
    /// The partition's entry in the `replication-offset-checkpoint` of the log directory above
    /// it, as written (not clamped); `None` without a file or an entry.
    pub fn checkpointed_high_watermark(&self) -> Result<Option<i64>> {
        let Some(log_dir) = self.dir().parent() else {
            return Ok(None);
        };
        let entries = OffsetCheckpoint::new(
            self.fs().clone(),
            log_dir.join(REPLICATION_OFFSET_CHECKPOINT),
        )
        .read()?;
        Ok(entries.get(self.topic_partition()).copied())
    }

    /// The high watermark a broker opening the partition would take (Kafka's
    /// `updateHighWatermark`): the checkpointed one bounded to the log start and end offsets;
    /// `None` when the checkpoint has no entry for the partition.
    pub fn high_watermark(&self) -> Result<Option<i64>> {
        let Some(checkpointed) = self.checkpointed_high_watermark()? else {
            return Ok(None);
        };
        let log_end = self.log_end_offset()?;
        let log_start = self.log_start_offset();
        Ok(Some(if checkpointed < log_start {
            log_start
        } else {
            checkpointed.min(log_end)
        }))
    }

    /// The partition's `partition.metadata`, read as Kafka reads it; `None` when it has none.
    pub fn partition_metadata(&self) -> Result<Option<PartitionMetadata>> {
        PartitionMetadataFile::in_dir(self.fs().clone(), self.dir()).read()
    }
}
