//! `cargo xtask bench-compare [--quick] [--dataset-mib N] [--rounds N] [--no-kafka] [--write-docs] |
//! --render [--write-docs]`: the same workloads on seglog, Kafka 4.4.0's storage classes
//! (interop/kafka-bench), the commitlog crate and the hardware limit, with the same sizes. A round
//! runs each workload group (`GROUPS`) on every system that has it, back to back, a process each,
//! the systems' order rotated from group to group and round to round; `--rounds` runs that many
//! rounds (3 by default, 1 with `--quick`). Then the whole-process workloads (the CLI against
//! Kafka's tools, `whole_process`). Writes into `target/bench/` only: `summary.json` (every
//! figure's samples and median, each round's ratio to seglog and their median, and the targets)
//! and a report with a table and an
//! SVG chart (`benchmarks.md`, `benchmarks.svg`); `--write-docs` also writes the report to
//! `docs/benchmarks.md` and `docs/benchmarks.svg`, keeping that file's hand-written analysis.
//! `--quick` fails unless every system ran every workload it has (`check`). `--scale ...` is a
//! separate, long mode: how seglog's costs grow with the log's size (`scale`).

#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value by key yields Null when the key is missing; it never panics"
)]
#![allow(
    clippy::cast_precision_loss,
    reason = "counts of a few systems and workloads become chart coordinates"
)]

mod check;
mod line_chart;
mod machine;
mod process;
mod report;
mod scale;
mod scale_report;
mod summary;
mod svg;
mod whole_process;
mod workloads;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use machine::{machine, read_trimmed};
use report::{print_table, write_report};
use summary::summarize;
use workloads::GROUPS;

#[derive(Debug, Clone)]
struct Options {
    quick: bool,
    kafka: bool,
    dataset_mib: u64,
    rounds: u32,
    /// Also write the report to docs/ (a run never touches the working tree without it).
    write_docs: bool,
    /// The arguments as given, for the report's command line.
    args: Vec<String>,
}

impl Options {
    fn parse(args: &[String]) -> Result<Self> {
        let mut opts = Options {
            quick: false,
            kafka: true,
            dataset_mib: 0,
            rounds: 0,
            write_docs: false,
            args: args.to_vec(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => opts.quick = true,
                "--no-kafka" => opts.kafka = false,
                "--write-docs" => opts.write_docs = true,
                "--rounds" => {
                    let n = args.next().context("--rounds needs a number")?;
                    opts.rounds = n.parse().with_context(|| format!("--rounds {n}"))?;
                }
                "--dataset-mib" => {
                    let n = args.next().context("--dataset-mib needs a number")?;
                    opts.dataset_mib = n.parse().with_context(|| format!("--dataset-mib {n}"))?;
                }
                other => bail!(
                    "unknown bench-compare argument `{other}` (--quick, --dataset-mib N, --rounds N, --no-kafka, --write-docs)"
                ),
            }
        }
        if opts.rounds == 0 {
            opts.rounds = if opts.quick { 1 } else { 3 };
        }
        if opts.dataset_mib == 0 {
            opts.dataset_mib = if opts.quick { 32 } else { 1024 };
        }
        Ok(opts)
    }

    /// The sizes every system gets, as command-line flags.
    fn workload_flags(&self) -> Vec<(&'static str, u64)> {
        let (append, fsync, samples, warmup, lookups, reads, segments) = if self.quick {
            (8, 2, 1, 0, 20_000, 2_000, 100)
        } else {
            (128, 32, 3, 1, 200_000, 30_000, 10_000)
        };
        vec![
            ("--append-mib", append),
            ("--fsync-append-mib", fsync),
            ("--dataset-mib", self.dataset_mib),
            ("--samples", samples),
            ("--warmup", warmup),
            ("--lookups", lookups),
            ("--reads", reads),
            ("--open-segments", segments),
        ]
    }

    /// The size of the whole-process workloads' segment: 512 MiB, 8 with `--quick`.
    fn cli_segment_mib(&self) -> u64 {
        if self.quick { 8 } else { 512 }
    }
}

/// The report's directories: `target/bench/`, and `docs/` with `--write-docs`.
fn report_dirs(root: &Path, write_docs: bool) -> Vec<std::path::PathBuf> {
    let mut dirs = vec![root.join("target").join("bench")];
    if write_docs {
        dirs.push(root.join("docs"));
    }
    dirs
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "--scale") {
        return scale::run(root, args);
    }
    compare(root, args)
}

