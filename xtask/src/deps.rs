//! The layering check: reads `cargo metadata` and fails on any dependency edge between workspace packages
//! that the allow-list below does not name (dev- and build-dependencies included: a test that reaches up the
//! stack is a layering leak too).
//!
//! The library crates stack downward: `seglog-fs` is the ground; `seglog-record-format` (no I/O) and
//! `seglog-mmap-index` are siblings; `seglog-segment` stands on the three; `seglog-log` on all of them; the CLI
//! on `seglog-log` alone. Tools (harnesses, fuzz targets, benches, xtask) may use any library, and no library
//! may use a tool.

use std::path::Path;
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

/// Every workspace library and the workspace packages it may depend on.
pub(crate) const LIBRARIES: &[(&str, &[&str])] = &[
    ("seglog-fs", &[]),
    ("seglog-record-format", &[]),
    ("seglog-mmap-index", &["seglog-fs"]),
    (
        "seglog-segment",
        &["seglog-fs", "seglog-record-format", "seglog-mmap-index"],
    ),
    (
        "seglog-log",
        &[
            "seglog-fs",
            "seglog-record-format",
            "seglog-mmap-index",
            "seglog-segment",
        ],
    ),
    ("seglog-cli", &["seglog-log"]),
    // An embedder's crate, in the test suite: seglog-log alone must be enough.
    ("seglog-downstream-log-only", &["seglog-log"]),
];

/// Workspace packages above every library: they may depend on any library, and nothing depends on them.
pub(crate) const TOOLS: &[&str] = &[
    "seglog-harness",
    "seglog-fuzz-targets",
    "seglog-benches",
    "xtask",
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
    let (packages, edges) = local_edges(&metadata)?;
    let mut problems = unknown_packages(&packages);
    problems.extend(violations(&edges));
    if !problems.is_empty() {
        bail!("layering violations:\n{}", problems.join("\n"));
    }
    eprintln!(
        "deps: {} local dependency edges, all on the allow-list",
        edges.len()
    );
    Ok(())
}

/// A dependency edge between two workspace packages: (dependent, dependency).
type Edge = (String, String);

/// The workspace's package names, and every (package, dependency) pair where both are workspace packages.
fn local_edges(metadata: &Value) -> Result<(Vec<String>, Vec<Edge>)> {
    let packages = metadata["packages"]
        .as_array()
        .context("metadata has no packages")?;
    let names: Vec<String> = packages
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_owned))
        .collect();
    let mut edges = Vec::new();
    for package in packages {
        let name = package["name"].as_str().context("package without a name")?;
        for dep in package["dependencies"].as_array().into_iter().flatten() {
            let dep_name = dep["name"].as_str().context("dependency without a name")?;
            if names.iter().any(|n| n == dep_name) {
                edges.push((name.to_owned(), dep_name.to_owned()));
            }
        }
    }
    Ok((names, edges))
}

fn unknown_packages(packages: &[String]) -> Vec<String> {
    packages
        .iter()
        .filter(|p| !is_library(p) && !TOOLS.contains(&p.as_str()))
        .map(|p| format!("  {p} is neither a library nor a tool of deps.rs's allow-list"))
        .collect()
}

fn is_library(name: &str) -> bool {
    LIBRARIES.iter().any(|(l, _)| *l == name)
}

fn violations(edges: &[Edge]) -> Vec<String> {
    edges
        .iter()
        .filter(|(from, to)| !allowed(from, to))
        .map(|(from, to)| format!("  {from} depends on {to}, an edge the allow-list does not name"))
        .collect()
}

fn allowed(from: &str, to: &str) -> bool {
    if TOOLS.contains(&from) {
        return is_library(to);
    }
    LIBRARIES
        .iter()
        .find(|(l, _)| *l == from)
        .is_some_and(|(_, deps)| deps.contains(&to))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn edge(a: &str, b: &str) -> Edge {
        (a.to_owned(), b.to_owned())
    }

    #[test]
    fn listed_edges_pass() {
        let edges = [
            edge("seglog-segment", "seglog-record-format"),
            edge("seglog-segment", "seglog-mmap-index"),
            edge("seglog-mmap-index", "seglog-fs"),
            edge("seglog-cli", "seglog-log"),
            edge("seglog-harness", "seglog-cli"),
        ];
        assert!(violations(&edges).is_empty());
    }

    #[test]
    fn unlisted_edges_fail() {
        let edges = [
            // siblings
            edge("seglog-record-format", "seglog-mmap-index"),
            edge("seglog-mmap-index", "seglog-record-format"),
            // upward, self, skipping a layer, tools
            edge("seglog-log", "seglog-cli"),
            edge("seglog-log", "seglog-log"),
            edge("seglog-cli", "seglog-segment"),
            edge("seglog-log", "seglog-harness"),
            edge("seglog-harness", "xtask"),
        ];
        assert_eq!(violations(&edges).len(), edges.len());
    }

    #[test]
    fn unknown_package_fails() {
        let packages = ["seglog-log".to_owned(), "seglog-new".to_owned()];
        assert_eq!(unknown_packages(&packages).len(), 1);
    }

    #[test]
    fn workspace_layering_holds() -> Result<()> {
        check(&crate::project_root())
    }
}
