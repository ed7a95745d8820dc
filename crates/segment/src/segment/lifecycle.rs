//! A segment's lifecycle: the roll decision, becoming inactive, flush, close, delete, the suffix
//! renames and the index resizes.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::{LogSegment, UNKNOWN};
use crate::error::{Error, Result};
use seglog_fs::{File, FileSystem, OpenMode};

/// The inputs of [`LogSegment::should_roll`] (Kafka's `RollParams`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollParams {
    /// The effective `segment.ms` (`LogConfig.maxSegmentMs`).
    pub max_segment_ms: i64,
    /// `segment.bytes`.
    pub max_segment_bytes: u64,
    /// The largest timestamp of the incoming batches.
    pub max_timestamp_in_messages: i64,
    /// The largest offset of the incoming batches.
    pub max_offset_in_messages: i64,
    /// The incoming bytes.
    pub messages_size: u64,
    /// The current time.
    pub now_ms: i64,
}

impl<F: FileSystem> LogSegment<F> {
    /// Kafka's `timeWaitedForRoll`: with a known first-batch timestamp, how far `message_ts` is
    /// past it; otherwise how long ago the segment was created.
    pub fn time_waited_for_roll(&self, now_ms: i64, message_ts: i64) -> Result<i64> {
        let mut w = self.writer.lock();
        if w.rolling_based_timestamp.is_none() && self.size() > 0 {
            drop(w);
            let first = self.first_batch_header()?.map(|h| h.max_timestamp);
            w = self.writer.lock();
            if w.rolling_based_timestamp.is_none() {
                w.rolling_based_timestamp = first;
            }
        }
        Ok(match w.rolling_based_timestamp {
            Some(ts) if ts >= 0 => message_ts.saturating_sub(ts),
            _ => now_ms.saturating_sub(w.created_ms),
        })
    }

    /// Kafka's `shouldRoll`: size, time with jitter (never for an empty segment), a full index, or
    /// an incoming offset that cannot be stored relative to this segment.
    pub fn should_roll(&self, params: RollParams) -> Result<bool> {
        let waited = self.time_waited_for_roll(params.now_ms, params.max_timestamp_in_messages)?;
        let reached_roll_ms = waited
            > params
                .max_segment_ms
                .saturating_sub(self.config.roll_jitter_ms);
        let size = self.size();
        if size
            > params
                .max_segment_bytes
                .saturating_sub(params.messages_size)
            || (size > 0 && reached_roll_ms)
        {
            return Ok(true);
        }
        let w = self.writer.lock();
        Ok(w.offset_index.get()?.is_full()
            || w.time_index.get()?.is_full()
            || !self.can_convert_to_relative_offset(params.max_offset_in_messages))
    }

    /// Kafka's `onBecomeInactiveSegment`, called on roll: writes the final time index entry (the
    /// segment's max timestamp, skipping the full check), trims both indexes and the `.log`.
    pub fn on_become_inactive(&self) -> Result<()> {
        let mut w = self.writer.lock();
        Self::load_max_timestamp(&mut w)?;
        let last = w.max_timestamp_and_offset;
        w.time_index
            .get_mut()?
            .maybe_append(last.timestamp, last.offset, true)?;
        // Set first: a failure below may leave changes made before it.
        self.unsynced_since_inactive.store(true, Ordering::Release);
        w.offset_index.get_mut()?.trim_to_valid_size()?;
        w.time_index.get_mut()?.trim_to_valid_size()?;
        self.trim_log(&self.path())?;
        // No longer written to: the descriptor cache may close its `.log` once a flush synced it.
        self.log.unpin();
        Ok(())
    }

    /// Cuts a preallocated `.log` down to its logical size.
    fn trim_log(&self, path: &Path) -> Result<()> {
        let size = self.size();
        // A `.log` the descriptor cache closed was trimmed before (by `on_become_inactive`), or
        // is one a load `stat`ed, whose size is its length: nothing to cut, and nothing to open.
        let Some(log) = self.log.get_if_open() else {
            return Ok(());
        };
        let len = log.len().map_err(|e| Error::io(path, "stat", e))?;
        if len > size {
            // The published length is the size: this cuts nothing a reader may touch, so it
            // waits for nobody and is never refused for a loan.
            let log = self.log_for_write()?;
            self.shrink_mapping(&log, size, "trim")?;
            log.set_len(size).map_err(|e| Error::io(path, "trim", e))?;
        }
        Ok(())
    }

