//! Walking the batches of a `.log` file (or any file of concatenated batches) with Kafka's stop rules (`FileLogInputStream.nextBatch`),
//! through the I/O seam, or through the `.log`'s memory mapping when the segment has one ([`ReadSource`]).
//!
//! Two walks, for two costs:
//! - [`scan_batches`] reads the file in large chunks and hands over each complete batch, for work
//!   that needs every byte (recovery's CRC check, record iteration);
//! - [`scan_headers`] reads small windows and hands over only each batch's position, size and
//!   header fields, for work that skips from header to header (offset translation, timestamp
//!   search, finding the largest timestamp).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use seglog_record_format::{
    self as rf, ATTRIBUTES_OFFSET, FramedBatch, HEADER_SIZE_UP_TO_MAGIC, LAST_OFFSET_DELTA_OFFSET,
    LOG_OVERHEAD, MAX_TIMESTAMP_OFFSET, MIN_RECORD_OVERHEAD, NO_PARTITION_LEADER_EPOCH,
    NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP, PARTITION_LEADER_EPOCH_OFFSET,
    PRODUCER_ID_OFFSET,
};

use seglog_fs::File;

use crate::error::{Error, Result};

/// What the walks read from: any [`File`] (positioned reads), or a segment's `.log` together
/// with its optional memory mapping.
pub trait ReadSource {
    /// Reads up to `buf.len()` bytes at `position`; returns how many (0 at or past the end).
    fn read_some_at(&self, buf: &mut [u8], position: u64) -> std::io::Result<usize>;

    /// Whether reads cost no system call (a memory mapping): then [`scan_headers`] reads each
    /// header alone instead of a window of several, since copying bytes it skips costs more
    /// than the reads it saves.
    fn reads_are_cheap(&self) -> bool {
        false
    }
}

impl<F: File> ReadSource for F {
    #[inline]
    fn read_some_at(&self, buf: &mut [u8], position: u64) -> std::io::Result<usize> {
        self.read_at(buf, position)
    }
}

/// How a walk ended when the callback did not stop it.
#[derive(Debug)]
pub enum ScanEnd {
    /// The end of the range, or a partial trailing batch starting at `position`.
    Clean {
        /// Where valid framing ended.
        position: u64,
    },
    /// A batch with a size below 14 at `position`.
    Corrupt {
        /// Where the bad batch starts.
        position: u64,
        /// What framing found.
        error: rf::Error,
    },
}

/// The outcome of a walk.
#[derive(Debug)]
pub enum Scan<T> {
    /// The callback stopped the walk with this value.
    Stopped(T),
    /// The walk reached its end.
    Ended(ScanEnd),
}

/// Reads `buf.len()` bytes at `position`, or fewer at the end of the file.
pub fn read_up_to<F: ReadSource + ?Sized>(
    file: &F,
    path: &Path,
    buf: &mut [u8],
    position: u64,
) -> Result<usize> {
    read_up_to_io(file, buf, position).map_err(|e| Error::io(path, "read", e))
}

/// As [`read_up_to`], with the bare I/O error: for callers that name the file only on failure.
pub(crate) fn read_up_to_io<F: ReadSource + ?Sized>(
    file: &F,
    buf: &mut [u8],
    position: u64,
) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        let rest = buf.get_mut(filled..).unwrap_or_default();
        match file.read_some_at(rest, position + filled as u64) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn be_i16(bytes: &[u8], at: usize) -> Option<i16> {
    bytes
        .get(at..at + 2)
        .and_then(|b| b.try_into().ok())
        .map(i16::from_be_bytes)
}

fn be_i32(bytes: &[u8], at: usize) -> Option<i32> {
    bytes
        .get(at..at + 4)
        .and_then(|b| b.try_into().ok())
        .map(i32::from_be_bytes)
}

fn be_i64(bytes: &[u8], at: usize) -> Option<i64> {
    bytes
        .get(at..at + 8)
        .and_then(|b| b.try_into().ok())
        .map(i64::from_be_bytes)
}

/// Applies the framing rules to the 17-byte prefix at `position`: the batch's total size, or the
/// reason the walk ends there.
fn frame(head: &[u8], position: u64, end: u64) -> Result<u64, Option<ScanEnd>> {
    let size = be_i32(head, 8).ok_or(None)?;
    if size < MIN_RECORD_OVERHEAD {
        let error =
            rf::batches(head)
                .next()
                .and_then(Result::err)
                .unwrap_or(rf::Error::InvalidInput {
                    reason: "batch size below 14",
                });
        return Err(Some(ScanEnd::Corrupt {
            position,
            error: error.offset_by(position),
        }));
    }
    let total = LOG_OVERHEAD as u64 + u64::from(size.unsigned_abs());
    if total > end - position {
        return Err(Some(ScanEnd::Clean { position }));
    }
    Ok(total)
}

