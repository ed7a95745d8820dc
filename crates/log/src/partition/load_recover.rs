//! Kafka's `LogLoader` step 6, as planned: the segments from the recovery point on recovered,
//! each cut tail copied to the quarantine first, and their `.txnindex` files rebuilt.

use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::{LogSegment, RecoveryReport, naming};

use super::planner::ScannedPlan;
use super::producer_load::{SegmentReplay, TxnRecovery, replay_reads_body};
use super::quarantine::Quarantine;
use super::recovery_plan::Cut;
use super::valid_prefix::ValidPrefix;
use super::{Inner, SegmentMap};
use super::{LoadOptions, LoadReport};
use crate::error::{Error, Result};

impl<F: FileSystem> Inner<F> {
    /// Steps 5 and 6's cuts and index rebuilds, as planned: each cut tail is copied to the
    /// quarantine (durably) before the segment is cut; then the segment is recovered, which cuts
    /// at the planned byte and rebuilds its indexes (a segment the plan found valid has only its
    /// indexes rebuilt, from the batch headers). A segment whose index cannot take its
    /// entries is emptied, as Kafka does ("Found invalid offset during recovery"), after the
    /// same copy, and the segments after it are dropped; where the plan foresaw no drop (so no
    /// quarantine exists) and `discard` is off, the load fails instead and drops nothing.
    pub(super) fn recover_segments(
        &self,
        segments: &mut SegmentMap<F>,
        ScannedPlan { plan, valid }: ScannedPlan<'_>,
        quarantine: Option<&Quarantine<F>>,
        options: LoadOptions,
        report: &mut LoadReport,
    ) -> Result<()> {
        let discard = options.discard;
        let mut emptied = None;
        let mut scanned: Vec<i64> = plan.scanned.clone();
        scanned.extend(&plan.rebuilt_indexes);
        scanned.sort_unstable();
        scanned.dedup();
        let mut txn = TxnRecovery::new(options.log_start_offset);
        for base in &scanned {
            let Some(segment) = segments.get(base) else {
                continue;
            };
            let next_base = plan.next_base_offsets.get(base).copied().flatten();
            if !plan.rebuilt_indexes.contains(base) {
                // Its `.log` and indexes are valid: only its `.txnindex` may need rebuilding.
                let known = valid.get(base).filter(|p| p.valid_bytes == segment.size());
                if self.recover_txn_index(&mut txn, segments, segment, next_base, false, known)? {
                    report.rebuilt_txn_indexes.push(*base);
                }
                continue;
            }
            let cut = plan.cuts.iter().find(|c| c.base_offset == *base);
            if let Some(cut) = cut {
                self.keep_what_is_cut(cut, quarantine, report)?;
            }
            let prefix = valid.get(base);
            let (recovery, replay) = self.rebuild_segment(
                &mut txn,
                segments,
                segment,
                cut.is_some(),
                next_base,
                prefix,
            )?;
            match recovery {
                Ok(recovered) => {
                    let planned = cut.map_or(segment.size(), |c| c.position);
                    if recovered.valid_bytes != planned {
                        return Err(Error::Changed {
                            path: naming::log_file(&self.dir, *base, ""),
                            reason: format!(
                                "recovery kept {} bytes where its plan said {planned}: the file \
                                 changed while recovery ran",
                                recovered.valid_bytes
                            ),
                        });
                    }
                    if let Some((manager, aborted)) =
                        replay.map(SegmentReplay::finish).transpose()?
                    {
                        Self::finish_txn_index(manager, segment, next_base, aborted, true)?;
                    } else {
                        // The valid prefix the plan's scan found, which is all there is now.
                        let known = prefix.filter(|p| p.valid_bytes == segment.size());
                        self.recover_txn_index(
                            &mut txn, segments, segment, next_base, true, known,
                        )?;
                    }
                    if cut.is_some() {
                        // The cut durable before the quarantine is marked done: a power loss
                        // must not bring back a tail whose copy a finished directory holds.
                        segment.flush()?;
                    }
                    report.recovered.push((*base, recovered));
                }
                Err(seglog_segment::Error::Index(e)) if quarantine.is_none() && !discard => {
                    // The plan foresaw no drop, so there is no quarantine to keep a copy in: fail
                    // rather than empty the segment and drop the later ones without one.
                    return Err(Error::Changed {
                        path: naming::log_file(&self.dir, *base, ""),
                        reason: format!(
                            "rebuilding its indexes failed ({e}), which the recovery plan did not \
                             foresee; nothing was dropped"
                        ),
                    });
                }
                Err(seglog_segment::Error::Index(_)) => {
                    let log = naming::log_file(&self.dir, *base, "");
                    let copy = quarantine.map(|q| q.copy_tail(&log, 0)).transpose()?;
                    report.moved.push((log, copy));
                    segment.truncate_to(*base, self.time.now_ms())?;
                    segment.flush()?;
                    emptied = Some(*base);
                    break;
                }
                Err(e) => return Err(e.into()),
            }
        }
        if let Some(at) = emptied {
            let later: Vec<i64> = segments.range(at + 1..).map(|(b, _)| *b).rev().collect();
            for base in later {
                if let Some(segment) = segments.remove(&base) {
                    segment.close()?;
                    for path in segment_files(&self.dir, base) {
                        if self.fs.exists(&path) {
                            self.drop_file(&path, quarantine, report)?;
                        }
                    }
                    report.deleted_after_corruption.push(base);
                }
            }
            self.sync_drops(quarantine)?;
            report.deleted_after_corruption.sort_unstable();
        }
        Ok(())
    }
}

