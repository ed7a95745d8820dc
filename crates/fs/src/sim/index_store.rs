//! Index files in a [`SimFs`]: the [`IndexStore`] behind a stored index's
//! [`Backing`](crate::Backing).

use std::io;
use std::path::Path;

use super::SimFs;
use super::names::Entry;
use super::state::not_found;
use crate::{File, FileSystem, IndexStore, OpenMode, WRITE_BACK_PAGE_SIZE};

/// Index files in a [`SimFs`]: loading, creating and resizing or trimming one opens the file, so
/// they count against the open-file limit and the space limit; `sync` (an `msync`) needs no
/// descriptor.
impl IndexStore for SimFs {
    fn load(&self, path: &Path) -> io::Result<Option<Vec<u8>>> {
        self.check_open_limit()?;
        let state = self.state.lock();
        match state.live.get(path) {
            Some(Entry::File(node)) => Ok(state.nodes.get(*node).map(|n| n.live.clone())),
            Some(Entry::Dir(_)) => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                path.display().to_string(),
            )),
            None => Ok(None),
        }
    }

    fn create(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = self.open(path, OpenMode::CreateNew)?;
        if let Err(e) = file.set_len(len) {
            drop(file);
            let _ = self.remove_file(path);
            return Err(e);
        }
        Ok(())
    }

    fn write_pages(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let file = self.open(path, OpenMode::Existing)?;
        let current = self.live_bytes(path).unwrap_or_default();
        let len = bytes.len().min(current.len());
        for start in (0..len).step_by(WRITE_BACK_PAGE_SIZE) {
            let end = start.saturating_add(WRITE_BACK_PAGE_SIZE).min(len);
            let (Some(page), Some(on_file)) = (bytes.get(start..end), current.get(start..end))
            else {
                continue;
            };
            if page != on_file {
                file.write_all_at(page, start as u64)?;
            }
        }
        Ok(())
    }

    fn set_len(&self, path: &Path, len: u64) -> io::Result<()> {
        let file = self.open(path, OpenMode::Existing)?;
        if File::len(&file)? != len {
            File::set_len(&file, len)?;
        }
        Ok(())
    }

    fn sync(&self, path: &Path) -> io::Result<()> {
        let node = match self.state.lock().live.get(path) {
            Some(Entry::File(node)) => *node,
            _ => return Err(not_found(path)),
        };
        self.sync_node(node, None)
    }

    fn rename(&self, from: &Path, to: &Path) -> io::Result<()> {
        FileSystem::rename(self, from, to)
    }

    fn remove(&self, path: &Path) -> io::Result<bool> {
        match self.remove_file(path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }

    fn exists(&self, path: &Path) -> bool {
        FileSystem::exists(self, path)
    }
}
