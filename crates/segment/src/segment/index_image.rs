//! The `.index` and `.timeindex` recovery writes for a segment, built from the batches a scan
//! with recovery's rules found valid: the scan compares them with the files, and when those
//! differ [`LogSegment::rebuild_indexes_from`](super::LogSegment::rebuild_indexes_from) writes
//! them without walking the `.log` again; when recovery cuts the segment,
//! [`LogSegment::recover_from`](super::LogSegment::recover_from) cuts it and writes them.

use crate::verify::RecoveryStop;

/// The index bytes of a segment's valid prefix, as recovery would write them into indexes of
/// the scan's `segment.index.bytes` at its `index.interval.bytes` (see
/// [`SegmentScan::index_image`](crate::SegmentScan::index_image)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexImage {
    pub(super) base_offset: i64,
    pub(super) interval: u32,
    pub(super) max_index_size: u32,
    /// The bytes of the valid prefix the image was built from.
    pub(super) valid_bytes: u64,
    /// The `.log`'s size when the scan read it: larger than `valid_bytes` when recovery cuts.
    pub(super) scanned_size: u64,
    /// Where and why the valid prefix ends before `scanned_size`.
    pub(super) stop: Option<RecoveryStop>,
    pub(super) batches: u64,
    pub(super) offset_index: Vec<u8>,
    /// Every entry, recovery's final one (`final_entry`) included.
    pub(super) time_index: Vec<u8>,
    pub(super) final_entry: bool,
    /// The largest timestamp and its offset: the segment's max after recovery.
    pub(super) max: (i64, i64),
}

impl IndexImage {
    /// The bytes it holds on the heap.
    pub fn heap_bytes(&self) -> usize {
        self.offset_index.len() + self.time_index.len()
    }

    /// The bytes of the valid prefix it was built from.
    pub fn valid_bytes(&self) -> u64 {
        self.valid_bytes
    }

    /// The `.log`'s size when the scan read it: recovery cuts what lies past
    /// [`valid_bytes`](Self::valid_bytes).
    pub fn scanned_size(&self) -> u64 {
        self.scanned_size
    }

    /// The time index entries appended batch by batch (recovery's final one left out).
    pub(super) fn time_entries_before_final(&self) -> &[u8] {
        let end = self.time_index.len() - if self.final_entry { 12 } else { 0 };
        self.time_index.get(..end).unwrap_or_default()
    }
}

/// Builds an [`IndexImage`] batch by batch with the rule of `index_batch` (the segment's shared
/// index rule, a full index taking no more entries): it must stay its mirror, which the tests
/// hold by comparing with the files a recovery wrote.
pub(super) struct IndexImageBuilder {
    image: IndexImage,
    interval: u64,
    /// The slots of each index after recovery's reset (`segment.index.bytes` rounded down).
    offset_slots: usize,
    time_slots: usize,
    bytes_since_last_entry: u64,
    last_time_entry_timestamp: i64,
}

impl IndexImageBuilder {
    pub(super) fn new(base_offset: i64, interval: u32, max_index_size: u32) -> Self {
        let size = usize::try_from(max_index_size).unwrap_or(usize::MAX);
        Self {
            image: IndexImage {
                base_offset,
                interval,
                max_index_size,
                valid_bytes: 0,
                scanned_size: 0,
                stop: None,
                batches: 0,
                offset_index: Vec::new(),
                time_index: Vec::new(),
                final_entry: false,
                max: (-1, base_offset),
            },
            interval: u64::from(interval),
            offset_slots: size / 8,
            time_slots: size / 12,
            bytes_since_last_entry: 0,
            last_time_entry_timestamp: -1,
        }
    }

    fn relative(&self, offset: i64) -> u32 {
        u32::try_from(offset - self.image.base_offset).unwrap_or(u32::MAX)
    }

    /// `TimeIndex::is_full`: the last slot is kept for the final entry.
    fn time_full(&self) -> bool {
        self.image.time_index.len() / 12 + 1 >= self.time_slots
    }

    /// Appends the entry of the max so far if its timestamp is larger than the last entry's.
    fn time_entry(&mut self) -> bool {
        let (timestamp, offset) = self.image.max;
        if timestamp <= self.last_time_entry_timestamp {
            return false;
        }
        let relative = self.relative(offset);
        let index = &mut self.image.time_index;
        index.extend_from_slice(&timestamp.to_be_bytes());
        index.extend_from_slice(&relative.to_be_bytes());
        self.last_time_entry_timestamp = timestamp;
        true
    }

    pub(super) fn batch(&mut self, last_offset: i64, max_timestamp: i64, size: u64, position: u64) {
        if max_timestamp > self.image.max.0 {
            self.image.max = (max_timestamp, last_offset);
        }
        if self.bytes_since_last_entry > self.interval {
            if self.image.offset_index.len() / 8 < self.offset_slots {
                let relative = self.relative(last_offset);
                let index = &mut self.image.offset_index;
                index.extend_from_slice(&relative.to_be_bytes());
                let position = u32::try_from(position).unwrap_or(u32::MAX);
                index.extend_from_slice(&position.to_be_bytes());
            }
            if !self.time_full() {
                self.time_entry();
            }
            self.bytes_since_last_entry = 0;
        }
        self.bytes_since_last_entry += size;
    }

    /// The image of the `batches` batches of a valid prefix of `valid_bytes` in a `.log` of
    /// `scanned_size` bytes (ended by `stop` when shorter), with recovery's last step: the final
    /// time index entry, whatever the interval.
    pub(super) fn finish(
        mut self,
        (valid_bytes, batches): (u64, u64),
        scanned_size: u64,
        stop: Option<RecoveryStop>,
    ) -> IndexImage {
        self.image.final_entry = self.time_entry();
        self.image.valid_bytes = valid_bytes;
        self.image.batches = batches;
        self.image.scanned_size = scanned_size;
        self.image.stop = stop;
        self.image
    }
}
