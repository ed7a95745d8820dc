//! See <https://github.com/matklad/cargo-xtask/>.
//!
//! `cargo xtask ci` is the one test command: `.ci/run` calls it and nothing else, so a local run and CI
//! cannot diverge. The other subcommands are the pieces it is made of, plus tools that CI does not run.

mod bench_compare;
mod cli_docs;
mod crash;
mod damage_matrix;
mod deps;
mod fuzz;
mod kafka_interop;
mod kills;
mod modules;
mod public_api;
mod tidy;
mod use_tree;

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

const USAGE: &str = "\
usage: cargo xtask <command>

commands:
  ci         fmt --check, clippy -D warnings, tests, the quickstart example, doc -D warnings, cli-docs,
             deps, tidy, public-api, package, downstream, loom, crash, kills, kafka-interop,
             damage-matrix, bench-quick (bench-compare --quick and --scale --quick: every
             system and size ran and answered correctly; no timing is judged)
  cli-docs   generate seglog's shell completions and man pages into target/cli-docs and check
             that each names every subcommand
  deps       fail when a crate depends on one to its right in the layering order
  tidy       source headers, SAFETY comments, unsafe only in mmap-index, ASCII sources
  public-api compare every library's public items with docs/public-api/ (--bless: accept them)
  package    cargo package the library crates (no verify build), failing on any warning
  downstream test the crate on seglog-record-format alone with default features off, and
             check the CLI (so log and segment) builds with no codec
  loom       run the loom models (RUSTFLAGS=--cfg loom) of the crates that have them
  fixtures   regenerate testdata/ with kafka-python (needs python3 and pip) and verify it
  bench      run the criterion benches (extra arguments go to cargo bench)
  crash      crash images on SimFs: seeded workloads, reopen at every sync point and torn writes
             (--cases N crash points, default 1000; --seed S; --workload W --point P; --debug)
  kills      SIGKILL writers at random moments, then recover, check and verify every ack; then
             SIGKILL seglog recover and compare with an uninterrupted one
             (--kills N, default 200; --recover-kills N, default 50; --seed S; --release)
  bench-compare [--quick] [--dataset-mib N] [--rounds N] [--no-kafka] [--write-docs] | --render [--write-docs]
             seglog, Kafka, commitlog and the hardware limit side by side, into target/bench/
             (--write-docs: docs/benchmarks.md too)
  bench-compare --scale [--quick] [--scale-gib 1,10,100] [--scale-segments 1000,10000,100000]
             [--scale-compact-gib 1,4,16] [--scale-mib L] [--scale-compact-mib L] [--scale-reads N]
             [--scale-samples N] [--write-docs] | --scale --render [--write-docs]
             how seglog's append, read, open and compaction costs grow with the log (long; sizes
             that do not fit on the disk are skipped and reported), into target/bench/scale.json
  kafka-interop [--step 6,7]
             Kafka's own tools and a KRaft broker judge seglog's format, both ways (java, mvn;
             step 10 also kcat, skipped with a notice without it); --step runs some steps
  damage-matrix [--seed S] [--keep]
             seglog's own damage matrix: over 1,000 damaged copies of a partition, judged by Kafka's
             classes and the documented recovery rules (java, mvn)
  fuzz       [--target T] [--time SECONDS] [--stable]: cargo-fuzz with nightly, else the stable driver";

fn main() -> Result<()> {
    let args: Vec<String> = env::args().skip(1).collect();
    let Some((command, rest)) = args.split_first() else {
        println!("{USAGE}");
        return Ok(());
    };
    match command.as_str() {
        "ci" => ci(),
        "cli-docs" => cli_docs::run(&project_root()),
        "deps" => deps::check(&project_root()),
        "tidy" => tidy::check(&project_root()),
        "public-api" => public_api::check(&project_root(), rest.iter().any(|a| a == "--bless")),
        "package" => package(&project_root()),
        "downstream" => downstream(&project_root()),
        "loom" => loom(rest),
        "fixtures" => fixtures(),
        "bench" => bench(rest),
        "kills" => kills::run(rest),
        "crash" => crash::run(rest),
        "bench-compare" => bench_compare::run(&project_root(), rest),
        "kafka-interop" => kafka_interop::run(&project_root(), rest),
        "damage-matrix" => damage_matrix::run(&project_root(), rest),
        "fuzz" => fuzz::run(rest),
        "help" | "--help" | "-h" => {
            println!("{USAGE}");
            Ok(())
        }
        other => bail!("unknown xtask command `{other}`\n{USAGE}"),
    }
}

