//! [`SimFile`]: an open file of a [`SimFs`], with the space limit's short writes.

use std::io;

use super::SimFs;
use super::capture::SimEvent;
use super::state::{ENOSPC, LastWrite, now_ms, write_into};
use crate::File;

/// An open [`SimFs`] file. It stays usable after its name is removed, as on Unix.
#[derive(Debug)]
pub struct SimFile {
    pub(super) fs: SimFs,
    pub(super) node: usize,
    pub(super) writable: bool,
}

impl Drop for SimFile {
    fn drop(&mut self) {
        let mut state = self.fs.state.lock();
        state.open_files = state.open_files.saturating_sub(1);
    }
}

impl SimFile {
    fn check_writable(&self) -> io::Result<()> {
        if self.writable {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                "file opened read-only",
            ))
        }
    }
}

impl File for SimFile {
    fn read_at(&self, buf: &mut [u8], position: u64) -> io::Result<usize> {
        let mut state = self.fs.state.lock();
        let node = state.node_mut(self.node)?;
        let Ok(start) = usize::try_from(position) else {
            return Ok(0);
        };
        let available = node.live.get(start..).unwrap_or_default();
        let n = available.len().min(buf.len());
        if let (Some(dst), Some(src)) = (buf.get_mut(..n), available.get(..n)) {
            dst.copy_from_slice(src);
        }
        state.stats.reads += 1;
        state.stats.bytes_read += n as u64;
        Ok(n)
    }

    fn write_all_at(&self, buf: &[u8], position: u64) -> io::Result<()> {
        self.check_writable()?;
        let mut state = self.fs.state.lock();
        state.fault_for_node(self.node)?;
        let used = state.live_bytes();
        let current_len = state.node_mut(self.node)?.live.len() as u64;
        let end = position.saturating_add(buf.len() as u64);
        let growth = end.saturating_sub(current_len);
        let mut take = buf.len();
        let mut out_of_space = false;
        if let Some(limit) = state.space_limit
            && used.saturating_add(growth) > limit
        {
            let room = limit.saturating_sub(used);
            let fits_end = current_len.saturating_add(room);
            take = usize::try_from(fits_end.saturating_sub(position))
                .unwrap_or(0)
                .min(buf.len());
            out_of_space = true;
        }
        let bytes = buf.get(..take).unwrap_or_default();
        let node = state.node_mut(self.node)?;
        write_into(&mut node.live, position, bytes);
        node.modified_ms = now_ms();
        state.stats.writes += 1;
        state.stats.bytes_written += bytes.len() as u64;
        if !bytes.is_empty() {
            state.last_write = Some(LastWrite {
                node: self.node,
                position,
                bytes: bytes.to_vec(),
            });
            state.event(SimEvent::Write(bytes.len()));
        }
        if out_of_space {
            return Err(io::Error::from_raw_os_error(ENOSPC));
        }
        Ok(())
    }

    fn len(&self) -> io::Result<u64> {
        let mut state = self.fs.state.lock();
        Ok(state.node_mut(self.node)?.live.len() as u64)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.check_writable()?;
        let mut state = self.fs.state.lock();
        state.fault_for_node(self.node)?;
        let used = state.live_bytes();
        let current = state.node_mut(self.node)?.live.len() as u64;
        if let Some(limit) = state.space_limit
            && len > current
            && used + (len - current) > limit
        {
            return Err(io::Error::from_raw_os_error(ENOSPC));
        }
        let new_len = usize::try_from(len).map_err(|_| io::Error::other("length too large"))?;
        state.event(SimEvent::SetLen);
        let node = state.node_mut(self.node)?;
        node.live.resize(new_len, 0);
        node.modified_ms = now_ms();
        Ok(())
    }

    /// The space limit counts every byte of a file's length (a `SimFs` file has no holes), so
    /// the bytes have their space already: nothing to do but refuse a read-only handle.
    fn allocate(&self, _offset: u64, _len: u64) -> io::Result<()> {
        self.check_writable()?;
        self.fs.state.lock().fault_for_node(self.node)
    }

    fn sync_data(&self) -> io::Result<()> {
        let (latency, hook, began) = {
            let mut state = self.fs.state.lock();
            let latency = state.sync_latency;
            let hook = state.sync_hook.0.clone();
            let began = if latency.is_zero() && hook.is_none() {
                None
            } else {
                Some(state.node_mut(self.node)?.live.clone())
            };
            (latency, hook, began)
        };
        if let Some(hook) = hook {
            hook();
        }
        if !latency.is_zero() {
            std::thread::sleep(latency);
        }
        self.fs.sync_node(self.node, began)
    }
}
