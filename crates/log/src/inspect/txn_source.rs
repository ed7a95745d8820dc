//! Where an offline read takes a segment's aborted transactions from, and the producer state
//! replayed from the markers where it must: what Kafka serves after its own loader ran.
//!
//! Kafka's loader recovers every segment that holds offsets at or past the recovery point when
//! the log directory has no clean-shutdown marker (`LogLoader.recoverLog`), and a segment whose
//! `.txnindex` fails its sanity check (`LogSegment.sanityCheck`); recovery rebuilds that
//! `.txnindex` from the segment's markers. A missing `.txnindex` is rebuilt here too (the file was
//! lost, the markers were not). Such a segment's aborted transactions therefore come from the
//! markers (the producer state replayed read-only, as `check` replays it), never from the file;
//! `check` names the same rule ([`TxnTrust::recovered`]) in its `.txnindex` findings.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::naming;
use seglog_segment::txn_index::{AbortedTxn, TransactionIndex, TxnIndexSearchResult};

use super::partition::{PartitionView, SegmentEntry};
use crate::checkpoint::{OffsetCheckpoint, RECOVERY_POINT_CHECKPOINT};
use crate::clean_shutdown::CleanShutdownMarker;
use crate::error::{Error, Result};
use crate::listing::FileKind;
use crate::partition::txn_replay::replay_log;
use crate::producer::{ProducerStateManager, producer_state_at};

/// Why a segment's `.txnindex` is not served as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Untrusted {
    /// No clean-shutdown marker and the segment holds offsets at or past the recovery point:
    /// Kafka's loader recovers it.
    Unflushed,
    /// The file is missing.
    Missing,
    /// The file fails Kafka's sanity check (an entry below the base offset, an unknown version).
    FailsSanityCheck,
}

impl Untrusted {
    /// Why, for a reader.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Untrusted::Unflushed => {
                "no clean shutdown and the segment is at or past the recovery point"
            }
            Untrusted::Missing => "the file is missing",
            Untrusted::FailsSanityCheck => "the file fails Kafka's sanity check",
        }
    }
}

/// What the log directory says about the last shutdown: the clean-shutdown marker and the
/// partition's recovery point.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TxnTrust {
    clean_shutdown: bool,
    recovery_point: i64,
}

impl TxnTrust {
    /// Read from the log directory above `partition` (no marker and no checkpoint entry: an
    /// unclean stop with the recovery point at 0, as Kafka's loader takes it).
    pub(crate) fn of<F: FileSystem>(partition: &PartitionView<F>) -> Self {
        let log_dir = partition.dir().parent();
        let clean_shutdown =
            log_dir.is_some_and(|d| CleanShutdownMarker::new(partition.fs().clone(), d).exists());
        let recovery_point = log_dir
            .and_then(|d| {
                OffsetCheckpoint::new(partition.fs().clone(), d.join(RECOVERY_POINT_CHECKPOINT))
                    .read()
                    .ok()?
                    .get(partition.topic_partition())
                    .copied()
            })
            .unwrap_or(0);
        Self {
            clean_shutdown,
            recovery_point,
        }
    }

    /// Whether Kafka's loader recovers the segment at `base` (followed by one at `next_base`)
    /// whatever its files hold: no clean shutdown, and the segment reaches the recovery point.
    pub(crate) fn recovered(&self, next_base: Option<i64>) -> bool {
        !self.clean_shutdown && next_base.is_none_or(|n| n > self.recovery_point)
    }

    /// Why the `.txnindex` at `path` of the segment at `base` (next segment at `next_base`)
    /// is not served as it is, or `None` when it is.
    pub(crate) fn judge<F: FileSystem>(
        &self,
        fs: &F,
        path: &Path,
        base: i64,
        next_base: Option<i64>,
    ) -> Result<Option<Untrusted>> {
        if self.recovered(next_base) {
            return Ok(Some(Untrusted::Unflushed));
        }
        if !fs.exists(path) {
            return Ok(Some(Untrusted::Missing));
        }
        let index = TransactionIndex::open_read_only(fs.clone(), path, base)?;
        Ok(index
            .sanity_check()
            .is_err()
            .then_some(Untrusted::FailsSanityCheck))
    }
}

