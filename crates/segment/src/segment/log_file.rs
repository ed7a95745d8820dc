//! The `.log`'s descriptor, held on demand: [`LogFile`] opens the file on first use (by its
//! current path), lends an `Arc` of it to each operation (so a read or write in progress keeps its
//! descriptor when the cache closes the file), and lets a [`DescriptorCache`] close it when the
//! segment is not pinned (active, being written), syncing it first if it may hold unsynced
//! bytes.

use std::any::Any;
use std::path::Path;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;
use seglog_fs::{File, FileSystem};

use crate::descriptors::{Close, Closing, DescriptorCache, Member};
use crate::error::{Error, Result};

/// A segment's `.log` descriptor slot. See the module documentation.
#[derive(Debug)]
pub(super) struct LogFile<F: FileSystem> {
    slot: Arc<Slot<F::File>>,
}

#[derive(Debug)]
struct Slot<H> {
    state: Mutex<State<H>>,
    member: Option<Member>,
}

#[derive(Debug)]
struct State<H> {
    file: Option<Arc<H>>,
    /// Active or being written: never counted, never closed by the cache.
    pinned: bool,
    /// A write or cut since the last successful sync may be unsynced: the cache syncs it
    /// before closing it.
    unsynced: bool,
    /// The error of a sync the cache made before closing: the next flush returns it (a
    /// writeback error is reported once, to one descriptor).
    sync_error: Option<std::io::Error>,
}

impl<H: File> Close for Slot<H> {
    fn try_close(&self) -> Closing {
        let Some(mut state) = self.state.try_lock() else {
            return Closing::Kept;
        };
        if state.pinned || state.sync_error.is_some() {
            return Closing::Kept;
        }
        if state.unsynced {
            return Closing::Unsynced;
        }
        Closing::Closed(
            state
                .file
                .take()
                .map(|f| Box::new(f) as Box<dyn Any + Send>),
        )
    }

    fn sync_and_close(&self) -> bool {
        let file = {
            let mut state = self.state.lock();
            if state.pinned || state.sync_error.is_some() {
                return false;
            }
            let Some(file) = state.file.clone() else {
                return false;
            };
            // Cleared before the sync: a write meanwhile sets it again, and keeps the file.
            state.unsynced = false;
            file
        };
        if let Err(e) = file.sync_data() {
            let mut state = self.state.lock();
            state.unsynced = true;
            state.sync_error = Some(e);
            return false;
        }
        let taken = {
            let mut state = self.state.lock();
            if state.pinned || state.unsynced {
                return false;
            }
            state.file.take()
        };
        drop((file, taken));
        if let Some(member) = &self.member {
            member.release();
        }
        true
    }

    fn last_used(&self) -> u64 {
        self.member.as_ref().map_or(0, Member::last_used)
    }
}

impl<F: FileSystem> LogFile<F> {
    /// A slot holding `file` (just opened, or `None`: opened on first use), pinned or not,
    /// counted against `cache` if given.
    pub(super) fn new(
        file: Option<F::File>,
        pinned: bool,
        cache: Option<&DescriptorCache>,
    ) -> Self {
        let slot = Arc::new(Slot {
            state: Mutex::new(State {
                file: file.map(Arc::new),
                pinned,
                unsynced: false,
                sync_error: None,
            }),
            member: cache.map(DescriptorCache::member),
        });
        Self::bind(slot)
    }

    /// The open file, opened again with `reopen` (by its current path, under the path lock
    /// renames take) if the cache closed it. `write` marks it possibly unsynced first, so the
    /// cache will not close it until a sync ([`LogFile::sync`]) succeeds.
    pub(super) fn get(
        &self,
        reopen: &dyn Fn() -> Result<F::File>,
        write: bool,
    ) -> Result<Arc<F::File>> {
        let mut state = self.slot.state.lock();
        if write {
            state.unsynced = true;
        }
        let (file, opened) = if let Some(file) = &state.file {
            (Arc::clone(file), false)
        } else {
            let file = Arc::new(reopen()?);
            state.file = Some(Arc::clone(&file));
            (file, true)
        };
        let counted = !state.pinned;
        drop(state);
        if let Some(member) = &self.slot.member
            && counted
        {
            if opened {
                member.admit();
            } else {
                member.touch();
            }
        }
        Ok(file)
    }

    /// Makes the file's bytes durable: nothing when nothing may be unsynced (a file the cache
    /// closed was synced before), else `sync_data` through the open file (reopened if need be).
    /// The flag is cleared before the sync, so a write meanwhile sets it again.
    pub(super) fn sync(&self, reopen: &dyn Fn() -> Result<F::File>, path: &Path) -> Result<()> {
        let file = {
            let mut state = self.slot.state.lock();
            if let Some(e) = state.sync_error.take() {
                return Err(Error::io(path, "fsync", e));
            }
            if !state.unsynced && state.file.is_none() {
                return Ok(());
            }
            state.unsynced = false;
            state.file.clone()
        };
        let file = match file {
            Some(file) => file,
            None => match self.get(reopen, false) {
                Ok(file) => file,
                Err(e) => {
                    self.slot.state.lock().unsynced = true;
                    return Err(e);
                }
            },
        };
        file.sync_data().map_err(|e| {
            self.slot.state.lock().unsynced = true;
            Error::io(path, "fsync", e)
        })
    }

    /// Pins the file (the segment is written to: active, or being built): no longer counted.
    pub(super) fn pin(&self) {
        let was = std::mem::replace(&mut self.slot.state.lock().pinned, true);
        if !was && let Some(member) = &self.slot.member {
            member.release();
        }
    }

    /// Unpins the file (the segment became inactive): counted again if it is open.
    pub(super) fn unpin(&self) {
        let open = {
            let mut state = self.slot.state.lock();
            let was = std::mem::replace(&mut state.pinned, false);
            was && state.file.is_some()
        };
        if open && let Some(member) = &self.slot.member {
            member.admit();
        }
    }

    /// Closes the descriptor now (close, delete): a later use opens the file again by path.
    /// Whoever still uses it keeps it open until done.
    pub(super) fn close(&self) {
        let file = self.slot.state.lock().file.take();
        if let Some(member) = &self.slot.member {
            member.release();
        }
        drop(file);
    }

    /// The same slot, counted against `cache` (right after the open: nobody else holds it).
    pub(super) fn with_cache(self, cache: &DescriptorCache) -> Self {
        let (file, pinned, unsynced) = {
            let mut state = self.slot.state.lock();
            (state.file.take(), state.pinned, state.unsynced)
        };
        let slot = Arc::new(Slot {
            state: Mutex::new(State {
                file,
                pinned,
                unsynced,
                sync_error: None,
            }),
            member: Some(cache.member()),
        });
        Self::bind(slot)
    }

    /// Binds the slot's membership and counts its file if it is open and not pinned.
    fn bind(slot: Arc<Slot<F::File>>) -> Self {
        if let Some(member) = &slot.member {
            let weak: Weak<dyn Close> = Arc::downgrade(&slot) as Weak<dyn Close>;
            member.bind(weak);
            let state = slot.state.lock();
            let counted = !state.pinned && state.file.is_some();
            drop(state);
            if counted {
                member.admit();
            }
        }
        Self { slot }
    }

    /// The open file, if the descriptor is open now (never opens it).
    pub(super) fn get_if_open(&self) -> Option<Arc<F::File>> {
        self.slot.state.lock().file.clone()
    }

    /// Whether the descriptor is open now.
    pub(super) fn is_open(&self) -> bool {
        self.slot.state.lock().file.is_some()
    }
}