/// The workspace root, derived from this crate's manifest directory.
pub(crate) fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
}

fn ci() -> Result<()> {
    let root = project_root();
    let started = Instant::now();
    step("fmt", || cargo(&root, &["fmt", "--all", "--check"], &[]))?;
    step("clippy", || {
        cargo(
            &root,
            &[
                "clippy",
                "--workspace",
                "--all-targets",
                "--locked",
                "--",
                "-D",
                "warnings",
            ],
            &[],
        )
    })?;
    step("test", || test(&root))?;
    // The embedder's example: a crate that depends on seglog-log alone opens, appends, reads and closes.
    step("example", || {
        cargo(
            &root,
            &[
                "run",
                "--locked",
                "-p",
                "seglog-log",
                "--example",
                "quickstart",
            ],
            &[],
        )
    })?;
    step("doc", || {
        cargo(
            &root,
            &["doc", "--workspace", "--no-deps", "--locked"],
            &[("RUSTDOCFLAGS", "-D warnings")],
        )
    })?;
    step("cli-docs", || cli_docs::run(&root))?;
    step("deps", || deps::check(&root))?;
    step("tidy", || tidy::check(&root))?;
    step("public-api", || public_api::check(&root, false))?;
    step("package", || package(&root))?;
    step("downstream", || downstream(&root))?;
    step("loom", || loom(&[]))?;
    step("crash", crash::ci)?;
    step("kills", || kills::run(&[]))?;
    step("kafka-interop", || kafka_interop::run(&root, &[]))?;
    step("damage-matrix", || damage_matrix::run(&root, &[]))?;
    step("bench-quick", || bench_compare::ci(&root))?;
    println!("xtask ci: all steps passed in {:.0?}", started.elapsed());
    Ok(())
}

fn step(name: &str, f: impl FnOnce() -> Result<()>) -> Result<()> {
    let started = Instant::now();
    eprintln!("==> xtask ci: {name}");
    f().with_context(|| format!("xtask ci step `{name}` failed"))?;
    eprintln!("<== xtask ci: {name} ok in {:.1?}", started.elapsed());
    Ok(())
}

fn test(root: &Path) -> Result<()> {
    if has_nextest() {
        cargo(
            root,
            &[
                "nextest",
                "run",
                "--workspace",
                "--locked",
                "--no-fail-fast",
            ],
            &[],
        )?;
        // nextest does not run doctests.
        cargo(root, &["test", "--workspace", "--locked", "--doc"], &[])
    } else {
        eprintln!("cargo-nextest is not installed: running cargo test");
        cargo(
            root,
            &["test", "--workspace", "--locked", "--no-fail-fast"],
            &[],
        )
    }
}

/// The crates an embedder can depend on: each must package (`cargo package`) without a warning.
/// `--no-verify`: the verify build would compile all six again from their packaged sources (the
/// workspace build already compiles them); cargo packages path dependencies together through a
/// local registry, so no seglog crate needs to be on crates.io first.
fn package(root: &Path) -> Result<()> {
    let mut args = vec!["package", "--locked", "--no-verify", "--allow-dirty"];
    for (krate, _) in deps::LIBRARIES {
        if krate.starts_with("seglog-downstream") {
            continue;
        }
        args.extend(["-p", krate]);
    }
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    eprintln!("$ cargo {}", args.join(" "));
    let output = Command::new(cargo)
        .args(&args)
        .current_dir(root)
        .output()
        .context("running cargo package")?;
    let stderr = String::from_utf8_lossy(&output.stderr);
    if !output.status.success() {
        bail!("cargo package failed:\n{stderr}");
    }
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("warning"))
        .collect();
    if !warnings.is_empty() {
        bail!("cargo package warned:\n{stderr}");
    }
    Ok(())
}

