//! What one scale process is given (`seglog-bench-compare scale ...`), shared by the scale
//! workloads (`scale_log`, `scale_open`, `scale_compact`) and their dispatcher, `scale_system`.

use std::path::PathBuf;

/// The sizes one scale process works on.
#[derive(Debug, Clone)]
pub(crate) struct ScaleParams {
    pub(crate) dir: PathBuf,
    /// Log size in MiB of payload (`log`, `compact`).
    pub(crate) mib: u64,
    /// Segments of the `open` partition.
    pub(crate) segments: u64,
    /// Random reads per sample (`log`).
    pub(crate) reads: usize,
    /// Timed samples of the repeatable measurements (reads, opens).
    pub(crate) samples: usize,
    /// The cleaner's dedupe buffer (`compact`).
    pub(crate) dedupe_mib: u64,
}

/// `segment.bytes` of the scale logs: Kafka's default 1 GiB from 8 GiB up; below, an eighth of
/// the log (at least 1 MiB), so that even the tiny sizes of CI roll a few times.
pub(crate) fn segment_bytes(mib: u64) -> i32 {
    ((mib << 20) / 8).clamp(1 << 20, 1 << 30) as i32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scale_segments_are_kafkas_default_from_8_gib() {
        assert_eq!(segment_bytes(4), 1 << 20);
        assert_eq!(segment_bytes(1024), 128 << 20);
        assert_eq!(segment_bytes(100 * 1024), 1 << 30);
    }
}
