//! The partition's topic id, kept in its `partition.metadata` as Kafka's `UnifiedLog` keeps it
//! (`initializeTopicId` on open, `assignTopicId` later).
//!
//! Kafka records an id to flush on a scheduler thread (and on close); seglog writes the file
//! before the call that gives the id returns, so an id a caller was told is assigned is on disk.

use seglog_fs::FileSystem;

use super::PartitionLog;
use crate::error::{Error, Result};
use crate::partition_metadata::PartitionMetadataFile;
use crate::topic_id::TopicId;

impl<F: FileSystem> PartitionLog<F> {
    /// The topic id: the one in the partition's `partition.metadata`, or the one assigned since
    /// it opened; `None` when it has none.
    pub fn topic_id(&self) -> Option<TopicId> {
        *self.inner.topic_id.lock()
    }

    /// Gives the partition its topic id (Kafka's `UnifiedLog.assignTopicId`): written to
    /// `partition.metadata` (durably) when it has none; nothing to do when it has this one;
    /// [`Error::InconsistentTopicId`] when it has another. The zero id is refused.
    pub fn assign_topic_id(&self, topic_id: TopicId) -> Result<()> {
        let mut current = self.inner.topic_id.lock();
        match *current {
            Some(found) if found == topic_id => Ok(()),
            Some(found) => Err(self.inconsistent(topic_id, found)),
            None => {
                self.refuse_zero(topic_id)?;
                self.metadata_file().write(topic_id)?;
                *current = Some(topic_id);
                Ok(())
            }
        }
    }

    /// Kafka's `initializeTopicId`, run by the load: the id in `partition.metadata` if there is
    /// one (refused if it differs from `given`), else `given`, written.
    pub(super) fn initialize_topic_id(&self, given: Option<TopicId>) -> Result<()> {
        match self.metadata_file().read()? {
            Some(file) => {
                if let Some(given) = given
                    && given != file.topic_id
                {
                    return Err(self.inconsistent(given, file.topic_id));
                }
                *self.inner.topic_id.lock() = Some(file.topic_id);
                Ok(())
            }
            None => given.map_or(Ok(()), |id| self.assign_topic_id(id)),
        }
    }

    fn metadata_file(&self) -> PartitionMetadataFile<F> {
        PartitionMetadataFile::in_dir(self.inner.fs.clone(), &self.inner.dir)
    }

    fn inconsistent(&self, assigned: TopicId, found: TopicId) -> Error {
        Error::InconsistentTopicId {
            partition: self.inner.tp.to_string(),
            assigned,
            found,
        }
    }

    fn refuse_zero(&self, topic_id: TopicId) -> Result<()> {
        if topic_id.is_zero() {
            return Err(Error::InvalidRequest {
                partition: self.inner.tp.to_string(),
                reason: "the zero topic id (AAAAAAAAAAAAAAAAAAAAAA) is no topic's".to_owned(),
            });
        }
        Ok(())
    }
}
