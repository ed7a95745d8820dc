//! `--quick`'s check, which CI runs (`cargo xtask ci`, step `bench-quick`): every system ran every
//! workload it has, each with at least one finite sample. Whether they answered correctly is
//! checked where the work is done: every system's process checks each answer (offsets found,
//! bytes read back, records kept) and exits non-zero on a wrong one, which fails the run before
//! this check. Timings are never judged.

#![allow(
    clippy::indexing_slicing,
    reason = "indexing a serde_json::Value by key yields Null when the key is missing; it never panics"
)]

use anyhow::{Result, bail};
use serde_json::Value;

use super::workloads::{SYSTEMS, WORKLOADS};

const APPENDS: [&str; 4] = [
    "append_1k_x16",
    "append_100b_x100",
    "append_1k_x16_fsync_1m",
    "append_100b_x100_fsync_1m",
];

/// The workloads a system runs: seglog and Kafka all of them; commitlog and the limit theirs.
fn expected(system: &str) -> Vec<&'static str> {
    match system {
        "seglog" | "kafka" => WORKLOADS.iter().map(|(id, _)| *id).collect(),
        "commitlog" => [&APPENDS[..], &["read_by_offset"]].concat(),
        _ => [
            &APPENDS[..],
            &[
                "recovery",
                "index_lookup",
                "read_by_offset",
                "lookup_by_timestamp",
                "consume_sequential",
                "consume_records",
                "log_append",
                "recover_logdir",
                "recover_logdir_idempotent",
                "cli_recover",
            ],
        ]
        .concat(),
    }
}

/// After a `--quick` run (else nothing): every system, Kafka too unless `--no-kafka`.
pub(super) fn after_quick_run(summary: &Value, quick: bool, kafka: bool) -> Result<()> {
    if !quick {
        return Ok(());
    }
    let systems: Vec<&str> = SYSTEMS
        .iter()
        .copied()
        .filter(|s| *s != "kafka" || kafka)
        .collect();
    check_complete(summary, &systems)
}

/// Fails unless each of `systems` has samples for each of its workloads in `summary`.
pub(super) fn check_complete(summary: &Value, systems: &[&str]) -> Result<()> {
    let mut missing = Vec::new();
    for system in systems {
        for id in expected(system) {
            let samples = &summary["workloads"][id]["systems"][*system]["samples"];
            let ok = samples.as_array().is_some_and(|s| {
                !s.is_empty() && s.iter().all(|v| v.as_f64().is_some_and(f64::is_finite))
            });
            if !ok {
                missing.push(format!("{system}: {id}"));
            }
        }
    }
    if !missing.is_empty() {
        bail!(
            "bench-compare --quick: these systems did not run these workloads (or gave no sample):\n  {}",
            missing.join("\n  ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn summary(systems: &[&str]) -> Value {
        let mut workloads = serde_json::Map::new();
        for (id, _) in WORKLOADS {
            let mut entry = serde_json::Map::new();
            for s in systems {
                if expected(s).contains(id) {
                    entry.insert((*s).to_owned(), json!({ "samples": [1.0] }));
                }
            }
            workloads.insert((*id).to_owned(), json!({ "systems": entry }));
        }
        json!({ "workloads": workloads })
    }

    #[test]
    fn a_complete_run_passes_and_any_gap_fails() {
        let all = ["seglog", "kafka", "commitlog", "limit"];
        let full = summary(&all);
        assert!(check_complete(&full, &all).is_ok());
        // Kafka not run at all (java missing) fails when Kafka was asked for.
        assert!(check_complete(&summary(&["seglog"]), &all).is_err());
        assert!(check_complete(&summary(&["seglog"]), &["seglog"]).is_ok());
        let mut gap = full.clone();
        gap["workloads"]["consume_records"]["systems"]["limit"]["samples"] = json!([]);
        let err = check_complete(&gap, &all).map_err(|e| e.to_string());
        assert!(err.is_err_and(|e| e.contains("limit: consume_records")));
        let mut nan = full;
        nan["workloads"]["cli_recover"]["systems"]["kafka"]["samples"] = json!([null]);
        assert!(check_complete(&nan, &all).is_err());
    }
}
