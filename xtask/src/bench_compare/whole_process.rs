//! The whole-process workloads: `seglog dump --deep-iteration --print-data-log` of a segment against
//! Kafka's `DumpLogSegments` (`cli_dump_deep`), and `seglog recover` of that segment against Kafka's
//! `LogSegment.recover` (`cli_recover`, through interop/kafka's oracle; its limit, a process that
//! reads the segment once and checks every batch's CRC). Each run is one process,
//! timed from spawn to exit (wall time, the JVM's start included), the two systems in turn; every
//! run's answer is checked: the dump's record lines counted as they stream out, the recovered indexes
//! compared byte for byte with the ones the segment was written with.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use anyhow::{Context, Result, bail, ensure};
use serde_json::{Value, json};

/// The segment both tools work on, written by seglog-bench-compare (`make-segment`).
struct Segment {
    dir: PathBuf,
    log: PathBuf,
    records: u64,
    index: Vec<u8>,
    timeindex: Vec<u8>,
}

fn make_segment(root: &Path, work: &Path, mib: u64) -> Result<Segment> {
    let out = Command::new(root.join("target/release/seglog-bench-compare"))
        .args(["make-segment", "--dir"])
        .arg(work)
        .args(["--mib", &mib.to_string()])
        .current_dir(root)
        .stderr(Stdio::inherit())
        .output()
        .context("starting seglog-bench-compare make-segment")?;
    ensure!(
        out.status.success(),
        "make-segment exited with {}",
        out.status
    );
    let doc: Value = serde_json::from_slice(&out.stdout).context("make-segment's answer")?;
    let dir = PathBuf::from(doc["dir"].as_str().context("make-segment: no dir")?);
    let log = dir.join("00000000000000000000.log");
    Ok(Segment {
        records: doc["records"]
            .as_u64()
            .context("make-segment: no records")?,
        index: std::fs::read(log.with_extension("index"))?,
        timeindex: std::fs::read(log.with_extension("timeindex"))?,
        dir,
        log,
    })
}

/// Runs `argv` from `root`, its stdout read through a pipe by `seglog-bench-compare
/// count-records` (optimized, unlike this xtask); returns the wall time in ms, from the spawn to
/// the exit of both, and the number of lines that start with `| offset: ` (one per record in a
/// deep dump).
fn timed(root: &Path, argv: &[String]) -> Result<(f64, u64)> {
    let (program, args) = argv.split_first().context("empty command")?;
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .current_dir(root)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("starting {}", argv.join(" ")))?;
    let stdout = child.stdout.take().context("no stdout")?;
    let counter = Command::new(root.join("target/release/seglog-bench-compare"))
        .arg("count-records")
        .stdin(Stdio::from(stdout))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("starting seglog-bench-compare count-records")?;
    let counted = counter.wait_with_output()?;
    let status = child.wait()?;
    let elapsed = started.elapsed().as_secs_f64() * 1000.0;
    if !status.success() {
        bail!("{} exited with {status}", argv.join(" "));
    }
    ensure!(
        counted.status.success(),
        "count-records exited with {}",
        counted.status
    );
    let records = String::from_utf8_lossy(&counted.stdout)
        .trim()
        .parse::<u64>()
        .context("count-records printed no count")?;
    Ok((elapsed, records))
}

fn strings(parts: &[&str]) -> Vec<String> {
    parts.iter().map(|s| (*s).to_owned()).collect()
}

/// The commands of one workload: (system, argv).
fn commands(seg: &Segment, workload: &str) -> Vec<(&'static str, Vec<String>)> {
    let log = seg.log.to_string_lossy().into_owned();
    let dir = seg.dir.to_string_lossy().into_owned();
    if workload == "cli_dump_deep" {
        let flags = ["--deep-iteration", "--print-data-log", "--files", &log];
        let mut seglog = strings(&["target/release/seglog", "dump"]);
        seglog.extend(strings(&flags));
        let mut kafka = strings(&["bash", "interop/kafka/run.sh", "dump"]);
        kafka.extend(strings(&flags));
        vec![("seglog", seglog), ("kafka", kafka)]
    } else {
        vec![
            (
                "seglog",
                strings(&["target/release/seglog", "recover", "--full", &dir]),
            ),
            (
                "kafka",
                strings(&[
                    "bash",
                    "interop/kafka/run.sh",
                    "recover",
                    &dir,
                    "0",
                    "4096",
                    "10485760",
                ]),
            ),
            (
                "limit",
                strings(&["target/release/seglog-bench-compare", "read-check", &log]),
            ),
        ]
    }
}

