//! Swapping the cleaned segment in with Kafka's crash-safe protocol (`.cleaned`, `.swap`,
//! `.deleted`), the replaced segments' producer snapshots deleted with them.

use std::sync::atomic::Ordering;

use seglog_fs::FileSystem;
use seglog_segment::{LogSegment, naming};

use super::StopAfter;
use crate::error::Result;
use crate::loom::sync::Arc;
use crate::partition::Inner;

impl<F: FileSystem> Inner<F> {
    /// Kafka's `replaceSegments`: `.cleaned` becomes `.swap`, the new segment replaces the old ones
    /// in the list, the old ones become `.deleted`, and `.swap` loses its suffix. Returns false,
    /// changing nothing, if an old segment is no longer in the list.
    pub(super) fn swap_in(
        &self,
        group: &[Arc<LogSegment<F>>],
        cleaned: &Arc<LogSegment<F>>,
        stop: StopAfter,
    ) -> Result<bool> {
        let _writer = self.writer.lock();
        let current = self.segments.load();
        let intact = group.iter().all(|s| {
            current
                .get(&s.base_offset())
                .is_some_and(|c| Arc::ptr_eq(c, s))
        });
        if !intact {
            cleaned.delete()?;
            return Ok(false);
        }
        cleaned.change_file_suffixes(naming::CLEANED_FILE_SUFFIX, naming::SWAP_FILE_SUFFIX)?;
        self.sync_dir()?;
        if stop == StopAfter::Swapped {
            return Ok(true);
        }
        let base = cleaned.base_offset();
        self.segments.update(|s| {
            for old in group {
                s.remove(&old.base_offset());
            }
            s.insert(base, Arc::clone(cleaned));
        });
        // Kafka's `deleteProducerSnapshots` of the replaced segments: a removed segment's
        // snapshot goes with it, unless the cleaned segment took over its base offset.
        for old in group {
            let snapshot = if old.base_offset() == base {
                None
            } else {
                self.producer_state
                    .lock()
                    .remove_and_mark_snapshot_for_deletion(old.base_offset())?
            };
            self.schedule_delete_with_snapshot(Arc::clone(old), snapshot)?;
        }
        if stop == StopAfter::OldDeleted {
            return Ok(true);
        }
        cleaned.change_file_suffixes(naming::SWAP_FILE_SUFFIX, "")?;
        self.sync_dir()?;
        let _ = self.log_end_offset.load(Ordering::Acquire);
        Ok(true)
    }
}