    /// Kafka's `flush`: fdatasync of the `.log`, msync of the indexes (an index not opened here
    /// is synced through its file: recovery or an earlier process may have left its pages
    /// unsynced, and Kafka's flush opens it), fdatasync of the `.txnindex` if a write or an
    /// earlier process may have left it unsynced.
    pub fn flush(&self) -> Result<()> {
        // Cleared before the syncs: a change `on_become_inactive` makes meanwhile sets it again.
        self.unsynced_since_inactive.store(false, Ordering::Release);
        let result = self.flush_data().and_then(|()| {
            let w = self.writer.lock();
            w.offset_index.flush()?;
            w.time_index.flush()?;
            drop(w);
            self.txn_index.lock().flush()
        });
        if result.is_err() {
            self.unsynced_since_inactive.store(true, Ordering::Release);
        }
        result
    }

    /// [`LogSegment::flush`], if the changes [`LogSegment::on_become_inactive`] made (the final
    /// time index entry, the trims) may not have been synced by a flush since; otherwise nothing.
    /// For a log whose recovery point already covers this segment: those changes came after the
    /// flush that synced its records (while it was active, its indexes need not be synced).
    pub fn flush_if_unsynced_since_inactive(&self) -> Result<()> {
        if self.unsynced_since_inactive.load(Ordering::Acquire) {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Before the clean close of the active segment, whose flushes sync its data only
    /// (recovery rescans it after a crash) but whose indexes the next open trusts: the indexes
    /// not opened here are synced through their files, and the `.txnindex` if it was there at
    /// open (an earlier process or this one's recovery may have left their bytes unsynced; the
    /// opened indexes are synced by [`close`](Self::close)).
    pub fn flush_unopened_indexes(&self) -> Result<()> {
        let w = self.writer.lock();
        if !w.offset_index.is_loaded() {
            w.offset_index.flush()?;
        }
        if !w.time_index.is_loaded() {
            w.time_index.flush()?;
        }
        drop(w);
        self.txn_index.lock().flush()
    }

    /// Makes the `.log`'s bytes durable (fdatasync) without touching the indexes and without
    /// taking the writer's lock, so appends go on during the sync. Enough for the segment that
    /// holds the recovery point: recovery rebuilds its indexes after a crash anyway.
    /// A `.log` the descriptor cache closed was synced first: then there is nothing to sync.
    pub fn flush_data(&self) -> Result<()> {
        self.log.sync(&|| self.reopen(), &self.path())
    }

    /// Kafka's `close`: the final time index entry, then close (trim and unmap) the indexes that
    /// are open, close the `.txnindex` (synced first if an append or cut since the last flush may
    /// be unsynced: Kafka's shutdown flushes before it closes), then fsync and trim the `.log`.
    /// Errors propagate (KAFKA-19221), so a failed trim makes the shutdown unclean.
    ///
    /// Refused, changing nothing, when this thread holds a loan of the `.log`'s bytes (from
    /// inside a closure of [`with_region`](Self::with_region) on this segment: the unmap would
    /// wait for it): [`Error::LoanHeld`].
    pub fn close(&self) -> Result<()> {
        let mut w = self.writer.lock();
        self.check_not_lent("close")?;
        if w.max_timestamp_and_offset != UNKNOWN && w.time_index.is_loaded() {
            let last = w.max_timestamp_and_offset;
            w.time_index
                .get_mut()?
                .maybe_append(last.timestamp, last.offset, true)?;
        }
        if w.offset_index.is_loaded() {
            w.offset_index.get_mut()?.close()?;
        } else {
            create_empty_index(&self.fs, w.offset_index.path())?;
        }
        if w.time_index.is_loaded() {
            w.time_index.get_mut()?.close()?;
        } else {
            create_empty_index(&self.fs, w.time_index.path())?;
        }
        {
            let mut txn = self.txn_index.lock();
            if txn.is_unsynced() {
                txn.flush()?;
            }
            txn.close();
        }
        self.close_mapping("close")?;
        self.log.sync(&|| self.reopen(), &self.path())?;
        self.trim_log(&self.path())?;
        // Closed as Kafka's `close` closes its channel; a later use opens it again.
        self.log.close();
        Ok(())
    }

    /// Kafka's `deleteIfExists`: deletes the `.log`, both indexes and the `.txnindex`; missing
    /// files are fine.
    /// Indexes that were never opened are deleted without being opened.
    /// Refused, changing nothing, when this thread holds a loan of the `.log`'s bytes (as
    /// [`close`](Self::close) is).
    pub fn delete(&self) -> Result<()> {
        let mut w = self.writer.lock();
        self.close_mapping("delete")?;
        // By path, without reopening; a later use fails naming the file.
        self.log.close();
        match self.fs.remove_file(&self.path()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&*self.path(), "delete", e)),
        }
        w.offset_index.delete()?;
        w.time_index.delete()?;
        self.txn_index.lock().delete_if_exists()?;
        Ok(())
    }

