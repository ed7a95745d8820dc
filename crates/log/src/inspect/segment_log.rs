//! A segment's `.log` opened read-only, and the walk over its batches.

use std::io;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use seglog_fs::{File as _, FileSystem, OpenMode};
use seglog_record_format::FramedBatch;
use seglog_segment::scan::{self, Scan};

use crate::error::Result;

/// A `.log` (or any file of concatenated batches, such as a KRaft snapshot) opened read-only.
#[derive(Debug)]
pub struct SegmentLog<F: FileSystem> {
    file: F::File,
    path: PathBuf,
}

impl<F: FileSystem> SegmentLog<F> {
    /// Opens `path` read-only ([`OpenMode::ReadOnly`]); the error is the bare I/O error, for the
    /// caller to name.
    pub fn open(fs: &F, path: &Path) -> io::Result<Self> {
        Ok(Self {
            file: fs.open(path, OpenMode::ReadOnly)?,
            path: path.to_path_buf(),
        })
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's current length in bytes.
    pub fn len(&self) -> io::Result<u64> {
        self.file.len()
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> io::Result<bool> {
        Ok(self.len()? == 0)
    }

    /// Reads exactly `buf.len()` bytes at `position`.
    pub fn read_exact_at(&self, buf: &mut [u8], position: u64) -> io::Result<()> {
        self.file.read_exact_at(buf, position)
    }

    /// Walks the complete batches in `[start, end)` with Kafka's stop rules
    /// (`FileLogInputStream.nextBatch`), reading chunks of at least `chunk` bytes. `f` gets each
    /// batch's file position and bytes and may stop the walk with a value.
    pub fn batches<T>(
        &self,
        start: u64,
        end: u64,
        chunk: usize,
        mut f: impl FnMut(u64, FramedBatch<'_>) -> ControlFlow<T>,
    ) -> Result<Scan<T>> {
        Ok(scan::scan_batches(
            &self.file,
            &self.path,
            start,
            end,
            chunk,
            |position, framed| Ok(f(position, framed)),
        )?)
    }
}
