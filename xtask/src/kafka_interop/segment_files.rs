//! A partition directory's segment files, listing and copying them.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

pub(super) fn segment_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    files.retain(|p| {
        p.extension()
            .is_some_and(|e| e == "log" || e == "index" || e == "timeindex")
    });
    files.sort();
    Ok(files)
}

pub(super) fn base_offset(file: &str) -> Result<i64> {
    let stem = Path::new(file)
        .file_stem()
        .and_then(|s| s.to_str())
        .context("segment file name")?;
    Ok(stem.parse()?)
}

/// The files of `dir` with one of `extensions`, sorted.
pub(super) fn files_with(dir: &Path, extensions: &[&str]) -> Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .with_context(|| format!("listing {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()?;
    files.retain(|p| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| extensions.contains(&e))
    });
    files.sort();
    Ok(files)
}

/// Copies the files of `from` (not its subdirectories) into `to`.
pub(super) fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_file() {
            fs::copy(entry.path(), to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

/// Copies `from` with its subdirectories into `to` (a log directory: the partitions and the
/// files beside them).
pub(super) fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    copy_dir(from, to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
    }
    Ok(())
}
