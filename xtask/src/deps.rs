//! The layering check: reads `cargo metadata` and fails when a crate depends on one to its right in the
//! order record-format, mmap-index, segment, log, log-cli (dev-dependencies included: a test that reaches
//! up the stack is a layering leak too). Packages outside the layers (xtask, seglog-benches,
//! seglog-fuzz-targets, seglog-harness) sit above all of them and may depend on any.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The layers, bottom first. A crate may depend only on crates to its left.
pub(crate) const LAYERS: &[&str] = &[
    "seglog-record-format",
    "seglog-mmap-index",
    "seglog-segment",
    "seglog-log",
    "seglog-cli",
];

pub(crate) fn check(root: &Path) -> Result<()> {
    let output = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--no-deps", "--locked"])
        .current_dir(root)
        .output()
        .context("running cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: Value =
        serde_json::from_slice(&output.stdout).context("parsing cargo metadata")?;
    let edges = local_edges(&metadata)?;
    let violations = violations(&edges);
    if !violations.is_empty() {
        bail!("layering violations:\n{}", violations.join("\n"));
    }
    eprintln!(
        "deps: {} local dependency edges, all point left",
        edges.len()
    );
    Ok(())
}

/// Every (package, dependency) pair where both are workspace layers.
fn local_edges(metadata: &Value) -> Result<Vec<(String, String)>> {
    let packages = metadata["packages"]
        .as_array()
        .context("metadata has no packages")?;
    let mut edges = Vec::new();
    for package in packages {
        let name = package["name"].as_str().context("package without a name")?;
        if !LAYERS.contains(&name) {
            continue;
        }
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().context("dependency without a name")?;
            if LAYERS.contains(&dep_name) {
                edges.push((name.to_owned(), dep_name.to_owned()));
            }
        }
    }
    Ok(edges)
}

fn violations(edges: &[(String, String)]) -> Vec<String> {
    let rank = |name: &str| LAYERS.iter().position(|l| *l == name);
    edges
        .iter()
        .filter(|(from, to)| rank(to) >= rank(from))
        .map(|(from, to)| format!("  {from} depends on {to}, which is not below it"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(a: &str, b: &str) -> (String, String) {
        (a.to_owned(), b.to_owned())
    }

    #[test]
    fn downward_edges_pass() {
        let edges = [
            edge("seglog-segment", "seglog-record-format"),
            edge("seglog-segment", "seglog-mmap-index"),
            edge("seglog-cli", "seglog-log"),
        ];
        assert!(violations(&edges).is_empty());
    }

    #[test]
    fn upward_and_self_edges_fail() {
        let edges = [
            edge("seglog-record-format", "seglog-mmap-index"),
            edge("seglog-log", "seglog-cli"),
            edge("seglog-log", "seglog-log"),
        ];
        assert_eq!(violations(&edges).len(), 3);
    }

    #[test]
    fn workspace_layering_holds() -> Result<()> {
        check(&crate::project_root())
    }
}
