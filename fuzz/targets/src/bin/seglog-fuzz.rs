//! `seglog-fuzz`: the stable driver's command line, run by `cargo xtask fuzz` when cargo-fuzz or
//! a nightly toolchain is missing, and the seed writer for cargo-fuzz's corpus directories.
//!
//! ```text
//! seglog-fuzz run <target|all> [--time SECONDS] [--seed N] [--artifacts DIR]
//! seglog-fuzz seeds <target> <dir>
//! seglog-fuzz replay <target> <file>...
//! ```

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use seglog_fuzz_targets::stable::{self, Budget};
use seglog_fuzz_targets::{Target, seeds};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.split_first() {
        Some((cmd, rest)) if cmd == "run" => run(rest),
        Some((cmd, [target, dir])) if cmd == "seeds" => write_seeds(target, dir),
        Some((cmd, [target, files @ ..])) if cmd == "replay" => replay(target, files),
        _ => bail!(
            "usage: seglog-fuzz run <target|all> [--time SECONDS] [--seed N] [--artifacts DIR]\n       seglog-fuzz seeds <target> <dir>\n       seglog-fuzz replay <target> <file>..."
        ),
    }
}

fn targets(name: &str) -> Result<Vec<Target>> {
    if name == "all" {
        return Ok(Target::ALL.to_vec());
    }
    Target::from_name(name)
        .map(|t| vec![t])
        .with_context(|| format!("unknown target `{name}`"))
}

fn run(args: &[String]) -> Result<()> {
    let Some((name, mut rest)) = args.split_first() else {
        bail!("run: which target?");
    };
    let mut seconds = 60_u64;
    let mut seed = 0_u64;
    let mut artifacts = PathBuf::from(".");
    while let [flag, value, tail @ ..] = rest {
        match flag.as_str() {
            "--time" => seconds = value.parse().context("--time")?,
            "--seed" => seed = value.parse().context("--seed")?,
            "--artifacts" => artifacts = PathBuf::from(value),
            other => bail!("unknown flag {other}"),
        }
        rest = tail;
    }
    let targets = targets(name)?;
    let per_target = Duration::from_secs(seconds) / u32::try_from(targets.len()).unwrap_or(1);
    for target in targets {
        match stable::run(target, Budget::Time(per_target), seed) {
            Ok(report) => println!(
                "{}: {} executions in {:.1?} ({}/s), no failure",
                target.name(),
                report.executions,
                report.elapsed,
                report.executions / report.elapsed.as_secs().max(1)
            ),
            Err(failure) => {
                std::fs::create_dir_all(&artifacts)?;
                let path = artifacts.join(format!(
                    "stable-{}-{:016x}",
                    target.name(),
                    fnv(&failure.input)
                ));
                std::fs::write(&path, &failure.input)?;
                bail!("{failure}\ninput saved to {}", path.display());
            }
        }
    }
    Ok(())
}

fn write_seeds(name: &str, dir: &str) -> Result<()> {
    let target = Target::from_name(name).with_context(|| format!("unknown target `{name}`"))?;
    std::fs::create_dir_all(dir)?;
    let seeds = seeds::seeds(target);
    for (i, seed) in seeds.iter().enumerate() {
        std::fs::write(PathBuf::from(dir).join(format!("seed-{i:03}")), seed)?;
    }
    println!("{}: {} seeds written to {dir}", target.name(), seeds.len());
    Ok(())
}

fn replay(name: &str, files: &[String]) -> Result<()> {
    let target = Target::from_name(name).with_context(|| format!("unknown target `{name}`"))?;
    for file in files {
        let data = std::fs::read(file).with_context(|| format!("reading {file}"))?;
        target.run(&data);
        println!("{file}: ok");
    }
    Ok(())
}

/// FNV-1a, to name saved inputs.
fn fnv(data: &[u8]) -> u64 {
    data.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}
