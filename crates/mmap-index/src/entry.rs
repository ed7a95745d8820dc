//! The two on-disk entry layouts, as zerocopy structs with big-endian fields, and the trait
//! through which the generic index core reads, writes and compares them.
//!
//! Relative offsets are stored as 32-bit fields and decoded the way Kafka's `getInt` does, as a
//! signed `i32`: the append path never writes a value above `i32::MAX`, and a corrupt file whose
//! field has the top bit set decodes to an offset below the base, which Kafka's sanity check then
//! reports. Offsets and timestamps are `i64`, Kafka's `long`.

use zerocopy::byteorder::big_endian::{I64, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::IndexKind;
use crate::map::{Word, load, store};

/// One `.index` entry: 4 bytes of offset relative to the segment base, then the 4-byte position
/// in the `.log` file of the batch it points to. Both big-endian.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct OffsetEntry {
    /// `offset - base_offset`.
    pub relative_offset: U32,
    /// Byte position of the batch in the segment's `.log` file.
    pub position: U32,
}

/// One `.timeindex` entry: the 8-byte timestamp, then the 4-byte offset relative to the segment
/// base. Both big-endian.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct TimeEntry {
    /// The largest timestamp seen up to `relative_offset`.
    pub timestamp: I64,
    /// `offset - base_offset`.
    pub relative_offset: U32,
}

// The entry sizes are part of Kafka's file format.
const _: () = assert!(size_of::<OffsetEntry>() == 8);
const _: () = assert!(size_of::<TimeEntry>() == 12);
const _: () = assert!(size_of::<OffsetEntry>() == IndexKind::Offset.entry_size());
const _: () = assert!(size_of::<TimeEntry>() == IndexKind::Time.entry_size());
// The memory backends store 32-bit words, so every entry is a whole number of words.
const _: () = assert!(size_of::<OffsetEntry>().is_multiple_of(4));
const _: () = assert!(size_of::<TimeEntry>().is_multiple_of(4));

/// An offset and the `.log` position of the batch it belongs to (Kafka's `OffsetPosition`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct OffsetPosition {
    /// Absolute offset.
    pub offset: i64,
    /// Byte position in the segment's `.log` file.
    pub position: u32,
}

/// A timestamp and an offset (Kafka's `TimestampOffset`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TimestampOffset {
    /// Milliseconds since the epoch; [`NO_TIMESTAMP`] when there is none.
    pub timestamp: i64,
    /// Absolute offset.
    pub offset: i64,
}

/// Kafka's `RecordBatch.NO_TIMESTAMP`.
pub const NO_TIMESTAMP: i64 = -1;

/// Adds a decoded relative offset to the base. Saturates instead of overflowing, so a hostile
/// base offset near `i64::MAX` cannot make a corrupt file panic a debug build.
pub(crate) fn absolute(base_offset: i64, relative: U32) -> i64 {
    base_offset.saturating_add(i64::from(relative.get().cast_signed()))
}

/// The absolute offset as Kafka computes it for its sanity check: `baseOffset + relativeOffset`
/// in wrapping `long` arithmetic. Where [`absolute`] saturates (a relative offset that carries a
/// base near `i64::MAX` past it), this wraps below the base, as in Kafka, so the sanity check
/// reports the entry instead of taking it for `i64::MAX`.
pub(crate) fn kafka_absolute(base_offset: i64, relative: U32) -> i64 {
    base_offset.wrapping_add(i64::from(relative.get().cast_signed()))
}

/// What the generic index core needs from an entry type.
pub(crate) trait Entry: Copy + Send + Sync + 'static {
    /// The decoded form handed to callers.
    type Decoded: Copy + PartialEq + std::fmt::Debug;
    /// Offset or time index.
    const KIND: IndexKind;
    /// Bytes per entry.
    const SIZE: usize;
    /// 32-bit words per entry.
    const WORDS: usize = Self::SIZE / 4;
    /// Kafka's warm section: the entries in the last 8 KiB.
    const WARM_ENTRIES: usize = 8192 / Self::SIZE;

    /// Reads the entry in `slot`; words past the end of the memory read as zero.
    fn load<W: Word>(cells: &[W], slot: usize) -> Self;
    /// Writes the entry into `slot`.
    fn store<W: Word>(&self, cells: &[W], slot: usize);
    /// The search key of `slot` (absolute offset, or timestamp), reading only the words needed.
    fn load_key<W: Word>(cells: &[W], slot: usize, base_offset: i64) -> i64;
    /// The search value of `slot` (position, or absolute offset), reading only the words needed.
    fn load_value<W: Word>(cells: &[W], slot: usize, base_offset: i64) -> i64;
    /// The search key of `slot` in the form `lookup` compares: the relative offset (offset
    /// index) or the timestamp (time index). Monotone in the key of `load_key`.
    fn load_lookup_key<W: Word>(cells: &[W], slot: usize) -> i64;
    /// A lookup target converted to the form of `load_lookup_key`.
    fn lookup_target(target: i64, base_offset: i64) -> i64;
    /// The decoded form.
    fn decode(&self, base_offset: i64) -> Self::Decoded;
    /// The absolute offset the entry names.
    fn offset(&self, base_offset: i64) -> i64 {
        absolute(base_offset, self.relative())
    }
    /// The stored relative offset.
    fn relative(&self) -> U32;
    /// The timestamp (time index only).
    fn timestamp(&self) -> Option<i64>;
}

