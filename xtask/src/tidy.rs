//! Tidy: cheap textual checks over the source tree, run by `cargo xtask ci` and as a `#[test]`
//! (rust-analyzer's pattern), so `cargo test` alone already enforces them.
//!
//! - every `.rs` file starts with a `//!` or `//` header;
//! - `unsafe` appears only in mmap-index's mapping module, each use has a `// SAFETY:` comment just
//!   above it, and docs/unsafe.md's site table matches the sites exactly: a row for the item (function,
//!   or type of an `unsafe impl`) of every site, and no row without one;
//! - `.rs` and `.toml` files are ASCII (redb's rule);
//! - library code (`crates/*/src`) does no `std::fs` outside the I/O seam's crate (`crates/fs`): every
//!   file and directory operation goes through `seglog_fs`, so the simulated file system sees it;
//! - `crates/log/examples/` name no crate but `std` and `seglog_log`: they show what an embedder can
//!   do with `seglog-log` alone;
//! - loom is switched by one cfg, `cfg(all(test, loom))`, in every library crate;
//! - no library source file is over [`MAX_LIBRARY_LINES`] lines, and no library crate's modules import
//!   each other in a loop (see `modules.rs`).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use crate::modules;

/// Source roots that tidy walks.
const ROOTS: &[&str] = &["crates", "xtask", "benches", "fuzz", "harness", "examples"];

/// The only directory allowed to contain `unsafe`: mmap-index's mapping module.
const UNSAFE_HOME: &str = "crates/mmap-index/src/map/";

/// How many lines above an `unsafe` its `// SAFETY:` comment may start.
const SAFETY_WINDOW: usize = 12;

/// The I/O seam's crate, the only library code that may use `std::fs`.
const FS_HOME: &str = "crates/fs/";

/// The most lines a library source file may have: a file past it holds more than one concept.
const MAX_LIBRARY_LINES: usize = 600;

pub(crate) fn check(root: &Path) -> Result<()> {
    let mut problems = Vec::new();
    let unsafe_doc = fs::read_to_string(root.join("docs/unsafe.md")).unwrap_or_default();
    let mut files = 0;
    for dir in ROOTS {
        for path in rust_files(&root.join(dir))?
            .into_iter()
            .chain(toml_files(&root.join(dir))?)
        {
            files += 1;
            let rel = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            let text = fs::read_to_string(&path).with_context(|| format!("reading {rel}"))?;
            problems.extend(check_file(&rel, &text, &unsafe_doc));
            if is_library_source(&rel) {
                problems.extend(check_library_file(&rel, &text));
            }
        }
    }
    problems.extend(module_loops(root)?);
    problems.extend(stale_unsafe_rows(root, &unsafe_doc));
    problems.extend(embedder_examples(root)?);
    if !problems.is_empty() {
        bail!(
            "tidy found {} problem(s):\n{}",
            problems.len(),
            problems.join("\n")
        );
    }
    eprintln!("tidy: {files} files clean");
    Ok(())
}

fn check_file(rel: &str, text: &str, unsafe_doc: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if let Some((line, _)) = text.lines().enumerate().find(|(_, l)| !l.is_ascii()) {
        problems.push(format!("{rel}:{}: non-ASCII character", line + 1));
    }
    if Path::new(rel).extension().is_none_or(|e| e != "rs") {
        return problems;
    }
    if !text.starts_with("//") {
        problems.push(format!(
            "{rel}:1: file must start with a `//!` or `//` header"
        ));
    }
    let lines: Vec<&str> = text.lines().collect();
    let mut unsafe_sites = 0;
    for (i, line) in lines.iter().enumerate() {
        if !is_unsafe_use(line) {
            continue;
        }
        unsafe_sites += 1;
        if !rel.starts_with(UNSAFE_HOME) {
            problems.push(format!("{rel}:{}: `unsafe` outside {UNSAFE_HOME}", i + 1));
        }
        let from = i.saturating_sub(SAFETY_WINDOW);
        let window = lines.get(from..=i).unwrap_or_default();
        let documented = window.iter().any(|l| {
            let l = l.trim_start();
            l.starts_with("// SAFETY:") || l.starts_with("/// # Safety")
        });
        if !documented {
            problems.push(format!(
                "{rel}:{}: `unsafe` without a `// SAFETY:` comment",
                i + 1
            ));
        }
    }
    if unsafe_sites > 0 && !unsafe_doc.contains(rel) {
        problems.push(format!(
            "{rel}: holds `unsafe` but docs/unsafe.md does not list it"
        ));
    }
    for (line, item) in unsafe_items(text) {
        if !unsafe_rows(unsafe_doc, rel).any(|row| row.contains(item.as_str())) {
            problems.push(format!(
                "{rel}:{line}: `unsafe` in `{item}`, which no row of docs/unsafe.md for this file names"
            ));
        }
    }
    problems
}

