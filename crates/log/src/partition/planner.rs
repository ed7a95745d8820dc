//! Making a [`RecoveryPlan`] for one partition directory, read-only: Kafka's `LogLoader` steps in
//! order, played on the directory's listing instead of on the files (a swap is "renamed" in the
//! listing only), with every `.log` judged by `scan_segment`; before them, the stray entries named
//! like segment files, which no loader step reads, are set aside. Nothing is opened for writing, no
//! lock is taken, nothing is created: `seglog recover --dry-run` runs exactly this, and
//! [`PartitionLog::open`](super::PartitionLog::open) runs it before it changes anything.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

use seglog_fs::{File as _, FileSystem, OpenMode};
use seglog_segment::{IndexImage, SegmentScan, naming, scan_segment, walk_tail};

use super::LoadOptions;
use super::recovery_plan::{BadSwap, DropReason, DroppedSegment, RecoveryPlan, Removal, Stray};
use super::valid_prefix::ValidPrefix;
use super::{index_sanity, snapshot_plan};
use crate::error::{Error, Result};
use crate::listing::{self, FileKind, LoadListing, PartitionFile};

mod split_plan;

/// A segment as the plan sees it after the swaps: the suffix its files still have on disk.
#[derive(Debug, Clone, Copy)]
struct Segment {
    suffix: &'static str,
}

struct Planner<'a, F> {
    fs: &'a F,
    dir: &'a Path,
    interval: u32,
    max_index_size: u32,
    plan: RecoveryPlan,
    /// The end offset (exclusive) of each segment scanned.
    scan_ends: BTreeMap<i64, i64>,
    /// Of each segment scanned (not a `.swap`): the next base offset its scan was bounded by
    /// and the valid prefix it found, which the `.txnindex` check then need not scan again.
    verified: BTreeMap<i64, (Option<i64>, ValidPrefix)>,
    /// The producer-id batch headers kept in `verified` so far, at most [`MAX_PLAN_HEADERS`].
    kept_headers: usize,
    /// The bytes of the index images kept in `verified` so far, at most [`MAX_PLAN_IMAGES`].
    kept_image_bytes: usize,
    /// The segments of `verified` whose scan found them valid to their end.
    valid_to_end: BTreeSet<i64>,
}

/// The most producer-id batch headers a plan keeps over all its segments (64 bytes each:
/// 16 MiB); a segment past it is walked again by the replays, as before they were kept.
const MAX_PLAN_HEADERS: usize = 1 << 18;

/// The most bytes of index images (`SegmentScan::index_image`) a plan keeps over all its
/// segments; the indexes of a segment past it are rebuilt by a walk of its batch headers, as
/// before the images were kept.
const MAX_PLAN_IMAGES: usize = 32 << 20;

/// What the load reuses of a plan: the segments found valid to their end and those it cuts, with
/// their valid prefix: the index image, and what their producer-state replay needs (see
/// [`ValidPrefix::replay_without_reading`]).
pub(super) type ValidSegments = BTreeMap<i64, ValidPrefix>;

/// A plan, and what the load reuses of its scans.
#[derive(Clone, Copy)]
pub(super) struct ScannedPlan<'p> {
    pub(super) plan: &'p RecoveryPlan,
    /// The segments its scans found valid to their end, and those it cuts (see
    /// [`ValidSegments`]): one whose `.log` has the size of its valid prefix (once cut) replays
    /// its producer state without a walk when the scan kept what that needs.
    pub(super) valid: &'p ValidSegments,
}

/// Plans the loading of the partition in `dir` with `options`, indexes at
/// `index_interval_bytes` in files of `max_index_size` bytes (`segment.index.bytes`). A directory
/// that does not exist plans nothing.
pub fn plan_partition<F: FileSystem>(
    fs: &F,
    dir: &Path,
    index_interval_bytes: u32,
    max_index_size: u32,
    options: LoadOptions,
) -> Result<RecoveryPlan> {
    plan_partition_listed(fs, dir, index_interval_bytes, max_index_size, options).map(|(p, ..)| p)
}

