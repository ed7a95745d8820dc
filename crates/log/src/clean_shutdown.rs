//! The clean-shutdown marker `.kafka_cleanshutdown` (`CleanShutdownFileHandler`).
//!
//! Its content is Jackson's JSON of `{version, brokerEpoch}`: `{"version":0,"brokerEpoch":N}`, written
//! and fsynced on clean shutdown. On startup its presence means "the last shutdown was clean"; the file
//! is deleted at once, before any log is loaded, so a crash during loading counts as unclean next time
//! (KAFKA-10471).

use std::io;
use std::path::{Path, PathBuf};

use seglog_fs::{File, FileSystem, OpenMode};

use crate::error::{Error, Result};

/// The marker's file name in a log directory.
pub const CLEAN_SHUTDOWN_FILE: &str = ".kafka_cleanshutdown";

/// The marker of one log directory.
#[derive(Debug, Clone)]
pub struct CleanShutdownMarker<F: FileSystem> {
    fs: F,
    path: PathBuf,
}

impl<F: FileSystem> CleanShutdownMarker<F> {
    /// The marker inside `log_dir`.
    pub fn new(fs: F, log_dir: &Path) -> Self {
        Self {
            fs,
            path: log_dir.join(CLEAN_SHUTDOWN_FILE),
        }
    }

    /// Whether the marker is there.
    pub fn exists(&self) -> bool {
        self.fs.exists(&self.path)
    }

    /// Writes the marker with `broker_epoch` (Kafka writes -1 when it has none) and makes it durable.
    pub fn write(&self, broker_epoch: i64) -> Result<()> {
        let io_err = |e| Error::io(&self.path, e);
        let text = format!("{{\"version\":0,\"brokerEpoch\":{broker_epoch}}}");
        let file = self
            .fs
            .open(&self.path, OpenMode::CreateOrOpen)
            .map_err(io_err)?;
        file.set_len(0).map_err(io_err)?;
        file.write_all_at(text.as_bytes(), 0).map_err(io_err)?;
        file.sync_data().map_err(io_err)?;
        if let Some(dir) = self.path.parent() {
            self.fs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        }
        Ok(())
    }

    /// Reads the broker epoch the marker holds, if the marker exists and parses.
    pub fn broker_epoch(&self) -> Result<Option<i64>> {
        let file = match self.fs.open(&self.path, OpenMode::ReadOnly) {
            Ok(f) => f,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(Error::io(&self.path, e)),
        };
        let len = usize::try_from(file.len().map_err(|e| Error::io(&self.path, e))?).unwrap_or(0);
        let mut buf = vec![0; len.min(4096)];
        file.read_exact_at(&mut buf, 0)
            .map_err(|e| Error::io(&self.path, e))?;
        let text = String::from_utf8_lossy(&buf);
        let epoch = text
            .split("\"brokerEpoch\"")
            .nth(1)
            .and_then(|rest| rest.trim_start().strip_prefix(':'))
            .map(str::trim_start)
            .and_then(|rest| {
                let end = rest
                    .find(|c: char| c != '-' && !c.is_ascii_digit())
                    .unwrap_or(rest.len());
                rest.get(..end)?.parse().ok()
            });
        Ok(epoch)
    }

    /// On startup: reports whether the marker was there, and deletes it durably.
    pub fn take(&self) -> Result<bool> {
        if !self.exists() {
            return Ok(false);
        }
        self.fs
            .remove_file(&self.path)
            .map_err(|e| Error::io(&self.path, e))?;
        if let Some(dir) = self.path.parent() {
            self.fs.sync_dir(dir).map_err(|e| Error::io(dir, e))?;
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use seglog_fs::sim::{SimFs, Tear};

    use super::*;

    #[test]
    fn marker_round_trip_and_take_deletes_durably() {
        let fs = SimFs::new();
        let dir = Path::new("/logs");
        fs.create_dir_all(dir).unwrap();
        let marker = CleanShutdownMarker::new(fs.clone(), dir);
        assert!(!marker.take().unwrap());
        marker.write(42).unwrap();
        assert_eq!(
            fs.live_bytes(&dir.join(CLEAN_SHUTDOWN_FILE)).unwrap(),
            br#"{"version":0,"brokerEpoch":42}"#
        );
        assert_eq!(marker.broker_epoch().unwrap(), Some(42));
        let crashed = fs.crash(Tear::DropAll);
        assert!(
            CleanShutdownMarker::new(crashed, dir).exists(),
            "the marker must be durable"
        );
        assert!(marker.take().unwrap());
        assert!(!marker.exists());
        let crashed = fs.crash(Tear::DropAll);
        assert!(
            !CleanShutdownMarker::new(crashed, dir).exists(),
            "its removal must be durable"
        );
    }

    #[test]
    fn reads_a_negative_epoch() {
        let fs = SimFs::new();
        let dir = Path::new("/logs");
        fs.create_dir_all(dir).unwrap();
        let marker = CleanShutdownMarker::new(fs, dir);
        marker.write(-1).unwrap();
        assert_eq!(marker.broker_epoch().unwrap(), Some(-1));
    }
}
