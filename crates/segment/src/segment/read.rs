//! Reads of the `.log`: offset translation (Kafka's `translateOffset`), `read` and its regions,
//! the next offset, and the batch walks.

use std::ops::ControlFlow;
use std::os::fd::BorrowedFd;
use std::path::PathBuf;

use super::{HEADER_WINDOW, LogSegment};
use crate::error::{Error, Result};
use crate::scan::{BatchHeader, Scan, ScanEnd, read_header_naming, read_up_to_io, scan_headers};
use seglog_fs::{File, FileSystem, OpenMode};

/// Kafka's `LogOffsetPosition`: where a batch is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetPosition {
    /// The batch's base offset (KAFKA-17803; for legacy entries, the entry's offset).
    pub offset: i64,
    /// The batch's byte position in the `.log`.
    pub position: u64,
    /// The batch's size in bytes.
    pub size: u64,
}

/// Kafka's `LogOffsetMetadata` for the start of a read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogOffsetMetadata {
    /// The base offset of the batch the read starts with.
    pub message_offset: i64,
    /// The segment's base offset.
    pub segment_base_offset: i64,
    /// The read's start position in the segment.
    pub relative_position: u64,
}

/// A byte range of the `.log`, to be read into memory or copied to a file or socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileRegion {
    /// The first byte.
    pub position: u64,
    /// How many bytes.
    pub length: u64,
}

/// The result of [`LogSegment::read`] (Kafka's `FetchDataInfo`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchData {
    /// Where the read starts.
    pub offset_metadata: LogOffsetMetadata,
    /// The bytes to send. It starts at a batch boundary and may end inside a batch.
    pub region: FileRegion,
    /// Whether the first batch did not fit in the size asked for.
    pub first_entry_incomplete: bool,
}

impl<F: FileSystem> LogSegment<F> {
    /// Kafka's `translateOffset`: the first batch at or after the index's floor position (and
    /// `starting_position`) whose last offset is at least `offset`; `None` when there is none.
    pub fn translate_offset(
        &self,
        offset: i64,
        starting_position: u64,
    ) -> Result<Option<LogOffsetPosition>> {
        let reader = self.offset_reader()?;
        let floor = reader.lookup(offset)?;
        if floor.offset < offset && starting_position <= u64::from(floor.position) {
            // The next index entry names the batch ending at the next indexed offset. If that
            // batch starts at or below `offset`, it holds `offset`, and every batch between the
            // two entries ends below its base: it is the answer, found with one header read
            // instead of a walk from the floor entry.
            if let Some(next) = reader.fetch_upper_bound_offset(floor, 1)?
                && let Some(h) = self.header_at(u64::from(next.position))?
                && h.magic > 1
                && h.offset_field <= offset
                && h.last_offset == next.offset
            {
                return Ok(Some(LogOffsetPosition {
                    offset: h.offset_field,
                    position: h.position,
                    size: h.size,
                }));
            }
        }
        self.search_for_offset(offset, u64::from(floor.position).max(starting_position))
    }

    /// The header of the batch at `position`, if a whole batch starts there.
    fn header_at(&self, position: u64) -> Result<Option<BatchHeader>> {
        read_header_naming(&self.source(), &|| self.log_path(), position, self.size())
    }

    fn search_for_offset(&self, offset: i64, from: u64) -> Result<Option<LogOffsetPosition>> {
        let path = self.path();
        let scan = scan_headers(
            &self.source(),
            &path,
            from,
            self.size(),
            HEADER_WINDOW,
            |h| {
                // Comparing the base offset first avoids nothing here (the header is read anyway),
                // but keeps Kafka's order: a batch whose base is past the target contains nothing
                // below it, and it is still the answer (offsets may have gaps).
                if h.last_offset >= offset {
                    let offset = if h.magic > 1 {
                        h.offset_field
                    } else {
                        h.last_offset
                    };
                    return Ok(ControlFlow::Break(LogOffsetPosition {
                        offset,
                        position: h.position,
                        size: h.size,
                    }));
                }
                Ok(ControlFlow::Continue(()))
            },
        )?;
        match scan {
            Scan::Stopped(found) => Ok(Some(found)),
            Scan::Ended(ScanEnd::Clean { .. }) => Ok(None),
            Scan::Ended(ScanEnd::Corrupt { position, error }) => Err(Error::Corrupt {
                path: PathBuf::clone(&path),
                position,
                source: error,
            }),
        }
    }

