//! `cargo xtask bench-compare [--quick] [--dataset-mib N] [--rounds N] [--no-kafka] | --render`: the same workloads
//! on seglog, Kafka 4.4.0's storage classes (interop/kafka-bench), the commitlog crate and the hardware
//! limit, each in its own process, one after the other, with the same sizes; `--rounds` rotates through
//! the systems that many times (3 by default, 1 with `--quick`) and pools the samples. Writes `target/bench/summary.json` (every
//! figure's samples, median and ratio to seglog, and the targets) and a report with a table and an SVG
//! chart: `docs/benchmarks.md` and `docs/benchmarks.svg` for a full run, `target/bench/` for `--quick`.

#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value by key yields Null when the key is missing; it never panics"
)]
#![allow(
    clippy::cast_precision_loss,
    reason = "counts of a few systems and workloads become chart coordinates"
)]

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};
use serde_json::{Map, Value, json};

/// The systems in the order they run and appear.
const SYSTEMS: &[&str] = &["seglog", "kafka", "commitlog", "limit"];

/// The workloads in report order: (id, what it is).
const WORKLOADS: &[(&str, &str)] = &[
    ("append_1k_x16", "append, 1 KiB records x 16, page cache"),
    (
        "append_100b_x100",
        "append, 100 B records x 100, page cache",
    ),
    (
        "append_1k_x16_fsync_1m",
        "append, 1 KiB x 16, fsync every MiB",
    ),
    (
        "append_100b_x100_fsync_1m",
        "append, 100 B x 100, fsync every MiB",
    ),
    ("recovery", "recovery of the dataset segment"),
    ("index_lookup", "offset index lookup, random offset"),
    ("read_by_offset", "read by offset (17 KiB), random offset"),
    (
        "lookup_by_timestamp",
        "lookup by timestamp, random timestamp",
    ),
];

/// (workloads, against, seglog at least this many times faster, label).
const TARGETS: &[(&[&str], &str, f64, &str)] = &[
    (
        &[
            "append_1k_x16",
            "append_100b_x100",
            "append_1k_x16_fsync_1m",
            "append_100b_x100_fsync_1m",
        ],
        "kafka",
        1.5,
        "append >= 1.5x Kafka",
    ),
    (&["index_lookup"], "kafka", 2.0, "index lookup >= 2x Kafka"),
    (&["recovery"], "kafka", 1.5, "recovery >= 1.5x Kafka"),
    (
        &["read_by_offset"],
        "commitlog",
        2.0,
        "random read >= 2x commitlog",
    ),
    (
        &[
            "append_1k_x16",
            "append_100b_x100",
            "append_1k_x16_fsync_1m",
            "append_100b_x100_fsync_1m",
        ],
        "limit",
        0.8,
        "append within 80% of write_all",
    ),
];

/// The heading from which `docs/benchmarks.md` is written by hand and kept across reruns.
const ANALYSIS: &str = "\n## Analysis";