/// Walks complete batches in `[start, end)`, reading chunks of at least `chunk` bytes.
/// The callback gets each batch's file position and bytes.
pub fn scan_batches<F: ReadSource + ?Sized, T>(
    file: &F,
    path: &Path,
    start: u64,
    end: u64,
    chunk: usize,
    mut f: impl FnMut(u64, FramedBatch<'_>) -> Result<ControlFlow<T>>,
) -> Result<Scan<T>> {
    let mut buf = Vec::new();
    let mut position = start;
    let mut want = chunk.max(HEADER_SIZE_UP_TO_MAGIC + 1);
    loop {
        if end < HEADER_SIZE_UP_TO_MAGIC as u64 || position >= end - HEADER_SIZE_UP_TO_MAGIC as u64
        {
            return Ok(Scan::Ended(ScanEnd::Clean { position }));
        }
        let len = usize::try_from(end - position)
            .unwrap_or(usize::MAX)
            .min(want);
        buf.resize(len, 0);
        let n = read_up_to(file, path, &mut buf, position)?;
        let window = buf.get(..n).unwrap_or_default();
        let mut batches = rf::batches(window);
        for batch in &mut batches {
            match batch {
                Ok(b) => {
                    if let ControlFlow::Break(value) = f(position + b.position() as u64, b)? {
                        return Ok(Scan::Stopped(value));
                    }
                }
                Err(error) => {
                    let at = position + error.position().unwrap_or(0);
                    return Ok(Scan::Ended(ScanEnd::Corrupt {
                        position: at,
                        error: error.offset_by(position),
                    }));
                }
            }
        }
        let consumed = batches.position();
        position += consumed as u64;
        // The window ended: either the range is done, or the next batch did not fit in it.
        let head = window.get(consumed..).unwrap_or_default();
        if head.len() < HEADER_SIZE_UP_TO_MAGIC || n < len {
            if n < len {
                // The file is shorter than the range: what is left is a partial tail.
                return Ok(Scan::Ended(ScanEnd::Clean { position }));
            }
            want = chunk.max(HEADER_SIZE_UP_TO_MAGIC + 1);
            continue;
        }
        match frame(head, position, end) {
            Ok(total) => want = want.max(usize::try_from(total).unwrap_or(usize::MAX)),
            Err(Some(stop)) => return Ok(Scan::Ended(stop)),
            Err(None) => return Ok(Scan::Ended(ScanEnd::Clean { position })),
        }
    }
}

/// What [`scan_headers`] reads of each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    /// The batch's position in the file.
    pub position: u64,
    /// Its size, log overhead included.
    pub size: u64,
    /// The magic byte.
    pub magic: i8,
    /// The partition leader epoch of a v2 batch (outside its CRC), -1
    /// (`NO_PARTITION_LEADER_EPOCH`) for none and for legacy entries.
    pub partition_leader_epoch: i32,
    /// The base offset (v2) or the entry's offset (legacy: the last offset of a wrapper).
    pub offset_field: i64,
    /// Kafka's `lastOffset()`.
    pub last_offset: i64,
    /// Kafka's `maxTimestamp()`: the header field of v2, the wrapper's timestamp of v1, -1 for v0.
    pub max_timestamp: i64,
    /// The producer id of a v2 batch, -1 (`NO_PRODUCER_ID`) for none and for legacy entries.
    pub producer_id: i64,
    /// The producer epoch of a v2 batch, -1 (`NO_PRODUCER_EPOCH`) for legacy entries.
    pub producer_epoch: i16,
    /// The base sequence of a v2 batch, -1 (`NO_SEQUENCE`) for none and for legacy entries.
    pub base_sequence: i32,
    /// Whether this is a v2 control batch (a transaction marker).
    pub is_control: bool,
    /// Whether this is a v2 batch of a transaction.
    pub is_transactional: bool,
}

impl BatchHeader {
    /// Kafka's `lastSequence()`: the base sequence plus the last offset delta (wrapping past
    /// `i32::MAX` to 0), or -1 when the batch has none.
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence == NO_SEQUENCE {
            return NO_SEQUENCE;
        }
        // `last_offset` is the base offset plus the delta read as an `i32` (`parse_header`).
        #[expect(clippy::cast_possible_truncation, reason = "the delta was an i32")]
        let delta = self.last_offset.wrapping_sub(self.offset_field) as i32;
        rf::increment_sequence(self.base_sequence, delta)
    }
}

