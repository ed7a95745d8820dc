//! `cargo xtask fuzz [--target T] [--time SECONDS] [--stable]`: runs the fuzz targets, each for
//! SECONDS (default 60).
//!
//! With a nightly toolchain and cargo-fuzz installed it runs libFuzzer (`cargo +nightly fuzz run`,
//! the package in `fuzz/`), on a corpus kept in `target/fuzz/corpus/<target>` and seeded from
//! `testdata/` (the seeds are written by `seglog-fuzz seeds`); crashes go to
//! `target/fuzz/artifacts/<target>/`. It prints libFuzzer's final figures per target: executions,
//! coverage (`cov`, `ft`) and corpus size. Otherwise, or with `--stable`, it runs the stable
//! proptest driver (`seglog-fuzz run`, in `fuzz/targets`) for the same time. Both drivers run the
//! same target bodies. `cargo xtask ci` does not call this: its test step runs the short smoke in
//! `fuzz/targets/tests/smoke.rs`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::{cargo, project_root};

/// The targets, as named in `fuzz/Cargo.toml` and `seglog_fuzz_targets::Target::name`.
const TARGETS: &[&str] = &["record_format", "index", "segment_recover", "cli_dump"];

/// libFuzzer's limits: an input that takes longer than this many seconds is a hang, and one that
/// needs more memory than this many MB is an out-of-memory crash.
const LIBFUZZER_LIMITS: &[&str] = &["-timeout=10", "-rss_limit_mb=2048", "-malloc_limit_mb=1024"];

/// One target's final libFuzzer figures.
#[derive(Debug, Default)]
struct Figures {
    executions: Option<u64>,
    cov: Option<u64>,
    ft: Option<u64>,
    corpus: Option<u64>,
}

pub(crate) fn run(args: &[String]) -> Result<()> {
    let mut targets: Vec<&str> = TARGETS.to_vec();
    let mut seconds = 60_u64;
    let mut force_stable = false;
    let mut rest = args;
    while let Some((flag, tail)) = rest.split_first() {
        match (flag.as_str(), tail.first()) {
            ("--target", Some(t)) => {
                let Some(&known) = TARGETS.iter().find(|k| **k == t.as_str()) else {
                    bail!(
                        "unknown fuzz target `{t}`; the targets: {}",
                        TARGETS.join(", ")
                    );
                };
                targets = vec![known];
                rest = tail.get(1..).unwrap_or_default();
            }
            ("--time", Some(s)) => {
                seconds = s.parse().with_context(|| format!("--time {s}"))?;
                rest = tail.get(1..).unwrap_or_default();
            }
            ("--stable", _) => {
                force_stable = true;
                rest = tail;
            }
            _ => bail!("usage: cargo xtask fuzz [--target T] [--time SECONDS] [--stable]"),
        }
    }
    let root = project_root();
    if !force_stable && has_nightly() && has_cargo_fuzz() {
        libfuzzer(&root, &targets, seconds)
    } else {
        if !force_stable {
            eprintln!(
                "fuzz: cargo-fuzz or a nightly toolchain is missing: running the stable proptest driver"
            );
        }
        stable(&root, &targets, seconds)
    }
}

