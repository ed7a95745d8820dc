//! A segment's valid prefix as the recovery plan's scan found it, and the producer-state replay
//! of one without producer ids, which needs no read of the `.log`.

use seglog_fs::FileSystem;
use seglog_segment::txn_index::AbortedTxn;

use crate::producer::ProducerStateManager;

/// What a scan with recovery's rules found of a segment's valid prefix (the recovery plan's
/// `scan_segment`), enough to replay producer state over it without scanning it again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ValidPrefix {
    /// Its bytes.
    pub(crate) valid_bytes: u64,
    /// Its v2 batches with a producer id.
    pub(crate) producer_id_batches: u64,
    /// The last offset of its last v2 batch.
    pub(crate) last_v2_offset: Option<i64>,
}

impl ValidPrefix {
    /// The replay of a prefix without producer ids, without reading it: such a v2 batch only
    /// moves the state's end offset past itself, and the offsets of a valid prefix only
    /// increase, so the last v2 batch decides (if it is at `from` or later; left behind, the end
    /// offset would make the next segment's rebuild walk this one again). `None` when a batch
    /// has a producer id and must be read.
    pub(crate) fn replay_without_reading<F: FileSystem>(
        &self,
        manager: &mut ProducerStateManager<F>,
        from: i64,
    ) -> Option<Vec<AbortedTxn>> {
        if self.producer_id_batches > 0 {
            return None;
        }
        if let Some(last) = self.last_v2_offset.filter(|l| *l >= from) {
            manager.update_map_end_offset(last.saturating_add(1));
        }
        Some(Vec::new())
    }
}
