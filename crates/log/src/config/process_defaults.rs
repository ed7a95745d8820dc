//! [`ProcessDefaults`]: the caps `seglog.max.segment.mappings` and
//! `seglog.max.open.segment.files` take at their default (0), derived once per process from its
//! limits, so that the defaults hold wherever the process runs instead of failing past a
//! machine's `ulimit -n` or `vm.max_map_count`.
//!
//! Each is half the limit. The other half is for what the caps do not count: per partition its
//! directory lock and its active segment's `.log` (pinned, never closed) and `.txnindex` while
//! unsynced, and for the process its libraries, thread stacks and heap (a few hundred mappings),
//! the embedder's sockets and files, and a mapping per reading thread in flight past the budget
//! (see `MappingBudget`). At the usual soft limit of 1,024 that leaves 512 descriptors for about
//! 250 partitions' pinned files and the rest; at the kernel's 65,530 mappings, 32,765.

use std::sync::OnceLock;

use seglog_fs::ProcessLimits;

use super::defaults;

/// The `vm.max_map_count` assumed when it cannot be read: the Linux kernel's default.
pub const FALLBACK_MAX_MAP_COUNT: u64 = 65_530;

/// The caps the default (0) of `seglog.max.segment.mappings` and `seglog.max.open.segment.files`
/// stand for in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessDefaults {
    /// The mapping budget: half of `vm.max_map_count` ([`FALLBACK_MAX_MAP_COUNT`] when it
    /// cannot be read), and at least the smallest budget allowed (16).
    pub max_segment_mappings: usize,
    /// The cap on open `.log` files: half the soft `RLIMIT_NOFILE`, at least 1; `None` (no cap)
    /// when the open-file limit is unlimited.
    pub max_open_segment_files: Option<usize>,
}

impl ProcessDefaults {
    /// The defaults for a process with `limits`. Pure: the same limits, the same defaults.
    pub fn derive(limits: ProcessLimits) -> Self {
        let map_count = limits.max_map_count.unwrap_or(FALLBACK_MAX_MAP_COUNT);
        let min_mappings = defaults::MIN_MAX_SEGMENT_MAPPINGS.unsigned_abs();
        let max_segment_mappings = to_usize((map_count / 2).max(min_mappings));
        let max_open_segment_files = limits.open_files.map(|n| to_usize((n / 2).max(1)));
        Self {
            max_segment_mappings,
            max_open_segment_files,
        }
    }

    /// This process's defaults: its limits are read on the first call, and every later call
    /// returns the same answer (raise `ulimit -n` before the first log opens; the `seglog` CLI
    /// does it first thing).
    pub fn get() -> &'static Self {
        static DEFAULTS: OnceLock<ProcessDefaults> = OnceLock::new();
        DEFAULTS.get_or_init(|| Self::derive(seglog_fs::process_limits()))
    }
}

fn to_usize(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn derive(open_files: Option<u64>, max_map_count: Option<u64>) -> ProcessDefaults {
        ProcessDefaults::derive(
            ProcessLimits::NONE
                .with_open_files(open_files)
                .with_max_map_count(max_map_count),
        )
    }

    #[test]
    fn usual_limits_give_half_of_each() {
        let d = derive(Some(1024), Some(65_530));
        assert_eq!(d.max_open_segment_files, Some(512));
        assert_eq!(d.max_segment_mappings, 32_765);
        let d = derive(Some(1_048_576), Some(262_144));
        assert_eq!(d.max_open_segment_files, Some(524_288));
        assert_eq!(d.max_segment_mappings, 131_072);
    }

    #[test]
    fn tiny_limits_keep_the_smallest_valid_caps() {
        for (files, cap) in [(0, 1), (1, 1), (2, 1), (3, 1), (5, 2)] {
            assert_eq!(derive(Some(files), None).max_open_segment_files, Some(cap));
        }
        for (maps, budget) in [(0, 16), (1, 16), (31, 16), (32, 16), (34, 17)] {
            assert_eq!(derive(None, Some(maps)).max_segment_mappings, budget);
        }
    }

    #[test]
    fn huge_limits_do_not_overflow() {
        let d = derive(Some(u64::MAX), Some(u64::MAX));
        assert_eq!(d.max_open_segment_files, Some(to_usize(u64::MAX / 2)));
        assert_eq!(d.max_segment_mappings, to_usize(u64::MAX / 2));
        // Linux's largest: `fs.nr_open` and `vm.max_map_count` are at most `i32::MAX`.
        let d = derive(Some(1 << 30), Some(i32::MAX.unsigned_abs().into()));
        assert_eq!(d.max_open_segment_files, Some(1 << 29));
        assert_eq!(d.max_segment_mappings, 1_073_741_823);
    }

    #[test]
    fn unlimited_files_are_uncapped_and_an_unreadable_map_count_is_the_kernels_default() {
        let d = derive(None, None);
        assert_eq!(d.max_open_segment_files, None);
        assert_eq!(d.max_segment_mappings, 32_765);
    }

    #[test]
    fn the_process_defaults_are_derived_from_the_process_limits() {
        let d = *ProcessDefaults::get();
        assert_eq!(d, ProcessDefaults::derive(seglog_fs::process_limits()));
        assert!(std::ptr::eq(ProcessDefaults::get(), ProcessDefaults::get()));
    }
}