    /// Kafka's `changeFileSuffixes`: renames the `.log`, both indexes and the `.txnindex` (if it
    /// exists) from `old` to `new` suffix (`""`, `.deleted`, `.cleaned`, `.swap`), without
    /// opening lazy indexes.
    pub fn change_file_suffixes(&self, old: &str, new: &str) -> Result<()> {
        let mut w = self.writer.lock();
        {
            // Under the path lock, so that a reopen of the `.log` finds it under one name or the
            // other, never between them.
            let mut path = self.log_path.lock();
            let to = replace_suffix(&path, old, new);
            self.fs
                .rename(&path, &to)
                .map_err(|e| Error::io(&**path, "rename", e))?;
            *path = Arc::new(to);
        }
        let to = replace_suffix(w.offset_index.path(), old, new);
        w.offset_index.rename(&to)?;
        let to = replace_suffix(w.time_index.path(), old, new);
        w.time_index.rename(&to)?;
        let mut txn = self.txn_index.lock();
        let to = replace_suffix(txn.path(), old, new);
        txn.rename_to(&to)?;
        Ok(())
    }

    /// Resizes both indexes (Kafka's `resizeIndexes`, used on the active segment after loading).
    pub fn resize_indexes(&self, size: u32) -> Result<()> {
        let mut w = self.writer.lock();
        w.offset_index.get_mut()?.resize(size)?;
        w.time_index.get_mut()?.resize(size)?;
        Ok(())
    }

    /// Resizes only the time index: Kafka's loader creates a missing `.timeindex` empty this way
    /// (`sanityCheck(timeIndexFileNewlyCreated)`), so that it is not preallocated full of zeros.
    pub fn resize_time_index(&self, size: u32) -> Result<()> {
        self.writer.lock().time_index.get_mut()?.resize(size)?;
        Ok(())
    }

    /// Kafka's `hasOverflow`: the next offset cannot be stored relative to the base.
    pub fn has_overflow(&self) -> Result<bool> {
        let next = self.read_next_offset()?;
        Ok(next > self.base_offset && !self.can_convert_to_relative_offset(next - 1))
    }
}

/// Leaves an empty (trimmed, zero-entry) index file where none exists, without mapping it: after a
/// clean close every segment has both index files, as Kafka's does (its flush opens them), so a
/// later load finds nothing to rebuild.
fn create_empty_index<F: FileSystem>(fs: &F, path: &Path) -> Result<()> {
    match fs.open(path, OpenMode::CreateNew) {
        Ok(file) => file.sync_data().map_err(|e| Error::io(path, "fsync", e)),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(Error::io(path, "create", e)),
    }
}

fn replace_suffix(path: &Path, old: &str, new: &str) -> PathBuf {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = name.strip_suffix(old).unwrap_or(name);
    path.with_file_name(format!("{stem}{new}"))
}
