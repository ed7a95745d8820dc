//! Kafka's `LogLoader` steps 1 to 5 on the files of a partition directory: stray entries set
//! aside, `.deleted` / `.cleaned` / `.swap` files removed or renamed into place, orphan indexes
//! deleted, step 6's planned drops, and the segments' files opened.

use crate::loom::sync::Arc;
use std::collections::BTreeMap;
use std::path::Path;

use seglog_fs::FileSystem;
use seglog_segment::naming;

use super::LoadReport;
use super::quarantine::{Quarantine, remove_entry};
use super::recovery_plan::{RecoveryPlan, Removal};
use super::{Inner, SegmentMap};
use crate::error::{Error, Result};
use crate::listing::{ListedSegment, file_name};

impl<F: FileSystem> Inner<F> {
    /// Drops `path`: into the quarantine, or deleted with `discard`.
    pub(super) fn drop_file(
        &self,
        path: &Path,
        quarantine: Option<&Quarantine<F>>,
        report: &mut LoadReport,
    ) -> Result<()> {
        let moved = if let Some(q) = quarantine {
            Some(q.move_in(path)?)
        } else {
            self.remove(path)?;
            None
        };
        report.moved.push((path.to_path_buf(), moved));
        Ok(())
    }

    /// Makes the drops durable.
    pub(super) fn sync_drops(&self, quarantine: Option<&Quarantine<F>>) -> Result<()> {
        match quarantine {
            Some(q) => q.sync(),
            None => self.sync_dir(),
        }
    }

    /// Before Kafka's steps: the stray entries named like segment files (which no step reads)
    /// leave, into the quarantine or with `discard` deleted, durably before anything else changes.
    pub(super) fn set_aside_strays(
        &self,
        plan: &RecoveryPlan,
        quarantine: Option<&Quarantine<F>>,
        report: &mut LoadReport,
    ) -> Result<()> {
        for stray in &plan.strays {
            let moved = if let Some(q) = quarantine {
                Some(q.move_in(&stray.path)?)
            } else {
                remove_entry(&self.fs, &stray.path)?;
                None
            };
            report.moved.push((stray.path.clone(), moved));
        }
        if !plan.strays.is_empty() {
            self.sync_drops(quarantine)?;
        }
        Ok(())
    }

    /// Step 1: delete `.deleted`; abort `.cleaned` (and `.swap` files at or above the smallest
    /// cleaned offset, an interrupted split). A damaged `.log.swap` is set aside with its index
    /// swaps (where Kafka's loader would fail on it), so that the partition still opens with the
    /// segments it would have replaced.
    pub(super) fn remove_temp_files(
        &self,
        plan: &RecoveryPlan,
        quarantine: Option<&Quarantine<F>>,
        report: &mut LoadReport,
    ) -> Result<()> {
        for (path, why) in &plan.removed {
            match why {
                Removal::Deleted | Removal::UnfinishedSnapshot => {
                    report.deleted_files.push(path.clone());
                }
                Removal::Aborted => report.aborted_files.push(path.clone()),
                _ => continue,
            }
            self.remove(path)?;
        }
        for swap in &plan.bad_swaps {
            for path in &swap.files {
                self.drop_file(path, quarantine, report)?;
            }
        }
        if !plan.bad_swaps.is_empty() {
            self.sync_drops(quarantine)?;
        }
        Ok(())
    }

    /// Steps 2 to 5: delete what the swap segments replace, rename them into place, delete
    /// orphan index files.
    pub(super) fn complete_swaps(
        &self,
        plan: &RecoveryPlan,
        report: &mut LoadReport,
    ) -> Result<()> {
        for (path, why) in &plan.removed {
            if *why == Removal::Replaced {
                self.remove(path)?;
                report.replaced_files.push(path.clone());
            }
        }
        if !plan.completed_swaps.is_empty() {
            for path in self.list()? {
                let name = file_name(&path);
                if let Some(target) = name.strip_suffix(naming::SWAP_FILE_SUFFIX) {
                    let target = self.dir.join(target);
                    self.fs
                        .rename(&path, &target)
                        .map_err(|e| Error::io(&path, e))?;
                }
            }
            self.sync_dir()?;
            report.completed_swaps.clone_from(&plan.completed_swaps);
        }
        for (path, why) in &plan.removed {
            if *why == Removal::Orphan {
                self.remove(path)?;
                report.orphan_indexes.push(path.clone());
            }
        }
        Ok(())
    }

    /// Step 6's drops, before any cut: the segments after the cut and the overlapping ones leave
    /// the directory highest base offset first, and durably before the cut. So a recovery killed
    /// at any moment leaves the segment to be cut still damaged and the segments after it a
    /// contiguous run (never a later segment without the data before it), and the next recovery
    /// finds the same cut and carries on.
    pub(super) fn drop_segments(
        &self,
        plan: &RecoveryPlan,
        quarantine: Option<&Quarantine<F>>,
        report: &mut LoadReport,
    ) -> Result<()> {
        for snapshot in &plan.dropped_snapshots {
            self.drop_file(&snapshot.path, quarantine, report)?;
        }
        for dropped in &plan.dropped {
            for path in &dropped.files {
                self.drop_file(path, quarantine, report)?;
            }
            report.deleted_after_corruption.push(dropped.base_offset);
        }
        if !plan.dropped.is_empty() || !plan.dropped_snapshots.is_empty() {
            self.sync_drops(quarantine)?;
        }
        report.deleted_after_corruption.sort_unstable();
        Ok(())
    }

    /// Step 5: open every `.log` (by base offset); a missing `.timeindex` beside an `.index` is
    /// created empty, as Kafka's sanity check does. What exists comes from the listing, so a
    /// segment costs its `.log`'s open and `stat` and nothing else.
    pub(super) fn load_segment_files(
        &self,
        listed: &BTreeMap<i64, ListedSegment>,
        report: &mut LoadReport,
    ) -> Result<SegmentMap<F>> {
        let mut segments = SegmentMap::new();
        for (&base, files) in listed {
            let segment = self.open_listed_segment(base, files.txn_index)?;
            if files.index && !files.time_index {
                segment.resize_time_index(0)?;
            }
            if !files.index {
                report.rebuilt_missing_index.push(base);
            }
            segments.insert(base, Arc::new(segment));
        }
        Ok(segments)
    }
}