#[derive(Debug, Clone)]
struct Options {
    quick: bool,
    kafka: bool,
    dataset_mib: u64,
    rounds: u32,
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
            args: args.to_vec(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            match arg.as_str() {
                "--quick" => opts.quick = true,
                "--no-kafka" => opts.kafka = false,
                "--rounds" => {
                    let n = args.next().context("--rounds needs a number")?;
                    opts.rounds = n.parse().with_context(|| format!("--rounds {n}"))?;
                }
                "--dataset-mib" => {
                    let n = args.next().context("--dataset-mib needs a number")?;
                    opts.dataset_mib = n.parse().with_context(|| format!("--dataset-mib {n}"))?;
                }
                other => bail!(
                    "unknown bench-compare argument `{other}` (--quick, --dataset-mib N, --rounds N, --no-kafka)"
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
        let (append, fsync, samples, warmup, lookups, reads) = if self.quick {
            (8, 2, 3, 1, 20_000, 2_000)
        } else {
            (128, 32, 3, 1, 200_000, 30_000)
        };
        vec![
            ("--append-mib", append),
            ("--fsync-append-mib", fsync),
            ("--dataset-mib", self.dataset_mib),
            ("--samples", samples),
            ("--warmup", warmup),
            ("--lookups", lookups),
            ("--reads", reads),
        ]
    }
}

pub(crate) fn run(root: &Path, args: &[String]) -> Result<()> {
    if args.first().is_some_and(|a| a == "--render") {
        // Re-renders the report of the last run from its summary (after a change of the report's
        // wording), without measuring anything.
        let summary_path = root.join("target").join("bench").join("summary.json");
        let text = std::fs::read_to_string(&summary_path)
            .with_context(|| format!("reading {}", summary_path.display()))?;
        let summary: Value = serde_json::from_str(&text)?;
        let dir = if summary["mode"] == "quick" {
            root.join("target").join("bench")
        } else {
            root.join("docs")
        };
        return write_report(&summary, &dir);
    }
    let opts = Options::parse(args)?;
    let started = Instant::now();
    let load_before = read_trimmed("/proc/loadavg");
    crate::cargo(
        root,
        &["build", "--release", "--locked", "-p", "seglog-benches"],
        &[],
    )?;
    let bench_dir = root.join("target").join("bench");
    std::fs::create_dir_all(&bench_dir)?;
    let flags: Vec<String> = opts
        .workload_flags()
        .iter()
        .flat_map(|(k, v)| [(*k).to_owned(), v.to_string()])
        .collect();
    let mut runs = Vec::new();
    let mut commands = Vec::new();
    // Rounds rotate through the systems, so a change in the machine's load during the run falls on
    // every system alike instead of on whichever ran at that moment.
    for round in 1..=opts.rounds {
        for system in SYSTEMS {
            if *system == "kafka" && (!opts.kafka || !has_java_and_maven()) {
                if round == 1 {
                    eprintln!("bench-compare: Kafka skipped (--no-kafka, or java/mvn not found)");
                }
                continue;
            }
            let (command, doc) = run_system(root, system, &flags, round, opts.rounds)?;
            if round == 1 {
                commands.push(command);
            }
            runs.push(doc);
        }
    }
    let load_after = read_trimmed("/proc/loadavg");
    let machine = machine(root, &load_before, &load_after);
    let summary = summarize(&runs, &opts, &machine, &commands)?;
    let summary_path = bench_dir.join("summary.json");
    std::fs::write(
        &summary_path,
        serde_json::to_string_pretty(&summary)? + "\n",
    )?;
    let dir = if opts.quick {
        bench_dir.clone()
    } else {
        root.join("docs")
    };
    write_report(&summary, &dir)?;
    print_table(&summary);
    eprintln!(
        "bench-compare: wrote {} and the report in {} in {:.0?}",
        summary_path.display(),
        dir.display(),
        started.elapsed()
    );
    Ok(())
}

/// Writes `benchmarks.md` and `benchmarks.svg` into `dir`, keeping the hand-written analysis.
fn write_report(summary: &Value, dir: &Path) -> Result<()> {
    let md_path = dir.join("benchmarks.md");
    std::fs::write(dir.join("benchmarks.svg"), render_svg(summary))?;
    // The analysis below the generated part is written by hand (from profiles); a rerun keeps it.
    let analysis = std::fs::read_to_string(&md_path)
        .ok()
        .and_then(|old| old.find(ANALYSIS).map(|at| old[at..].to_owned()))
        .unwrap_or_default();
    std::fs::write(
        &md_path,
        render_markdown(summary, "benchmarks.svg") + &analysis,
    )?;
    Ok(())
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
    let command = argv.join(" ");
    eprintln!("bench-compare: round {round}/{rounds}, {system}: {command}");
    let started = Instant::now();
    let (program, program_args) = argv.split_first().context("empty command")?;
    let output = Command::new(program)
        .args(program_args)
        .current_dir(root)
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("starting {command}"))?;
    let _ = std::fs::remove_dir_all(root.join(&work));
    if !output.status.success() {
        bail!("{command} exited with {}", output.status);
    }
    let doc: Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("{system} printed no JSON document"))?;
    eprintln!("bench-compare: {system} done in {:.0?}", started.elapsed());
    Ok((command, doc))
}