    /// Kafka's `read(startOffset, maxSize, maxPosition, minOneMessage)`: a region that starts at the
    /// batch holding `start_offset` and is at most `max_size` bytes (at least one whole batch when
    /// `min_one_message`), ending no later than `max_position`. `None` when the offset is past
    /// this segment's data.
    pub fn read(
        &self,
        start_offset: i64,
        max_size: i64,
        max_position: Option<u64>,
        min_one_message: bool,
    ) -> Result<Option<FetchData>> {
        if max_size < 0 {
            return Err(Error::InvalidMaxSize {
                path: self.log_path(),
                max_size,
            });
        }
        let Some(start) = self.translate_offset(start_offset, 0)? else {
            return Ok(None);
        };
        let offset_metadata = LogOffsetMetadata {
            message_offset: start.offset,
            segment_base_offset: self.base_offset,
            relative_position: start.position,
        };
        let max_size = max_size.unsigned_abs();
        let adjusted_max_size = if min_one_message {
            max_size.max(start.size)
        } else {
            max_size
        };
        let empty = FileRegion {
            position: start.position,
            length: 0,
        };
        let Some(max_position) = max_position else {
            return Ok(Some(FetchData {
                offset_metadata,
                region: empty,
                first_entry_incomplete: false,
            }));
        };
        if adjusted_max_size == 0 {
            return Ok(Some(FetchData {
                offset_metadata,
                region: empty,
                first_entry_incomplete: false,
            }));
        }
        let fetch_size = max_position
            .saturating_sub(start.position)
            .min(adjusted_max_size);
        Ok(Some(FetchData {
            offset_metadata,
            region: FileRegion {
                position: start.position,
                length: fetch_size,
            },
            first_entry_incomplete: adjusted_max_size < start.size,
        }))
    }

    /// Kafka's `read(startOffset, maxSize)`: up to the end of the segment, no minimum.
    pub fn read_simple(&self, start_offset: i64, max_size: i64) -> Result<Option<FetchData>> {
        self.read(start_offset, max_size, Some(self.size()), false)
    }

    /// Reads a region's bytes into `out` (replacing its contents); stops early at the end of the
    /// file, so `out` may be shorter than the region after a concurrent truncation. `out` is
    /// cleared on error.
    pub fn read_region(&self, region: FileRegion, out: &mut Vec<u8>) -> Result<()> {
        let len = usize::try_from(region.length).unwrap_or(usize::MAX);
        // Every byte kept is overwritten below: only the growth past `out`'s old length is
        // zeroed, so a buffer reused for reads of similar sizes is not cleared each time.
        out.resize(len, 0);
        match read_up_to_io(&self.source(), out, region.position) {
            Ok(n) => {
                out.truncate(n);
                Ok(())
            }
            Err(e) => {
                out.clear();
                Err(Error::io(&*self.path(), "read", e))
            }
        }
    }

    /// Runs `f` over a region's bytes and returns what it returns: the bytes borrowed straight
    /// from the `.log`'s mapping when it has the whole region (no copy), else read into `buf`
    /// as [`read_region`](Self::read_region) reads them (so they may stop short at the end of
    /// the file after a concurrent truncation; `f` is then called with those).
    ///
    /// While `f` runs on borrowed bytes, a truncation, recovery, close or delete of this segment
    /// by another thread waits for it (the mapping's shrink waits,
    /// [`MappedFile::with_published`]): `f` must be bounded, and must not wait for another
    /// thread doing so (a deadlock). The same operations called from inside `f`, on its own
    /// thread, would wait for `f` too: they are refused instead with [`Error::LoanHeld`],
    /// before changing anything ([`is_lent_by_this_thread`](Self::is_lent_by_this_thread)
    /// says when). A trim (`on_become_inactive`) and appends never wait for a loan.
    ///
    /// [`MappedFile::with_published`]: seglog_mmap_index::MappedFile::with_published
    pub fn with_region<R>(
        &self,
        region: FileRegion,
        buf: &mut Vec<u8>,
        mut f: impl FnMut(&[u8]) -> R,
    ) -> Result<R> {
        if let Some(map) = self.source().map
            && let Ok(len) = usize::try_from(region.length)
            && let Some(r) = map.with_published(region.position, len, &mut f)
        {
            return Ok(r);
        }
        self.read_region(region, buf)?;
        Ok(f(buf))
    }

    /// Copies a region to a file or socket without passing it through user space where the
    /// platform allows (`sendfile`). Returns the bytes copied.
    pub fn copy_region_to(&self, region: FileRegion, out: BorrowedFd<'_>) -> Result<u64> {
        self.log()?
            .copy_range_to(region.position, region.length, out)
            .map_err(|e| Error::io(&*self.path(), "copy", e))
    }

