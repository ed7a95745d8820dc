//! A segment opened read-only for reading (Kafka's `LogSegment` read side, without its writer):
//! the `.log` through the I/O seam's read-only open, its `.index` and `.timeindex` through
//! mmap-index's read-only open on first use, no lock taken and nothing written, so it can read a
//! segment another process is writing, or files it may not write.
//!
//! An index is used only when it passes Kafka's sanity check and the caller has not said the
//! segment would be recovered at start-up (Kafka rebuilds those indexes before it serves them).
//! Each entry a lookup uses is confirmed by the `.log` first: an offset-index position only when
//! the `.log` has, at that byte, a batch ending at the entry's offset (an index opened without a
//! lock may belong to another version of the `.log`), a time-index entry only when the batch
//! holding its offset has its timestamp as max timestamp. Otherwise the lookup scans the segment
//! from its first byte, so a damaged index costs time, never a wrong answer; and no entry is
//! trusted without being read, so the whole index need not be verified at each open.

use std::cell::OnceCell;
use std::path::{Path, PathBuf};

use seglog_fs::{File as _, FileSystem, OpenMode};
use seglog_mmap_index::{OffsetIndex, OffsetPosition, TimeIndex, TimestampOffset};
use seglog_record_format::{LAST_OFFSET_DELTA_OFFSET, MAGIC_OFFSET};

use crate::error::{Error, Result};
use crate::naming;
use crate::scan::read_up_to_io;
use crate::time_search::{TimestampAndOffset, first_in_batch, search_for_timestamp, with_buffers};

/// How many bytes of batch headers a scan reads at a time.
const HEADER_WINDOW: usize = 64 << 10;

/// One segment, read-only.
#[derive(Debug)]
pub struct SegmentReader<F: FileSystem> {
    fs: F,
    log: F::File,
    log_path: PathBuf,
    offset_index_path: PathBuf,
    time_index_path: PathBuf,
    base_offset: i64,
    size: u64,
    use_indexes: bool,
    offset_index: OnceCell<Option<OffsetIndex>>,
    time_index: OnceCell<Option<TimeIndex>>,
    max_timestamp: OnceCell<Option<TimestampAndOffset>>,
}

impl<F: FileSystem> SegmentReader<F> {
    /// Opens the segment at `base_offset` in `dir` read-only: its `.log` now (its length then is
    /// the end of every read), its indexes on first use. `use_indexes` false scans instead of
    /// using the indexes, for a segment Kafka's loader would recover (its indexes rebuilt).
    ///
    /// # Errors
    ///
    /// The `.log` cannot be opened or measured.
    pub fn open(fs: F, dir: &Path, base_offset: i64, use_indexes: bool) -> Result<Self> {
        let log_path = naming::log_file(dir, base_offset, "");
        let log = fs
            .open(&log_path, OpenMode::ReadOnly)
            .map_err(|e| Error::io(&log_path, "open", e))?;
        let size = log.len().map_err(|e| Error::io(&log_path, "stat", e))?;
        Ok(Self {
            offset_index_path: naming::offset_index_file(dir, base_offset, ""),
            time_index_path: naming::time_index_file(dir, base_offset, ""),
            fs,
            log,
            log_path,
            base_offset,
            size,
            use_indexes,
            offset_index: OnceCell::new(),
            time_index: OnceCell::new(),
            max_timestamp: OnceCell::new(),
        })
    }

    /// The segment's base offset.
    pub fn base_offset(&self) -> i64 {
        self.base_offset
    }

    /// The `.log`'s path.
    pub fn log_path(&self) -> &Path {
        &self.log_path
    }

    /// The `.log`'s length when it was opened.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// The `.log`'s modification time.
    ///
    /// # Errors
    ///
    /// The file cannot be stat'ed.
    pub fn last_modified_ms(&self) -> Result<i64> {
        self.fs
            .modified_ms(&self.log_path)
            .map_err(|e| Error::io(&self.log_path, "stat", e))
    }

    /// The offset index, if it is there and passes Kafka's sanity check.
    fn offset_index(&self) -> Option<&OffsetIndex> {
        self.offset_index
            .get_or_init(|| {
                let index = OffsetIndex::options(&self.offset_index_path, self.base_offset)
                    .read_only()
                    .backing(self.fs.index_backing())
                    .open()
                    .ok()?;
                index.sanity_check().is_ok().then_some(index)
            })
            .as_ref()
            .filter(|_| self.use_indexes)
    }

    /// The time index, if it is there and passes Kafka's sanity check.
    fn time_index(&self) -> Option<&TimeIndex> {
        self.time_index
            .get_or_init(|| {
                let index = TimeIndex::options(&self.time_index_path, self.base_offset)
                    .read_only()
                    .backing(self.fs.index_backing())
                    .open()
                    .ok()?;
                index.sanity_check().is_ok().then_some(index)
            })
            .as_ref()
            .filter(|_| self.use_indexes)
    }

    /// Where to start reading `offset`: the offset index's floor entry when the index is sound
    /// and the `.log` agrees with it, else the start of the file.
    pub fn start_position(&self, offset: i64) -> u64 {
        self.offset_index()
            .and_then(|i| i.lookup(offset).ok())
            .filter(|entry| entry.position == 0 || self.entry_agrees(entry))
            .map_or(0, |p| u64::from(p.position))
    }

