//! A directory tree's every name, kind, byte and modification time, to show that a command
//! changed nothing: not a byte, not an mtime, no file created (a `.lock`, a marker, a checkpoint).
#![allow(clippy::unwrap_used, reason = "tests")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// One entry of a tree: its contents (`None` for a directory) and its modification time.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    bytes: Option<Vec<u8>>,
    modified: SystemTime,
}

/// Every entry under `root` (and `root` itself, as ""), by path relative to `root`.
pub(crate) fn tree(root: &Path) -> BTreeMap<PathBuf, Entry> {
    let mut out = BTreeMap::new();
    walk(root, root, &mut out);
    out
}

fn walk(root: &Path, path: &Path, out: &mut BTreeMap<PathBuf, Entry>) {
    let meta = std::fs::symlink_metadata(path).unwrap();
    let rel = path.strip_prefix(root).unwrap().to_path_buf();
    let bytes = if meta.is_dir() {
        let mut children: Vec<PathBuf> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        children.sort();
        for child in children {
            walk(root, &child, out);
        }
        None
    } else {
        Some(std::fs::read(path).unwrap())
    };
    out.insert(
        rel,
        Entry {
            bytes,
            modified: meta.modified().unwrap(),
        },
    );
}

/// Fails, naming what differs, unless `before` and `after` are the same tree.
pub(crate) fn assert_unchanged(
    before: &BTreeMap<PathBuf, Entry>,
    after: &BTreeMap<PathBuf, Entry>,
    what: &str,
) {
    let added: Vec<_> = after.keys().filter(|k| !before.contains_key(*k)).collect();
    let removed: Vec<_> = before.keys().filter(|k| !after.contains_key(*k)).collect();
    let changed: Vec<_> = before
        .iter()
        .filter(|(k, v)| after.get(*k).is_some_and(|a| a != *v))
        .map(|(k, _)| k)
        .collect();
    assert!(
        added.is_empty() && removed.is_empty() && changed.is_empty(),
        "{what} changed the directory: added {added:?}, removed {removed:?}, changed {changed:?}"
    );
}
