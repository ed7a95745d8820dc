//! `seglog compact`: clean a partition now, whatever its dirty ratio.

use std::io::Write;
use std::path::PathBuf;

use crate::common::{Outcome, Use};

/// The flags of `seglog compact`.
#[derive(Debug, clap::Args)]
pub(crate) struct CompactArgs {
    /// The partition directory (topic-N).
    dir: PathBuf,
    /// The key map's memory budget in bytes (log.cleaner.dedupe.buffer.size).
    #[arg(long, default_value_t = 128 * 1024 * 1024)]
    dedupe_buffer_bytes: usize,
    /// Print the summary as one JSON object.
    #[arg(long)]
    json: bool,
    /// Compact even a topic whose cleanup.policy has no `compact` (compaction keeps only the
    /// latest record of each key).
    #[arg(long)]
    force: bool,
}

impl CompactArgs {
    pub(crate) fn run(&self, out: &mut impl Write) -> anyhow::Result<Outcome> {
        compact(
            &self.dir,
            self.dedupe_buffer_bytes,
            self.json,
            self.force,
            out,
        )
    }
}

fn compact(
    dir: &std::path::Path,
    dedupe_buffer_bytes: usize,
    json: bool,
    force: bool,
    out: &mut impl std::io::Write,
) -> anyhow::Result<Outcome> {
    crate::common::target(dir, Use::Compact)?;
    // Read before the log directory is opened (which takes its lock), so a refusal writes nothing.
    let (config, source) = crate::common::partition_config(dir)?;
    if !config.cleanup_policy.compact && !force {
        anyhow::bail!(
            "{}: refusing to compact it: its cleanup.policy is delete ({source}), and compaction keeps only the latest record of each key; pass --force to compact it anyway",
            dir.display()
        );
    }
    let opened = crate::common::open_partition(dir, None)?;
    opened.dir.set_cleaner_settings(
        seglog_log::CleanerSettings::default().with_dedupe_buffer_bytes(dedupe_buffer_bytes),
    );
    let bar = crate::common::progress(0, "compacting");
    let tp = opened.log.topic_partition().clone();
    let report = opened
        .dir
        .compact(&tp)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .ok_or_else(|| anyhow::anyhow!("{}: no such partition", dir.display()))?;
    bar.finish_and_clear();
    if json {
        crate::common::json_line(
            out,
            &serde_json::json!({
                "type": "compacted",
                "partition": tp.to_string(),
                "first_dirty_offset": report.first_dirty_offset,
                "end_offset": report.end_offset,
                "keys": report.keys,
                "segments_replaced": report.segments_replaced,
                "records_read": report.records_read,
                "records_kept": report.records_kept,
                "tombstones_removed": report.tombstones_removed,
                "bytes_read": report.bytes_read,
                "bytes_written": report.bytes_written,
            }),
        )?;
    } else {
        writeln!(
            out,
            "{tp}: cleaned offsets {}..{} ({} keys): {} segments replaced, kept {} of {} records, removed {} tombstones, {} -> {} bytes",
            report.first_dirty_offset,
            report.end_offset,
            report.keys,
            report.segments_replaced,
            report.records_kept,
            report.records_read,
            report.tombstones_removed,
            report.bytes_read,
            report.bytes_written
        )?;
    }
    drop(opened.log);
    opened.dir.close().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Outcome::Clean)
}

pub(crate) const EXAMPLES: &str = "\
Examples:
  seglog compact logs/users-0
  seglog compact logs/users-0 --dedupe-buffer-bytes 1048576 --json

Only a topic whose cleanup.policy has compact (its seglog.properties, else Kafka's default,
delete) is compacted, unless --force. The partition keeps its offsets; tombstones stay until delete.retention.ms after the first
cleaning that saw them. The active segment is never cleaned.";
