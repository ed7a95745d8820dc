//! The names of a [`SimFs`](super::SimFs) and which of them a power loss keeps.
//!
//! The live names are full paths (what every operation sees). The durable ones are links, as a
//! real file system keeps them: each directory has an identity and its own durable entries, by
//! name. A directory renamed or removed keeps its durable entries under its identity, so a
//! crash before its parent directory was synced brings the old name back with the files
//! durable in it, and one after brings the new name with the same files.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// What a name points at: a file (its node) or a directory (its identity, never [`ROOT`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Entry {
    File(usize),
    Dir(usize),
}

/// The directory that holds the top-level paths (`/`, or the first component of a relative
/// path), by their whole path.
pub(super) const ROOT: usize = 0;

/// The durable links: (directory identity, name) to entry.
#[derive(Debug, Default, Clone)]
pub(super) struct DurableNames {
    links: BTreeMap<(usize, OsString), Entry>,
}

/// Where `path` is linked in `names`: its parent directory's identity and its name there.
/// `None` when its parent is not a directory of `names`.
fn link(names: &BTreeMap<PathBuf, Entry>, path: &Path) -> Option<(usize, OsString)> {
    match path.parent() {
        None => Some((ROOT, path.as_os_str().to_owned())),
        Some(parent) if parent.as_os_str().is_empty() => Some((ROOT, path.as_os_str().to_owned())),
        Some(parent) => match names.get(parent) {
            Some(Entry::Dir(id)) => Some((*id, path.file_name()?.to_owned())),
            _ => None,
        },
    }
}

impl DurableNames {
    /// Makes the live name `path` durable now (a directory is durable as soon as it is created).
    pub(super) fn link_now(&mut self, live: &BTreeMap<PathBuf, Entry>, path: &Path, entry: Entry) {
        if let Some(at) = link(live, path) {
            self.links.insert(at, entry);
        }
    }

    /// `sync_dir`: the durable entries of directory `id` become the live entries of `dir` (its
    /// live name).
    pub(super) fn sync_dir(&mut self, live: &BTreeMap<PathBuf, Entry>, dir: &Path, id: usize) {
        let stale: Vec<(usize, OsString)> = self
            .links
            .range((id, OsString::new())..(id + 1, OsString::new()))
            .map(|(at, _)| at.clone())
            .collect();
        for at in stale {
            self.links.remove(&at);
        }
        for (path, entry) in live.iter().filter(|(p, _)| p.parent() == Some(dir)) {
            if let Some(name) = path.file_name() {
                self.links.insert((id, name.to_owned()), *entry);
            }
        }
    }

    /// Every durable name as a full path, walked from the top. A directory durable under two
    /// names (moved to another parent, with only one of the two parents synced) is walked under
    /// the first only, so that no directory has two live names after a crash.
    pub(super) fn paths(&self) -> BTreeMap<PathBuf, Entry> {
        let mut out = BTreeMap::new();
        let mut walked = BTreeSet::new();
        let mut pending = vec![(ROOT, PathBuf::new())];
        while let Some((id, dir)) = pending.pop() {
            let children = self
                .links
                .range((id, OsString::new())..(id + 1, OsString::new()));
            for ((_, name), entry) in children {
                let path = dir.join(name);
                if let Entry::Dir(child) = *entry {
                    if !walked.insert(child) {
                        continue;
                    }
                    pending.push((child, path.clone()));
                }
                out.insert(path, *entry);
            }
        }
        out
    }

    /// The durable names of a file system whose every name is durable: `names`, a crash image.
    pub(super) fn from_paths(names: &BTreeMap<PathBuf, Entry>) -> Self {
        let links = names
            .iter()
            .filter_map(|(path, entry)| Some((link(names, path)?, *entry)))
            .collect();
        Self { links }
    }
}
