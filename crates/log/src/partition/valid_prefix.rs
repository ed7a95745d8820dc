//! A segment's valid prefix as the recovery plan's scan found it, and the producer-state replay
//! of one whose batches with a producer id are all data batches, which needs no read of the
//! `.log`: their headers were kept by the scan.

use std::sync::Arc;

use seglog_fs::FileSystem;
use seglog_segment::IndexImage;
use seglog_segment::scan::BatchHeader;
use seglog_segment::txn_index::AbortedTxn;

use crate::error::Error;
use crate::producer::{ProducerStateManager, recover_data_header};

/// What a scan with recovery's rules found of a segment's valid prefix (the recovery plan's
/// `scan_segment`), enough to replay producer state over it without scanning it again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ValidPrefix {
    /// Its bytes.
    pub(crate) valid_bytes: u64,
    /// Its v2 batches with a producer id.
    pub(crate) producer_id_batches: u64,
    /// The last offset of its last v2 batch.
    pub(crate) last_v2_offset: Option<i64>,
    /// The headers of its v2 batches with a producer id, in order, when all are data batches
    /// and the scan kept them (`SegmentScan::producer_batches`).
    pub(crate) producer_batches: Option<Arc<[BatchHeader]>>,
    /// The indexes recovery writes for it, when the scan found the files different and the plan
    /// kept them (`SegmentScan::index_image`).
    pub(crate) index_image: Option<Arc<IndexImage>>,
    /// Its rising leader epochs (`SegmentScan::leader_epochs`), for the epoch cache's rebuild.
    pub(crate) leader_epochs: Arc<[(i32, i64)]>,
}

impl ValidPrefix {
    /// Whether recovery writes no `.txnindex` entry for the prefix, whatever the producer state
    /// before it: its batches with a producer id are all data batches, whose headers the scan
    /// kept (what [`Self::replay_without_reading`] replays). Only a marker completes a
    /// transaction.
    pub(crate) fn completes_no_transaction(&self) -> bool {
        self.producer_id_batches == 0
            || self.producer_batches.as_deref().is_some_and(|kept| {
                u64::try_from(kept.len()).is_ok_and(|n| n == self.producer_id_batches)
            })
    }

    /// The replay of the prefix from offset `from` without reading it, as the walk replays it
    /// (`replay_header`): each kept data batch with a producer id recorded, then the state's end
    /// offset set past the last v2 batch (the offsets of a valid prefix only increase, so the
    /// last decides; if it is at `from` or later: left behind, the end offset would make the
    /// next segment's rebuild walk this one again). A data batch completes no transaction, so
    /// there is no aborted one. `None` when the batches must be read: a batch with a producer id
    /// whose header was not kept (a control batch, or too many). A batch the state refuses is
    /// the replay's answer, with its position, as the walk's would be: the batches before it
    /// are replayed, so the caller must not walk them again.
    pub(crate) fn replay_without_reading<F: FileSystem>(
        &self,
        manager: &mut ProducerStateManager<F>,
        from: i64,
    ) -> Option<Result<Vec<AbortedTxn>, (u64, Error)>> {
        if self.producer_id_batches > 0 {
            let kept = self.producer_batches.as_deref()?;
            if u64::try_from(kept.len()).ok()? != self.producer_id_batches {
                return None;
            }
            for h in kept.iter().filter(|h| h.last_offset >= from) {
                if let Err(e) = recover_data_header(manager, h) {
                    return Some(Err((h.position, e)));
                }
            }
        }
        if let Some(last) = self.last_v2_offset.filter(|l| *l >= from) {
            manager.update_map_end_offset(last.saturating_add(1));
        }
        Some(Ok(Vec::new()))
    }
}