fn compare(root: &Path, args: &[String]) -> Result<()> {
    if args.first().is_some_and(|a| a == "--render") {
        // Re-renders the report of the last run from its summary (after a change of the report's
        // wording), without measuring anything.
        let write_docs = match args.get(1..).unwrap_or_default() {
            [] => false,
            [flag] if flag == "--write-docs" => true,
            other => bail!("--render takes only --write-docs, not {other:?}"),
        };
        let summary_path = root.join("target").join("bench").join("summary.json");
        let text = std::fs::read_to_string(&summary_path)
            .with_context(|| format!("reading {}", summary_path.display()))?;
        let summary: Value = serde_json::from_str(&text)?;
        for dir in report_dirs(root, write_docs) {
            write_report(&summary, &dir)?;
        }
        return Ok(());
    }
    let opts = Options::parse(args)?;
    let started = Instant::now();
    let load_before = read_trimmed("/proc/loadavg");
    build_release(root)?;
    let bench_dir = root.join("target").join("bench");
    std::fs::create_dir_all(&bench_dir)?;
    let flags: Vec<String> = opts
        .workload_flags()
        .iter()
        .flat_map(|(k, v)| [(*k).to_owned(), v.to_string()])
        .collect();
    let kafka = opts.kafka && has_java_and_maven();
    if !kafka {
        eprintln!("bench-compare: Kafka skipped (--no-kafka, or java/mvn not found)");
    }
    let mut runs = Vec::new();
    let mut commands = Vec::new();
    for round in 1..=opts.rounds {
        for (group, system) in round_plan(round, kafka) {
            let mut flags = flags.clone();
            flags.extend(["--part".to_owned(), group.to_owned()]);
            let (command, mut doc) = run_system(root, system, &flags, round, opts.rounds)?;
            if round == 1 {
                commands.push(command);
            }
            doc["round"] = round.into();
            doc["group"] = group.into();
            runs.push(doc);
        }
    }
    let (cli_commands, cli_runs) = whole_process::run(
        root,
        opts.cli_segment_mib(),
        if opts.quick { 1 } else { 5 },
        usize::from(!opts.quick),
        kafka,
    )?;
    commands.extend(cli_commands);
    runs.extend(cli_runs);
    let load_after = read_trimmed("/proc/loadavg");
    let machine = machine(root, &load_before, &load_after);
    let summary = summarize(&runs, &opts, &machine, &commands)?;
    let summary_path = bench_dir.join("summary.json");
    std::fs::write(
        &summary_path,
        serde_json::to_string_pretty(&summary)? + "\n",
    )?;
    let dirs = report_dirs(root, opts.write_docs);
    for dir in &dirs {
        write_report(&summary, dir)?;
    }
    print_table(&summary);
    check::after_quick_run(&summary, opts.quick, opts.kafka)?;
    eprintln!(
        "bench-compare: wrote {} and the report in {} in {:.0?}",
        summary_path.display(),
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(" and "),
        started.elapsed()
    );
    Ok(())
}

/// CI's `bench-quick` step: the quick run of every system and workload, then the tiny scale run;
/// each fails unless everything ran and answered correctly. Timings are not judged, and neither
/// writes docs/. Without java or mvn, Kafka's side is skipped as kafka-interop skips, and says so.
pub(crate) fn ci(root: &Path) -> Result<()> {
    let mut quick = vec!["--quick".to_owned()];
    if !has_java_and_maven() {
        println!("bench-quick: Kafka's side skipped: java or mvn is not installed");
        quick.push("--no-kafka".to_owned());
    }
    run(root, &quick)?;
    run(root, &["--scale".to_owned(), "--quick".to_owned()])
}

/// The release build of the bench processes and the CLI. `--scale` builds the same packages: another
/// set unifies other features and would rebuild the workspace's crates between the two (CI's
/// bench-quick runs both).
fn build_release(root: &Path) -> Result<()> {
    crate::cargo(
        root,
        &[
            "build",
            "--release",
            "--locked",
            "-p",
            "seglog-benches",
            "-p",
            "seglog-cli",
        ],
        &[],
    )
}

/// The processes of one round, in order: each group of `GROUPS` on its systems back to back (Kafka
/// only if `kafka`), their order rotated by the round and the group's place, so that no system
/// always goes first (docs/perf/method.md).
fn round_plan(round: u32, kafka: bool) -> Vec<(&'static str, &'static str)> {
    let mut plan = Vec::new();
    for (place, (group, systems)) in GROUPS.iter().enumerate() {
        let mut systems: Vec<&'static str> = systems
            .iter()
            .copied()
            .filter(|s| kafka || *s != "kafka")
            .collect();
        if !systems.is_empty() {
            let turn = (round as usize).saturating_sub(1) + place;
            let n = systems.len();
            systems.rotate_left(turn % n);
        }
        plan.extend(systems.into_iter().map(|s| (*group, s)));
    }
    plan
}

