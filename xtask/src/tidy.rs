//! Tidy: cheap textual checks over the source tree, run by `cargo xtask ci` and as a `#[test]`
//! (rust-analyzer's pattern), so `cargo test` alone already enforces them.
//!
//! - every `.rs` file starts with a `//!` or `//` header;
//! - `unsafe` appears only under `crates/mmap-index`, each use has a `// SAFETY:` comment just above it,
//!   and every file holding one is listed in `docs/unsafe.md`;
//! - `.rs` and `.toml` files are ASCII (redb's rule).

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

/// Source roots that tidy walks.
const ROOTS: &[&str] = &["crates", "xtask", "benches", "fuzz", "harness", "examples"];

/// The only directory allowed to contain `unsafe`.
const UNSAFE_HOME: &str = "crates/mmap-index/";

/// How many lines above an `unsafe` its `// SAFETY:` comment may start.
const SAFETY_WINDOW: usize = 12;

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
        }
    }
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
    problems
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

    #[test]
    fn unsafe_outside_mmap_index_is_reported() {
        let text = "//! x\n// SAFETY: fine\nunsafe { f() }\n";
        let problems = check_file("crates/segment/src/a.rs", text, "crates/segment/src/a.rs");
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn unsafe_without_safety_comment_is_reported() {
        let text = "//! x\nfn f() {\n    unsafe { g() }\n}\n";
        let problems = check_file(
            "crates/mmap-index/src/a.rs",
            text,
            "crates/mmap-index/src/a.rs",
        );
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn unsafe_missing_from_docs_is_reported() {
        let text = "//! x\n// SAFETY: fine\nunsafe { f() }\n";
        let problems = check_file("crates/mmap-index/src/a.rs", text, "");
        assert_eq!(problems.len(), 1, "{problems:?}");
    }

    #[test]
    fn documented_unsafe_and_comments_pass() {
        let text = "//! x\n// unsafe { not code }\n// SAFETY: fine\nunsafe { f() }\n";
        let problems = check_file(
            "crates/mmap-index/src/a.rs",
            text,
            "crates/mmap-index/src/a.rs",
        );
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn non_ascii_is_reported() {
        let problems = check_file("Cargo.toml", "name = \"caf\u{e9}\"\n", "");
        assert_eq!(problems.len(), 1, "{problems:?}");
    }
}
