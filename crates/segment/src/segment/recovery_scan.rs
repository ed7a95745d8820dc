//! Recovery's judgement of a segment without changing a byte: where the valid prefix of its
//! `.log` ends and why, what the batches in it hold (offsets, records), and whether its `.index`
//! and `.timeindex` are byte for byte what [`LogSegment::recover`](super::LogSegment::recover)
//! would write. A recovery plan (and `seglog recover --dry-run`) is made from it, and the loader
//! uses it to leave a valid index alone.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use seglog_fs::{File, FileSystem, OpenMode};
use seglog_record_format::NO_PRODUCER_ID;

use super::index_image::{IndexImage, IndexImageBuilder};
use super::recover::{RECOVERY_CHUNK, RecoveryStop};
use crate::error::{Error, Result};
use crate::naming;
use crate::scan::{BatchHeader, Scan, ScanEnd};
use crate::verify::{OffsetBounds, VerifiedBatch, scan_verified};

/// What [`scan_segment`] found.
#[derive(Debug)]
pub struct SegmentScan {
    /// The `.log` file scanned.
    pub log: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The bytes of the valid prefix (what recovery keeps).
    pub valid_bytes: u64,
    /// The valid batches.
    pub batches: u64,
    /// The records of the valid batches (a legacy entry counts as one).
    pub records: u64,
    /// The first offset of the first valid batch.
    pub first_offset: Option<i64>,
    /// The last offset of the last valid batch.
    pub last_offset: Option<i64>,
    /// Where and why the valid prefix ends before the end of the file.
    pub stop: Option<RecoveryStop>,
    /// Whether both index files exist and hold exactly what recovery would write.
    pub indexes_match: bool,
    /// The valid v2 batches with a producer id (Kafka's `hasProducerId`): the only ones a
    /// producer-state replay reads whole.
    pub producer_id_batches: u64,
    /// The last offset of the last valid v2 batch: where a replay of a segment without
    /// producer ids leaves the state's end offset (its batches' offsets only increase).
    pub last_v2_offset: Option<i64>,
    /// The headers of the valid v2 batches with a producer id, in order, when none of them is a
    /// control batch and there are at most 65,536 (4 MiB of headers): a producer-state
    /// replay of the valid prefix then needs no read of the `.log` (a data batch replays from its
    /// header). `None` otherwise.
    pub producer_batches: Option<Vec<BatchHeader>>,
    /// The index files recovery would write for the valid prefix, when they are not what the
    /// files hold (`indexes_match` false) or recovery cuts the segment (`stop`):
    /// [`LogSegment::rebuild_indexes_from`] writes them, and [`LogSegment::recover_from`] cuts
    /// the `.log` and writes them, without another walk of the `.log`.
    ///
    /// [`LogSegment::rebuild_indexes_from`]: super::LogSegment::rebuild_indexes_from
    /// [`LogSegment::recover_from`]: super::LogSegment::recover_from
    pub index_image: Option<IndexImage>,
    /// The rising leader epochs of the valid prefix: `(partitionLeaderEpoch, base offset)` of
    /// each v2 batch whose epoch (0 or more) is above every earlier batch's, in order. Kafka's
    /// `LogSegment.recover` assigns an epoch to its leader epoch cache only from such a batch
    /// (one above the cache's latest), so a rebuild of the cache needs no read of the `.log`.
    pub leader_epochs: Vec<(i32, i64)>,
}

/// The most producer-id batch headers a scan keeps for a replay (64 bytes each: 4 MiB).
pub(crate) const MAX_KEPT_PRODUCER_BATCHES: usize = 1 << 16;

impl SegmentScan {
    /// The bytes recovery would cut off the end of the `.log`.
    pub fn bytes_after_valid_prefix(&self) -> u64 {
        self.size - self.valid_bytes
    }
}

fn file_equals<F: FileSystem>(fs: &F, path: &Path, expected: &[u8]) -> Result<bool> {
    let file = match fs.open(path, OpenMode::ReadOnly) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(Error::io(path, "open", e)),
    };
    let len = file.len().map_err(|e| Error::io(path, "stat", e))?;
    if len != expected.len() as u64 {
        return Ok(false);
    }
    let mut buf = vec![0; expected.len()];
    file.read_exact_at(&mut buf, 0)
        .map_err(|e| Error::io(path, "read", e))?;
    Ok(buf == expected)
}

