//! A partition directory's segment files.

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
