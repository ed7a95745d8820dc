//! `cargo xtask bench-compare --scale [--quick] [--scale-gib L | --scale-mib L] [--scale-segments L]
//! [--scale-compact-gib L | --scale-compact-mib L] [--scale-reads N] [--scale-samples N]
//! [--write-docs] | --scale --render [--write-docs]`: issue 20's scale runs, seglog only (Kafka is
//! not run at scale). For each size, one `seglog-bench-compare scale` process
//! (`benches/.../scale_system.rs`), which checks the free disk space first and skips a size that
//! does not fit; a skip or a failure (a size the machine cannot take, such as more segments than
//! open files) is recorded with its reason, and the run goes on. Writes `target/bench/scale.json`,
//! `scale.md` (the section alone) and the `scale-*.svg` charts, and splices the "Scale" section
//! into `benchmarks.md` (`docs/` too with `--write-docs`). `--quick` runs tiny sizes and fails
//! unless every size ran and answered (never a timing): CI's check. `--render` rewrites the
//! report from the last `scale.json`.

#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value by key yields Null when the key is missing; it never panics"
)]

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

use super::machine::{machine, read_trimmed};
use super::scale_report::{render_section, write_scale_report};

/// The cleaner's fixed map budget at every size (Kafka's default dedupe buffer).
pub(super) const DEDUPE_MIB: u64 = 128;

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ScaleOptions {
    pub(super) quick: bool,
    /// Log sizes of the append and read runs, in MiB.
    pub(super) log_mib: Vec<u64>,
    /// Segment counts of the open runs.
    pub(super) segments: Vec<u64>,
    /// Log sizes of the compaction runs, in MiB.
    pub(super) compact_mib: Vec<u64>,
    pub(super) reads: u64,
    pub(super) samples: u64,
    pub(super) write_docs: bool,
    pub(super) args: Vec<String>,
}