/// The rows of docs/unsafe.md's site table for the file `rel`: their first cell starts with its path.
fn unsafe_rows<'a>(unsafe_doc: &'a str, rel: &str) -> impl Iterator<Item = &'a str> {
    let prefix = format!("| `{rel}`");
    unsafe_doc
        .lines()
        .filter(move |l| l.starts_with(&prefix))
        .map(|l| l.split(" | ").next().unwrap_or_default())
}

/// Each `unsafe` site of a file (1-based line) with the item it is in: the nearest `fn` at or above
/// it, or the type an `unsafe impl` is for.
fn unsafe_items(text: &str) -> Vec<(usize, String)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !is_unsafe_use(line) {
            continue;
        }
        let code = line.split("//").next().unwrap_or_default();
        let item = if code.contains(concat!("unsafe", " impl")) {
            code.split(" for ")
                .nth(1)
                .map(|t| ident_prefix(t.trim_start()))
        } else {
            lines
                .get(..=i)
                .unwrap_or_default()
                .iter()
                .rev()
                .find_map(|l| {
                    let code = l.split("//").next().unwrap_or_default();
                    code.split("fn ").nth(1).map(ident_prefix)
                })
        };
        if let Some(item) = item.filter(|n| !n.is_empty()) {
            out.push((i + 1, item));
        }
    }
    out
}

fn ident_prefix(text: &str) -> String {
    text.chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect()
}

/// Rows of docs/unsafe.md's site table that name a file with no `unsafe` in the item they name.
fn stale_unsafe_rows(root: &Path, unsafe_doc: &str) -> Vec<String> {
    let mut problems = Vec::new();
    for row in unsafe_doc.lines().filter(|l| l.starts_with("| `crates/")) {
        let cell = row.split(" | ").next().unwrap_or_default();
        let Some(rel) = cell.strip_prefix("| `").and_then(|c| c.split('`').next()) else {
            continue;
        };
        let text = fs::read_to_string(root.join(rel)).unwrap_or_default();
        if !unsafe_items(&text)
            .iter()
            .any(|(_, item)| cell.contains(item.as_str()))
        {
            problems.push(format!(
                "docs/unsafe.md: the row `{cell}` names no `unsafe` site of {rel}"
            ));
        }
    }
    problems
}

/// Whether `rel` is a library crate's source: `crates/<name>/src/`, its binaries (`main.rs`, `bin/`) aside.
fn is_library_source(rel: &str) -> bool {
    let mut parts = rel.split('/');
    let (Some("crates"), Some(_), Some("src")) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    let rest: Vec<&str> = parts.collect();
    Path::new(rel).extension().is_some_and(|e| e == "rs")
        && rest != ["main.rs"]
        && rest.first() != Some(&"bin")
}

fn check_library_file(rel: &str, text: &str) -> Vec<String> {
    let mut problems = Vec::new();
    let lines = text.lines().count();
    if lines > MAX_LIBRARY_LINES {
        problems.push(format!(
            "{rel}: {lines} lines, over {MAX_LIBRARY_LINES}: split it by concept"
        ));
    }
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        if code.contains(concat!("cfg(", "loom)")) || code.contains(concat!("cfg(not(", "loom))")) {
            problems.push(format!(
                "{rel}:{}: loom is switched by `cfg(all(test, loom))` in every crate (tokio's facade pattern)",
                i + 1
            ));
        }
    }
    if !rel.starts_with(FS_HOME) {
        for (i, line) in text.lines().enumerate() {
            if uses_std_fs(line) {
                problems.push(format!(
                    "{rel}:{}: `std::fs` in library code: go through the seam (`seglog_fs`)",
                    i + 1
                ));
            }
        }
    }
    problems
}

/// A line of code (not a comment or doc example) that names `std::fs`, also as `use std::{fs, ..}`.
fn uses_std_fs(line: &str) -> bool {
    let code = line.split("//").next().unwrap_or_default();
    let std_fs = concat!("std", "::fs");
    if code.contains(std_fs) {
        return true;
    }
    let Some(group) = code.split(concat!("std", "::{")).nth(1) else {
        return false;
    };
    group
        .split(['}', ','])
        .any(|item| item.trim() == "fs" || item.trim().starts_with("fs::"))
}