impl Entry for OffsetEntry {
    type Decoded = OffsetPosition;
    const KIND: IndexKind = IndexKind::Offset;
    const SIZE: usize = size_of::<Self>();

    #[inline]
    fn load<W: Word>(cells: &[W], slot: usize) -> Self {
        let word = slot * 2;
        let words = [load(cells, word), load(cells, word + 1)];
        zerocopy::transmute!(words)
    }

    #[inline]
    fn store<W: Word>(&self, cells: &[W], slot: usize) {
        let words: [u32; 2] = zerocopy::transmute!(*self);
        for (i, w) in words.into_iter().enumerate() {
            store(cells, slot * 2 + i, w);
        }
    }

    #[inline]
    fn load_key<W: Word>(cells: &[W], slot: usize, base_offset: i64) -> i64 {
        let relative: U32 = zerocopy::transmute!(load(cells, slot * 2));
        absolute(base_offset, relative)
    }

    #[inline]
    fn load_value<W: Word>(cells: &[W], slot: usize, _base_offset: i64) -> i64 {
        let position: U32 = zerocopy::transmute!(load(cells, slot * 2 + 1));
        i64::from(position.get())
    }

    #[inline]
    fn load_lookup_key<W: Word>(cells: &[W], slot: usize) -> i64 {
        let relative: U32 = zerocopy::transmute!(load(cells, slot * 2));
        i64::from(relative.get().cast_signed())
    }

    #[inline]
    fn lookup_target(target: i64, base_offset: i64) -> i64 {
        target.saturating_sub(base_offset)
    }

    fn relative(&self) -> U32 {
        self.relative_offset
    }

    fn timestamp(&self) -> Option<i64> {
        None
    }

    fn decode(&self, base_offset: i64) -> OffsetPosition {
        OffsetPosition {
            offset: absolute(base_offset, self.relative_offset),
            position: self.position.get(),
        }
    }
}

impl Entry for TimeEntry {
    type Decoded = TimestampOffset;
    const KIND: IndexKind = IndexKind::Time;
    const SIZE: usize = size_of::<Self>();

    #[inline]
    fn load<W: Word>(cells: &[W], slot: usize) -> Self {
        let word = slot * 3;
        let words = [
            load(cells, word),
            load(cells, word + 1),
            load(cells, word + 2),
        ];
        zerocopy::transmute!(words)
    }

    #[inline]
    fn store<W: Word>(&self, cells: &[W], slot: usize) {
        let words: [u32; 3] = zerocopy::transmute!(*self);
        for (i, w) in words.into_iter().enumerate() {
            store(cells, slot * 3 + i, w);
        }
    }

    #[inline]
    fn load_key<W: Word>(cells: &[W], slot: usize, _base_offset: i64) -> i64 {
        let words = [load(cells, slot * 3), load(cells, slot * 3 + 1)];
        let timestamp: I64 = zerocopy::transmute!(words);
        timestamp.get()
    }

    #[inline]
    fn load_value<W: Word>(cells: &[W], slot: usize, base_offset: i64) -> i64 {
        let relative: U32 = zerocopy::transmute!(load(cells, slot * 3 + 2));
        absolute(base_offset, relative)
    }

    #[inline]
    fn load_lookup_key<W: Word>(cells: &[W], slot: usize) -> i64 {
        Self::load_key(cells, slot, 0)
    }

    #[inline]
    fn lookup_target(target: i64, _base_offset: i64) -> i64 {
        target
    }

    fn relative(&self) -> U32 {
        self.relative_offset
    }

    fn timestamp(&self) -> Option<i64> {
        Some(self.timestamp.get())
    }

    fn decode(&self, base_offset: i64) -> TimestampOffset {
        TimestampOffset {
            timestamp: self.timestamp.get(),
            offset: absolute(base_offset, self.relative_offset),
        }
    }
}

impl OffsetEntry {
    /// Builds an entry from a relative offset and a position.
    pub fn new(relative_offset: u32, position: u32) -> Self {
        Self {
            relative_offset: U32::new(relative_offset),
            position: U32::new(position),
        }
    }
}

impl TimeEntry {
    /// Builds an entry from a timestamp and a relative offset.
    pub fn new(timestamp: i64, relative_offset: u32) -> Self {
        Self {
            timestamp: I64::new(timestamp),
            relative_offset: U32::new(relative_offset),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zerocopy::IntoBytes;

    #[test]
    fn offset_entry_bytes_are_big_endian() {
        let e = OffsetEntry::new(0x0102_0304, 0x0a0b_0c0d);
        assert_eq!(e.as_bytes(), &[1, 2, 3, 4, 0x0a, 0x0b, 0x0c, 0x0d]);
    }

    #[test]
    fn time_entry_bytes_are_big_endian() {
        let e = TimeEntry::new(0x0102_0304_0506_0708, 0x0a0b_0c0d);
        assert_eq!(
            e.as_bytes(),
            &[1, 2, 3, 4, 5, 6, 7, 8, 0x0a, 0x0b, 0x0c, 0x0d]
        );
    }

    #[test]
    fn relative_offset_decodes_signed_like_kafka() {
        assert_eq!(absolute(100, U32::new(0xffff_ffff)), 99);
        assert_eq!(absolute(100, U32::new(5)), 105);
        assert_eq!(absolute(i64::MAX, U32::new(5)), i64::MAX);
    }
}
