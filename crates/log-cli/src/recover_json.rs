//! `seglog recover --json`: the recovery plan as JSON, one object per partition.

use std::path::Path;

use seglog_log::{DropReason, RecoveryPlan, SnapshotDrop};

fn offsets(first: Option<i64>, last: Option<i64>) -> serde_json::Value {
    match (first, last) {
        (Some(f), Some(l)) => serde_json::json!([f, l]),
        _ => serde_json::Value::Null,
    }
}

pub(crate) fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// The plan's cuts, those after a split's pieces included.
pub(crate) fn all_cuts(plan: &RecoveryPlan) -> impl Iterator<Item = &seglog_log::Cut> {
    plan.cuts
        .iter()
        .chain(plan.splits.iter().filter_map(|s| s.cut.as_ref()))
}

pub(crate) fn plan_json(plan: &RecoveryPlan) -> serde_json::Value {
    serde_json::json!({
        "removed": plan.removed.iter().map(|(p, why)| serde_json::json!({"file": path_str(p), "why": why.to_string()})).collect::<Vec<_>>(),
        "strays": plan.strays.iter().map(|s| serde_json::json!({
            "path": path_str(&s.path),
            "dir": s.is_dir,
            "bytes": s.bytes,
            "reason": s.reason,
        })).collect::<Vec<_>>(),
        "bad_swaps": plan.bad_swaps.iter().map(|s| serde_json::json!({
            "base_offset": s.base_offset,
            "files": s.files.iter().map(|p| path_str(p)).collect::<Vec<_>>(),
            "bytes": s.bytes,
            "reason": s.reason,
        })).collect::<Vec<_>>(),
        "completed_swaps": plan.completed_swaps,
        "dropped": plan.dropped.iter().map(|d| serde_json::json!({
            "base_offset": d.base_offset,
            "files": d.files.iter().map(|p| path_str(p)).collect::<Vec<_>>(),
            "offsets": offsets(d.first_offset, d.last_offset),
            "records": d.records,
            "bytes": d.bytes,
            "reason": match d.reason {
                DropReason::AfterCut { .. } => "after_cut",
                DropReason::Overlapping { .. } => "overlapping",
                _ => "other",
            },
        })).collect::<Vec<_>>(),
        "splits": plan.splits.iter().map(|s| serde_json::json!({
            "file": path_str(&s.log),
            "base_offset": s.base_offset,
            "bytes": s.bytes,
            "reason": s.reason,
            "pieces": s.pieces.iter().map(|p| serde_json::json!({
                "base_offset": p.base_offset,
                "position": p.position,
                "bytes": p.bytes,
                "last_offset": p.last_offset,
                "batches": p.batches,
                "records": p.records,
            })).collect::<Vec<_>>(),
        })).collect::<Vec<_>>(),
        "cuts": all_cuts(plan).map(|c| serde_json::json!({
            "file": path_str(&c.log),
            "position": c.position,
            "bytes": c.bytes,
            "next_offset": c.next_offset,
            "reason": c.reason,
            "txn_entries_dropped": c.txn_entries_dropped,
        })).collect::<Vec<_>>(),
        "rebuilt_indexes": plan.rebuilt_indexes,
        "scanned": plan.scanned,
        "dropped_snapshots": plan.dropped_snapshots.iter().map(|s| serde_json::json!({
            "file": path_str(&s.path),
            "offset": s.offset,
            "reason": match &s.reason {
                SnapshotDrop::PastLogEnd { .. } => "past_log_end".to_owned(),
                SnapshotDrop::Corrupt { reason } => format!("corrupt: {reason}"),
                _ => "other".to_owned(),
            },
        })).collect::<Vec<_>>(),
        "corrupt_txn_indexes": plan.corrupt_txn_indexes.iter().map(|(base, why)| serde_json::json!({
            "base_offset": base,
            "reason": why,
        })).collect::<Vec<_>>(),
    })
}