impl<F: FileSystem> Inner<F> {
    /// What a planned cut drops, copied to the quarantine first (when there is one), and
    /// listed in the report.
    pub(super) fn keep_what_is_cut(
        &self,
        cut: &Cut,
        quarantine: Option<&Quarantine<F>>,
        report: &mut LoadReport,
    ) -> Result<()> {
        let Some(q) = quarantine else {
            report.moved.push((cut.log.clone(), None));
            return Ok(());
        };
        if cut.txn_entries_dropped > 0 {
            // The entries the cut drops leave with the index as it was (recovery rewrites it);
            // with `discard` the plan's line is all that is left of them.
            let txn = naming::txn_index_file(&self.dir, cut.base_offset, "");
            let copy = q.copy_whole(&txn)?;
            report.moved.push((txn, Some(copy)));
        }
        let copy = q.copy_tail(&cut.log, cut.position)?;
        report.moved.push((cut.log.clone(), Some(copy)));
        Ok(())
    }
}

/// A segment's files, the `.log` last (the order they are dropped in; see the planner's drops).
fn segment_files(dir: &Path, base: i64) -> [PathBuf; 4] {
    [
        naming::offset_index_file(dir, base, ""),
        naming::time_index_file(dir, base, ""),
        naming::txn_index_file(dir, base, ""),
        naming::log_file(dir, base, ""),
    ]
}

impl<F: FileSystem> Inner<F> {
    /// A segment recovered, with the plan's scan of it (`prefix`) where it kept one. One the plan
    /// cuts is cut and its indexes written from the scan's image (`LogSegment::recover_from`),
    /// or, without an image or with a `.log` changed since, checked again and cut by the walk.
    /// One it does not cut, every batch checked by the scan, gets only its indexes rebuilt:
    /// written from the image when the `.log` has not changed, else from the batch headers,
    /// with producer state replayed into the load's manager in the same walk (returned for the
    /// caller to finish; a refused batch fails the load once the indexes are whole). Producer
    /// state is otherwise the caller's to replay.
    fn rebuild_segment<'m>(
        &self,
        txn: &'m mut TxnRecovery<F>,
        segments: &SegmentMap<F>,
        segment: &LogSegment<F>,
        cut: bool,
        next_base: Option<i64>,
        prefix: Option<&ValidPrefix>,
    ) -> Result<(
        seglog_segment::Result<RecoveryReport>,
        Option<SegmentReplay<'m, F>>,
    )> {
        let image = prefix.and_then(|p| p.index_image.as_deref());
        if cut {
            let recovered = match image.map(|i| segment.recover_from(i)) {
                Some(Ok(Some(report))) => Ok(report),
                Some(Err(e)) => Err(e),
                None | Some(Ok(None)) => segment.recover_before(next_base),
            };
            return Ok((recovered, None));
        }
        let known = prefix.filter(|p| p.valid_bytes == segment.size());
        if let Some(image) = known.and_then(|k| k.index_image.as_deref()) {
            return Ok((segment.rebuild_indexes_from(image), None));
        }
        let manager = self.producer_state_before(txn, segments, segment)?;
        let mut replay = SegmentReplay::new(manager);
        let rebuilt = segment.rebuild_indexes_with(replay_reads_body, |h, framed| {
            replay.batch(h, framed);
            Ok(())
        });
        Ok((rebuilt, Some(replay)))
    }
}
