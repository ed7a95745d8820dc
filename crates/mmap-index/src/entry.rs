//! The two on-disk entry layouts, as zerocopy structs with big-endian fields, and the trait
//! through which the generic index core reads, writes and compares them.
//!
//! Relative offsets are stored as 32-bit fields and decoded the way Kafka's `getInt` does, as a
//! signed `i32`: the append path never writes a value above `i32::MAX`, and a corrupt file whose
//! field has the top bit set decodes to an offset below the base, which Kafka's sanity check then
//! reports. Offsets and timestamps are `i64`, Kafka's `long`.
#![forbid(unsafe_code)]

use zerocopy::byteorder::big_endian::{I64, U32};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::error::IndexKind;
use crate::map::{Word, load, store};
use crate::search::{Field, Floor, floor_cold, floor_warm};

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

/// An on-disk entry layout, [`OffsetEntry`] or [`TimeEntry`]: what [`Index`](crate::Index) is
/// generic over. Sealed; its other items are the generic index core's and not part of the API.
pub trait Entry: sealed::Sealed + Copy + Send + Sync + 'static {
    /// The decoded form handed to callers: [`OffsetPosition`] or [`TimestampOffset`].
    type Decoded: Copy + PartialEq + std::fmt::Debug;
    /// Offset or time index.
    const KIND: IndexKind;
    /// Bytes per entry.
    const SIZE: usize;
    /// 32-bit words per entry.
    #[doc(hidden)]
    const WORDS: usize = Self::SIZE / 4;
    /// Kafka's warm section: the entries in the last 8 KiB.
    #[doc(hidden)]
    const WARM_ENTRIES: usize = 8192 / Self::SIZE;

    /// Reads the entry in `slot`; words past the end of the memory read as zero.
    #[doc(hidden)]
    fn load<W: Word>(cells: &[W], slot: usize) -> Self;
    /// Writes the entry into `slot`.
    #[doc(hidden)]
    fn store<W: Word>(&self, cells: &[W], slot: usize);
    /// The search key of `slot` (absolute offset, or timestamp), reading only the words needed.
    #[doc(hidden)]
    fn load_key<W: Word>(cells: &[W], slot: usize, base_offset: i64) -> i64;
    /// The search value of `slot` (position, or absolute offset), reading only the words needed.
    #[doc(hidden)]
    fn load_value<W: Word>(cells: &[W], slot: usize, base_offset: i64) -> i64;
    /// The lookup search (see [`crate::search::floor_warm`]): the largest of the first
    /// `entries` slots whose key is at most `target`, comparing each entry in its cheapest form
    /// (the stored relative offset as an `i32`, or the timestamp), with the slot found by
    /// entry-sized strides. This is the warm part ([`floor_warm`]); the cold range is left to
    /// [`floor_cold`](Self::floor_cold).
    #[doc(hidden)]
    fn floor_warm<W: Word>(cells: &[W], entries: usize, target: i64, base_offset: i64) -> Floor;
    /// The search of the cold range `0..=last` that [`floor_warm`](Self::floor_warm) left.
    #[doc(hidden)]
    fn floor_cold<W: Word>(cells: &[W], last: usize, target: i64, base_offset: i64) -> usize;
    /// Both parts of the lookup search: the slot, or `None` below the first entry.
    #[doc(hidden)]
    #[cfg(test)]
    fn floor_slot<W: Word>(
        cells: &[W],
        entries: usize,
        target: i64,
        base_offset: i64,
    ) -> Option<usize> {
        match Self::floor_warm(cells, entries, target, base_offset) {
            Floor::Slot(slot) => Some(slot),
            Floor::Below => None,
            Floor::Cold(last) => Some(Self::floor_cold(cells, last, target, base_offset)),
        }
    }
    /// The field holding the entry's offset, which `truncate_to` searches: the key of an offset
    /// entry, the value of a time entry (Kafka's `IndexSearchType`).
    #[doc(hidden)]
    const OFFSET_FIELD: Field;

    /// The decoded form.
    #[doc(hidden)]
    fn decode(&self, base_offset: i64) -> Self::Decoded;
    /// What a lookup below the first entry returns, and the last entry of an empty index:
    /// `(base_offset, 0)` for an offset index, `(NO_TIMESTAMP, base_offset)` for a time index.
    #[doc(hidden)]
    fn absent(base_offset: i64) -> Self::Decoded;
    /// The absolute offset the entry names.
    #[doc(hidden)]
    fn offset(&self, base_offset: i64) -> i64 {
        absolute(base_offset, self.relative())
    }
    /// The stored relative offset.
    #[doc(hidden)]
    fn relative(&self) -> U32;
    /// The timestamp (time index only).
    #[doc(hidden)]
    fn timestamp(&self) -> Option<i64>;
}