/// Scans the segment at `base_offset` in `dir` (its files named with `suffix`, "" or `.swap`) with
/// recovery's rules ([`LogSegment::recover_before`](super::LogSegment::recover_before) with the
/// same `next_base_offset`), opening every file read-only, and compares its index files with what
/// recovery would write at `index_interval_bytes` into indexes of `max_index_size` bytes
/// (`segment.index.bytes`).
pub fn scan_segment<F: FileSystem>(
    fs: &F,
    dir: &Path,
    base_offset: i64,
    suffix: &str,
    index_interval_bytes: u32,
    max_index_size: u32,
    next_base_offset: Option<i64>,
) -> Result<SegmentScan> {
    let path = naming::log_file(dir, base_offset, suffix);
    let file = fs
        .open(&path, OpenMode::ReadOnly)
        .map_err(|e| Error::io(&path, "open", e))?;
    let size = file.len().map_err(|e| Error::io(&path, "stat", e))?;
    let mut expected = IndexImageBuilder::new(base_offset, index_interval_bytes, max_index_size);
    let mut last_offset = None;
    let mut records = 0_u64;
    let mut first_offset = None;
    let (mut producer_id_batches, mut last_v2_offset) = (0_u64, None);
    let mut producer_batches = Some(Vec::new());
    let mut leader_epochs: Vec<(i32, i64)> = Vec::new();
    let bounds = OffsetBounds {
        base_offset,
        next_base_offset,
    };
    let scan = scan_verified(&file, &path, size, RECOVERY_CHUNK, bounds, |b| {
        first_offset.get_or_insert(b.first_offset);
        last_offset = Some(b.last_offset);
        records += b.records;
        if b.magic >= 2 {
            last_v2_offset = Some(b.last_offset);
            if b.partition_leader_epoch >= 0
                && leader_epochs
                    .last()
                    .is_none_or(|(e, _)| b.partition_leader_epoch > *e)
            {
                leader_epochs.push((b.partition_leader_epoch, b.first_offset));
            }
            if b.producer_id > NO_PRODUCER_ID {
                producer_id_batches += 1;
                keep_producer_batch(&mut producer_batches, b);
            }
        }
        expected.batch(b.last_offset, b.max_timestamp, b.size, b.position);
        Ok(())
    })?;
    let (valid_bytes, batches, stop) = (scan.valid_bytes, scan.batches, scan.stop);
    let image = expected.finish((valid_bytes, batches), size, stop.clone());
    let cuts = stop.is_some();
    let indexes_match = file_equals(
        fs,
        &naming::offset_index_file(dir, base_offset, suffix),
        &image.offset_index,
    )? && file_equals(
        fs,
        &naming::time_index_file(dir, base_offset, suffix),
        &image.time_index,
    )?;
    Ok(SegmentScan {
        log: path,
        size,
        valid_bytes,
        batches,
        records,
        first_offset,
        last_offset,
        stop,
        indexes_match,
        producer_id_batches,
        last_v2_offset,
        producer_batches,
        index_image: (!indexes_match || cuts).then_some(image),
        leader_epochs,
    })
}

/// Keeps `b`'s header in `kept` while every batch kept is a data batch and there is room.
fn keep_producer_batch(kept: &mut Option<Vec<BatchHeader>>, b: &VerifiedBatch) {
    if let Some(list) = kept {
        if b.is_control || list.len() >= MAX_KEPT_PRODUCER_BATCHES {
            *kept = None;
        } else {
            list.push(b.header());
        }
    }
}

/// What [`walk_tail`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TailWalk {
    /// Whether the `.log` ends where a whole batch ends.
    pub ends_at_batch_boundary: bool,
    /// The offset after the last batch walked (Kafka's `readNextOffset`), the base offset when
    /// there is none.
    pub next_offset: i64,
}

/// Walks the batch headers of the segment at `base_offset` (files named with `suffix`) from the
/// offset index's last entry, read-only, as an open segment's `ends_at_batch_boundary` and
/// `read_next_offset` do (from 0 when the index is missing, short, or ends in a zero tail). After
/// a clean shutdown only a segment whose walk does not end at a batch boundary needs recovery.
pub fn walk_tail<F: FileSystem>(
    fs: &F,
    dir: &Path,
    base_offset: i64,
    suffix: &str,
) -> Result<TailWalk> {
    const ENTRY: u64 = 8;
    let path = naming::log_file(dir, base_offset, suffix);
    let file = fs
        .open(&path, OpenMode::ReadOnly)
        .map_err(|e| Error::io(&path, "open", e))?;
    let size = file.len().map_err(|e| Error::io(&path, "stat", e))?;
    let mut start = 0;
    if let Ok(index) = fs.open(
        &naming::offset_index_file(dir, base_offset, suffix),
        OpenMode::ReadOnly,
    ) && let Ok(len @ ENTRY..) = index.len()
    {
        let mut entry = [0_u8; 8];
        let at = (len / ENTRY - 1) * ENTRY;
        if index.read_exact_at(&mut entry, at).is_ok() {
            let [o0, o1, o2, o3, p0, p1, p2, p3] = entry;
            let relative = u32::from_be_bytes([o0, o1, o2, o3]);
            let position = u64::from(u32::from_be_bytes([p0, p1, p2, p3]));
            if !(relative == 0 && at > 0) && position < size {
                start = position;
            }
        }
    }
    let mut next_offset = base_offset;
    let scan = crate::scan::scan_headers(&file, &path, start, size, super::HEADER_WINDOW, |h| {
        next_offset = h.last_offset.saturating_add(1);
        Ok(ControlFlow::<()>::Continue(()))
    })?;
    Ok(TailWalk {
        ends_at_batch_boundary: matches!(scan, Scan::Ended(ScanEnd::Clean { position }) if position == size),
        next_offset,
    })
}
