//! The layering check: reads `cargo metadata` and fails when a crate depends on one that is not below it
//! in the order fs, then record-format and mmap-index (siblings: neither depends on the other), segment,
//! log, log-cli (dev-dependencies included: a test that reaches up the stack is a layering leak too).

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// The layers, bottom first. A crate may depend only on crates of a layer below its own.
pub(crate) const LAYERS: &[&[&str]] = &[
    &["seglog-fs"],
    &["seglog-record-format", "seglog-mmap-index"],
    &["seglog-segment"],
    &["seglog-log"],
    &["seglog-cli"],
];

/// The layer of a workspace crate, `None` for any other package.
fn rank(name: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&name))
}

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
        if rank(name).is_none() {
            continue;
        }
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().context("dependency without a name")?;
            if rank(dep_name).is_some() {
                edges.push((name.to_owned(), dep_name.to_owned()));
            }
        }
    }
    Ok(edges)
}

fn violations(edges: &[(String, String)]) -> Vec<String> {
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
            edge("seglog-mmap-index", "seglog-fs"),
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
            edge("seglog-mmap-index", "seglog-record-format"),
            edge("seglog-fs", "seglog-mmap-index"),
        ];
        assert_eq!(violations(&edges).len(), 5);
    }

    #[test]
    fn workspace_layering_holds() -> Result<()> {
        check(&crate::project_root())
    }
}
