//! The namespace operations of a [`SimFs`]: opening, renaming and removing files and
//! directories, listing, syncing directories, and advisory locks ([`SimLock`]).

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::SimFs;
use super::capture::SimEvent;
use super::file::SimFile;
use super::names::Entry;
use super::state::{EMFILE, Node, State, not_found, now_ms};
use crate::{Backing, FileSystem, OpenMode};

/// An exclusive lock on a [`SimFs`] path, released when dropped.
#[derive(Debug)]
pub struct SimLock {
    fs: SimFs,
    path: PathBuf,
}

impl Drop for SimLock {
    fn drop(&mut self) {
        self.fs.state.lock().locks.remove(&self.path);
    }
}

fn error(kind: io::ErrorKind, path: &Path) -> io::Error {
    io::Error::new(kind, path.display().to_string())
}

/// Checks that `from` (holding `entry`) may be renamed to `to`, as `rename(2)` does.
fn check_rename(state: &State, entry: Entry, from: &Path, to: &Path) -> io::Result<()> {
    if !state.parent_exists(to) {
        return Err(not_found(to));
    }
    match (entry, state.live.get(to)) {
        (Entry::File(_), Some(Entry::Dir(_))) => Err(error(io::ErrorKind::IsADirectory, to)),
        (Entry::Dir(_), Some(Entry::File(_))) => Err(error(io::ErrorKind::NotADirectory, to)),
        (Entry::Dir(_), Some(Entry::Dir(_))) if from != to && state.has_children(to) => {
            Err(error(io::ErrorKind::DirectoryNotEmpty, to))
        }
        (Entry::Dir(_), _) if from != to && to.starts_with(from) => Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("cannot move {} into itself", from.display()),
        )),
        _ => Ok(()),
    }
}

impl FileSystem for SimFs {
    type File = SimFile;
    type Lock = SimLock;

