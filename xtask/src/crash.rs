//! `cargo xtask crash [--cases N] [--seed S] [--workload W] [--point P] [--debug]`: the crash-image
//! harness of docs/reliability.md section 1. It builds and runs the `seglog-crash` binary of
//! `seglog-harness` (in release mode unless `--debug`), which runs seeded workloads on a partition
//! log over `SimFs`, reopens the image a power loss leaves at every sync point and at random
//! writes, and checks the invariants. Extra arguments are passed through; a failure prints the
//! seed, workload and point that reproduce it. `ci` is the step of `cargo xtask ci`.

use std::process::Command;

use anyhow::{Result, bail};

pub(crate) fn run(args: &[String]) -> Result<()> {
    let root = crate::project_root();
    let debug = args.iter().any(|a| a == "--debug");
    let passed: Vec<&String> = args.iter().filter(|a| *a != "--debug").collect();
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command.current_dir(&root).args([
        "run",
        "--locked",
        "-q",
        "-p",
        "seglog-harness",
        "--bin",
        "seglog-crash",
    ]);
    if !debug {
        command.arg("--release");
    }
    command.arg("--").args(passed);
    let status = command.status()?;
    if !status.success() {
        bail!("crash: the harness found failures (or did not build); see above");
    }
    Ok(())
}

/// Workloads of other seeds whose crash points once failed (docs/reliability.md, section 1):
/// each runs whole in CI, beside the fixed seed's 3,000 points.
const REGRESSIONS: [(&str, &str); 4] = [("6185222", "31"), ("2", "12"), ("1", "14"), ("101", "13")];

/// The CI step: 3,000 crash points of a fixed seed, then the workloads of [`REGRESSIONS`], on
/// the debug build the tests already made (about 10 s on a 2-core machine).
pub(crate) fn ci() -> Result<()> {
    let to_args =
        |words: &[&str]| -> Vec<String> { words.iter().map(|w| String::from(*w)).collect() };
    run(&to_args(&[
        "--debug", "--cases", "3000", "--seed", "6185222",
    ]))?;
    for (seed, workload) in REGRESSIONS {
        run(&to_args(&[
            "--debug",
            "--seed",
            seed,
            "--workload",
            workload,
        ]))?;
    }
    Ok(())
}
