//! A damaged `.log.swap` in `check`: the planner's rule (such a swap is set aside, not
//! completed), one finding per swap, on its `.log.swap`, naming its index swaps.

use std::collections::BTreeMap;

use seglog_fs::FileSystem;
use seglog_segment::naming;

use super::Finding;
use crate::inspect::partition::PartitionView;
use crate::listing::{FileKind, PartitionFile};

fn log_swap_suffix() -> String {
    format!("{}{}", naming::LOG_FILE_SUFFIX, naming::SWAP_FILE_SUFFIX)
}

/// The `.log.swap` files whose batches recovery would not accept, by base offset: where they
/// stop being valid and why.
pub(super) fn damaged_swaps<F: FileSystem>(
    partition: &PartitionView<F>,
) -> BTreeMap<i64, (u64, String)> {
    let suffix = log_swap_suffix();
    partition
        .files()
        .iter()
        .filter(|f| f.kind() == FileKind::Swap && f.name().ends_with(&suffix))
        .filter_map(|f| {
            let base = f.base_offset()?;
            let scan = seglog_segment::scan_segment(
                partition.fs(),
                partition.dir(),
                base,
                naming::SWAP_FILE_SUFFIX,
                // Only where the batches stop counts here, not the indexes.
                4096,
                10 * 1024 * 1024,
                None,
            )
            .ok()?;
            let stop = scan.stop?;
            Some((base, (stop.position, stop.reason.to_string())))
        })
        .collect()
}

/// The finding for `file`, a `.swap` of a damaged swap in `bad`: one for its `.log.swap`, none
/// for its index swaps (the one finding names them).
pub(super) fn damaged_swap_finding<F: FileSystem>(
    partition: &PartitionView<F>,
    file: &PartitionFile,
    bad: &BTreeMap<i64, (u64, String)>,
) -> Option<Finding> {
    let base = file.base_offset();
    let (position, why) = base.and_then(|b| bad.get(&b))?;
    if !file.name().ends_with(&log_swap_suffix()) {
        return None;
    }
    let others: Vec<&str> = partition
        .files()
        .iter()
        .filter(|f| f.kind() == FileKind::Swap && f.base_offset() == base)
        .map(PartitionFile::name)
        .filter(|n| *n != file.name())
        .collect();
    let with = if others.is_empty() {
        String::new()
    } else {
        format!(" with its index swaps ({})", others.join(", "))
    };
    Some(
        Finding::new(
            file.path(),
            Some(*position),
            "damaged_swap",
            format!(
                "a swap segment whose batches are damaged ({why}); Kafka's loader fails on it; recover sets it aside in the quarantine{with} and keeps the segments it would have replaced"
            ),
        )
        .with_count(others.len() as u64 + 1),
    )
}
