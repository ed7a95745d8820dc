//! Pools the systems' samples into medians, and each round's ratios to seglog into their median,
//! and judges the targets on those (`summary.json`). A round's ratio compares processes that ran
//! back to back (mod.rs's `round_plan`); the headline ratio is the median of the rounds' ratios,
//! not the ratio of the pooled medians, which would compare samples taken minutes apart.

#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value by key yields Null when the key is missing; it never panics"
)]
#![allow(
    clippy::cast_precision_loss,
    reason = "counts of a few systems and workloads become chart coordinates"
)]

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use serde_json::{Map, Value, json};

use super::Options;
use super::workloads::{CEILINGS, SYSTEMS, TARGETS, WORKLOADS};

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

/// How many times faster seglog (`seglog`) is than a system's `m` (above 1: seglog is faster).
fn speedup(m: f64, seglog: f64, higher_is_better: bool) -> f64 {
    if higher_is_better {
        seglog / m
    } else {
        m / seglog
    }
}

pub(super) fn summarize(
    runs: &[Value],
    opts: &Options,
    machine: &Value,
    commands: &[String],
) -> Result<Value> {
    let mut workloads = Map::new();
    let mut versions = Map::new();
    for (id, title) in WORKLOADS {
        let mut systems = Map::new();
        // Each system's samples by round, for the rounds' ratios.
        let mut by_round: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
        let mut unit = "";
        for run in runs {
            let system = run["system"].as_str().context("a run without a system")?;
            // The whole-process runs carry no version; the system's own run does.
            if !run["version"].is_null() {
                versions.insert(system.to_owned(), run["version"].clone());
            }
            let Some(figure) = run["figures"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|f| f["workload"] == *id)
            else {
                continue;
            };
            unit = match figure["unit"].as_str() {
                Some("MiB/s") => "MiB/s",
                Some("ms") => "ms",
                Some("MiB") => "MiB",
                _ => "ns/op",
            };
            let samples: Vec<f64> = figure["samples"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_f64)
                .collect();
            // The whole-process runs carry no round: they are one block of their own.
            let round = run["round"].as_u64().unwrap_or(0);
            by_round
                .entry(system.to_owned())
                .or_default()
                .entry(round)
                .or_default()
                .extend(&samples);
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
        let seglog_rounds = by_round.get("seglog").cloned().unwrap_or_default();
        for (system, entry) in &mut systems {
            let m = entry["median"].as_f64().unwrap_or(f64::NAN);
            let mut rounds = Vec::new();
            let (mut ratios, mut speedups) = (Vec::new(), Vec::new());
            for (round, samples) in by_round.get(system).into_iter().flatten() {
                let Some(own) = seglog_rounds.get(round) else {
                    continue;
                };
                let (m, seglog) = (median(samples), median(own));
                let s = speedup(m, seglog, higher_is_better);
                rounds.push(json!({ "round": round, "median": m, "seglog_speedup": s }));
                ratios.push(m / seglog);
                speedups.push(s);
            }
            entry["rounds"] = json!(rounds);
            entry["ratio_to_seglog"] = json!(median(&ratios));
            entry["seglog_speedup"] = json!(median(&speedups));
            // The ratio of the pooled medians, for comparison with runs before the rounds' median.
            entry["pooled_seglog_speedup"] = json!(speedup(m, seglog, higher_is_better));
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
    let targets = judge_targets(&workloads);
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

/// Every target of `TARGETS` and `CEILINGS`, judged on the pooled workloads.
fn judge_targets(workloads: &Map<String, Value>) -> Vec<Value> {
    let mut targets = Vec::new();
    for (ids, against, required, label) in TARGETS {
        for id in *ids {
            let system = workloads.get(*id).map(|w| &w["systems"][*against]);
            let speedup = system.and_then(|s| s["seglog_speedup"].as_f64());
            let per_round: Vec<Value> = system
                .and_then(|s| s["rounds"].as_array())
                .into_iter()
                .flatten()
                .map(|r| r["seglog_speedup"].clone())
                .collect();
            targets.push(json!({
                "target": label,
                "workload": id,
                "against": against,
                "required": required,
                "measured": speedup,
                "per_round": per_round,
                "met": speedup.map(|s| s >= *required),
            }));
        }
    }
    for (id, ceiling, label) in CEILINGS {
        let workload = workloads.get(*id);
        let measured = workload.and_then(|w| w["systems"]["seglog"]["median"].as_f64());
        targets.push(json!({
            "target": label,
            "workload": id,
            "against": "ceiling",
            "unit": workload.map_or(Value::Null, |w| w["unit"].clone()),
            "required": ceiling,
            "measured": measured,
            "met": measured.map(|m| m <= *ceiling),
        }));
    }
    targets
}

/// The systems that ran, in report order.
pub(super) fn present_systems(summary: &Value) -> Vec<&'static str> {
    SYSTEMS
        .iter()
        .copied()
        .filter(|s| summary["versions"].get(*s).is_some())
        .collect()
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

    /// The headline ratio is the median of the rounds' ratios, each from one round's processes,
    /// not the ratio of the pooled medians.
    #[test]
    fn the_headline_ratio_is_the_median_of_the_rounds() -> Result<()> {
        let doc = |system: &str, round: u64, v: f64| {
            let value = [v];
            // seglog has every workload; the others only the one looked at.
            let figures: Vec<(&str, &str, &[f64])> = WORKLOADS
                .iter()
                .filter(|(w, _)| system == "seglog" || *w == "append_1k_x16")
                .map(|(w, _)| (*w, "MiB/s", &value[..]))
                .collect();
            let mut d = run_doc(system, &figures);
            d["round"] = json!(round);
            d
        };
        // The host changes speed from round to round; the limit is 2x seglog in two rounds of
        // three. Pooled, the medians (40 and 30) would mix samples of different rounds.
        let runs = [
            doc("seglog", 1, 100.0),
            doc("limit", 1, 200.0),
            doc("seglog", 2, 20.0),
            doc("limit", 2, 40.0),
            doc("seglog", 3, 30.0),
            doc("limit", 3, 35.0),
        ];
        let opts = Options::parse(&["--quick".to_owned()])?;
        let summary = summarize(&runs, &opts, &json!({}), &[])?;
        let limit = &summary["workloads"]["append_1k_x16"]["systems"]["limit"];
        let per_round: Vec<f64> = limit["rounds"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| r["seglog_speedup"].as_f64())
            .collect();
        assert_eq!(per_round, [0.5, 0.5, 30.0 / 35.0]);
        assert!((limit["seglog_speedup"].as_f64().unwrap_or(0.0) - 0.5).abs() < 1e-12);
        assert!((limit["ratio_to_seglog"].as_f64().unwrap_or(0.0) - 2.0).abs() < 1e-12);
        assert!((limit["pooled_seglog_speedup"].as_f64().unwrap_or(0.0) - 0.75).abs() < 1e-12);
        let target = summary["targets"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|t| t["workload"] == "append_1k_x16" && t["against"] == "limit")
            .cloned()
            .context("no target")?;
        assert_eq!(target["per_round"], json!([0.5, 0.5, 30.0 / 35.0]));
        Ok(())
    }

    /// A ceiling is met at or below its figure and missed above it, in the workload's own unit.
    #[test]
    fn ceilings_judge_seglog_median() -> Result<()> {
        let opts = Options::parse(&["--quick".to_owned()])?;
        let judge = |mib: f64| -> Result<Value> {
            let peak = [mib, mib, 1.0e9];
            let figures: Vec<(&str, &str, &[f64])> = WORKLOADS
                .iter()
                .map(|(w, _)| {
                    if *w == "compact_1g_peak_memory" {
                        (*w, "MiB", &peak[..])
                    } else {
                        (*w, "ms", &[1.0][..])
                    }
                })
                .collect();
            let runs = [run_doc("seglog", &figures)];
            let summary = summarize(&runs, &opts, &json!({}), &[])?;
            let t = summary["targets"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|t| t["against"] == "ceiling")
                .cloned()
                .context("no ceiling")?;
            assert_eq!(t["unit"], "MiB");
            Ok(t["met"].clone())
        };
        assert_eq!(judge(160.0)?, json!(true));
        assert_eq!(judge(161.0)?, json!(false));
        Ok(())
    }
}