/// A comma-separated list of sizes, each times `unit` (`1,10,100` GiB as MiB: unit 1024).
fn parse_list(flag: &str, value: Option<&String>, unit: u64) -> Result<Vec<u64>> {
    let value = value.with_context(|| format!("{flag} needs a list such as 1,10,100"))?;
    let sizes = value
        .split(',')
        .map(|v| {
            let n: u64 = v
                .trim()
                .parse()
                .with_context(|| format!("{flag} {value}: `{v}` is not a whole number"))?;
            ensure!(n > 0, "{flag} {value}: sizes start at 1");
            Ok(n * unit)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(sizes)
}

impl ScaleOptions {
    pub(super) fn parse(args: &[String]) -> Result<Self> {
        let quick = args.iter().any(|a| a == "--quick");
        let mut opts = if quick {
            ScaleOptions {
                quick,
                log_mib: vec![4, 16],
                segments: vec![50, 200],
                compact_mib: vec![4, 16],
                reads: 1000,
                samples: 1,
                write_docs: false,
                args: args.to_vec(),
            }
        } else {
            ScaleOptions {
                quick,
                log_mib: vec![1 << 10, 10 << 10, 100 << 10],
                segments: vec![1_000, 10_000, 100_000],
                compact_mib: vec![1 << 10, 4 << 10, 16 << 10],
                reads: 20_000,
                samples: 3,
                write_docs: false,
                args: args.to_vec(),
            }
        };
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            match arg.as_str() {
                "--scale" | "--quick" => {}
                "--write-docs" => opts.write_docs = true,
                "--scale-gib" => opts.log_mib = parse_list(arg, it.next(), 1024)?,
                "--scale-mib" => opts.log_mib = parse_list(arg, it.next(), 1)?,
                "--scale-segments" => opts.segments = parse_list(arg, it.next(), 1)?,
                "--scale-compact-gib" => opts.compact_mib = parse_list(arg, it.next(), 1024)?,
                "--scale-compact-mib" => opts.compact_mib = parse_list(arg, it.next(), 1)?,
                "--scale-reads" | "--scale-samples" => {
                    let n = parse_list(arg, it.next(), 1)?;
                    let [n] = n[..] else {
                        bail!("{arg} takes one number")
                    };
                    if arg == "--scale-reads" {
                        opts.reads = n;
                    } else {
                        opts.samples = n;
                    }
                }
                other => bail!(
                    "unknown bench-compare --scale argument `{other}` (--quick, --scale-gib L, --scale-mib L, --scale-segments L, --scale-compact-gib L, --scale-compact-mib L, --scale-reads N, --scale-samples N, --write-docs)"
                ),
            }
        }
        ensure!(
            !(opts.quick && opts.write_docs),
            "--scale --quick checks that every size runs and answers; its tiny sizes do not go to docs/"
        );
        Ok(opts)
    }

    /// Every process to run: (kind, the size's x, its flags), the sizes of each kind ascending.
    pub(super) fn plan(&self) -> Vec<(&'static str, u64, Vec<String>)> {
        let sorted = |v: &[u64]| {
            let mut v = v.to_vec();
            v.sort_unstable();
            v.dedup();
            v
        };
        let mut plan = Vec::new();
        for mib in sorted(&self.log_mib) {
            let flags = [
                ("--mib", mib),
                ("--reads", self.reads),
                ("--samples", self.samples),
            ];
            plan.push(("log", mib, flags_of(&flags)));
        }
        for n in sorted(&self.segments) {
            plan.push((
                "open",
                n,
                flags_of(&[("--segments", n), ("--samples", self.samples)]),
            ));
        }
        for mib in sorted(&self.compact_mib) {
            plan.push((
                "compact",
                mib,
                flags_of(&[("--mib", mib), ("--dedupe-mib", DEDUPE_MIB)]),
            ));
        }
        plan
    }
}

fn flags_of(flags: &[(&str, u64)]) -> Vec<String> {
    flags
        .iter()
        .flat_map(|(k, v)| [(*k).to_owned(), v.to_string()])
        .collect()
}

/// The process's open-file limit as /proc/self/limits gives it (soft, hard), for the report.
fn open_files_limit() -> String {
    read_trimmed("/proc/self/limits")
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .map(|l| {
            l.split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" (hard ")
        })
        .map_or_else(|| "?".to_owned(), |l| format!("{l})"))
}

/// The gist of a failed process's stderr: its error and causes, without the backtrace.
pub(super) fn failure_reason(stderr: &str, status: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .skip_while(|l| !l.starts_with("Error:"))
        .take_while(|l| !l.starts_with("Stack backtrace"))
        .map(str::trim)
        .filter(|l| !l.is_empty() && *l != "Caused by:")
        .collect();
    if lines.is_empty() {
        format!("exited with {status}")
    } else {
        lines.join("; ")
    }
}

/// Runs one size; returns its record in scale.json.
fn run_one(root: &Path, kind: &str, x: u64, flags: &[String]) -> Result<Value> {
    let work = "target/bench/work/scale";
    let mut argv = vec![
        "target/release/seglog-bench-compare".to_owned(),
        "scale".to_owned(),
        kind.to_owned(),
        "--dir".to_owned(),
        work.to_owned(),
    ];
    argv.extend(flags.iter().cloned());
    let done = super::process::run(root, &argv, Path::new(work), true, |command| {
        eprintln!("bench-compare --scale: {command}");
    })?;
    let command = &done.command;
    let mut record = json!({ "kind": kind, "x": x, "command": command });
    if !done.status.success() {
        record["status"] = json!("failed");
        record["reason"] = json!(failure_reason(&done.stderr, &done.status.to_string()));
        eprintln!(
            "bench-compare --scale: {kind} {x} FAILED: {}",
            record["reason"]
        );
        return Ok(record);
    }
    let doc = done.json()?;
    if let Some(reason) = doc["skipped"].as_str() {
        record["status"] = json!("skipped");
        record["reason"] = json!(reason);
        eprintln!("bench-compare --scale: {kind} {x} skipped: {reason}");
    } else {
        record["status"] = json!("ok");
        record["figures"] = doc["figures"].clone();
        eprintln!(
            "bench-compare --scale: {kind} {x} done in {:.0?}",
            done.elapsed
        );
    }
    Ok(record)
}

