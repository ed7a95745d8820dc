//! [`process_limits`]: the operating system's limits on what seglog holds per process, open
//! files and memory mappings, read for the libraries above to size their caches from. Reading
//! them is I/O (a system call and a `/proc` file), so it lives in the seam.

/// The file that holds Linux's limit on a process's memory mappings (`sysctl vm.max_map_count`).
pub const MAX_MAP_COUNT_PATH: &str = "/proc/sys/vm/max_map_count";

/// What the operating system limits a process to, as read; `None` where it sets no limit or
/// could not be read. [`process_limits`] reads them; [`ProcessLimits::NONE`] and the `with_*`
/// setters give others (to derive defaults for a process other than this one, or in tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProcessLimits {
    /// The soft `RLIMIT_NOFILE` (`ulimit -n`): the most descriptors the process may hold open.
    /// `None` when unlimited.
    pub open_files: Option<u64>,
    /// `vm.max_map_count`: the most memory mappings the process may hold. `None` when
    /// [`MAX_MAP_COUNT_PATH`] is missing (not Linux, no `/proc`) or does not hold a number.
    pub max_map_count: Option<u64>,
}

impl ProcessLimits {
    /// No limit known.
    pub const NONE: Self = Self {
        open_files: None,
        max_map_count: None,
    };

    /// With the soft `RLIMIT_NOFILE` `open_files` (`None`: unlimited).
    #[must_use]
    pub const fn with_open_files(mut self, open_files: Option<u64>) -> Self {
        self.open_files = open_files;
        self
    }

    /// With `vm.max_map_count` `max_map_count` (`None`: not known).
    #[must_use]
    pub const fn with_max_map_count(mut self, max_map_count: Option<u64>) -> Self {
        self.max_map_count = max_map_count;
        self
    }
}

/// Reads the process's limits now. A system call and a small file read: read once, not per use.
pub fn process_limits() -> ProcessLimits {
    let open_files = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
    let max_map_count = std::fs::read_to_string(MAX_MAP_COUNT_PATH)
        .ok()
        .and_then(|text| parse_count(&text));
    ProcessLimits {
        open_files,
        max_map_count,
    }
}

/// A `/proc/sys` number: decimal, surrounded by white space.
fn parse_count(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_limits_the_shell_sees() {
        let limits = process_limits();
        let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        assert_eq!(limits.open_files, soft);
        assert!(limits.open_files.is_none_or(|n| n > 0), "{limits:?}");
        let text = std::fs::read_to_string(MAX_MAP_COUNT_PATH).ok();
        assert_eq!(
            limits.max_map_count,
            text.and_then(|t| t.trim().parse().ok())
        );
    }

    #[test]
    fn a_proc_number_is_trimmed_and_anything_else_is_none() {
        assert_eq!(parse_count("65530\n"), Some(65_530));
        assert_eq!(parse_count(" 262144 "), Some(262_144));
        for bad in ["", "\n", "-1", "lots", "65530 1"] {
            assert_eq!(parse_count(bad), None, "{bad:?}");
        }
    }
}