fn has_java_and_maven() -> bool {
    ["java", "mvn"].iter().all(|tool| {
        Command::new(tool)
            .arg("-version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .unwrap_or_default()
}

fn command_line(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .ok()
        .map(|o| {
            let text = if o.stdout.is_empty() {
                o.stderr
            } else {
                o.stdout
            };
            String::from_utf8_lossy(&text)
                .lines()
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned()
        })
        .unwrap_or_default()
}

fn machine(root: &Path, load_before: &str, load_after: &str) -> Value {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|l| l.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_default();
    let cores = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|l| l.trim().to_owned())
        .unwrap_or_default();
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap_or_default();
    json!({
        "cpu": cpu,
        "cores": cores,
        "memory": memory,
        "kernel": command_line("uname", &["-sr"]),
        "filesystem": command_line("sh", &["-c", "df -T target | tail -1 | awk '{print $2}'"]),
        "rustc": command_line("rustc", &["-V"]),
        "java": command_line("java", &["-version"]),
        "date": command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        "loadavg_before": load_before,
        "loadavg_after": load_after,
        "commitlog": locked_version(&lock, "commitlog"),
    })
}

/// The version Cargo.lock pins for `name`.
fn locked_version(lock: &str, name: &str) -> String {
    let needle = format!("name = \"{name}\"");
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line.trim() == needle
            && let Some(v) = lines
                .next()
                .and_then(|l| l.trim().strip_prefix("version = "))
        {
            return v.trim_matches('"').to_owned();
        }
    }
    String::new()
}

fn median(samples: &[f64]) -> f64 {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    if n == 0 {
        return f64::NAN;
    }
    let mid = sorted.get(n / 2).copied().unwrap_or(f64::NAN);
    if n % 2 == 1 {
        mid
    } else {
        f64::midpoint(sorted.get(n / 2 - 1).copied().unwrap_or(f64::NAN), mid)
    }
}

fn summarize(
    runs: &[Value],
    opts: &Options,
    machine: &Value,
    commands: &[String],
) -> Result<Value> {
    let mut workloads = Map::new();
    let mut versions = Map::new();
    for (id, title) in WORKLOADS {
        let mut systems = Map::new();
        let mut unit = "";
        for run in runs {
            let system = run["system"].as_str().context("a run without a system")?;
            versions.insert(system.to_owned(), run["version"].clone());
            let Some(figure) = run["figures"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["workload"] == *id)
            else {
                continue;
            };
            unit = if figure["unit"] == "MiB/s" {
                "MiB/s"
            } else {
                "ns/op"
            };
            let samples: Vec<f64> = figure["samples"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .collect();
            let entry = systems
                .entry(system.to_owned())
                .or_insert_with(|| json!({ "samples": [], "note": figure["note"] }));
            if let Some(all) = entry["samples"].as_array_mut() {
                all.extend(samples.into_iter().map(Value::from));
            }
        }
        for entry in systems.values_mut() {
            let samples: Vec<f64> = entry["samples"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .collect();
            entry["median"] = json!(median(&samples));
        }
        let higher_is_better = unit == "MiB/s";
        let seglog = systems
            .get("seglog")
            .and_then(|s| s["median"].as_f64())
            .context("seglog has no figure")?;
        for entry in systems.values_mut() {
            let m = entry["median"].as_f64().unwrap_or(f64::NAN);
            entry["ratio_to_seglog"] = json!(m / seglog);
            // How many times faster seglog is than this system (above 1: seglog is faster).
            entry["seglog_speedup"] = json!(if higher_is_better {
                seglog / m
            } else {
                m / seglog
            });
        }
        workloads.insert(
            (*id).to_owned(),
            json!({ "title": title, "unit": unit, "higher_is_better": higher_is_better, "systems": systems }),
        );
    }
    let command = std::iter::once("cargo xtask bench-compare")
        .chain(opts.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let mut targets = Vec::new();
    for (ids, against, required, label) in TARGETS {
        for id in *ids {
            let speedup = workloads
                .get(*id)
                .and_then(|w| w["systems"][*against]["seglog_speedup"].as_f64());
            targets.push(json!({
                "target": label,
                "workload": id,
                "against": against,
                "required": required,
                "measured": speedup,
                "met": speedup.map(|s| s >= *required),
            }));
        }
    }
    Ok(json!({
        "mode": if opts.quick { "quick" } else { "full" },
        "command": command,
        "rounds": opts.rounds,
        "system_commands": commands,
        "params": opts.workload_flags().iter().map(|(k, v)| (k.trim_start_matches('-').to_owned(), json!(v))).collect::<Map<_, _>>(),
        "machine": machine,
        "versions": versions,
        "workloads": workloads,
        "targets": targets,
    }))
}

fn fmt_figure(v: Option<f64>, unit: &str) -> String {
    match v {
        Some(v) if v.is_finite() => {
            if unit == "MiB/s" {
                format!("{v:.0} MiB/s")
            } else if v >= 1000.0 {
                format!("{:.2} us", v / 1000.0)
            } else {
                format!("{v:.0} ns")
            }
        }
        _ => "-".to_owned(),
    }
}

fn present_systems(summary: &Value) -> Vec<&'static str> {
    SYSTEMS
        .iter()
        .copied()
        .filter(|s| summary["versions"].get(*s).is_some())
        .collect()
}

fn print_table(summary: &Value) {
    for (id, _) in WORKLOADS {
        let w = &summary["workloads"][*id];
        let mut line = format!("{id:28}");
        for system in present_systems(summary) {
            let s = &w["systems"][system];
            if s.is_null() {
                continue;
            }
            let _ = write!(
                line,
                "  {system}: {} (x{:.2})",
                fmt_figure(s["median"].as_f64(), w["unit"].as_str().unwrap_or("")),
                s["seglog_speedup"].as_f64().unwrap_or(f64::NAN)
            );
        }
        println!("{line}");
    }
    for t in summary["targets"].as_array().into_iter().flatten() {
        println!(
            "target {:32} {:28} measured {:.2}x, need {:.2}x: {}",
            t["target"].as_str().unwrap_or(""),
            t["workload"].as_str().unwrap_or(""),
            t["measured"].as_f64().unwrap_or(f64::NAN),
            t["required"].as_f64().unwrap_or(f64::NAN),
            match t["met"].as_bool() {
                Some(true) => "met",
                Some(false) => "MISSED",
                None => "not measured",
            }
        );
    }
}

fn render_markdown(summary: &Value, svg: &str) -> String {
    let m = &summary["machine"];
    let systems = present_systems(summary);
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Benchmarks: seglog side by side with Kafka, commitlog and the hardware limit\n"
    );
    let _ = writeln!(
        s,
        "Generated by `{}` on {}; every figure below comes from that one run (`target/bench/summary.json` holds the samples).",
        summary["command"].as_str().unwrap_or(""),
        m["date"].as_str().unwrap_or("")
    );
    let _ = writeln!(
        s,
        "Each system ran in its own process, one after the other, on the same sizes; the run went {} time(s) round all the systems and pools their samples.",
        summary["rounds"]
    );
    let loaded = [&m["loadavg_before"], &m["loadavg_after"]].iter().any(|l| {
        l.as_str()
            .and_then(|l| l.split_whitespace().next())
            .and_then(|one| one.parse::<f64>().ok())
            .zip(m["cores"].as_f64())
            .is_some_and(|(one, cores)| one > cores)
    });
    if loaded {
        s.push_str("**The machine was loaded** (shared with other jobs: the 1-minute load average was above the core count), so compare ratios from this run rather than absolute figures, and expect wall-time figures (MiB/s) to vary more than CPU-time ones.\n");
    }
    s.push('\n');
    s.push_str("## Machine and versions\n\n");
    let _ = writeln!(
        s,
        "- Machine: {} ({} cores), {} RAM, {}, file system {}.",
        m["cpu"].as_str().unwrap_or("?"),
        m["cores"],
        m["memory"].as_str().unwrap_or("?"),
        m["kernel"].as_str().unwrap_or("?"),
        m["filesystem"].as_str().unwrap_or("?")
    );
    let _ = writeln!(
        s,
        "- Load average (1, 5, 15 min, running/total, last pid) before the run: `{}`; after: `{}`.",
        m["loadavg_before"].as_str().unwrap_or("?"),
        m["loadavg_after"].as_str().unwrap_or("?")
    );
    let _ = writeln!(
        s,
        "- seglog {} (release profile), {}; Kafka {} (its storage jar, {}); commitlog {}.",
        summary["versions"]["seglog"].as_str().unwrap_or("?"),
        m["rustc"].as_str().unwrap_or("?"),
        summary["versions"]["kafka"].as_str().unwrap_or("not run"),
        m["java"].as_str().unwrap_or("?"),
        summary["versions"]["commitlog"]
            .as_str()
            .unwrap_or("not run")
    );
    s.push_str("\n## Commands\n\n```\n");
    let _ = writeln!(s, "{}", summary["command"].as_str().unwrap_or(""));
    s.push_str("# which ran, from the repository root, after `cargo build --release --locked -p seglog-benches`:\n");
    for c in summary["system_commands"].as_array().into_iter().flatten() {
        let _ = writeln!(s, "{}", c.as_str().unwrap_or(""));
    }
    s.push_str("```\n\n## Results\n\n");
    s.push_str(&render_table(summary, &systems));
    let _ = writeln!(s, "\n![seglog's speed relative to each system]({svg})\n");
    s.push_str(
        "## Targets\n\n| target | workload | measured | required | |\n|---|---|---:|---:|---|\n",
    );
    for t in summary["targets"].as_array().into_iter().flatten() {
        let _ = writeln!(
            s,
            "| {} | `{}` | {:.2}x | {:.2}x | {} |",
            t["target"].as_str().unwrap_or(""),
            t["workload"].as_str().unwrap_or(""),
            t["measured"].as_f64().unwrap_or(f64::NAN),
            t["required"].as_f64().unwrap_or(f64::NAN),
            match t["met"].as_bool() {
                Some(true) => "met",
                Some(false) => "**missed**",
                None => "not measured",
            }
        );
    }
    s.push_str("\n## What each system does\n\n");
    for (id, _) in WORKLOADS {
        let _ = writeln!(s, "- `{id}`:");
        for sys in &systems {
            if let Some(note) = summary["workloads"][*id]["systems"][*sys]["note"].as_str() {
                let _ = writeln!(s, "  - {sys}: {note}.");
            }
        }
    }
    s
}

/// The results table: a row per workload, a column per system.
fn render_table(summary: &Value, systems: &[&str]) -> String {
    let mut s = String::new();
    s.push_str("Medians; in brackets, how many times faster seglog is than that system (below 1: seglog is slower).\n");
    s.push_str("Append throughput counts record values (payload) only.\n");
    s.push_str("Throughputs (MiB/s) are wall time; lookups and reads (ns or us per operation) are the CPU time of the measuring thread, user and system, so that time spent waiting for a core on a shared machine does not count (the JVM's JIT and GC threads are not counted either).\n\n");
    let _ = write!(s, "| workload |");
    for sys in systems {
        let _ = write!(s, " {sys} |");
    }
    s.push_str("\n|---|");
    for _ in systems {
        s.push_str("---:|");
    }
    s.push('\n');
    for (id, title) in WORKLOADS {
        let w = &summary["workloads"][*id];
        let unit = w["unit"].as_str().unwrap_or("");
        let _ = write!(s, "| {title} (`{id}`) |");
        for sys in systems {
            let e = &w["systems"][*sys];
            if e.is_null() {
                s.push_str(" - |");
            } else if *sys == "seglog" {
                let _ = write!(s, " {} |", fmt_figure(e["median"].as_f64(), unit));
            } else {
                let _ = write!(
                    s,
                    " {} ({:.2}x) |",
                    fmt_figure(e["median"].as_f64(), unit),
                    e["seglog_speedup"].as_f64().unwrap_or(f64::NAN)
                );
            }
        }
        s.push('\n');
    }
    s
}

/// A grouped horizontal bar chart: for each workload, each system's speed relative to seglog's
/// (seglog = 1; longer is faster), on a log scale so that 0.1x and 10x are as far from 1x.
fn render_svg(summary: &Value) -> String {
    let systems = present_systems(summary);
    let colors = ["#1f77b4", "#d62728", "#2ca02c", "#7f7f7f"];
    let bar_h = 14.0;
    let group_h = bar_h * systems.len() as f64 + 14.0;
    let left = 250.0;
    let width = 560.0;
    let top = 40.0;
    let height = top + group_h * WORKLOADS.len() as f64 + 30.0;
    // log10 scale from 1/30x to 30x
    let span = 30f64.log10();
    let x_of = |rel: f64| left + width / 2.0 + (rel.log10() / span).clamp(-1.0, 1.0) * width / 2.0;
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"11\">\n",
        left + width + 90.0
    );
    let _ = writeln!(
        s,
        "<text x=\"10\" y=\"18\" font-size=\"13\">Speed relative to seglog (log scale; seglog = 1x, right of the line is faster than seglog)</text>"
    );
    for (i, sys) in systems.iter().enumerate() {
        let lx = left + i as f64 * 110.0;
        let color = colors.get(i).copied().unwrap_or("#000");
        let _ = writeln!(
            s,
            "<rect x=\"{lx}\" y=\"26\" width=\"10\" height=\"10\" fill=\"{color}\"/><text x=\"{}\" y=\"35\">{sys}</text>",
            lx + 14.0
        );
    }
    let axis_y = top + group_h * WORKLOADS.len() as f64;
    for tick in [1.0 / 30.0, 0.1, 1.0 / 3.0, 1.0, 3.0, 10.0, 30.0] {
        let tx = x_of(tick);
        let label = if tick < 1.0 {
            format!("1/{:.0}", 1.0 / tick)
        } else {
            format!("{tick:.0}")
        };
        let _ = writeln!(
            s,
            "<line x1=\"{tx:.1}\" y1=\"{top}\" x2=\"{tx:.1}\" y2=\"{axis_y}\" stroke=\"{}\"/><text x=\"{:.1}\" y=\"{}\">{label}x</text>",
            if (tick - 1.0).abs() < 1e-9 {
                "#000"
            } else {
                "#ddd"
            },
            tx - 8.0,
            axis_y + 14.0
        );
    }
    for (g, (id, title)) in WORKLOADS.iter().enumerate() {
        let y0 = top + g as f64 * group_h;
        let _ = writeln!(
            s,
            "<text x=\"10\" y=\"{}\">{title}</text>",
            y0 + group_h / 2.0
        );
        for (i, sys) in systems.iter().enumerate() {
            let entry = &summary["workloads"][*id]["systems"][*sys];
            let Some(speedup) = entry["seglog_speedup"].as_f64() else {
                continue;
            };
            let rel = 1.0 / speedup;
            let bar_y = y0 + 6.0 + i as f64 * bar_h;
            let (one, end) = (x_of(1.0), x_of(rel));
            let color = colors.get(i).copied().unwrap_or("#000");
            let _ = writeln!(
                s,
                "<rect x=\"{:.1}\" y=\"{bar_y:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\"/><text x=\"{:.1}\" y=\"{:.1}\">{rel:.2}x</text>",
                one.min(end),
                (one - end).abs().max(1.0),
                bar_h - 3.0,
                one.max(end) + 4.0,
                bar_y + bar_h - 4.0
            );
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert!((median(&[3.0, 1.0, 2.0]) - 2.0).abs() < 1e-12);
        assert!((median(&[4.0, 1.0, 3.0, 2.0]) - 2.5).abs() < 1e-12);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn locked_version_reads_the_package_entry() {
        let lock = "[[package]]\nname = \"commitlog\"\nversion = \"0.2.0\"\n";
        assert_eq!(locked_version(lock, "commitlog"), "0.2.0");
        assert_eq!(locked_version(lock, "other"), "");
    }

    fn run_doc(system: &str, figures: &[(&str, &str, &[f64])]) -> Value {
        json!({
            "system": system,
            "version": "1",
            "figures": figures.iter().map(|(w, unit, samples)| json!({
                "workload": w, "unit": unit, "samples": samples, "note": "n",
            })).collect::<Vec<_>>(),
        })
    }

    /// Throughput ratios go one way and latency ratios the other: seglog's speedup is above 1
    /// whenever seglog is the faster one, and the targets read it.
    #[test]
    fn speedups_and_targets_follow_the_unit() -> Result<()> {
        let all: Vec<(&str, &str, &[f64])> = WORKLOADS
            .iter()
            .map(|(w, _)| {
                let unit = if w.starts_with("append") || *w == "recovery" {
                    "MiB/s"
                } else {
                    "ns/op"
                };
                (*w, unit, &[100.0, 100.0, 100.0][..])
            })
            .collect();
        let mut kafka = all.clone();
        for f in &mut kafka {
            // Kafka half as fast everywhere: half the throughput, twice the latency.
            f.2 = if f.1 == "MiB/s" { &[50.0] } else { &[200.0] };
        }
        let runs = [run_doc("seglog", &all), run_doc("kafka", &kafka)];
        let opts = Options::parse(&["--quick".to_owned()])?;
        let summary = summarize(&runs, &opts, &json!({}), &[])?;
        let append = &summary["workloads"]["append_1k_x16"]["systems"]["kafka"];
        assert!((append["seglog_speedup"].as_f64().unwrap_or(0.0) - 2.0).abs() < 1e-12);
        assert!((append["ratio_to_seglog"].as_f64().unwrap_or(0.0) - 0.5).abs() < 1e-12);
        let lookup = &summary["workloads"]["index_lookup"]["systems"]["kafka"];
        assert!((lookup["seglog_speedup"].as_f64().unwrap_or(0.0) - 2.0).abs() < 1e-12);
        let targets = summary["targets"].as_array().context("targets")?;
        let met = |workload: &str, against: &str| {
            targets
                .iter()
                .find(|t| t["workload"] == workload && t["against"] == against)
                .map(|t| t["met"].clone())
        };
        assert_eq!(met("append_1k_x16", "kafka"), Some(json!(true)));
        assert_eq!(met("index_lookup", "kafka"), Some(json!(true)));
        // Not run: the target is reported as not measured, never as met.
        assert_eq!(met("read_by_offset", "commitlog"), Some(Value::Null));
        Ok(())
    }
}