    fn open(&self, path: &Path, mode: OpenMode) -> io::Result<SimFile> {
        let mut state = self.state.lock();
        if state
            .open_limit
            .is_some_and(|limit| state.open_files >= limit)
        {
            return Err(io::Error::from_raw_os_error(EMFILE));
        }
        let node = match (state.live.get(path).copied(), mode) {
            (Some(Entry::Dir(_)), _) => {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    path.display().to_string(),
                ));
            }
            (Some(Entry::File(_)), OpenMode::CreateNew) => {
                return Err(io::Error::new(
                    io::ErrorKind::AlreadyExists,
                    path.display().to_string(),
                ));
            }
            (Some(Entry::File(node)), _) => node,
            (None, OpenMode::Existing | OpenMode::ReadOnly) => return Err(not_found(path)),
            (None, OpenMode::CreateNew | OpenMode::CreateOrOpen) => {
                state.faults.for_path(path)?;
                if !state.parent_exists(path) {
                    return Err(not_found(path.parent().unwrap_or(path)));
                }
                state.event(SimEvent::Create);
                let node = state.nodes.len();
                state.nodes.push(Node {
                    modified_ms: now_ms(),
                    ..Node::default()
                });
                state.live.insert(path.to_path_buf(), Entry::File(node));
                node
            }
        };
        state.open_files += 1;
        Ok(SimFile {
            fs: self.clone(),
            node,
            writable: mode != OpenMode::ReadOnly,
        })
    }

    fn exists(&self, path: &Path) -> bool {
        self.state.lock().live.contains_key(path)
    }

    fn is_dir(&self, path: &Path) -> bool {
        self.state.lock().is_dir(path)
    }

    /// A directory moves with everything inside it: its live names at once, its durable name
    /// when the parent directories are synced (its own entries stay durable under it).
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        let entry = state
            .live
            .get(from)
            .copied()
            .ok_or_else(|| not_found(from))?;
        state.faults.for_path(from)?;
        state.faults.for_path(to)?;
        check_rename(&state, entry, from, to)?;
        state.event(SimEvent::Rename);
        if let Entry::File(_) = entry {
            state.live.remove(from);
            state.live.insert(to.to_path_buf(), entry);
            return Ok(());
        }
        let moved: Vec<(PathBuf, Entry)> = state
            .live
            .iter()
            .filter(|(p, _)| p.starts_with(from))
            .map(|(p, e)| (p.clone(), *e))
            .collect();
        for (path, _) in &moved {
            state.live.remove(path);
        }
        // An empty directory at `to` is replaced.
        state.live.remove(to);
        for (path, entry) in moved {
            let inside = path.strip_prefix(from).unwrap_or(&path);
            let moved_to = if inside.as_os_str().is_empty() {
                to.to_path_buf()
            } else {
                to.join(inside)
            };
            state.live.insert(moved_to, entry);
        }
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        match state.live.get(path) {
            Some(Entry::File(_)) => {
                state.faults.for_path(path)?;
                state.event(SimEvent::Remove);
                state.live.remove(path);
                Ok(())
            }
            Some(Entry::Dir(_)) => Err(io::Error::new(io::ErrorKind::IsADirectory, "a directory")),
            None => Err(not_found(path)),
        }
    }

    /// The directory's own durable entries stay with it: a crash before the parent directory
    /// is synced brings it back with them.
    fn remove_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        match state.live.get(dir) {
            Some(Entry::Dir(_)) => {
                if state.has_children(dir) {
                    return Err(error(io::ErrorKind::DirectoryNotEmpty, dir));
                }
                state.faults.for_path(dir)?;
                state.event(SimEvent::Remove);
                state.live.remove(dir);
                Ok(())
            }
            Some(Entry::File(_)) => Err(error(io::ErrorKind::NotADirectory, dir)),
            None => Err(not_found(dir)),
        }
    }

    fn read_dir(&self, dir: &Path) -> io::Result<Vec<PathBuf>> {
        let state = self.state.lock();
        if !state.is_dir(dir) {
            return Err(not_found(dir));
        }
        Ok(state
            .live
            .keys()
            .filter(|p| p.parent() == Some(dir))
            .cloned()
            .collect())
    }

    /// New directories are durable at once (their names included).
    fn create_dir_all(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        let ancestors: Vec<&Path> = dir
            .ancestors()
            .filter(|a| !a.as_os_str().is_empty())
            .collect();
        for ancestor in ancestors.into_iter().rev() {
            match state.live.get(ancestor) {
                Some(Entry::File(_)) => {
                    return Err(io::Error::new(
                        io::ErrorKind::AlreadyExists,
                        "a file is in the way",
                    ));
                }
                Some(Entry::Dir(_)) => {}
                None => {
                    state.faults.for_path(ancestor)?;
                    let entry = state.new_dir();
                    state.live.insert(ancestor.to_path_buf(), entry);
                    let State { live, durable, .. } = &mut *state;
                    durable.link_now(live, ancestor, entry);
                }
            }
        }
        Ok(())
    }

    fn sync_dir(&self, dir: &Path) -> io::Result<()> {
        let mut state = self.state.lock();
        let Some(Entry::Dir(id)) = state.live.get(dir).copied() else {
            return Err(not_found(dir));
        };
        state.faults.for_path(dir)?;
        state.event(SimEvent::DirSync);
        state.stats.dir_syncs += 1;
        let State { live, durable, .. } = &mut *state;
        durable.sync_dir(live, dir, id);
        Ok(())
    }

    fn modified_ms(&self, path: &Path) -> io::Result<i64> {
        let state = self.state.lock();
        match state.live.get(path) {
            Some(Entry::File(node)) => Ok(state.nodes.get(*node).map_or(0, |n| n.modified_ms)),
            Some(Entry::Dir(_)) => Ok(0),
            None => Err(not_found(path)),
        }
    }

    fn set_modified_ms(&self, path: &Path, ms: i64) -> io::Result<()> {
        let mut state = self.state.lock();
        match state.live.get(path).copied() {
            Some(Entry::File(node)) => {
                state.node_mut(node)?.modified_ms = ms;
                Ok(())
            }
            _ => Err(not_found(path)),
        }
    }

    /// Index files live in this file system too: anonymous memory loaded from and written back
    /// to it, so a crash reaches them (see [`Backing`]).
    fn index_backing(&self) -> Backing {
        Backing::Stored(Arc::new(self.clone()))
    }

    fn try_lock(&self, path: &Path) -> io::Result<SimLock> {
        if !FileSystem::exists(self, path) {
            drop(self.open(path, OpenMode::CreateOrOpen)?);
        }
        let mut state = self.state.lock();
        if !state.locks.insert(path.to_path_buf()) {
            return Err(io::Error::new(
                io::ErrorKind::WouldBlock,
                format!("{} is locked", path.display()),
            ));
        }
        Ok(SimLock {
            fs: self.clone(),
            path: path.to_path_buf(),
        })
    }
}