/// `crates/log/examples/*.rs` lines that name a workspace dependency other than `seglog_log`.
fn embedder_examples(root: &Path) -> Result<Vec<String>> {
    let manifest = fs::read_to_string(root.join("Cargo.toml")).context("reading Cargo.toml")?;
    let crates = workspace_dependencies(&manifest);
    let mut problems = Vec::new();
    for path in rust_files(&root.join("crates/log/examples"))? {
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .to_string_lossy()
            .replace('\\', "/");
        let text = fs::read_to_string(&path).with_context(|| format!("reading {rel}"))?;
        problems.extend(foreign_crates(&rel, &text, &crates));
    }
    Ok(problems)
}

/// The crate names (`-` as `_`) of the root manifest's `[workspace.dependencies]`.
fn workspace_dependencies(manifest: &str) -> Vec<String> {
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[workspace.dependencies]")
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with('['))
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim().replace('-', "_")))
        .filter(|k| !k.is_empty() && !k.starts_with('#'))
        .collect()
}

fn foreign_crates(rel: &str, text: &str, crates: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for name in crates.iter().filter(|c| c.as_str() != "seglog_log") {
            let named = code.match_indices(&format!("{name}::")).any(|(at, _)| {
                at == 0
                    || code
                        .as_bytes()
                        .get(at - 1)
                        .is_some_and(|b| !b.is_ascii_alphanumeric() && *b != b'_' && *b != b':')
            });
            if named {
                problems.push(format!(
                    "{rel}:{}: names `{name}`; an embedder's example uses `seglog_log` and std only",
                    i + 1
                ));
            }
        }
    }
    problems
}

/// The module loops of every library crate.
fn module_loops(root: &Path) -> Result<Vec<String>> {
    let mut problems = Vec::new();
    let crates = root.join("crates");
    let mut dirs: Vec<PathBuf> = fs::read_dir(&crates)
        .with_context(|| format!("listing {}", crates.display()))?
        .filter_map(|e| e.ok().map(|e| e.path().join("src")))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for src in dirs {
        let mut files = Vec::new();
        for path in rust_files(&src)? {
            let rel = path
                .strip_prefix(&src)
                .unwrap_or(&path)
                .to_string_lossy()
                .replace('\\', "/");
            if rel == "main.rs" || rel.starts_with("bin/") {
                continue;
            }
            let text = fs::read_to_string(&path).with_context(|| format!("reading {rel}"))?;
            files.push((rel, text));
        }
        let krate = src
            .strip_prefix(root)
            .unwrap_or(&src)
            .to_string_lossy()
            .replace('\\', "/");
        for cycle in modules::loops(&modules::graph(&files)) {
            problems.push(format!(
                "{krate}: modules import each other in a loop: {}",
                cycle.join(", ")
            ));
        }
    }
    Ok(problems)
}

/// A line that uses `unsafe` as a keyword (not in a comment, string or lint name).
fn is_unsafe_use(line: &str) -> bool {
    // Spelled with concat! so that this line is not itself a match.
    const KEYWORDS: [&str; 4] = [
        concat!("unsafe", " {"),
        concat!("unsafe", " fn"),
        concat!("unsafe", " impl"),
        concat!("unsafe", " extern"),
    ];
    let code = line.split("//").next().unwrap_or_default();
    KEYWORDS.iter().any(|k| code.contains(k))
}

pub(crate) fn rust_files(dir: &Path) -> Result<Vec<PathBuf>> {
    files_with_extension(dir, "rs")
}

fn toml_files(dir: &Path) -> Result<Vec<PathBuf>> {
    files_with_extension(dir, "toml")
}

