//! The `with_*` setters of [`LoadOptions`] (the struct is in `load.rs`).

use super::load::LoadOptions;
use crate::setters::with_setters;

with_setters!(LoadOptions {
    recovery_point: i64 => with_recovery_point,
    log_start_offset: i64 => with_log_start_offset,
    had_clean_shutdown: bool => with_had_clean_shutdown,
    discard: bool => with_discard,
    topic_id: Option<crate::TopicId> => with_topic_id,
    high_watermark: Option<i64> => with_high_watermark,
});