/// [`plan_partition`], with what its listing found of the segments (each `.log`'s base offset
/// and the index files beside it) and the producer snapshots, which the load reuses when the
/// plan changes no file.
pub(super) fn plan_partition_listed<F: FileSystem>(
    fs: &F,
    dir: &Path,
    index_interval_bytes: u32,
    max_index_size: u32,
    options: LoadOptions,
) -> Result<(RecoveryPlan, LoadListing, ValidSegments)> {
    let mut planner = Planner {
        fs,
        dir,
        interval: index_interval_bytes,
        max_index_size,
        plan: RecoveryPlan {
            dir: dir.to_path_buf(),
            ..RecoveryPlan::default()
        },
        scan_ends: BTreeMap::new(),
        verified: BTreeMap::new(),
        kept_headers: 0,
        kept_image_bytes: 0,
        valid_to_end: BTreeSet::new(),
    };
    if !fs.is_dir(dir) {
        return Ok((planner.plan, LoadListing::default(), ValidSegments::new()));
    }
    let listed = listing::list(fs, dir).map_err(|e| Error::io(dir, e))?;
    planner.plan.strays = listed
        .iter()
        .filter(|f| f.is_set_aside())
        .map(|f| Stray {
            path: f.path().to_path_buf(),
            is_dir: f.is_dir(),
            bytes: (!f.is_dir())
                .then(|| fs.open(f.path(), OpenMode::ReadOnly).and_then(|h| h.len()))
                .and_then(std::io::Result::ok),
            reason: f.stray_reason().unwrap_or_default(),
        })
        .collect();
    let files: Vec<PartitionFile> = listed
        .into_iter()
        .filter(PartitionFile::may_be_segment_file)
        .collect();
    let listed = LoadListing::of(&files);
    let (live, swaps) = planner.temp_files(files);
    let (live, segments) = planner.swaps(live, &swaps)?;
    planner.recover(&live, &segments, options)?;
    planner.producer_snapshots(&live, &segments, options)?;
    let cut: BTreeSet<i64> = planner.plan.cuts.iter().map(|c| c.base_offset).collect();
    let valid = planner
        .verified
        .into_iter()
        .filter(|(base, _)| planner.valid_to_end.contains(base) || cut.contains(base))
        .map(|(base, (_, prefix))| (base, prefix))
        .collect();
    Ok((planner.plan, listed, valid))
}