fn files_with_extension(dir: &Path, ext: &str) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if !dir.exists() {
        return Ok(out);
    }
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).with_context(|| format!("listing {}", d.display()))? {
            let path = entry?.path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() {
                if name != "target" && !name.starts_with('.') {
                    stack.push(path);
                }
            } else if path.extension().is_some_and(|e| e == ext) {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_is_tidy() -> Result<()> {
        check(&crate::project_root())
    }

    #[test]
    fn missing_header_is_reported() {
        let problems = check_file("crates/x/src/a.rs", "fn main() {}\n", "");
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    const MAP: &str = "crates/mmap-index/src/map/a.rs";
    const ROW: &str = "| `crates/mmap-index/src/map/a.rs`: `f` | what | why |\n";
    const SITE: &str = "//! x\nfn f() {\n    // SAFETY: fine\n    unsafe { g() }\n}\n";

    #[test]
    fn unsafe_outside_the_map_module_is_reported() {
        let doc = "| `crates/mmap-index/src/a.rs`: `f` | what | why |\n";
        let problems = check_file("crates/mmap-index/src/a.rs", SITE, doc);
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn unsafe_without_safety_comment_is_reported() {
        let text = "//! x\nfn f() {\n    unsafe { g() }\n}\n";
        let problems = check_file(MAP, text, ROW);
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn unsafe_missing_from_docs_is_reported() {
        // Neither the file nor the item is listed.
        assert_eq!(check_file(MAP, SITE, "").len(), 2);
        // The file is, the item is not.
        let other = "| `crates/mmap-index/src/map/a.rs`: `h` | what | why |\n";
        assert_eq!(check_file(MAP, SITE, other).len(), 1);
    }

    #[test]
    fn documented_unsafe_and_comments_pass() {
        let text = "//! x\n// unsafe { not code }\nfn f() {\n    // SAFETY: fine\n    unsafe { g() }\n}\n// SAFETY: fine\nunsafe impl Sync for Cell<T> {}\n";
        let doc = format!(
            "{ROW}| `crates/mmap-index/src/map/a.rs`: `{} Sync for Cell` | x | y |\n",
            concat!("unsafe", " impl")
        );
        let problems = check_file(MAP, text, &doc);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(
            unsafe_items(text),
            [(5, "f".to_owned()), (8, "Cell".to_owned())]
        );
    }

    #[test]
    fn unsafe_doc_rows_match_the_tree() {
        let root = crate::project_root();
        let doc = fs::read_to_string(root.join("docs/unsafe.md")).unwrap_or_default();
        assert!(stale_unsafe_rows(&root, &doc).is_empty());
        let stale = "| `crates/mmap-index/src/map/mod.rs`: `no_such_fn` | x | y |\n";
        assert_eq!(stale_unsafe_rows(&root, stale).len(), 1);
    }

    #[test]
    fn std_fs_in_library_code_is_reported() {
        let text = "//! x\nuse std::{fs, io};\nfn f() { std::fs::read(\"a\"); }\n/// std::fs::read in a doc\n";
        assert_eq!(check_library_file("crates/log/src/a.rs", text).len(), 2);
        assert!(check_library_file("crates/fs/src/real.rs", text).is_empty());
        assert!(!uses_std_fs("use std::{io, fmt};"));
        assert!(uses_std_fs("use std::{io, fs::File};"));
        assert!(is_library_source("crates/log/src/a/b.rs"));
        assert!(!is_library_source("crates/log-cli/src/main.rs"));
        assert!(!is_library_source("crates/log/tests/a.rs"));
        assert!(!is_library_source("crates/log/examples/a.rs"));
    }

    #[test]
    fn bare_loom_cfg_is_reported() {
        let text = "//! x\n#[cfg(loom)]\nmod a;\n#[cfg(not(loom))]\nmod b;\n#[cfg(all(test, loom))]\nmod c;\n";
        assert_eq!(check_library_file("crates/log/src/a.rs", text).len(), 2);
    }

    #[test]
    fn examples_naming_other_crates_are_reported() {
        let manifest = "[workspace.dependencies]\nseglog-log = { path = \"x\" }\ntempfile = \"3\"\n# a comment\n\n[lints]\nx = 1\n";
        let crates = workspace_dependencies(manifest);
        assert_eq!(crates, ["seglog_log", "tempfile"]);
        let text = "//! x\nuse seglog_log::RealFs;\nlet d = tempfile::tempdir();\nlet e = my_tempfile::x();\n";
        assert_eq!(foreign_crates("a.rs", text, &crates).len(), 1);
    }

    #[test]
    fn long_library_file_is_reported() {
        let text = format!("//! x\n{}", "fn f() {}\n".repeat(MAX_LIBRARY_LINES));
        assert_eq!(check_library_file("crates/log/src/a.rs", &text).len(), 1);
    }

    #[test]
    fn non_ascii_is_reported() {
        let problems = check_file("Cargo.toml", "name = \"caf\u{e9}\"\n", "");
        assert_eq!(problems.len(), 1, "{problems:?}");
    }
}
