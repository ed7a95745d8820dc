//! Read-only inspection of partition directories and log directories, for tools such as
//! `seglog dump`, `check`, `consume`, `offsets` and `stats`.
//!
//! Nothing here takes the log directory's `.lock` or writes anything: every file is opened
//! read-only ([`OpenMode::ReadOnly`](crate::OpenMode) for `.log` files, mmap-index's read-only
//! open for indexes), so it can look at a log another process is writing, or at files the process
//! may not write. It reads the same on-disk state the loader reads, listed through the same
//! classification ([`FileKind`]), but repairs nothing: what a loader would fix,
//! [`LogDirView::check`] reports.
//!
//! - [`LogDirView`]: a log directory (or one partition directory) and its partition directories;
//!   [`LogDirView::check`] gives the [`CheckReport`].
//! - [`PartitionView`]: a partition directory's files ([`PartitionFile`]), its segments, its log
//!   start and end offsets, its last stable offset and aborted transactions, the records a
//!   consumer at an isolation level reads from an offset (never a control record), and lookups
//!   by time; the high watermark and topic id a broker left for it.
//! - [`SegmentLog`]: one `.log` opened read-only, walked batch by batch with Kafka's stop rules,
//!   or with recovery's offset rules too ([`SegmentLog::judged_batches`]).

mod check;
mod consumer;
mod high_watermark;
mod index;
mod judged;
mod log_dir;
mod partition;
mod records;
mod segment_log;
mod txn_source;

pub use check::{CheckReport, Finding, Repair, Severity};
pub use index::{open_offset_index, open_time_index};
pub use judged::{JudgedEnd, next_segment_base_offset};
pub use log_dir::{LogDirView, partition_dirs};
pub use partition::{PartitionView, SegmentEntry};
pub use records::{FoundRecord, RecordsRead};
pub use segment_log::SegmentLog;

pub use crate::listing::{FileKind, PartitionFile};
pub use seglog_mmap_index::{
    CorruptKind, IndexKind, OffsetIndex, OffsetPosition, Problem, TimeIndex, TimestampOffset,
    VerifyReport,
};
pub use seglog_segment::scan::{Scan, ScanEnd};
pub use seglog_segment::txn_index::{AbortedTxn, TransactionIndex, TxnIndexSearchResult};
pub use seglog_segment::verify::OffsetBounds;
