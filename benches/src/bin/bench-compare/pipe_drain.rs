//! The far end of a zero-copy fetch: a pipe whose reader, on its own thread, reads everything
//! into a 1 MiB buffer and counts the bytes (what a socket's peer does). seglog, the limit and
//! Kafka's harness drain the same way, so the reader's cost is the same for all.

use std::io::Read;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::thread::JoinHandle;

use anyhow::{Context, Result};

pub(crate) struct Drain {
    write: OwnedFd,
    reader: JoinHandle<std::io::Result<u64>>,
}

impl Drain {
    pub(crate) fn new() -> Result<Self> {
        let (read, write) = rustix::pipe::pipe().context("creating a pipe")?;
        let reader = std::thread::spawn(move || {
            let mut file = std::fs::File::from(read);
            let mut buf = vec![0_u8; 1 << 20];
            let mut total = 0_u64;
            loop {
                match file.read(&mut buf)? {
                    0 => return Ok(total),
                    n => total += n as u64,
                }
            }
        });
        Ok(Self { write, reader })
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.write.as_fd()
    }

    /// Closes the write end and waits until the reader has read everything; returns the bytes read.
    pub(crate) fn finish(self) -> Result<u64> {
        drop(self.write);
        let read = self
            .reader
            .join()
            .map_err(|_| anyhow::anyhow!("the pipe's reader panicked"))?;
        read.context("reading the pipe")
    }
}
