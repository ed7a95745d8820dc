//! The scale open: a partition of `segments` segments of one 1 KiB x 16 batch each (as
//! `open_10k_*` builds it, batch by batch so that memory stays flat), closed cleanly, then opened
//! with `PartitionLog::open` after a clean shutdown (`scale_open_clean`) and after an unclean one
//! with the recovery point halfway (`scale_open_unclean`), each open's answer checked.
//!
//! seglog holds at most `seglog.max.open.segment.files` of the inactive segments' `.log` files
//! open, closing the least recently used past it, so the open needs an open-file limit above that
//! cap, not above the segment count. The run sets the cap to 4,096 (the default before the
//! default was derived from the process's limits, so that runs compare): the process raises its
//! soft limit to the cap plus room for the rest (up to the hard limit) when it is lower, and says
//! the limit in the note. The log has a mapping budget (`seglog.max.segment.mappings`) of 32,768,
//! or the kernel's map count ends the 100k build (see `config`).

#![allow(
    clippy::field_reassign_with_default,
    reason = "the options structs are becoming #[non_exhaustive]: a field is set on a default, never in a literal"
)]

use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result, ensure};
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};

use crate::scale_params::ScaleParams;
use crate::{BASE_TIMESTAMP, Figure, SHAPES, ms};

/// One 1 KiB x 16 batch from offset `base`, record `o` stamped `BASE_TIMESTAMP + o`.
fn batch_at(builder: &mut BatchBuilder, value: &[u8], base: i64, out: &mut Vec<u8>) -> Result<()> {
    let per = SHAPES[0].records_per_batch as i32;
    let records = (0..per)
        .map(|i| NewRecord::new(i, BASE_TIMESTAMP + base + i64::from(i), None, Some(value)));
    out.clear();
    builder
        .build(&BatchOptions::new(base, Compression::None), records, out)
        .context("building a batch")?;
    Ok(())
}

/// Raises this process's open-file limit to at least `needed` where it can (the soft limit up to
/// the hard one; the hard one too when privileged, up to `fs.nr_open`); returns the soft limit.
fn raise_open_file_limit(needed: u64) -> Result<u64> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let now = getrlimit(Resource::Nofile);
    let (soft, hard) = (
        now.current.unwrap_or(u64::MAX),
        now.maximum.unwrap_or(u64::MAX),
    );
    if soft >= needed {
        return Ok(soft);
    }
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(hard);
    let target = needed.min(hard.max(nr_open));
    let raised = Rlimit {
        current: Some(target),
        maximum: Some(hard.max(target)),
    };
    if setrlimit(Resource::Nofile, raised).is_err() {
        // Unprivileged: as far as the hard limit goes.
        let within = Rlimit {
            current: Some(needed.min(hard)),
            maximum: now.maximum,
        };
        setrlimit(Resource::Nofile, within).context("raising the open-file limit")?;
    }
    Ok(getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX))
}

/// The log's settings: the defaults, with an explicit mapping budget and descriptor cap. Each
/// segment's `.log` is mapped when its first batch header is read (the roll's time check does
/// it), and the kernel's default `vm.max_map_count` of 65,530 then ends a build with no budget
/// (Kafka's default, and seglog's before it derived one) near segment 65,500 with ENOMEM: the
/// 100k size failed so once the descriptors no longer did.
fn config() -> LogConfig {
    LogConfig::default()
        .with_max_segment_mappings(MAX_MAPPINGS)
        .with_max_open_segment_files(MAX_OPEN_FILES)
}

/// The descriptor cap, explicit: the derived default depends on the limit this run raises.
const MAX_OPEN_FILES: i64 = 4096;

/// Half the kernel's default map count: room for the rest of the process.
const MAX_MAPPINGS: i64 = 32_768;

pub(crate) fn run(p: &ScaleParams) -> Result<Vec<Figure>> {
    let segments = p.segments.max(2) as usize;
    // The descriptor cap, and room for the rest of the process (not a descriptor per segment).
    let cap = MAX_OPEN_FILES.unsigned_abs();
    let fd_limit = raise_open_file_limit(cap + 1024)?;
    let per = SHAPES[0].records_per_batch as i64;
    let root = p.dir.join("scale-open");
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    let dir = root.join("bench-0");
    {
        let (log, _) = PartitionLog::open(
            RealFs,
            &dir,
            config(),
            LoadOptions::default(),
            Arc::new(SystemClock),
        )
        .with_context(|| format!("opening {}", dir.display()))?;
        let (mut builder, mut bytes) = (BatchBuilder::new(), Vec::new());
        let value = vec![b'v'; SHAPES[0].record_bytes];
        for i in 0..segments {
            batch_at(&mut builder, &value, i as i64 * per, &mut bytes)?;
            log.append_as_follower(&bytes)
                .with_context(|| format!("building segment {i} of {segments}"))?;
            if i + 1 < segments {
                log.roll()
                    .with_context(|| format!("rolling segment {i} of {segments}"))?;
            }
        }
        log.close()?;
    }
    let end = segments as i64 * per;
    let mut figures = Vec::new();
    for clean in [true, false] {
        let mut options = LoadOptions::default();
        options.had_clean_shutdown = clean;
        options.recovery_point = if clean {
            end
        } else {
            (segments / 2) as i64 * per
        };
        let mut samples = Vec::with_capacity(p.samples);
        for _ in 0..p.samples {
            let started = Instant::now();
            let (log, report) =
                PartitionLog::open(RealFs, &dir, config(), options, Arc::new(SystemClock))
                    .with_context(|| format!("opening {segments} segments"))?;
            let elapsed = started.elapsed();
            let scanned_enough = if clean {
                report.segments_scanned == 0
            } else {
                report.segments_scanned >= segments - segments / 2
            };
            ensure!(
                log.log_end_offset() == end && log.segment_count() == segments && scanned_enough,
                "opened {} segments up to {} ({} scanned), expected {segments} up to {end}",
                log.segment_count(),
                log.log_end_offset(),
                report.segments_scanned
            );
            log.close()?;
            samples.push(ms(elapsed));
        }
        figures.push(Figure {
            workload: format!("scale_open_{}", if clean { "clean" } else { "unclean" }),
            unit: "ms",
            samples,
            note: format!(
                "PartitionLog::open of {segments} one-batch segments {} (open-file limit {fd_limit}, descriptor cap {cap}, mapping budget {MAX_MAPPINGS})",
                if clean {
                    "after a clean shutdown"
                } else {
                    "after an unclean shutdown, recovery point halfway"
                }
            ),
        });
    }
    std::fs::remove_dir_all(&root)?;
    Ok(figures)
}