/// The header prefix [`scan_headers`] needs: all 61 bytes of a v2 header.
const HEADER_PREFIX: usize = 61;

/// Walks batch headers in `[start, end)`, reading windows of `window` bytes; a batch's body is
/// never read.
pub fn scan_headers<F: ReadSource + ?Sized, T>(
    file: &F,
    path: &Path,
    start: u64,
    end: u64,
    window: usize,
    f: impl FnMut(BatchHeader) -> Result<ControlFlow<T>>,
) -> Result<Scan<T>> {
    // A stack buffer: this walk runs on every offset translation and must not allocate. Sized
    // to what it reads: zeroing 4 KiB to read 61 bytes through a mapping costs more than the
    // header reads.
    if file.reads_are_cheap() {
        scan_with(&mut [0_u8; HEADER_PREFIX], file, path, start, end, f)
    } else {
        let mut buf = [0_u8; MAX_HEADER_WINDOW];
        let window = window.clamp(HEADER_PREFIX, MAX_HEADER_WINDOW);
        scan_with(
            buf.get_mut(..window).unwrap_or_default(),
            file,
            path,
            start,
            end,
            f,
        )
    }
}

/// Walks the batches of `[start, end)` by their headers, as [`scan_headers`] does, reading a
/// batch whole only when `whole` asks for it: for work that needs the bodies of a few batches
/// (producer state reads a control batch's marker and a data batch's header), so that the
/// others are never copied out of the page cache. The callback gets each header, with the
/// batch's bytes when they were read.
pub fn scan_selected<F: ReadSource + ?Sized, T>(
    file: &F,
    path: &Path,
    start: u64,
    end: u64,
    mut whole: impl FnMut(&BatchHeader) -> bool,
    mut f: impl FnMut(&BatchHeader, Option<FramedBatch<'_>>) -> Result<ControlFlow<T>>,
) -> Result<Scan<T>> {
    let mut buf = Vec::new();
    scan_headers(file, path, start, end, MAX_HEADER_WINDOW, |h| {
        if !whole(&h) {
            return f(&h, None);
        }
        buf.resize(usize::try_from(h.size).unwrap_or(usize::MAX), 0);
        let n = read_up_to(file, path, &mut buf, h.position)?;
        match rf::batches(buf.get(..n).unwrap_or_default()).next() {
            Some(Ok(framed)) if n == buf.len() => f(&h, Some(framed)),
            // The header was read a moment ago: the file changed under the walk.
            _ => Err(Error::io(
                path,
                "read",
                std::io::Error::new(
                    std::io::ErrorKind::UnexpectedEof,
                    format!("the batch at byte {} ended early", h.position),
                ),
            )),
        }
    })
}

/// [`scan_headers`] reading windows of `buf.len()` bytes into `buf`.
fn scan_with<F: ReadSource + ?Sized, T>(
    buf: &mut [u8],
    file: &F,
    path: &Path,
    start: u64,
    end: u64,
    mut f: impl FnMut(BatchHeader) -> Result<ControlFlow<T>>,
) -> Result<Scan<T>> {
    let window = buf.len();
    let mut buf_start = start;
    let mut buf_len = 0_usize;
    let mut position = start;
    // Large batches leave one header per window: then read only a header's worth each time.
    let mut read_len = HEADER_PREFIX;
    loop {
        if end < HEADER_SIZE_UP_TO_MAGIC as u64 || position >= end - HEADER_SIZE_UP_TO_MAGIC as u64
        {
            return Ok(Scan::Ended(ScanEnd::Clean { position }));
        }
        let in_window =
            position >= buf_start && position + HEADER_PREFIX as u64 <= buf_start + buf_len as u64;
        if !in_window {
            buf_start = position;
            let len = usize::try_from(end - position)
                .unwrap_or(usize::MAX)
                .min(read_len);
            buf_len = read_up_to(file, path, buf.get_mut(..len).unwrap_or_default(), position)?;
        }
        let from = usize::try_from(position - buf_start).unwrap_or(usize::MAX);
        let head = buf.get(from..buf_len).unwrap_or_default();
        if head.len() < HEADER_SIZE_UP_TO_MAGIC {
            return Ok(Scan::Ended(ScanEnd::Clean { position }));
        }
        let size = match frame(head, position, end) {
            Ok(size) => size,
            Err(Some(stop)) => return Ok(Scan::Ended(stop)),
            Err(None) => return Ok(Scan::Ended(ScanEnd::Clean { position })),
        };
        let header = parse_header(head, position, size, &|| path.to_path_buf())?;
        if let ControlFlow::Break(value) = f(header)? {
            return Ok(Scan::Stopped(value));
        }
        read_len = if size >= (window / 2) as u64 {
            HEADER_PREFIX
        } else {
            window
        };
        position += size;
    }
}

/// The header of the batch at `position`, read with one small positioned read: `None` when no
/// whole batch starts there (the end of the range, or a partial batch), an error when framing
/// finds corruption.
pub fn read_header<F: ReadSource + ?Sized>(
    file: &F,
    path: &Path,
    position: u64,
    end: u64,
) -> Result<Option<BatchHeader>> {
    read_header_naming(file, &|| path.to_path_buf(), position, end)
}

/// As [`read_header`], with the path an error names made by `path` only when an error is built
/// (a segment's path is a clone taken under a lock, which a successful read need not pay).
pub(crate) fn read_header_naming<F: ReadSource + ?Sized>(
    file: &F,
    path: &dyn Fn() -> PathBuf,
    position: u64,
    end: u64,
) -> Result<Option<BatchHeader>> {
    if end < HEADER_SIZE_UP_TO_MAGIC as u64 || position >= end - HEADER_SIZE_UP_TO_MAGIC as u64 {
        return Ok(None);
    }
    let mut buf = [0_u8; HEADER_PREFIX];
    let len = usize::try_from(end - position)
        .unwrap_or(usize::MAX)
        .min(HEADER_PREFIX);
    let n = read_up_to_io(file, buf.get_mut(..len).unwrap_or_default(), position)
        .map_err(|e| Error::io(path(), "read", e))?;
    let head = buf.get(..n).unwrap_or_default();
    if head.len() < HEADER_SIZE_UP_TO_MAGIC {
        return Ok(None);
    }
    match frame(head, position, end) {
        Ok(size) => parse_header(head, position, size, path).map(Some),
        Err(Some(ScanEnd::Corrupt { position, error })) => Err(Error::Corrupt {
            path: path(),
            position,
            source: error,
        }),
        Err(_) => Ok(None),
    }
}

/// The largest window [`scan_headers`] reads at once.
pub const MAX_HEADER_WINDOW: usize = 4096;

fn parse_header(
    head: &[u8],
    position: u64,
    size: u64,
    path: &dyn Fn() -> PathBuf,
) -> Result<BatchHeader> {
    let corrupt = |reason: &'static str| Error::Corrupt {
        path: path(),
        position,
        source: rf::Error::InvalidInput { reason },
    };
    let offset_field = be_i64(head, 0).ok_or_else(|| corrupt("truncated batch header"))?;
    let magic = head.get(16).copied().unwrap_or(0).cast_signed();
    let mut header = BatchHeader {
        position,
        size,
        magic,
        partition_leader_epoch: NO_PARTITION_LEADER_EPOCH,
        offset_field,
        last_offset: offset_field,
        max_timestamp: NO_TIMESTAMP,
        producer_id: NO_PRODUCER_ID,
        producer_epoch: NO_PRODUCER_EPOCH,
        base_sequence: NO_SEQUENCE,
        is_control: false,
        is_transactional: false,
    };
    match magic {
        2.. => {
            if size < HEADER_PREFIX as u64 {
                return Err(corrupt("record batch smaller than its 61-byte header"));
            }
            let field32 = |at| be_i32(head, at).ok_or_else(|| corrupt("truncated header"));
            let field64 = |at| be_i64(head, at).ok_or_else(|| corrupt("truncated header"));
            let delta = field32(LAST_OFFSET_DELTA_OFFSET)?;
            header.last_offset = offset_field.wrapping_add(i64::from(delta));
            header.max_timestamp = field64(MAX_TIMESTAMP_OFFSET)?;
            header.partition_leader_epoch = field32(PARTITION_LEADER_EPOCH_OFFSET)?;
            header.producer_id = field64(PRODUCER_ID_OFFSET)?;
            // The epoch follows the 8-byte producer id, and the base sequence the epoch.
            header.producer_epoch =
                be_i16(head, PRODUCER_ID_OFFSET + 8).ok_or_else(|| corrupt("truncated header"))?;
            header.base_sequence = field32(PRODUCER_ID_OFFSET + 10)?;
            let attributes =
                be_i16(head, ATTRIBUTES_OFFSET).ok_or_else(|| corrupt("truncated header"))?;
            header.is_control = rf::Attributes(attributes).is_control();
            header.is_transactional = rf::Attributes(attributes).is_transactional();
        }
        // offset 8 | size 4 | crc 4 | magic 1 | attributes 1 | timestamp 8
        1 if size >= 26 => header.max_timestamp = be_i64(head, 18).unwrap_or(NO_TIMESTAMP),
        _ => {}
    }
    Ok(header)
}