/// Runs one system's process once; returns its command line and its JSON document.
fn run_system(
    root: &Path,
    system: &str,
    flags: &[String],
    round: u32,
    rounds: u32,
) -> Result<(String, Value)> {
    let work = format!("target/bench/work/{system}");
    let mut argv: Vec<String> = if system == "kafka" {
        vec!["bash".into(), "interop/kafka-bench/run.sh".into()]
    } else {
        vec![
            "target/release/seglog-bench-compare".into(),
            system.to_owned(),
        ]
    };
    argv.extend(["--dir".to_owned(), work.clone()]);
    argv.extend(flags.iter().cloned());
    let done = process::run(root, &argv, Path::new(&work), false, |command| {
        eprintln!("bench-compare: round {round}/{rounds}, {system}: {command}");
    })?;
    if !done.status.success() {
        bail!("{} exited with {}", done.command, done.status);
    }
    let doc = done.json()?;
    eprintln!("bench-compare: {system} done in {:.0?}", done.elapsed);
    Ok((done.command, doc))
}

fn has_java_and_maven() -> bool {
    ["java", "mvn"].iter().all(|tool| {
        Command::new(tool)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A run writes into target/bench/ only; docs/ only when asked.
    #[test]
    fn the_report_goes_to_docs_only_with_write_docs() -> Result<()> {
        let root = Path::new("repo");
        let quick = Options::parse(&["--quick".to_owned()])?;
        assert!(!quick.write_docs);
        assert_eq!(
            report_dirs(root, quick.write_docs),
            [root.join("target").join("bench")]
        );
        let full = Options::parse(&["--write-docs".to_owned()])?;
        assert_eq!(
            report_dirs(root, full.write_docs),
            [root.join("target").join("bench"), root.join("docs")]
        );
        Ok(())
    }

    /// Each group runs on all its systems back to back, every group every round, and over the
    /// rounds each system of a group goes first in turn.
    #[test]
    fn a_round_runs_each_group_on_its_systems_back_to_back() {
        let rounds: Vec<_> = (1..=4).map(|r| round_plan(r, true)).collect();
        let processes: usize = GROUPS.iter().map(|(_, s)| s.len()).sum();
        for plan in &rounds {
            assert_eq!(plan.len(), processes);
            let mut seen = Vec::new();
            for (group, _) in plan {
                if seen.last() != Some(group) {
                    assert!(!seen.contains(group), "{group} split within a round");
                    seen.push(*group);
                }
            }
            assert_eq!(seen, GROUPS.iter().map(|(g, _)| *g).collect::<Vec<_>>());
        }
        for (group, systems) in GROUPS {
            let first = |plan: &[(&'static str, &'static str)]| {
                plan.iter().find(|(g, _)| g == group).map(|(_, s)| *s)
            };
            let mut firsts: Vec<_> = rounds[..systems.len()]
                .iter()
                .filter_map(|p| first(p))
                .collect();
            firsts.sort_unstable();
            let mut all = systems.to_vec();
            all.sort_unstable();
            assert_eq!(
                firsts,
                all,
                "{group}: each system first once in {} rounds",
                systems.len()
            );
        }
        // Within one round the groups do not all start with the same system either.
        let starts: std::collections::BTreeSet<_> = GROUPS
            .iter()
            .filter_map(|(g, _)| rounds[0].iter().find(|(pg, _)| pg == g).map(|(_, s)| *s))
            .collect();
        assert!(starts.len() > 1);
        assert!(round_plan(1, false).iter().all(|(_, s)| *s != "kafka"));
    }

    /// `--quick` runs every workload once, small; the full run keeps the sizes.
    #[test]
    fn quick_runs_each_workload_once_and_small() -> Result<()> {
        let quick = Options::parse(&["--quick".to_owned()])?;
        let flags = quick.workload_flags();
        let get = |name: &str| flags.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        assert_eq!((get("--samples"), get("--warmup")), (Some(1), Some(0)));
        assert_eq!(get("--open-segments"), Some(100));
        assert_eq!((quick.dataset_mib, quick.cli_segment_mib()), (32, 8));
        let full = Options::parse(&[])?;
        let flags = full.workload_flags();
        let get = |name: &str| flags.iter().find(|(k, _)| *k == name).map(|(_, v)| *v);
        assert_eq!(get("--open-segments"), Some(10_000));
        assert_eq!((full.dataset_mib, full.cli_segment_mib()), (1024, 512));
        Ok(())
    }
}
