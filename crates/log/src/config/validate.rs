//! The rules that involve more than one key, and the ranges of fields set directly.

use super::{LogConfig, defaults, invalid};
use crate::error::Result;

impl LogConfig {
    /// Checks the rules that involve more than one key, and the ranges of fields set directly.
    pub fn validate(&self) -> Result<()> {
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms {
            return Err(invalid(
                "min.compaction.lag.ms",
                &self.min_compaction_lag_ms.to_string(),
                format!(
                    "at most max.compaction.lag.ms ({})",
                    self.max_compaction_lag_ms
                ),
            ));
        }
        if (1..defaults::MIN_MAX_SEGMENT_MAPPINGS).contains(&self.max_segment_mappings)
            || self.max_segment_mappings < -1
        {
            return Err(invalid(
                "seglog.max.segment.mappings",
                &self.max_segment_mappings.to_string(),
                format!(
                    "-1 (no limit), 0 (from the process's limits) or at least {}",
                    defaults::MIN_MAX_SEGMENT_MAPPINGS
                ),
            ));
        }
        if self.max_open_segment_files < -1 {
            return Err(invalid(
                "seglog.max.open.segment.files",
                &self.max_open_segment_files.to_string(),
                "-1 (no cap), 0 (from the process's limits) or at least 1",
            ));
        }
        let checks: [(&str, i64, i64); 5] = [
            ("internal.segment.bytes", self.segment_bytes.into(), 14),
            ("segment.ms", self.segment_ms, 1),
            // Kafka's validator takes 4, but its index files then fail to open ("Invalid max
            // index size") below one entry: 12 bytes is one time index entry.
            ("segment.index.bytes", self.segment_index_bytes.into(), 12),
            ("index.interval.bytes", self.index_interval_bytes.into(), 0),
            ("flush.messages", self.flush_messages, 1),
        ];
        for (key, value, min) in checks {
            if value < min {
                return Err(invalid(key, &value.to_string(), format!("at least {min}")));
            }
        }
        self.validate_inert()
    }
}
