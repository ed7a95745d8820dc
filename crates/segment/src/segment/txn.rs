//! The segment's `.txnindex` seen from the log: Kafka's `LogSegment.updateTxnIndex` (an
//! aborted transaction completed by a marker in this segment) and the reads behind
//! `collectAbortedTransactions`.

use std::path::PathBuf;

use seglog_fs::FileSystem;
use seglog_mmap_index::OffsetPosition;

use super::LogSegment;
use crate::error::Result;
use crate::txn_index::{AbortedTxn, TxnIndexSearchResult};

impl<F: FileSystem> LogSegment<F> {
    /// Records an aborted transaction whose ABORT marker this segment holds (Kafka's
    /// `updateTxnIndex` for a completed transaction that is aborted, with the last stable offset
    /// at that point). The log calls it on append and when recovery replays producer state;
    /// [`LogSegment::recover`] itself only resets the index, as Kafka's does before that replay.
    pub fn append_aborted_txn(&self, txn: AbortedTxn) -> Result<()> {
        self.txn_index.lock().append(txn)
    }

    /// Kafka's `collectAbortedTxns` on this segment's `.txnindex`.
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<TxnIndexSearchResult> {
        self.txn_index
            .lock()
            .collect_aborted_txns(fetch_offset, upper_bound_offset)
    }

    /// Kafka's `fetchUpperBoundOffset`: the offset of the offset index's first entry at or past
    /// byte `start_position + fetch_size`, an offset beyond a fetch of `fetch_size` bytes that
    /// starts at `start_position`; `None` when the index has no such entry. A read_committed
    /// fetch collects the aborted transactions below it.
    pub fn fetch_upper_bound_offset(
        &self,
        start_offset: i64,
        start_position: u64,
        fetch_size: u64,
    ) -> Result<Option<i64>> {
        let start = OffsetPosition {
            offset: start_offset,
            position: u32::try_from(start_position).unwrap_or(u32::MAX),
        };
        let size = u32::try_from(fetch_size).unwrap_or(u32::MAX);
        Ok(self
            .offset_reader()?
            .fetch_upper_bound_offset(start, size)?
            .map(|p| p.offset))
    }

    /// Every entry of this segment's `.txnindex` (Kafka's `allAbortedTxns`).
    pub fn all_aborted_txns(&self) -> Result<Vec<AbortedTxn>> {
        self.txn_index.lock().all_aborted_txns()
    }

    /// Kafka's `txnIndex.sanityCheck()`, the one index check its loader runs on every segment.
    pub fn txn_index_sanity_check(&self) -> Result<()> {
        self.txn_index.lock().sanity_check()
    }

    /// The `.txnindex` file's current path (the file may not exist).
    pub fn txn_index_path(&self) -> PathBuf {
        self.txn_index.lock().path().to_path_buf()
    }
}
