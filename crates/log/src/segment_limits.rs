//! [`SegmentLimits`]: the mapping budget and the descriptor cache that the logs configured with
//! the default caps (`seglog.max.segment.mappings` and `seglog.max.open.segment.files` at 0)
//! count against. Both limits are the process's, so a [`LogDir`](crate::LogDir) gives one pair
//! to all its logs; a lone [`PartitionLog`](crate::PartitionLog) gets a pair of its own unless
//! opened with one ([`PartitionLog::open_with_limits`](crate::PartitionLog::open_with_limits)).
//! A log with an explicit cap gets its own budget or cache of that size, -1 none.

use seglog_segment::{DescriptorCache, MappingBudget};

use crate::config::ProcessDefaults;
use crate::config::defaults::FROM_PROCESS_LIMITS;

/// A mapping budget and a descriptor cache to share among logs (`None`: no cap). Cloning it
/// shares them (equality is identity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentLimits {
    mapping_budget: Option<MappingBudget>,
    descriptor_cache: Option<DescriptorCache>,
}

impl Default for SegmentLimits {
    /// [`SegmentLimits::from_process`].
    fn default() -> Self {
        Self::from_process()
    }
}

impl SegmentLimits {
    /// A pair of the given handles; pass the same handles to several log directories to hold
    /// them all to one budget.
    pub fn new(
        mapping_budget: Option<MappingBudget>,
        descriptor_cache: Option<DescriptorCache>,
    ) -> Self {
        Self {
            mapping_budget,
            descriptor_cache,
        }
    }

    /// A new budget and cache sized from this process's limits ([`ProcessDefaults::get`]).
    pub fn from_process() -> Self {
        Self::from_defaults(ProcessDefaults::get())
    }

    /// A new budget and cache of the given defaults' sizes.
    pub fn from_defaults(defaults: &ProcessDefaults) -> Self {
        Self::new(
            Some(MappingBudget::new(defaults.max_segment_mappings)),
            defaults.max_open_segment_files.map(DescriptorCache::new),
        )
    }

    /// The shared mapping budget.
    pub fn mapping_budget(&self) -> Option<&MappingBudget> {
        self.mapping_budget.as_ref()
    }

    /// The shared descriptor cache.
    pub fn descriptor_cache(&self) -> Option<&DescriptorCache> {
        self.descriptor_cache.as_ref()
    }

    /// The budget of a log configured with `seglog.max.segment.mappings` = `configured`.
    pub(crate) fn budget_for(&self, configured: i64) -> Option<MappingBudget> {
        if configured == FROM_PROCESS_LIMITS {
            return self.mapping_budget.clone();
        }
        usize::try_from(configured).ok().map(MappingBudget::new)
    }

    /// The cache of a log configured with `seglog.max.open.segment.files` = `configured`.
    pub(crate) fn cache_for(&self, configured: i64) -> Option<DescriptorCache> {
        if configured == FROM_PROCESS_LIMITS {
            return self.descriptor_cache.clone();
        }
        usize::try_from(configured).ok().map(DescriptorCache::new)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seglog_fs::ProcessLimits;

    #[test]
    fn the_default_shares_and_explicit_caps_are_their_own() {
        let defaults = ProcessDefaults::derive(
            ProcessLimits::NONE
                .with_open_files(Some(1024))
                .with_max_map_count(Some(100)),
        );
        let limits = SegmentLimits::from_defaults(&defaults);
        assert_eq!(limits.mapping_budget().unwrap().max_mappings(), 50);
        assert_eq!(limits.descriptor_cache().unwrap().max_open(), 512);
        assert_eq!(limits.budget_for(0).as_ref(), limits.mapping_budget());
        assert_eq!(limits.cache_for(0).as_ref(), limits.descriptor_cache());
        let own = limits.cache_for(512).unwrap();
        assert_eq!(own.max_open(), 512);
        assert_ne!(Some(&own), limits.descriptor_cache());
        assert_eq!(limits.budget_for(16).unwrap().max_mappings(), 16);
        assert_eq!((limits.budget_for(-1), limits.cache_for(-1)), (None, None));
        // Two pairs from the same defaults are two budgets.
        assert_ne!(SegmentLimits::from_defaults(&defaults), limits);
        assert_eq!(limits.clone(), limits);
    }

    #[test]
    fn unlimited_open_files_share_no_cache() {
        let defaults = ProcessDefaults::derive(
            ProcessLimits::NONE
                .with_open_files(None)
                .with_max_map_count(None),
        );
        let limits = SegmentLimits::from_defaults(&defaults);
        assert_eq!(limits.cache_for(0), None);
        assert_eq!(limits.budget_for(0).unwrap().max_mappings(), 32_765);
    }
}