/// The crate on seglog-record-format alone with its default features off: a workspace of its
/// own (so no other package's features reach record-format), built in this `target/`.
fn downstream(root: &Path) -> Result<()> {
    let manifest = root
        .join("downstream")
        .join("record-format-minimal")
        .join("Cargo.toml");
    let manifest = manifest.to_string_lossy().into_owned();
    let target = root.join("target").to_string_lossy().into_owned();
    let common = [
        "--locked",
        "--manifest-path",
        &manifest,
        "--target-dir",
        &target,
    ];
    let mut clippy = vec!["clippy", "--all-targets"];
    clippy.extend(common);
    clippy.extend(["--", "-D", "warnings"]);
    cargo(root, &clippy, &[])?;
    let mut test = vec!["test"];
    test.extend(common);
    cargo(root, &test, &[])?;
    // The codec features pass through segment and log to the CLI: the whole stack builds
    // without a codec (one package selected, so no other member's features are unified in).
    cargo(
        root,
        &[
            "check",
            "--locked",
            "-p",
            "seglog-cli",
            "--no-default-features",
        ],
        &[],
    )
}

fn has_nextest() -> bool {
    Command::new("cargo")
        .args(["nextest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The crates whose sources hold loom models, and the test-name filter that selects them.
const LOOM_CRATES: &[&str] = &["seglog-mmap-index", "seglog-segment", "seglog-log"];

fn loom(args: &[String]) -> Result<()> {
    let root = project_root();
    let filter = args.first().map_or("loom", String::as_str);
    // A target directory of its own: `--cfg loom` changes every crate's fingerprint, and sharing
    // `target/` would rebuild the whole workspace twice per CI run.
    let target = root.join("target").join("loom");
    let target = target.to_string_lossy().into_owned();
    for krate in LOOM_CRATES {
        let src = root
            .join("crates")
            .join(krate.trim_start_matches("seglog-"))
            .join("src");
        // Every crate switches its models and its facade with this one cfg (tokio's pattern).
        if !contains_text(&src, "cfg(all(test, loom))")? {
            bail!(
                "loom: {krate} is listed in LOOM_CRATES but its sources hold no `cfg(all(test, loom))` model"
            );
        }
        cargo(
            &root,
            &[
                "test",
                "--locked",
                "--release",
                "-p",
                krate,
                "--lib",
                "--",
                filter,
                "--test-threads=1",
            ],
            &[
                ("RUSTFLAGS", "--cfg loom -C debug-assertions"),
                ("LOOM_MAX_PREEMPTIONS", "3"),
                ("CARGO_TARGET_DIR", &target),
            ],
        )?;
    }
    Ok(())
}

fn contains_text(dir: &Path, needle: &str) -> Result<bool> {
    for path in tidy::rust_files(dir)? {
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        if text.contains(needle) {
            return Ok(true);
        }
    }
    Ok(false)
}

fn fixtures() -> Result<()> {
    let root = project_root();
    let script = root.join("testdata").join("gen").join("generate.py");
    if !script.exists() {
        bail!("{} is missing", script.display());
    }
    let venv = root.join("target").join("fixtures-venv");
    let python = venv.join("bin").join("python");
    if !python.exists() {
        run(Command::new("python3")
            .arg("-m")
            .arg("venv")
            .arg(&venv)
            .current_dir(&root))?;
    }
    let requirements = root.join("testdata").join("gen").join("requirements.txt");
    run(Command::new(&python)
        .args(["-m", "pip", "install", "--quiet", "-r"])
        .arg(&requirements)
        .current_dir(&root))?;
    run(Command::new(&python).arg(&script).current_dir(&root))?;
    // The README's sample segment is made from those batches; Kafka's goldens in
    // testdata/kafka-dump are made from it (interop/kafka/make-goldens.sh, which needs Maven).
    let sample = root.join("testdata").join("gen").join("sample_segment.py");
    run(Command::new(&python).arg(&sample).current_dir(&root))?;
    eprintln!(
        "fixtures: if testdata/segment/00000000000000000000.log changed, rerun interop/kafka/make-goldens.sh"
    );
    // The committed fixtures are checked by the record-format and mmap-index tests.
    cargo(&root, &["test", "--locked", "--workspace", "fixture"], &[])
}

fn bench(args: &[String]) -> Result<()> {
    let root = project_root();
    let mut argv = vec!["bench", "--workspace", "--locked"];
    argv.extend(args.iter().map(String::as_str));
    cargo(&root, &argv, &[])
}

pub(crate) fn cargo(root: &Path, args: &[&str], envs: &[(&str, &str)]) -> Result<()> {
    let mut cmd = Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned()));
    cmd.args(args).current_dir(root);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

fn run(cmd: &mut Command) -> Result<()> {
    eprintln!("$ {cmd:?}");
    let status = cmd
        .status()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} exited with {status}");
    }
    Ok(())
}