    /// Whether the batch at `entry`'s position ends at `entry`'s offset, as an index entry says.
    fn entry_agrees(&self, entry: &OffsetPosition) -> bool {
        let mut header = [0_u8; LAST_OFFSET_DELTA_OFFSET + 4];
        let position = u64::from(entry.position);
        if position + header.len() as u64 > self.size
            || self.log.read_exact_at(&mut header, position).is_err()
        {
            return false;
        }
        let offset_field = header.first_chunk::<8>().map(|b| i64::from_be_bytes(*b));
        let delta = header
            .get(LAST_OFFSET_DELTA_OFFSET..)
            .and_then(<[u8]>::first_chunk::<4>)
            .map(|b| i32::from_be_bytes(*b));
        let magic = header.get(MAGIC_OFFSET).map(|&m| i8::from_be_bytes([m]));
        // A legacy entry's offset field is its (last) offset; a v2 batch's is its base offset.
        let last_offset = match (offset_field, magic, delta) {
            (Some(base), Some(2..), Some(delta)) => base.checked_add(i64::from(delta)),
            (Some(offset), Some(..2), _) => Some(offset),
            _ => None,
        };
        last_offset == Some(entry.offset)
    }

    /// Whether the `.log` confirms the time index entry `entry`: the batch holding its offset
    /// (found from the offset index's floor position) has its timestamp as max timestamp, as
    /// the batch where the segment's max timestamp first reached it has. An entry of a stale or
    /// damaged index that still passes the index's own checks is refused here, at the cost of one
    /// more header walk of at most an index interval.
    fn confirms(&self, entry: TimestampOffset) -> Result<bool> {
        let scan = crate::scan::scan_headers(
            &self.log,
            &self.log_path,
            self.start_position(entry.offset),
            self.size,
            HEADER_WINDOW,
            |h| {
                if h.last_offset < entry.offset {
                    return Ok(std::ops::ControlFlow::Continue(()));
                }
                let holds = h.magic < 2 || h.offset_field <= entry.offset;
                Ok(std::ops::ControlFlow::Break(
                    holds && h.max_timestamp == entry.timestamp,
                ))
            },
        )?;
        Ok(matches!(scan, crate::scan::Scan::Stopped(true)))
    }

    /// Kafka's `LogSegment.findOffsetByTimestamp`: the first record whose timestamp is at least
    /// `timestamp` and whose offset is at least `starting_offset`. The time index's floor entry
    /// for `timestamp` gives an offset, the offset index its batch's position, and the `.log` is
    /// searched from there; without sound indexes, from the start.
    ///
    /// # Errors
    ///
    /// The `.log` cannot be read, or a batch on the way is corrupt (its byte position named).
    pub fn find_offset_by_timestamp(
        &self,
        timestamp: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        let from = match self.time_index().and_then(|i| i.lookup(timestamp).ok()) {
            Some(entry) if entry.timestamp < 0 || self.confirms(entry)? => {
                self.start_position(entry.offset.max(starting_offset))
            }
            _ => 0,
        };
        self.search_from(from, timestamp, starting_offset)
    }

    /// The largest batch max timestamp of the segment with the last offset of its batch (Kafka's
    /// `maxTimestampSoFar` and `shallowOffsetOfMaxTimestampSoFar`), `None` when no batch has a
    /// timestamp: the time index's last entry, then the batches after its position.
    ///
    /// # Errors
    ///
    /// The `.log` cannot be read, or a batch on the way is corrupt.
    pub fn max_timestamp(&self) -> Result<Option<TimestampAndOffset>> {
        if let Some(known) = self.max_timestamp.get() {
            return Ok(*known);
        }
        let last = self
            .time_index()
            .map(TimeIndex::last_entry)
            .filter(|e| e.timestamp >= 0);
        let mut best = match last {
            Some(e) if self.confirms(e)? => Some(TimestampAndOffset {
                timestamp: e.timestamp,
                offset: e.offset,
                leader_epoch: None,
            }),
            _ => None,
        };
        let from = best.map_or(0, |b| self.start_position(b.offset));
        let scan = crate::scan::scan_headers(
            &self.log,
            &self.log_path,
            from,
            self.size,
            HEADER_WINDOW,
            |h| {
                if h.max_timestamp >= 0 && best.is_none_or(|b| h.max_timestamp > b.timestamp) {
                    best = Some(TimestampAndOffset {
                        timestamp: h.max_timestamp,
                        offset: h.last_offset,
                        leader_epoch: None,
                    });
                }
                Ok(std::ops::ControlFlow::<()>::Continue(()))
            },
        )?;
        if let crate::scan::Scan::Ended(crate::scan::ScanEnd::Corrupt { position, error }) = scan {
            return Err(Error::Corrupt {
                path: self.log_path.clone(),
                position,
                source: error,
            });
        }
        Ok(*self.max_timestamp.get_or_init(|| best))
    }

    /// The search of the `.log` from byte `from` (see [`find_offset_by_timestamp`]).
    ///
    /// [`find_offset_by_timestamp`]: Self::find_offset_by_timestamp
    fn search_from(
        &self,
        from: u64,
        target: i64,
        starting_offset: i64,
    ) -> Result<Option<TimestampAndOffset>> {
        with_buffers(|buf, scratch| {
            search_for_timestamp(
                &self.log,
                &self.log_path,
                (from, self.size),
                HEADER_WINDOW,
                (target, starting_offset),
                |h| {
                    let len = usize::try_from(h.size).unwrap_or(usize::MAX);
                    buf.clear();
                    buf.resize(len, 0);
                    let read = read_up_to_io(&self.log, buf, h.position)
                        .map_err(|e| Error::io(&self.log_path, "read", e))?;
                    let bytes = buf.get(..read).unwrap_or_default();
                    first_in_batch(bytes, scratch, target, starting_offset).map_err(|source| {
                        Error::Corrupt {
                            path: self.log_path.clone(),
                            position: h.position,
                            source,
                        }
                    })
                },
            )
        })
    }
}