fn has_nightly() -> bool {
    Command::new("rustup")
        .args(["run", "nightly", "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn has_cargo_fuzz() -> bool {
    Command::new("cargo")
        .args(["fuzz", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

fn stable(root: &Path, targets: &[&str], seconds: u64) -> Result<()> {
    let artifacts = root.join("target").join("fuzz").join("artifacts");
    let artifacts = artifacts.to_string_lossy().into_owned();
    let seconds = seconds.to_string();
    for target in targets {
        cargo(
            root,
            &[
                "run",
                "--locked",
                "--release",
                "-p",
                "seglog-fuzz-targets",
                "--bin",
                "seglog-fuzz",
                "--",
                "run",
                target,
                "--time",
                &seconds,
                "--artifacts",
                &artifacts,
            ],
            &[],
        )?;
    }
    Ok(())
}

fn libfuzzer(root: &Path, targets: &[&str], seconds: u64) -> Result<()> {
    let fuzz_dir = root.join("target").join("fuzz");
    let mut summary = Vec::new();
    for target in targets {
        let seeds = fuzz_dir.join("seeds").join(target);
        let corpus = fuzz_dir.join("corpus").join(target);
        let artifacts = fuzz_dir.join("artifacts").join(target);
        std::fs::create_dir_all(&corpus)?;
        std::fs::create_dir_all(&artifacts)?;
        let seeds_arg = seeds.to_string_lossy().into_owned();
        cargo(
            root,
            &[
                "run",
                "--locked",
                "-q",
                "-p",
                "seglog-fuzz-targets",
                "--bin",
                "seglog-fuzz",
                "--",
                "seeds",
                target,
                &seeds_arg,
            ],
            &[],
        )?;
        let mut cmd = Command::new("cargo");
        cmd.current_dir(root)
            .args(["+nightly", "fuzz", "run", target])
            .arg(&corpus)
            .arg(&seeds)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-artifact_prefix={}/", artifacts.display()))
            .args(LIBFUZZER_LIMITS)
            .arg("-print_final_stats=1")
            .stderr(Stdio::piped());
        eprintln!("$ {cmd:?}");
        let mut child = cmd.spawn().with_context(|| format!("starting {cmd:?}"))?;
        let stderr = child.stderr.take().context("libFuzzer's stderr")?;
        let figures = follow(BufReader::new(stderr))?;
        let status = child.wait()?;
        summary.push((*target, figures, status.success()));
        if !status.success() {
            print_summary(&summary, seconds);
            bail!(
                "fuzz target {target} failed ({status}); the input is in {}",
                artifacts.display()
            );
        }
    }
    print_summary(&summary, seconds);
    Ok(())
}

/// Echoes libFuzzer's output, except its stream of progress lines, and keeps the final figures.
fn follow(stderr: impl BufRead) -> Result<Figures> {
    let mut figures = Figures::default();
    let mut progress = 0_u64;
    for line in stderr.lines() {
        let line = line?;
        // `#1234\tNEW    cov: ...`: the word after the execution count says what happened.
        let event = line.split_whitespace().nth(1).unwrap_or_default();
        let is_progress =
            line.starts_with('#') && ["NEW", "REDUCE", "pulse", "RELOAD"].contains(&event);
        if is_progress {
            progress += 1;
            // Show a pulse now and then, so a long run visibly moves.
            if progress.is_power_of_two() || event == "pulse" {
                eprintln!("{line}");
            }
        } else {
            eprintln!("{line}");
        }
        if line.starts_with('#') {
            let word = |key: &str| -> Option<u64> {
                let mut it = line.split_whitespace();
                it.find(|w| *w == key)?;
                it.next()?.split('/').next()?.parse().ok()
            };
            figures.cov = word("cov:").or(figures.cov);
            figures.ft = word("ft:").or(figures.ft);
            figures.corpus = word("corp:").or(figures.corpus);
        }
        if let Some(n) = line.strip_prefix("stat::number_of_executed_units: ") {
            figures.executions = n.trim().parse().ok();
        }
    }
    Ok(figures)
}

fn print_summary(summary: &[(&str, Figures, bool)], seconds: u64) {
    let show = |v: Option<u64>| v.map_or_else(|| "?".to_owned(), |v| v.to_string());
    println!("fuzz: libFuzzer, {seconds} s per target");
    println!(
        "{:<16} {:>12} {:>8} {:>8} {:>8}  result",
        "target", "executions", "cov", "ft", "corpus"
    );
    for (target, f, ok) in summary {
        println!(
            "{:<16} {:>12} {:>8} {:>8} {:>8}  {}",
            target,
            show(f.executions),
            show(f.cov),
            show(f.ft),
            show(f.corpus),
            if *ok { "no crash" } else { "CRASH" }
        );
    }
}