impl<F: FileSystem> Planner<'_, F> {
    /// Scans one segment with recovery's rules, bounded by the next segment of `segments` (a
    /// `.swap` by nothing: it replaces a range of its own).
    fn scan(
        &mut self,
        base: i64,
        segment: Segment,
        segments: &BTreeMap<i64, Segment>,
    ) -> Result<SegmentScan> {
        let next = if segment.suffix.is_empty() {
            let next = segments.range(base + 1..).next().map(|(b, _)| *b);
            self.plan.next_base_offsets.insert(base, next);
            next
        } else {
            None
        };
        let mut scan = scan_segment(
            self.fs,
            self.dir,
            base,
            segment.suffix,
            self.interval,
            self.max_index_size,
            next,
        )?;
        if segment.suffix.is_empty() {
            self.scan_ends
                .insert(base, scan.last_offset.map_or(base, |o| o + 1));
            let kept = scan
                .producer_batches
                .take()
                .filter(|k| self.kept_headers + k.len() <= MAX_PLAN_HEADERS);
            self.kept_headers += kept.as_ref().map_or(0, Vec::len);
            let image = scan
                .index_image
                .take()
                .filter(|i| self.kept_image_bytes + i.heap_bytes() <= MAX_PLAN_IMAGES);
            self.kept_image_bytes += image.as_ref().map_or(0, IndexImage::heap_bytes);
            let prefix = ValidPrefix {
                valid_bytes: scan.valid_bytes,
                producer_id_batches: scan.producer_id_batches,
                last_v2_offset: scan.last_v2_offset,
                producer_batches: kept.map(Arc::from),
                index_image: image.map(Arc::new),
                leader_epochs: Arc::from(std::mem::take(&mut scan.leader_epochs)),
            };
            self.verified.insert(base, (next, prefix));
            if scan.stop.is_none() {
                self.valid_to_end.insert(base);
            }
            if scan.stop.is_none() && scan.producer_id_batches == 0 {
                self.plan
                    .without_producer_ids
                    .insert(base, (scan.valid_bytes, scan.last_v2_offset));
            }
        }
        Ok(scan)
    }

    /// Step 1: `.deleted` removed; `.cleaned`, and `.swap` at or above the smallest cleaned
    /// offset, aborted. Returns the other files and the remaining swaps.
    fn temp_files(
        &mut self,
        files: Vec<PartitionFile>,
    ) -> (Vec<PartitionFile>, Vec<PartitionFile>) {
        let (mut live, mut cleaned, mut swaps) = (Vec::new(), Vec::new(), Vec::new());
        for file in files {
            match file.kind() {
                FileKind::Deleted if !file.name().ends_with(".checkpoint.deleted") => {
                    self.plan.removed.push((file.into_path(), Removal::Deleted));
                }
                FileKind::Cleaned => cleaned.push(file),
                FileKind::SnapshotTemp => {
                    self.plan
                        .removed
                        .push((file.into_path(), Removal::UnfinishedSnapshot));
                }
                FileKind::Swap => swaps.push(file),
                _ => live.push(file),
            }
        }
        if let Some(min_cleaned) = cleaned.iter().filter_map(PartitionFile::base_offset).min() {
            let (abort, keep): (Vec<_>, Vec<_>) = swaps
                .into_iter()
                .partition(|s| s.base_offset().is_some_and(|o| o >= min_cleaned));
            cleaned.extend(abort);
            swaps = keep;
        }
        for file in cleaned {
            self.plan.removed.push((file.into_path(), Removal::Aborted));
        }
        (live, swaps)
    }

    /// Steps 2 to 4: a `.log.swap` whose batches are damaged is set aside with its index swaps;
    /// the others replace the files in their offset range and are renamed into place. Returns
    /// the files after the swaps and the segments (base offset to the suffix on disk).
    fn swaps(
        &mut self,
        mut live: Vec<PartitionFile>,
        swaps: &[PartitionFile],
    ) -> Result<(Vec<PartitionFile>, BTreeMap<i64, Segment>)> {
        let is_log_swap = |f: &PartitionFile| {
            f.name().ends_with(&format!(
                "{}{}",
                naming::LOG_FILE_SUFFIX,
                naming::SWAP_FILE_SUFFIX
            ))
        };
        let mut bad = BTreeSet::new();
        let mut range: Option<(i64, i64)> = None;
        let mut good = Vec::new();
        for swap in swaps.iter().filter(|f| is_log_swap(f)) {
            let Some(base) = swap.base_offset() else {
                continue;
            };
            let scan = self.scan(
                base,
                Segment {
                    suffix: naming::SWAP_FILE_SUFFIX,
                },
                &BTreeMap::new(),
            )?;
            if let Some(stop) = &scan.stop {
                bad.insert(base);
                self.plan.bad_swaps.push(BadSwap {
                    base_offset: base,
                    files: swaps
                        .iter()
                        .filter(|f| f.base_offset() == Some(base))
                        .map(|f| f.path().to_path_buf())
                        .collect(),
                    bytes: scan.size,
                    reason: format!("{}: {stop}", scan.log.display()),
                });
                continue;
            }
            let next = scan.last_offset.map_or(base, |o| o + 1);
            range = Some(range.map_or((base, next), |(lo, hi)| (lo.min(base), hi.max(next))));
            good.push(base);
        }
        let rest = swaps
            .iter()
            .filter(|f| f.base_offset().is_none_or(|o| !bad.contains(&o)));
        let mut segments = BTreeMap::new();
        let Some((min_swap, max_swap)) = range else {
            // Index swaps without a good `.log.swap`: leftovers.
            for file in rest {
                self.plan
                    .removed
                    .push((file.path().to_path_buf(), Removal::Orphan));
            }
            for file in &live {
                if let Some(base) = file.log_base_offset() {
                    segments.insert(base, Segment { suffix: "" });
                }
            }
            return Ok((live, segments));
        };
        let source = self.split_source_below(&live, min_swap);
        live.retain(|file| {
            let replaced = file
                .base_offset()
                .is_some_and(|o| (min_swap..max_swap).contains(&o) || Some(o) == source)
                && (file.kind() == FileKind::Log || file.kind().is_index());
            if replaced {
                self.plan
                    .removed
                    .push((file.path().to_path_buf(), Removal::Replaced));
            }
            !replaced
        });
        for file in &live {
            if let Some(base) = file.log_base_offset() {
                segments.insert(base, Segment { suffix: "" });
            }
        }
        for file in rest {
            let renamed = self.dir.join(
                file.name()
                    .strip_suffix(naming::SWAP_FILE_SUFFIX)
                    .unwrap_or(file.name()),
            );
            let renamed = PartitionFile::new(renamed);
            if let Some(base) = renamed.log_base_offset() {
                segments.insert(
                    base,
                    Segment {
                        suffix: naming::SWAP_FILE_SUFFIX,
                    },
                );
            }
            live.retain(|f| f.name() != renamed.name());
            live.push(renamed);
        }
        self.plan.completed_swaps = good;
        Ok((live, segments))
    }

    /// Steps 5 and 6: orphan indexes removed; a segment without its `.index` rebuilt (and cut
    /// where its batches stop being valid, keeping the later segments, as Kafka does); then,
    /// after an unclean shutdown, every segment from the one holding the recovery point judged
    /// in order: the first damaged one is cut and every later one dropped; one whose base offset
    /// lies below the end of the one before it is dropped alone; one whose indexes are not what
    /// recovery would write gets them rebuilt. After a clean shutdown only an active segment
    /// whose `.log` does not end at a batch boundary is recovered.
    fn recover(
        &mut self,
        live: &[PartitionFile],
        segments: &BTreeMap<i64, Segment>,
        options: LoadOptions,
    ) -> Result<()> {
        // The index files listed, by base offset (the names' kinds were read once, by the listing).
        let names: HashSet<(i64, FileKind)> = live
            .iter()
            .filter(|f| f.kind().is_index())
            .filter_map(|f| Some((f.base_offset()?, f.kind())))
            .collect();
        for file in live {
            if file.kind().is_index()
                && file
                    .base_offset()
                    .is_none_or(|o| !segments.contains_key(&o))
            {
                self.plan
                    .removed
                    .push((file.path().to_path_buf(), Removal::Orphan));
            }
        }
        // The end offset of each segment already judged (rebuilt for a missing index).
        let mut judged: BTreeMap<i64, i64> = BTreeMap::new();
        for (base, segment) in segments {
            if names.contains(&(*base, FileKind::OffsetIndex)) {
                continue;
            }
            let scan = self.scan(*base, *segment, segments)?;
            self.plan.scanned.push(*base);
            self.plan.rebuilt_indexes.push(*base);
            let end = self.cut_or_split(*base, *segment, &scan, false)?.end;
            judged.insert(*base, end);
        }
        self.txn_index_sanity(&names, segments, &mut judged)?;
        if options.had_clean_shutdown {
            if let Some((base, segment)) = segments.iter().next_back()
                && !judged.contains_key(base)
                && !walk_tail(self.fs, self.dir, *base, segment.suffix)?.ends_at_batch_boundary
            {
                let scan = self.scan(*base, *segment, segments)?;
                self.plan.scanned.push(*base);
                self.plan.rebuilt_indexes.push(*base);
                self.cut_or_split(*base, *segment, &scan, true)?;
            }
            return Ok(());
        }
        let mut start = segments
            .range(..=options.recovery_point)
            .next_back()
            .map_or(i64::MIN, |(b, _)| *b);
        // The segment just below the recovery point: a roll may have changed its indexes after a
        // flush covered it (see `index_sanity`); torn ones are rebuilt by recovering it too.
        if let Some((base, _)) = segments.range(..start).next_back()
            && !judged.contains_key(base)
            && index_sanity::indexes_unsound(self.fs, self.dir, *base)?
        {
            start = *base;
        }
        let mut previous_end = match segments.range(..start).next_back() {
            Some((base, segment)) => match judged.get(base) {
                Some(end) => Some(*end),
                None => walk_tail(self.fs, self.dir, *base, segment.suffix)
                    .ok()
                    .map(|w| w.next_offset),
            },
            None => None,
        };
        let mut cut_at = None;
        for (base, segment) in segments.range(start..) {
            if let Some(cut_segment) = cut_at {
                let scan = self.scan(*base, *segment, segments)?;
                self.add_drop(*base, &scan, DropReason::AfterCut { cut_segment }, live);
                continue;
            }
            if let Some(end) = previous_end.filter(|end| base < end) {
                let scan = self.scan(*base, *segment, segments)?;
                self.add_drop(
                    *base,
                    &scan,
                    DropReason::Overlapping { previous_end: end },
                    live,
                );
                continue;
            }
            if let Some(end) = judged.get(base) {
                previous_end = Some(*end);
                continue;
            }
            let scan = self.scan(*base, *segment, segments)?;
            self.plan.scanned.push(*base);
            if scan.stop.is_some() {
                self.plan.rebuilt_indexes.push(*base);
                let judged = self.cut_or_split(*base, *segment, &scan, true)?;
                if judged.cut {
                    cut_at = Some(*base);
                }
                previous_end = Some(judged.end);
                continue;
            }
            if !scan.indexes_match {
                self.plan.rebuilt_indexes.push(*base);
            }
            previous_end = Some(scan.last_offset.map_or(*base, |o| o + 1));
        }
        // Dropped highest base offset first: the order they are moved out in.
        self.plan
            .dropped
            .sort_by_key(|d| std::cmp::Reverse(d.base_offset));
        Ok(())
    }

    /// Kafka's loader runs the `.txnindex` sanity check on every segment and recovers one that
    /// fails it, keeping the later segments.
    fn txn_index_sanity(
        &mut self,
        names: &HashSet<(i64, FileKind)>,
        segments: &BTreeMap<i64, Segment>,
        judged: &mut BTreeMap<i64, i64>,
    ) -> Result<()> {
        for (base, segment) in segments {
            if judged.contains_key(base) || !names.contains(&(*base, FileKind::TxnIndex)) {
                continue;
            }
            let txn = naming::txn_index_file(self.dir, *base, "");
            if let Some(why) = snapshot_plan::txn_index_problem(self.fs, &txn, *base)? {
                let scan = self.scan(*base, *segment, segments)?;
                self.plan.scanned.push(*base);
                self.plan.rebuilt_indexes.push(*base);
                self.plan.corrupt_txn_indexes.push((*base, why));
                let end = self.cut_or_split(*base, *segment, &scan, false)?.end;
                judged.insert(*base, end);
            }
        }
        Ok(())
    }

    /// The producer snapshots the plan sets aside: past the log end it leaves, or corrupt (from
    /// the latest in range down to the first that decodes, the ones Kafka's load would try).
    fn producer_snapshots(
        &mut self,
        live: &[PartitionFile],
        segments: &BTreeMap<i64, Segment>,
        options: LoadOptions,
    ) -> Result<()> {
        let dropped: BTreeSet<i64> = self.plan.dropped.iter().map(|d| d.base_offset).collect();
        let kept = segments.iter().filter(|(b, _)| !dropped.contains(b));
        let log_end = match kept.clone().next_back() {
            Some((base, segment)) => {
                if let Some(cut) = self.plan.cuts.iter().find(|c| c.base_offset == *base) {
                    cut.next_offset
                } else if let Some(end) = self.scan_ends.get(base) {
                    *end
                } else {
                    walk_tail(self.fs, self.dir, *base, segment.suffix)?.next_offset
                }
            }
            None => options.log_start_offset.max(0),
        };
        let first_base = kept.map(|(b, _)| *b).next().unwrap_or(0);
        let log_start = options.log_start_offset.max(first_base);
        let log_end = log_end.max(options.log_start_offset);
        self.plan.log_end_offset = Some(log_end);
        self.plan
            .dropped_snapshots
            .extend(snapshot_plan::plan_snapshots(
                self.fs, live, log_start, log_end,
            )?);
        let kept: Vec<(i64, &str)> = segments
            .iter()
            .filter(|(b, _)| !dropped.contains(b))
            .map(|(b, s)| (*b, s.suffix))
            .collect();
        let rewrites = snapshot_plan::txn_index_rewrites(
            self.fs,
            self.dir,
            live,
            &kept,
            &self.plan,
            &self.verified,
            options.log_start_offset,
        )?;
        for (base, why) in rewrites {
            self.plan.rebuilt_indexes.push(base);
            self.plan.corrupt_txn_indexes.push((base, why));
        }
        Ok(())
    }

    /// A dropped segment's files, by the names they have once the swaps are done (the loader
    /// drops segments after completing swaps). A cut or index rebuild planned for it by the
    /// missing-index pass is withdrawn: its bytes leave once, whole.
    fn add_drop(
        &mut self,
        base: i64,
        scan: &SegmentScan,
        reason: DropReason,
        live: &[PartitionFile],
    ) {
        self.plan.cuts.retain(|c| c.base_offset != base);
        self.plan.rebuilt_indexes.retain(|b| *b != base);
        let mut files: Vec<&PartitionFile> = live
            .iter()
            .filter(|f| {
                f.base_offset() == Some(base) && (f.kind() == FileKind::Log || f.kind().is_index())
            })
            .collect();
        // The `.log` moves last: a recovery killed between the moves then leaves the segment in
        // place with fewer indexes (the next one drops the rest), never indexes without a `.log`,
        // which it would delete as orphans instead of setting them aside.
        files.sort_by_key(|f| f.kind() == FileKind::Log);
        let files = files.iter().map(|f| f.path().to_path_buf()).collect();
        self.plan.dropped.push(DroppedSegment {
            base_offset: base,
            files,
            first_offset: scan.first_offset,
            last_offset: scan.last_offset,
            records: scan.records,
            bytes: scan.size,
            reason,
        });
    }
}
