//! `TimeIndex`: the `.timeindex` file, mapping timestamps to offsets (Kafka's `TimeIndex`), and
//! its lock-free read handle: the operations of [`Index`] and [`IndexReader`] over
//! [`TimeEntry`].
#![forbid(unsafe_code)]

use crate::entry::{Entry, TimeEntry, TimestampOffset, kafka_absolute};
use crate::error::{CorruptKind, Error, IndexKind, Result};
use crate::index::Index;
use crate::reader::IndexReader;
use crate::verify::{self, VerifyReport};

/// A memory-mapped time index (`.timeindex`): sparse `(timestamp, offset)` entries, 12 bytes
/// each, big-endian, with strictly increasing timestamps and non-decreasing offsets. An entry
/// `(T, O)` means "the largest timestamp seen up to offset `O` is `T`".
///
/// The index counts as full one slot early (`max_entries - 1`): the last slot is kept for the
/// entry [`maybe_append`](Index::maybe_append) writes with `skip_full_check` when the segment rolls or
/// closes.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use seglog_mmap_index::{TimeIndex, TimestampOffset};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("00000000000000000000.timeindex");
/// let mut index = TimeIndex::options(path, 0).max_index_size(120).open()?;
/// assert_eq!(index.max_entries(), 10);
/// assert!(index.maybe_append(1_000, 5, false)?);
/// assert!(!index.maybe_append(1_000, 7, false)?); // same timestamp: skipped, as in Kafka
/// assert!(index.maybe_append(2_000, 9, false)?);
/// assert_eq!(index.lookup(1_500)?, TimestampOffset { timestamp: 1_000, offset: 5 });
/// // Below the first entry: no timestamp, the base offset.
/// assert_eq!(index.reader().lookup(10)?, TimestampOffset { timestamp: -1, offset: 0 });
/// # Ok(()) }
/// ```
pub type TimeIndex = Index<TimeEntry>;

impl std::fmt::Debug for Index<TimeEntry> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimeIndex")
            .field("path", &self.file.path())
            .field("base_offset", &self.file.base_offset())
            .field("entries", &self.file.entries())
            .field("max_entries", &self.file.max_entries())
            .field("last_entry", &self.last)
            .finish_non_exhaustive()
    }
}

impl Index<TimeEntry> {
    /// Appends `(timestamp, offset)` if `timestamp` is strictly greater than the last one;
    /// returns whether it did. Kafka's checks, in Kafka's order: full (unless
    /// `skip_full_check`), then an offset below the last one, then a timestamp below the last
    /// one; an equal timestamp is silently skipped. With `skip_full_check` on a mapping whose
    /// every slot is used (an untrimmed crash image, KAFKA-12734 / KAFKA-19200) this returns
    /// `MappingFull` where Kafka overflows its buffer.
    pub fn maybe_append(
        &mut self,
        timestamp: i64,
        offset: i64,
        skip_full_check: bool,
    ) -> Result<bool> {
        self.file.check_writable()?;
        let file = || self.file.path().to_path_buf();
        if !skip_full_check && self.is_full() {
            return Err(Error::IndexFull {
                file: file(),
                kind: IndexKind::Time,
                entries: self.entries(),
            });
        }
        if self.entries() != 0 && offset < self.last.offset {
            return Err(Error::InvalidOffset {
                file: file(),
                offset,
                slot: self.entries(),
                last_offset: self.last.offset,
            });
        }
        if self.entries() != 0 && timestamp < self.last.timestamp {
            return Err(Error::TimestampNotIncreasing {
                file: file(),
                timestamp,
                slot: self.entries(),
                last_timestamp: self.last.timestamp,
            });
        }
        if timestamp <= self.last.timestamp {
            return Ok(false);
        }
        let relative = self.file.relative_offset(offset)?;
        if self.entries() >= self.max_entries() {
            return Err(Error::MappingFull {
                file: file(),
                entries: self.entries(),
                max_entries: self.max_entries(),
            });
        }
        self.file.push(&TimeEntry::new(timestamp, relative))?;
        self.last = TimestampOffset { timestamp, offset };
        Ok(true)
    }

    /// Kafka's `sanityCheck`, with Kafka's conditions, order and messages. Reads entry 0.
    pub fn sanity_check(&self) -> Result<()> {
        match self.sanity_problems()?.into_iter().next() {
            None => Ok(()),
            Some(corruption) => Err(Error::CorruptIndex {
                file: self.file.path().to_path_buf(),
                kind: IndexKind::Time,
                corruption,
            }),
        }
    }

    fn sanity_problems(&self) -> Result<Vec<CorruptKind>> {
        let mut found = Vec::new();
        let last = self.last;
        if self.entries() != 0 {
            let first = self.file.view(|v| v.entry(0).map(|e| e.timestamp.get()))?;
            if let Some(first_timestamp) = first.filter(|&first| last.timestamp < first) {
                found.push(CorruptKind::LastTimestampBelowFirst {
                    last_timestamp: last.timestamp,
                    first_timestamp,
                });
            }
            // Kafka's wrapping arithmetic, not the saturated `last.offset`: see `kafka_absolute`.
            let base = self.base_offset();
            let last_offset = self
                .file
                .view(|v| {
                    v.entries()
                        .checked_sub(1)
                        .and_then(|slot| v.entry(slot))
                        .map(|e| kafka_absolute(base, e.relative()))
                })?
                .unwrap_or(last.offset);
            if last_offset < base {
                found.push(CorruptKind::LastOffsetBelowBase {
                    last_offset,
                    base_offset: base,
                });
            }
        }
        if !self.length().is_multiple_of(Self::ENTRY_SIZE as u64) {
            found.push(CorruptKind::LengthNotMultiple {
                length: self.length(),
                entry_size: Self::ENTRY_SIZE,
            });
        }
        Ok(found)
    }

    /// Every problem Kafka's sanity check finds, plus zero tails, a last timestamp of 0, and
    /// offsets or timestamps out of order.
    pub fn verify(&self) -> Result<VerifyReport> {
        let base = self.base_offset();
        let kafka = self.sanity_problems()?;
        let problems = self.file.view(|v| verify::scan(v, base, kafka))?;
        Ok(VerifyReport {
            kind: IndexKind::Time,
            length: self.length(),
            entries: self.entries(),
            max_entries: self.max_entries(),
            problems,
        })
    }

    /// The last entry, or `(NO_TIMESTAMP, base_offset)` when empty.
    pub fn last_entry(&self) -> TimestampOffset {
        self.last
    }

    /// True at `max_entries - 1` entries: the last slot is reserved for the roll/close entry.
    pub fn is_full(&self) -> bool {
        self.entries() + 1 >= self.max_entries()
    }
}

/// A lock-free read handle on a [`TimeIndex`] (see [`IndexReader`]).
pub type TimeIndexReader = IndexReader<TimeEntry>;