mod sealed {
    /// Only this crate's entry layouts are [`Entry`](super::Entry)s.
    pub trait Sealed {}
    impl Sealed for super::OffsetEntry {}
    impl Sealed for super::TimeEntry {}
}

impl Entry for OffsetEntry {
    type Decoded = OffsetPosition;
    const KIND: IndexKind = IndexKind::Offset;
    const SIZE: usize = size_of::<Self>();
    const OFFSET_FIELD: Field = Field::Key;

    fn absent(base_offset: i64) -> OffsetPosition {
        OffsetPosition {
            offset: base_offset,
            position: 0,
        }
    }

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
    fn floor_warm<W: Word>(cells: &[W], entries: usize, target: i64, base_offset: i64) -> Floor {
        let Some(target) = relative_target(target, base_offset) else {
            return Floor::Below;
        };
        let (slots, _) = cells.as_chunks::<2>();
        let slots = slots.get(..entries).unwrap_or(slots);
        floor_warm(slots, Self::WARM_ENTRIES, target, relative_key)
    }

    fn floor_cold<W: Word>(cells: &[W], last: usize, target: i64, base_offset: i64) -> usize {
        let (slots, _) = cells.as_chunks::<2>();
        let target = relative_target(target, base_offset).unwrap_or(i32::MIN);
        floor_cold(slots.get(..=last).unwrap_or(slots), target, relative_key)
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
    const OFFSET_FIELD: Field = Field::Value;

    fn absent(base_offset: i64) -> TimestampOffset {
        TimestampOffset {
            timestamp: NO_TIMESTAMP,
            offset: base_offset,
        }
    }

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
    fn floor_warm<W: Word>(cells: &[W], entries: usize, target: i64, _base_offset: i64) -> Floor {
        let (slots, _) = cells.as_chunks::<3>();
        let slots = slots.get(..entries).unwrap_or(slots);
        floor_warm(slots, Self::WARM_ENTRIES, target, timestamp_key)
    }

    fn floor_cold<W: Word>(cells: &[W], last: usize, target: i64, _base_offset: i64) -> usize {
        let (slots, _) = cells.as_chunks::<3>();
        floor_cold(slots.get(..=last).unwrap_or(slots), target, timestamp_key)
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

/// A lookup's target as the offset index compares it: keys are compared as Kafka decodes them,
/// signed 32-bit relative offsets, so the target is brought into that range (above it every key
/// is at most the target); `None` below it, where no key is.
#[inline]
fn relative_target(target: i64, base_offset: i64) -> Option<i32> {
    let target = target.saturating_sub(base_offset);
    (target >= i64::from(i32::MIN)).then(|| i32::try_from(target).unwrap_or(i32::MAX))
}

/// An offset entry's search key: its stored relative offset, as Kafka decodes it.
#[inline]
fn relative_key<W: Word>([relative, _]: &[W; 2]) -> i32 {
    let relative: U32 = zerocopy::transmute!(relative.load());
    relative.get().cast_signed()
}

/// A time entry's search key: its timestamp.
#[inline]
fn timestamp_key<W: Word>([high, low, _]: &[W; 3]) -> i64 {
    let timestamp: I64 = zerocopy::transmute!([high.load(), low.load()]);
    timestamp.get()
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
    use crate::search::floor_in;
    use zerocopy::{Immutable, IntoBytes};

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

    fn words<E: Entry + IntoBytes + Immutable>(entries: &[E]) -> Vec<std::sync::atomic::AtomicU32> {
        let (words, _) = entries.as_bytes().as_chunks::<4>();
        words
            .iter()
            .map(|w| {
                #[expect(
                    clippy::host_endian_bytes,
                    reason = "memory words are native-endian, as a mapping's are"
                )]
                std::sync::atomic::AtomicU32::new(u32::from_ne_bytes(*w))
            })
            .collect()
    }

    /// The lookup search compares relative offsets as `i32`s: it must agree with a floor search
    /// over the absolute offsets Kafka decodes (`base + (int) relative`), also for targets
    /// outside the 32-bit range and for corrupt entries whose top bit is set.
    #[test]
    fn offset_floor_agrees_with_a_floor_over_decoded_offsets() {
        let base = 1_000_i64;
        let relatives: [u32; 6] = [0x8000_0000, 0xffff_fffe, 0, 7, 0x7fff_fff0, 0x7fff_ffff];
        for n in 0..=relatives.len() {
            let entries: Vec<OffsetEntry> = relatives[..n]
                .iter()
                .map(|&r| OffsetEntry::new(r, r ^ 0x55))
                .collect();
            let cells = words(&entries);
            let keys: Vec<i64> = entries.iter().map(|e| e.offset(base)).collect();
            let targets = [
                i64::MIN,
                base - (1 << 40),
                base + i64::from(i32::MIN) - 1,
                base + i64::from(i32::MIN),
                base - 3,
                base - 2,
                base,
                base + 6,
                base + 7,
                base + 8,
                base + i64::from(i32::MAX) - 1,
                base + i64::from(i32::MAX),
                base + (1 << 40),
                i64::MAX,
            ];
            for warm in [0, 1, 2, 1024] {
                for &target in &targets {
                    let expected = keys.iter().rposition(|&k| k <= target);
                    let found = floor_in(&(0..n).collect::<Vec<_>>(), warm, target, |&s| keys[s]);
                    assert_eq!(
                        found, expected,
                        "reference, n {n} warm {warm} target {target}"
                    );
                    assert_eq!(
                        OffsetEntry::floor_slot(&cells, n, target, base),
                        expected,
                        "n {n} target {target}"
                    );
                }
            }
        }
    }

    #[test]
    fn time_floor_agrees_with_a_floor_over_timestamps() {
        let stamps = [i64::MIN, -5, 0, 1, 1 << 33, i64::MAX];
        for n in 0..=stamps.len() {
            let entries: Vec<TimeEntry> = stamps[..n]
                .iter()
                .zip(0_u32..)
                .map(|(&t, r)| TimeEntry::new(t, r))
                .collect();
            let cells = words(&entries);
            for target in [i64::MIN, -6, -5, -1, 0, 2, 1 << 33, (1 << 33) + 1, i64::MAX] {
                let expected = stamps[..n].iter().rposition(|&t| t <= target);
                assert_eq!(TimeEntry::floor_slot(&cells, n, target, 0), expected);
            }
        }
    }

    /// Unsorted (corrupt) keys: the answer may be any slot, but always one that exists.
    #[test]
    fn floor_on_unsorted_keys_stays_in_range() {
        let keys = [9_i64, 3, 7, 1, 8, 2, 6, 0];
        for n in 1..=keys.len() {
            for warm in [0, 1, 3, 8] {
                for target in -1..11 {
                    if let Some(slot) = floor_in(&keys[..n], warm, target, |&k| k) {
                        assert!(slot < n);
                    }
                }
            }
        }
    }

    #[test]
    fn relative_offset_decodes_signed_like_kafka() {
        assert_eq!(absolute(100, U32::new(0xffff_ffff)), 99);
        assert_eq!(absolute(100, U32::new(5)), 105);
        assert_eq!(absolute(i64::MAX, U32::new(5)), i64::MAX);
    }
}