/// A segment's aborted transactions, from its `.txnindex` or from its markers.
enum Source<F: FileSystem> {
    Index(TransactionIndex<F>),
    Markers(Vec<AbortedTxn>),
}

/// The aborted transactions of every segment and the producer state after the last batch, as
/// an offline read needs them: each segment's source chosen by [`TxnTrust`], and one replay of
/// the markers serving both the untrusted segments and the last stable offset.
pub(crate) struct TxnState<F: FileSystem> {
    sources: BTreeMap<i64, Source<F>>,
    /// The producer state after the last batch.
    pub(crate) state: ProducerStateManager<F>,
}

impl<F: FileSystem> TxnState<F> {
    /// Reads `partition` (segments `segments`, log start `log_start`, log end `log_end`).
    pub(crate) fn read(
        partition: &PartitionView<F>,
        segments: &[SegmentEntry],
        log_start: i64,
        log_end: i64,
    ) -> Result<Self> {
        let fs = partition.fs();
        let trust = TxnTrust::of(partition);
        let mut untrusted = Vec::new();
        for (i, s) in segments.iter().enumerate() {
            let next = segments.get(i + 1).map(|n| n.base_offset);
            let path = naming::txn_index_file(partition.dir(), s.base_offset, "");
            if trust.judge(fs, &path, s.base_offset, next)?.is_some() {
                untrusted.push(s.base_offset);
            }
        }
        // The replay starts at the latest snapshot at or below the first segment whose markers
        // are wanted (or the log end, for the last stable offset alone).
        let want_from = untrusted.first().copied().unwrap_or(log_end).min(log_end);
        let snapshots: Vec<(i64, PathBuf)> = partition
            .files()
            .iter()
            .filter(|f| f.kind() == FileKind::Snapshot)
            .filter_map(|f| f.base_offset().map(|o| (o, f.path().to_path_buf())))
            .collect();
        let (mut state, replay_from) = producer_state_at(
            fs,
            partition.dir(),
            partition.topic_partition().to_string(),
            snapshots.iter().map(|(o, p)| (*o, p.as_path())),
            log_start.saturating_sub(1),
            want_from,
            log_start,
        )?;
        let mut sources = BTreeMap::new();
        for (i, s) in segments.iter().enumerate() {
            let next = segments.get(i + 1).map(|n| n.base_offset);
            let aborted = if next.is_none_or(|n| n > replay_from) && replay_from < log_end {
                replay_log(
                    fs,
                    &mut state,
                    (s.base_offset, next),
                    &s.log,
                    replay_from,
                    None,
                )
                .map_err(|(position, why)| replay_error(&s.log, position, &why))?
            } else {
                Vec::new()
            };
            let source = if untrusted.contains(&s.base_offset) {
                Source::Markers(aborted)
            } else {
                let path = naming::txn_index_file(partition.dir(), s.base_offset, "");
                Source::Index(TransactionIndex::open_read_only(
                    fs.clone(),
                    path,
                    s.base_offset,
                )?)
            };
            sources.insert(s.base_offset, source);
        }
        Ok(Self { sources, state })
    }

    /// The aborted transactions of the segment at `base` overlapping `[from, upper_bound)`
    /// (Kafka's `collectAbortedTxns`, from whichever source the segment's is).
    pub(crate) fn collect(
        &self,
        base: i64,
        from: i64,
        upper_bound: i64,
    ) -> Result<TxnIndexSearchResult> {
        match self.sources.get(&base) {
            Some(Source::Index(index)) => Ok(index.collect_aborted_txns(from, upper_bound)?),
            Some(Source::Markers(txns)) => Ok(TxnIndexSearchResult::collect(
                txns.iter().copied(),
                from,
                upper_bound,
            )),
            None => Ok(TxnIndexSearchResult::default()),
        }
    }
}

/// Producer state refused a batch while replaying the markers of `log`.
fn replay_error(log: &Path, position: u64, why: &str) -> Error {
    Error::Unreadable {
        path: log.to_path_buf(),
        what: "cannot replay producer state",
        source: io::Error::new(
            io::ErrorKind::InvalidData,
            format!("at byte {position}: {why}"),
        ),
    }
}