/// `--quick`'s check: every size ran (none skipped or failed) and gave each of its figures
/// at least one finite sample. The answers were checked by the processes, which fail otherwise.
pub(super) fn check_complete(runs: &[Value]) -> Result<()> {
    let mut problems = Vec::new();
    for run in runs {
        let (kind, x) = (run["kind"].as_str().unwrap_or("?"), &run["x"]);
        if run["status"] != "ok" {
            problems.push(format!(
                "{kind} {x}: {} ({})",
                run["status"].as_str().unwrap_or("?"),
                run["reason"].as_str().unwrap_or("")
            ));
            continue;
        }
        let expected: &[&str] = match kind {
            "log" => &[
                "scale_append",
                "scale_consume_sequential",
                "scale_read_random",
            ],
            "open" => &["scale_open_clean", "scale_open_unclean"],
            _ => &["scale_compact", "scale_compact_peak_memory"],
        };
        for id in expected {
            let ok = run["figures"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["workload"] == *id)
                .and_then(|f| f["samples"].as_array())
                .is_some_and(|s| {
                    !s.is_empty() && s.iter().all(|v| v.as_f64().is_some_and(f64::is_finite))
                });
            if !ok {
                problems.push(format!("{kind} {x}: no samples of {id}"));
            }
        }
    }
    if !problems.is_empty() {
        bail!("the scale run is incomplete:\n  {}", problems.join("\n  "));
    }
    Ok(())
}

/// Writes the report of `scale` into target/bench/ (scale.md, the charts, the section) and docs/.
fn write_reports(root: &Path, scale: &Value, write_docs: bool) -> Result<Vec<std::path::PathBuf>> {
    let bench_dir = root.join("target").join("bench");
    std::fs::write(
        bench_dir.join("scale.md"),
        render_section(scale).trim_start(),
    )?;
    let mut dirs = vec![bench_dir];
    if write_docs {
        dirs.push(root.join("docs"));
    }
    for dir in &dirs {
        write_scale_report(scale, dir)?;
    }
    Ok(dirs)
}

