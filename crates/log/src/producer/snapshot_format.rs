//! The bytes of a producer state snapshot (Kafka's `ProducerSnapshot.json`, version 1, not
//! flexible, written by `ProducerStateManager.writeSnapshot`):
//!
//! ```text
//! int16 version (1) | uint32 crc | int32 entry count | entries
//! entry = int64 producerId | int16 epoch | int32 lastSequence | int64 lastOffset |
//!         int32 offsetDelta | int64 timestamp | int32 coordinatorEpoch | int64 currentTxnFirstOffset
//! ```
//!
//! The CRC-32C covers everything after the CRC (from byte 6 to the end, trailing bytes included).
//! Decoding checks what Kafka's generated reader checks, in its order, and gives Kafka's
//! messages with the byte position; it never panics.

use super::entry::ProducerStateEntry;

/// The only snapshot version Kafka reads and writes.
pub const SNAPSHOT_VERSION: i16 = 1;
/// Where the CRC starts.
const CRC_OFFSET: usize = 2;
/// Where the CRC's coverage starts.
const PRODUCER_ENTRIES_OFFSET: usize = 6;
/// The size of one entry.
pub const ENTRY_SIZE: usize = 8 + 2 + 4 + 8 + 4 + 8 + 4 + 8;
/// Kafka's generated readers refuse arrays longer than this.
const MAX_COLLECTION: i32 = 1_000_000;

/// Why bytes are not a snapshot: Kafka's `CorruptSnapshotException` message and the position.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotCorruption {
    /// The byte position of the bad field.
    pub position: u64,
    /// Kafka's message, word for word.
    pub message: String,
}

