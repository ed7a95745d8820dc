//! What the log directory knows about a partition when it opens it ([`LoadOptions`]), with its
//! `with_*` setters.

use crate::setters::with_setters;

/// What the log directory knows about a partition when it opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct LoadOptions {
    /// The checkpointed recovery point (0 when there is none).
    pub recovery_point: i64,
    /// The checkpointed log start offset (0 when there is none).
    pub log_start_offset: i64,
    /// Whether the log directory had a clean-shutdown marker.
    pub had_clean_shutdown: bool,
    /// Delete what recovery drops instead of moving it to the partition's quarantine.
    pub discard: bool,
    /// The topic id the partition must have (Kafka's `UnifiedLog.create` `topicId`): written
    /// to a new `partition.metadata`, or checked against an existing one
    /// ([`Error::InconsistentTopicId`](crate::Error::InconsistentTopicId)).
    pub topic_id: Option<crate::TopicId>,
    /// The checkpointed high watermark (`replication-offset-checkpoint`), clamped to the log
    /// start and end offsets as Kafka's `updateHighWatermark` clamps it; `None`: the log end
    /// offset.
    pub high_watermark: Option<i64>,
}

with_setters!(LoadOptions {
    recovery_point: i64 => with_recovery_point,
    log_start_offset: i64 => with_log_start_offset,
    had_clean_shutdown: bool => with_had_clean_shutdown,
    discard: bool => with_discard,
    topic_id: Option<crate::TopicId> => with_topic_id,
    high_watermark: Option<i64> => with_high_watermark,
});