pub(super) fn run(root: &Path, args: &[String]) -> Result<()> {
    if args.iter().any(|a| a == "--render") {
        // Re-renders the last scale run's report from its scale.json, measuring nothing.
        let write_docs = match args {
            [_, _] => false,
            [_, _, flag] if flag == "--write-docs" => true,
            other => bail!("--scale --render takes only --write-docs, not {other:?}"),
        };
        let path = root.join("target").join("bench").join("scale.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {}", path.display()))?;
        write_reports(root, &serde_json::from_str(&text)?, write_docs)?;
        return Ok(());
    }
    let opts = ScaleOptions::parse(args)?;
    let started = Instant::now();
    let load_before = read_trimmed("/proc/loadavg");
    super::build_release(root)?;
    let bench_dir = root.join("target").join("bench");
    std::fs::create_dir_all(bench_dir.join("work"))?;
    let mut runs = Vec::new();
    for (kind, x, flags) in opts.plan() {
        runs.push(run_one(root, kind, x, &flags)?);
    }
    let load_after = read_trimmed("/proc/loadavg");
    let command = std::iter::once("cargo xtask bench-compare")
        .chain(opts.args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ");
    let scale = json!({
        "mode": if opts.quick { "scale-quick" } else { "scale" },
        "command": command,
        "machine": machine(root, &load_before, &load_after),
        "open_files_limit": open_files_limit(),
        "dedupe_mib": DEDUPE_MIB,
        "reads": opts.reads,
        "samples": opts.samples,
        "runs": runs,
    });
    let path = bench_dir.join("scale.json");
    std::fs::write(&path, serde_json::to_string_pretty(&scale)? + "\n")?;
    let dirs = write_reports(root, &scale, opts.write_docs)?;
    eprintln!(
        "bench-compare --scale: wrote {} and the Scale section in {} in {:.0?}",
        path.display(),
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(" and "),
        started.elapsed()
    );
    if opts.quick {
        check_complete(&runs)?;
        println!("scale quick run: every size ran and answered correctly; no timing is judged");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_issues_sizes_by_default_and_settable() -> Result<()> {
        let full = ScaleOptions::parse(&args(&["--scale"]))?;
        assert_eq!(full.log_mib, [1024, 10 * 1024, 100 * 1024]);
        assert_eq!(full.segments, [1_000, 10_000, 100_000]);
        assert_eq!(full.compact_mib, [1024, 4 * 1024, 16 * 1024]);
        let set = ScaleOptions::parse(&args(&[
            "--scale",
            "--scale-gib",
            "10,1",
            "--scale-segments",
            "100",
            "--scale-compact-mib",
            "8",
            "--scale-samples",
            "2",
        ]))?;
        assert_eq!(
            (
                set.log_mib.clone(),
                set.segments.clone(),
                set.compact_mib.clone(),
                set.samples
            ),
            (vec![10 * 1024, 1024], vec![100], vec![8], 2)
        );
        // The plan runs each kind's sizes ascending, with the fixed map budget.
        let plan = set.plan();
        let xs: Vec<(&str, u64)> = plan.iter().map(|(k, x, _)| (*k, *x)).collect();
        assert_eq!(
            xs,
            [
                ("log", 1024),
                ("log", 10 * 1024),
                ("open", 100),
                ("compact", 8)
            ]
        );
        assert!(plan[3].2.join(" ").contains("--dedupe-mib 128"));
        Ok(())
    }

    #[test]
    fn bad_lists_are_refused() {
        for bad in [
            &["--scale-gib", "1,x"][..],
            &["--scale-gib"],
            &["--scale-mib", "0"],
            &["--scale-reads", "1,2"],
            &["--scale-bogus", "1"],
            &["--quick", "--write-docs"],
        ] {
            let mut a = args(&["--scale"]);
            a.extend(args(bad));
            assert!(ScaleOptions::parse(&a).is_err(), "{bad:?} was accepted");
        }
    }

    #[test]
    fn a_failure_keeps_the_error_and_its_causes_only() {
        let stderr = "building...\nError: rolling segment 191 of 300\n\nCaused by:\n    0: x.snapshot.tmp: Too many open files (os error 24)\n\nStack backtrace:\n   0: <unknown>\n";
        assert_eq!(
            failure_reason(stderr, "exit status: 1"),
            "Error: rolling segment 191 of 300; 0: x.snapshot.tmp: Too many open files (os error 24)"
        );
        assert_eq!(failure_reason("", "signal: 9"), "exited with signal: 9");
    }

    /// The quick check fails on a skipped or failed size and on a figure without samples.
    #[test]
    fn the_quick_check_wants_every_size_and_figure() {
        let ok_log = json!({ "kind": "log", "x": 4, "status": "ok", "figures": [
            { "workload": "scale_append", "samples": [1.0] },
            { "workload": "scale_consume_sequential", "samples": [2.0] },
            { "workload": "scale_read_random", "samples": [3.0] },
        ]});
        assert!(check_complete(std::slice::from_ref(&ok_log)).is_ok());
        let mut empty = ok_log.clone();
        empty["figures"][2]["samples"] = json!([]);
        let skipped = json!({ "kind": "open", "x": 50, "status": "skipped", "reason": "disk" });
        let failed = json!({ "kind": "open", "x": 50, "status": "failed", "reason": "EMFILE" });
        for bad in [empty, skipped, failed] {
            assert!(
                check_complete(&[ok_log.clone(), bad.clone()]).is_err(),
                "{bad}"
            );
        }
    }
}