/// Runs both workloads on both systems, `warmup` + `samples` times each, the systems in turn; returns
/// one run document per system, as the other systems print them.
pub(super) fn run(
    root: &Path,
    mib: u64,
    samples: usize,
    warmup: usize,
    kafka: bool,
) -> Result<(Vec<String>, Vec<Value>)> {
    let work = root.join("target/bench/work/cli");
    let seg = make_segment(root, &work, mib)?;
    if kafka {
        // Kafka's oracle is built (when its jar is missing or stale) before anything is timed.
        let status = Command::new("bash")
            .args(["interop/kafka/run.sh", "build"])
            .current_dir(root)
            .status()
            .context("building interop/kafka")?;
        ensure!(
            status.success(),
            "interop/kafka/run.sh build exited with {status}"
        );
    }
    let mut figures: Vec<(&str, Value)> = Vec::new();
    let mut shown = Vec::new();
    for workload in ["cli_dump_deep", "cli_recover"] {
        for (system, argv) in commands(&seg, workload) {
            if system == "kafka" && !kafka {
                continue;
            }
            // Shown relative to the repository, as the other systems' commands are.
            shown.push(argv.join(" ").replace(&format!("{}/", root.display()), ""));
            let mut values = Vec::new();
            // The limit reads and checks the `.log` only: it neither needs nor rebuilds indexes.
            let rebuilds = workload == "cli_recover" && system != "limit";
            for i in 0..warmup + samples {
                if rebuilds {
                    // Both rebuild the indexes from the .log.
                    std::fs::remove_file(seg.log.with_extension("index"))?;
                    std::fs::remove_file(seg.log.with_extension("timeindex"))?;
                }
                eprintln!("bench-compare: {workload}, {system}: {}", argv.join(" "));
                let (ms, records) = timed(root, &argv)?;
                if workload == "cli_dump_deep" {
                    ensure!(
                        records == seg.records,
                        "{system} dumped {records} records of {}",
                        seg.records
                    );
                } else if rebuilds {
                    ensure!(
                        std::fs::read(seg.log.with_extension("index"))? == seg.index
                            && std::fs::read(seg.log.with_extension("timeindex"))? == seg.timeindex,
                        "{system}'s recovery rebuilt indexes that differ from the appended ones"
                    );
                }
                if i >= warmup {
                    values.push(ms);
                }
            }
            let note = match (workload, system) {
                ("cli_dump_deep", "seglog") => {
                    "whole process: seglog dump --deep-iteration --print-data-log of one segment, stdout read by the bench"
                }
                ("cli_dump_deep", _) => {
                    "whole process: Kafka's DumpLogSegments --deep-iteration --print-data-log (interop/kafka/run.sh dump), JVM start included"
                }
                (_, "seglog") => {
                    "whole process: seglog recover --full of the segment's partition, its indexes deleted first"
                }
                (_, "limit") => {
                    "whole process: seglog-bench-compare read-check of the segment (read once in 256 KiB chunks, the CRC-32C of every batch checked; it fails unless every byte was), the least any recovery does"
                }
                _ => {
                    "whole process: Kafka's LogSegment.recover of the segment (interop/kafka/run.sh recover), its indexes deleted first, JVM start included"
                }
            };
            figures.push((
                system,
                json!({ "workload": workload, "unit": "ms", "higher_is_better": false, "samples": values, "note": note }),
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&work);
    let docs = ["seglog", "kafka", "limit"]
        .iter()
        .filter(|s| **s != "kafka" || kafka)
        .map(|system| {
            json!({
                "system": system,
                "figures": figures.iter().filter(|(s, _)| s == system).map(|(_, f)| f.clone()).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok((shown, docs))
}