    /// Kafka's `readNextOffset`: the offset after the last batch, or the base offset when empty.
    pub fn read_next_offset(&self) -> Result<i64> {
        let start = match self.offset_reader.get() {
            Some(reader) => u64::from(reader.lookup(i64::MAX)?.position),
            None => self.last_index_position_unmapped(),
        };
        let path = self.path();
        let mut next = self.base_offset;
        let scan = scan_headers(
            &self.source(),
            &path,
            start,
            self.size(),
            HEADER_WINDOW,
            |h| {
                next = h.last_offset.wrapping_add(1);
                Ok(ControlFlow::<()>::Continue(()))
            },
        )?;
        if let Scan::Ended(ScanEnd::Corrupt { position, error }) = scan {
            return Err(Error::Corrupt {
                path: PathBuf::clone(&path),
                position,
                source: error,
            });
        }
        Ok(next)
    }

    /// Whether the `.log` ends where a whole batch ends, judged by walking the batch headers from
    /// the offset index's last entry (as `read_next_offset` does, so no index is mapped). After a
    /// clean shutdown this always holds unless the files were damaged since; when it does not,
    /// the segment needs recovery. An index that cannot be read counts as a no.
    pub fn ends_at_batch_boundary(&self) -> bool {
        let start = match self.offset_reader.get() {
            Some(reader) => match reader.lookup(i64::MAX) {
                Ok(entry) => u64::from(entry.position),
                Err(_) => return false,
            },
            None => self.last_index_position_unmapped(),
        };
        let size = self.size();
        if start > size {
            return false;
        }
        let path = self.path();
        let scan = scan_headers(&self.source(), &path, start, size, HEADER_WINDOW, |_| {
            Ok(ControlFlow::<()>::Continue(()))
        });
        matches!(scan, Ok(Scan::Ended(ScanEnd::Clean { position })) if position == size)
    }

    /// The position of the offset index's last entry, read with one small positioned read of the
    /// index file rather than by mapping it, so that opening a log after a clean shutdown maps no
    /// index. Any doubt (no file, an empty or odd-sized file, a zero tail) gives 0: a longer scan,
    /// never a wrong answer, because the scan only needs a batch boundary at or before the end.
    fn last_index_position_unmapped(&self) -> u64 {
        const ENTRY: u64 = 8;
        let path = self.writer.lock().offset_index.path().to_path_buf();
        let Ok(file) = self.fs.open(&path, OpenMode::ReadOnly) else {
            return 0;
        };
        let Ok(len) = file.len() else {
            return 0;
        };
        if len < ENTRY {
            return 0;
        }
        let mut entry = [0_u8; 8];
        let at = (len / ENTRY - 1) * ENTRY;
        if file.read_exact_at(&mut entry, at).is_err() {
            return 0;
        }
        let [o0, o1, o2, o3, p0, p1, p2, p3] = entry;
        let relative = u32::from_be_bytes([o0, o1, o2, o3]);
        let position = u64::from(u32::from_be_bytes([p0, p1, p2, p3]));
        // A zero entry past slot 0 is an untrimmed tail; a position past the end is garbage.
        if (relative == 0 && at > 0) || position >= self.size() {
            return 0;
        }
        position
    }

    pub(super) fn first_batch_header(&self) -> Result<Option<BatchHeader>> {
        self.header_at(0)
    }

    /// Walks this segment's whole batches from byte `from`, reading the `.log` in large chunks (for
    /// work that needs every byte of every batch, such as the cleaner). The callback gets each
    /// batch's position and bytes.
    pub fn scan_batches<T>(
        &self,
        from: u64,
        f: impl FnMut(u64, seglog_record_format::FramedBatch<'_>) -> Result<ControlFlow<T>>,
    ) -> Result<Scan<T>> {
        let path = self.path();
        crate::scan::scan_batches(&*self.log()?, &path, from, self.size(), 4 << 20, f)
    }

    /// Walks the batches from byte `from` to the end by their headers, reading a batch whole
    /// only when `whole` asks for it ([`crate::scan::scan_selected`]). With `pread`, not through
    /// the `.log`'s mapping: a walk of the whole log (producer state rebuilt at open) would leave
    /// every page it faulted in resident in the process (`RssFile`), as the cleaner's peak showed.
    pub fn scan_selected_batches<T>(
        &self,
        from: u64,
        whole: impl FnMut(&BatchHeader) -> bool,
        f: impl FnMut(
            &BatchHeader,
            Option<seglog_record_format::FramedBatch<'_>>,
        ) -> Result<ControlFlow<T>>,
    ) -> Result<Scan<T>> {
        let path = self.path();
        crate::scan::scan_selected(&*self.log()?, &path, from, self.size(), whole, f)
    }

    /// Walks the headers of the batches from byte `from` to the end, never reading a batch's body
    /// (for what needs only offsets, timestamps or producer ids of every batch).
    pub fn scan_batch_headers<T>(
        &self,
        from: u64,
        f: impl FnMut(BatchHeader) -> Result<ControlFlow<T>>,
    ) -> Result<Scan<T>> {
        let path = self.path();
        scan_headers(&self.source(), &path, from, self.size(), HEADER_WINDOW, f)
    }
}
