//! Kafka's `LogLoader` step 6, as planned: the segments from the recovery point on recovered,
//! each cut tail copied to the quarantine first, and their `.txnindex` files rebuilt.

use std::path::{Path, PathBuf};

use seglog_fs::FileSystem;
use seglog_segment::naming;

use super::load::{LoadOptions, LoadReport};
use super::producer_load::TxnRecovery;
use super::quarantine::Quarantine;
use super::recovery_plan::RecoveryPlan;
use super::{Inner, SegmentMap};
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
        plan: &RecoveryPlan,
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
                if self.recover_txn_index(&mut txn, segments, segment, next_base, false)? {
                    report.rebuilt_txn_indexes.push(*base);
                }
                continue;
            }
            let cut = plan.cuts.iter().find(|c| c.base_offset == *base);
            if let Some(q) = quarantine
                && cut.is_some_and(|c| c.txn_entries_dropped > 0)
            {
                // The entries the cut drops leave with the index as it was (recovery rewrites
                // it); with `discard` the plan's line is all that is left of them.
                let txn = naming::txn_index_file(&self.dir, *base, "");
                let copy = q.copy_whole(&txn)?;
                report.moved.push((txn, Some(copy)));
            }
            if let (Some(cut), Some(q)) = (cut, quarantine) {
                let copy = q.copy_tail(&cut.log, cut.position)?;
                report.moved.push((cut.log.clone(), Some(copy)));
            } else if let Some(cut) = cut {
                report.moved.push((cut.log.clone(), None));
            }
            // The plan's scan checked every batch of a segment it does not cut: only the
            // indexes are rebuilt, from the batch headers, without a second read of every byte.
            let recovery = if cut.is_some() {
                segment.recover_before(next_base)
            } else {
                segment.rebuild_indexes()
            };
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
                    self.recover_txn_index(&mut txn, segments, segment, next_base, true)?;
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

/// A segment's files, the `.log` last (the order they are dropped in; see the planner's drops).
fn segment_files(dir: &Path, base: i64) -> [PathBuf; 4] {
    [
        naming::offset_index_file(dir, base, ""),
        naming::time_index_file(dir, base, ""),
        naming::txn_index_file(dir, base, ""),
        naming::log_file(dir, base, ""),
    ]
}
