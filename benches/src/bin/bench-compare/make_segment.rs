//! `seglog-bench-compare make-segment --dir D --mib N`: the segment of the whole-process workloads
//! (`cargo xtask bench-compare`'s `cli_dump_deep` and `cli_recover`): a partition `D/bench-0` of one
//! segment holding N MiB of 1 KiB x 16 batches, closed cleanly. Prints `{"dir", "records"}`.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result, bail, ensure};
use seglog_log::{LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};
use serde_json::json;

use crate::{SHAPES, kafka_batches};

pub(crate) fn run(mut args: impl Iterator<Item = String>) -> Result<()> {
    let (mut dir, mut mib) = (None, None);
    while let Some(flag) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--dir" => dir = Some(PathBuf::from(value)),
            "--mib" => {
                mib = Some(
                    value
                        .parse::<u64>()
                        .with_context(|| format!("--mib {value}"))?,
                );
            }
            other => bail!("make-segment: unknown flag {other}"),
        }
    }
    let (dir, mib) = (dir.context("missing --dir")?, mib.context("missing --mib")?);
    let partition = dir.join("bench-0");
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir_all(&dir)?;
    let shape = SHAPES[0];
    let batches = kafka_batches(shape, shape.batches_for(mib))?;
    let (log, _) = PartitionLog::open(
        RealFs,
        &partition,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )?;
    for (_, bytes) in &batches {
        log.append_as_follower(bytes)?;
    }
    ensure!(
        log.segment_count() == 1,
        "the data took {} segments",
        log.segment_count()
    );
    let records = log.log_end_offset();
    log.close()?;
    println!("{}", json!({ "dir": partition, "records": records }));
    Ok(())
}
