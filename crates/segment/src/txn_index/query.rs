//! Reading a `.txnindex` as Kafka 4.4's `TransactionIndex` iterator does: entry after entry
//! while at least a whole entry lies before the channel position (a partial trailing entry is
//! never read), each entry's version checked; and the queries built on it.

use seglog_fs::FileSystem;

use std::io;

use super::TransactionIndex;
use super::entry::{AbortedTxn, CURRENT_VERSION, ENTRY_SIZE};
use super::file::TxnReader;
use crate::error::{Error, Result};

/// Kafka's `TxnIndexSearchResult`: the aborted transactions of a segment that overlap a fetch
/// range, and whether the search is complete (an entry's last stable offset reached the range's
/// upper bound, so no later segment can hold one that overlaps it).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TxnIndexSearchResult {
    /// The overlapping transactions, in index order.
    pub aborted_transactions: Vec<AbortedTxn>,
    /// Whether later segments need not be searched.
    pub is_complete: bool,
}

impl TxnIndexSearchResult {
    /// Kafka's `collectAbortedTxns` over `txns` in index order (a `.txnindex`'s entries, or the
    /// ones recovery would write from a segment's markers): those with
    /// `last_offset >= fetch_offset` and `first_offset < upper_bound_offset`, up to and including
    /// the first whose last stable offset is at least `upper_bound_offset`, which makes the
    /// result complete.
    pub fn collect(
        txns: impl IntoIterator<Item = AbortedTxn>,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Self {
        let mut result = Self::default();
        for txn in txns {
            if txn.last_offset() >= fetch_offset && txn.first_offset() < upper_bound_offset {
                result.aborted_transactions.push(txn);
            }
            if txn.last_stable_offset() >= upper_bound_offset {
                result.is_complete = true;
                return result;
            }
        }
        result
    }
}

/// The entries of an index with their byte positions, first to last.
struct Entries<'a, F: FileSystem> {
    index: &'a TransactionIndex<F>,
    /// Opened on the first entry read, held to the end of the walk.
    reader: Option<TxnReader<'a, F::File>>,
    position: u64,
    end: u64,
}

impl<F: FileSystem> Iterator for Entries<'_, F> {
    type Item = Result<(AbortedTxn, u64)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.end.saturating_sub(self.position) < ENTRY_SIZE as u64 {
            return None;
        }
        let position = self.position;
        let mut buf = [0_u8; ENTRY_SIZE];
        let read = self.read_exact(&mut buf, position).and_then(|()| {
            let txn = AbortedTxn::from_bytes(buf);
            if txn.version() == CURRENT_VERSION {
                Ok(txn)
            } else {
                Err(Error::TxnIndexVersion {
                    path: self.index.absolute_path(),
                    position,
                    version: txn.version(),
                })
            }
        });
        match read {
            Ok(txn) => {
                self.position += ENTRY_SIZE as u64;
                Some(Ok((txn, position)))
            }
            Err(e) => {
                // Kafka's iterator throws; nothing after a bad entry is read.
                self.end = position;
                Some(Err(e))
            }
        }
    }
}

impl<F: FileSystem> Entries<'_, F> {
    fn read_exact(&mut self, buf: &mut [u8], position: u64) -> Result<()> {
        let path = self.index.file.path();
        if self.reader.is_none() {
            let Some(reader) = self.index.file.reader() else {
                return Err(Error::io(
                    path,
                    "read",
                    io::Error::new(io::ErrorKind::NotFound, "the transaction index is not open"),
                ));
            };
            self.reader = Some(reader?);
        }
        match &self.reader {
            Some(reader) => reader.read_exact(path, buf, position),
            None => Ok(()),
        }
    }
}

impl<F: FileSystem> TransactionIndex<F> {
    fn entries(&self) -> Entries<'_, F> {
        Entries {
            index: self,
            reader: None,
            position: 0,
            end: self.file.end().unwrap_or(0),
        }
    }

    /// Every entry, in file order (Kafka's `allAbortedTxns`).
    pub fn all_aborted_txns(&self) -> Result<Vec<AbortedTxn>> {
        self.entries().map(|e| e.map(|(txn, _)| txn)).collect()
    }

    /// Kafka's `collectAbortedTxns`: the entries with `last_offset >= fetch_offset` and
    /// `first_offset < upper_bound_offset` (the fetch range, upper bound exclusive), up to and
    /// including the first whose last stable offset is at least `upper_bound_offset`, which
    /// makes the result complete.
    pub fn collect_aborted_txns(
        &self,
        fetch_offset: i64,
        upper_bound_offset: i64,
    ) -> Result<TxnIndexSearchResult> {
        let mut failed = None;
        let txns = self.entries().map_while(|entry| match entry {
            Ok((txn, _)) => Some(txn),
            Err(e) => {
                failed = Some(e);
                None
            }
        });
        let result = TxnIndexSearchResult::collect(txns, fetch_offset, upper_bound_offset);
        failed.map_or(Ok(result), Err)
    }

    /// Kafka's `sanityCheck`: fails on the first entry whose last offset is below the segment's
    /// base offset (and, as every read does, on an entry of an unknown version).
    pub fn sanity_check(&self) -> Result<()> {
        for entry in self.entries() {
            let (txn, position) = entry?;
            if txn.last_offset() < self.start_offset {
                return Err(Error::TxnIndexBelowStart {
                    path: self.absolute_path(),
                    position,
                    producer_id: txn.producer_id(),
                    first_offset: txn.first_offset(),
                    last_offset: txn.last_offset(),
                    last_stable_offset: txn.last_stable_offset(),
                    start_offset: self.start_offset,
                });
            }
        }
        Ok(())
    }

    /// Kafka's `isEmpty`: no whole entry to read (no file, no open handle, or under 34 bytes).
    pub fn is_empty(&self) -> bool {
        self.entries().next().is_none()
    }

    /// The bytes after the last whole entry, which Kafka never reads: `(position, length)`, or
    /// `None` if the file ends on an entry boundary. For checkers; the queries ignore them.
    pub fn partial_tail(&self) -> Option<(u64, u64)> {
        let end = self.file.end()?;
        let len = end % ENTRY_SIZE as u64;
        (len > 0).then(|| (end - len, len))
    }

    /// Kafka's truncation walk: the position of the first entry whose last offset is at least
    /// `offset`, and the last offset of the entry before it.
    pub(super) fn cut_point(&self, offset: i64) -> Result<Option<(u64, Option<i64>)>> {
        let mut previous = None;
        for entry in self.entries() {
            let (txn, position) = entry?;
            if txn.last_offset() >= offset {
                return Ok(Some((position, previous)));
            }
            previous = Some(txn.last_offset());
        }
        Ok(None)
    }
}