/// The snapshot of `entries`, in their order, as Kafka writes it.
#[must_use]
pub fn encode<'a>(entries: impl ExactSizeIterator<Item = &'a ProducerStateEntry>) -> Vec<u8> {
    let mut out = Vec::with_capacity(10 + entries.len() * ENTRY_SIZE);
    out.extend_from_slice(&SNAPSHOT_VERSION.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    let count = i32::try_from(entries.len()).unwrap_or(i32::MAX);
    out.extend_from_slice(&count.to_be_bytes());
    for e in entries {
        out.extend_from_slice(&e.producer_id().to_be_bytes());
        out.extend_from_slice(&e.producer_epoch().to_be_bytes());
        out.extend_from_slice(&e.last_seq().to_be_bytes());
        out.extend_from_slice(&e.last_data_offset().to_be_bytes());
        out.extend_from_slice(&e.last_offset_delta().to_be_bytes());
        out.extend_from_slice(&e.last_timestamp().to_be_bytes());
        out.extend_from_slice(&e.coordinator_epoch().to_be_bytes());
        out.extend_from_slice(&e.current_txn_first_offset().unwrap_or(-1).to_be_bytes());
    }
    let crc = seglog_record_format::crc32c(out.get(PRODUCER_ENTRIES_OFFSET..).unwrap_or_default());
    if let Some(slot) = out.get_mut(CRC_OFFSET..PRODUCER_ENTRIES_OFFSET) {
        slot.copy_from_slice(&crc.to_be_bytes());
    }
    out
}

/// The entries of a snapshot, as Kafka's `readSnapshot` returns them: an entry whose last offset
/// is negative has no batch.
///
/// # Errors
///
/// What Kafka's `readSnapshot` throws `CorruptSnapshotException` for, with its message: a file too
/// short for a field ("Snapshot failed schema validation: null", Java's message of a buffer
/// underflow), a version other than 1, a negative or oversized entry count, a CRC mismatch.
pub fn decode(bytes: &[u8]) -> Result<Vec<ProducerStateEntry>, SnapshotCorruption> {
    let mut r = Reader { bytes, pos: 0 };
    let version = r.i16()?;
    if version != SNAPSHOT_VERSION {
        return Err(schema(
            0,
            &format!("Snapshot contained an unknown file version {version}"),
        ));
    }
    let stored_crc = r.u32()?;
    let count_at = r.pos;
    let count = r.i32()?;
    if count < 0 {
        return Err(schema(
            count_at,
            "non-nullable field producerEntries was serialized as null",
        ));
    }
    let remaining = bytes.len() - r.pos;
    if usize::try_from(count).unwrap_or(usize::MAX) > remaining {
        return Err(schema(
            count_at,
            &format!(
                "Tried to allocate a collection of size {count}, but there are only {remaining} bytes remaining."
            ),
        ));
    }
    if count > MAX_COLLECTION {
        return Err(schema(
            count_at,
            &format!(
                "Tried to read a collection of size {count}, which exceeds the maximum allowed size of {MAX_COLLECTION}."
            ),
        ));
    }
    let mut raw = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
    for _ in 0..count {
        raw.push(RawEntry {
            producer_id: r.i64()?,
            epoch: r.i16()?,
            last_sequence: r.i32()?,
            last_offset: r.i64()?,
            offset_delta: r.i32()?,
            timestamp: r.i64()?,
            coordinator_epoch: r.i32()?,
            current_txn_first_offset: r.i64()?,
        });
    }
    let computed =
        seglog_record_format::crc32c(bytes.get(PRODUCER_ENTRIES_OFFSET..).unwrap_or_default());
    if computed != stored_crc {
        return Err(SnapshotCorruption {
            position: CRC_OFFSET as u64,
            message: format!(
                "Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored_crc}. Computed crc: {computed}"
            ),
        });
    }
    Ok(raw.into_iter().map(RawEntry::into_entry).collect())
}

/// Kafka wraps every reader exception in this prefix.
fn schema(position: usize, message: &str) -> SnapshotCorruption {
    SnapshotCorruption {
        position: position as u64,
        message: format!("Snapshot failed schema validation: {message}"),
    }
}

struct RawEntry {
    producer_id: i64,
    epoch: i16,
    last_sequence: i32,
    last_offset: i64,
    offset_delta: i32,
    timestamp: i64,
    coordinator_epoch: i32,
    current_txn_first_offset: i64,
}

impl RawEntry {
    fn into_entry(self) -> ProducerStateEntry {
        let txn = (self.current_txn_first_offset >= 0).then_some(self.current_txn_first_offset);
        let mut e = ProducerStateEntry::new(
            self.producer_id,
            self.epoch,
            self.coordinator_epoch,
            self.timestamp,
            txn,
        );
        if self.last_offset >= 0 {
            e.add_batch(
                self.epoch,
                self.last_sequence,
                self.last_offset,
                self.offset_delta,
                self.timestamp,
            );
        }
        e
    }
}

/// A big-endian cursor whose every short read is Kafka's buffer underflow.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], SnapshotCorruption> {
        let end = self.pos.checked_add(N);
        let got = end.and_then(|end| self.bytes.get(self.pos..end));
        match got.and_then(|s| <[u8; N]>::try_from(s).ok()) {
            Some(a) => {
                self.pos += N;
                Ok(a)
            }
            // Java's BufferUnderflowException has no message: Kafka prints "null".
            None => Err(schema(self.pos, "null")),
        }
    }
    fn i16(&mut self) -> Result<i16, SnapshotCorruption> {
        self.take::<2>().map(i16::from_be_bytes)
    }
    fn i32(&mut self) -> Result<i32, SnapshotCorruption> {
        self.take::<4>().map(i32::from_be_bytes)
    }
    fn u32(&mut self) -> Result<u32, SnapshotCorruption> {
        self.take::<4>().map(u32::from_be_bytes)
    }
    fn i64(&mut self) -> Result<i64, SnapshotCorruption> {
        self.take::<8>().map(i64::from_be_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<ProducerStateEntry> {
        let mut a = ProducerStateEntry::new(1000, 3, 7, 1_700_000_000_123, Some(40));
        a.add_batch(3, 9, 49, 9, 1_700_000_000_123);
        let b = ProducerStateEntry::new(2000, 0, -1, 55, None);
        vec![a, b]
    }

    #[test]
    fn round_trips_and_keeps_only_the_last_batch() {
        let bytes = encode(sample().iter());
        assert_eq!(bytes.len(), 10 + 2 * ENTRY_SIZE);
        assert_eq!(decode(&bytes).unwrap(), sample());
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_an_error_never_a_panic() {
        let bytes = encode(sample().iter());
        for len in 0..bytes.len() {
            let e = decode(&bytes[..len]).unwrap_err();
            assert!(
                e.message.starts_with("Snapshot failed schema validation: "),
                "{len}: {e:?}"
            );
            assert!(e.position <= len as u64);
        }
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x40;
            assert!(decode(&b).is_err(), "flip at {i} accepted");
        }
        let mut trailing = bytes.clone();
        trailing.push(0);
        assert!(
            decode(&trailing)
                .unwrap_err()
                .message
                .starts_with("Snapshot is corrupt (CRC")
        );
    }

    #[test]
    fn kafkas_messages_for_version_count_and_crc() {
        let mut b = encode(sample().iter());
        b[1] = 2;
        let e = decode(&b).unwrap_err();
        assert_eq!(
            (e.position, e.message.as_str()),
            (
                0,
                "Snapshot failed schema validation: Snapshot contained an unknown file version 2"
            )
        );
        let mut b = encode(sample().iter());
        b[6..10].copy_from_slice(&(-1i32).to_be_bytes());
        assert_eq!(
            decode(&b).unwrap_err().message,
            "Snapshot failed schema validation: non-nullable field producerEntries was serialized as null"
        );
        let mut b = encode(sample().iter());
        b[6..10].copy_from_slice(&100i32.to_be_bytes());
        assert_eq!(
            decode(&b).unwrap_err().message,
            "Snapshot failed schema validation: Tried to allocate a collection of size 100, but there are only 92 bytes remaining."
        );
        let mut b = encode(sample().iter());
        b[2] ^= 1;
        let e = decode(&b).unwrap_err();
        assert_eq!(e.position, 2);
        assert!(
            e.message
                .starts_with("Snapshot is corrupt (CRC is no longer valid). Stored crc: ")
        );
    }
}
