//! Step 2: Kafka's `LogSegment.recover`, on copies of seglog's `.log` files, rebuilds
//! byte-identical `.index` and `.timeindex` files.

use std::fs;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};

use super::ctx::Ctx;
use super::segment_files::{base_offset, segment_files};
use super::{INDEX_INTERVALS, SEGMENT_INDEX_BYTES};

pub(super) fn step2(ctx: &Ctx, built: &Path) -> Result<()> {
    let mut compared = 0;
    for (partition, interval) in INDEX_INTERVALS {
        let ours = built.join(partition);
        let theirs = ctx.work.join("step2").join(partition);
        fs::create_dir_all(&theirs)?;
        let mut bases = Vec::new();
        for file in segment_files(&ours)? {
            if file.extension().is_some_and(|e| e == "log") {
                let name = file.file_name().context("file name")?;
                fs::copy(&file, theirs.join(name))?;
                bases.push(base_offset(&file.display().to_string())?.to_string());
            }
        }
        let dir = theirs.display().to_string();
        let cmd = ctx.oracle(&[
            "recover",
            &dir,
            &bases.join(","),
            &interval.to_string(),
            &SEGMENT_INDEX_BYTES.to_string(),
        ]);
        let out = ctx.run_ok(
            cmd,
            &format!("step2-kafka-recover-{partition}"),
            Duration::from_mins(3),
        )?;
        let truncated: Vec<&str> = out.lines().collect();
        ensure!(
            truncated.len() == bases.len() && truncated.iter().all(|t| *t == "0"),
            "{partition}: Kafka's recovery truncated bytes: {truncated:?}"
        );
        for base in &bases {
            for ext in ["index", "timeindex"] {
                let name = format!("{:020}.{ext}", base.parse::<i64>()?);
                let a =
                    fs::read(ours.join(&name)).with_context(|| format!("{partition}/{name}"))?;
                let b = fs::read(theirs.join(&name))
                    .with_context(|| format!("Kafka's {partition}/{name}"))?;
                if a != b {
                    let at = a
                        .iter()
                        .zip(&b)
                        .position(|(x, y)| x != y)
                        .unwrap_or(a.len().min(b.len()));
                    bail!(
                        "{partition}/{name}: seglog's ({} bytes) and Kafka's ({} bytes) differ from byte {at}",
                        a.len(),
                        b.len()
                    );
                }
                compared += 1;
            }
        }
    }
    eprintln!("kafka-interop: {compared} index files byte-identical to Kafka's");
    Ok(())
}
