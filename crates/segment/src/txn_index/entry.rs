//! One `.txnindex` entry (Kafka's generated `AbortedTxn` message, written version-prefixed):
//! a 2-byte version (0), then producer id, first offset, last offset and last stable offset,
//! each 8 bytes, all big-endian: 34 bytes, no padding.

use std::fmt;

use zerocopy::byteorder::big_endian::{I16, I64};
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

/// The one entry version Kafka 4.4 reads and writes (`AbortedTxn` schema version 0).
pub const CURRENT_VERSION: i16 = 0;

/// The size of one entry on disk.
pub const ENTRY_SIZE: usize = 34;

/// An aborted transaction: the offsets of its data and the last stable offset when the ABORT
/// marker was written. Kafka's `AbortedTxn`, laid out as on disk.
#[derive(
    Clone, Copy, PartialEq, Eq, Hash, FromBytes, IntoBytes, KnownLayout, Immutable, Unaligned,
)]
#[repr(C)]
pub struct AbortedTxn {
    version: I16,
    producer_id: I64,
    first_offset: I64,
    last_offset: I64,
    last_stable_offset: I64,
}

const _: () = assert!(size_of::<AbortedTxn>() == ENTRY_SIZE);

impl AbortedTxn {
    /// An entry of the current version.
    pub fn new(
        producer_id: i64,
        first_offset: i64,
        last_offset: i64,
        last_stable_offset: i64,
    ) -> Self {
        Self {
            version: I16::new(CURRENT_VERSION),
            producer_id: I64::new(producer_id),
            first_offset: I64::new(first_offset),
            last_offset: I64::new(last_offset),
            last_stable_offset: I64::new(last_stable_offset),
        }
    }

    /// Reads an entry from the first [`ENTRY_SIZE`] bytes of `bytes`, whatever its version
    /// (`None` if fewer bytes are given). Checking the version is the reader's job.
    pub fn read_from(bytes: &[u8]) -> Option<Self> {
        Self::read_from_prefix(bytes).ok().map(|(txn, _)| txn)
    }

    /// The entry whose on-disk bytes are `bytes`, whatever its version.
    pub fn from_bytes(bytes: [u8; ENTRY_SIZE]) -> Self {
        zerocopy::transmute!(bytes)
    }

    /// The version field.
    pub fn version(&self) -> i16 {
        self.version.get()
    }

    /// The producer whose transaction was aborted.
    pub fn producer_id(&self) -> i64 {
        self.producer_id.get()
    }

    /// The first offset of the transaction's data.
    pub fn first_offset(&self) -> i64 {
        self.first_offset.get()
    }

    /// The last offset of the transaction's data: the offset of the ABORT marker.
    pub fn last_offset(&self) -> i64 {
        self.last_offset.get()
    }

    /// The last stable offset when the transaction was aborted.
    pub fn last_stable_offset(&self) -> i64 {
        self.last_stable_offset.get()
    }

    /// The 34 bytes Kafka writes for this entry.
    pub fn to_bytes(&self) -> [u8; ENTRY_SIZE] {
        zerocopy::transmute!(*self)
    }
}

/// Kafka's `AbortedTxn.toString` (the generated message's, which omits the version).
impl fmt::Display for AbortedTxn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "AbortedTxn(producerId={}, firstOffset={}, lastOffset={}, lastStableOffset={})",
            self.producer_id(),
            self.first_offset(),
            self.last_offset(),
            self.last_stable_offset()
        )
    }
}

impl fmt::Debug for AbortedTxn {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AbortedTxn")
            .field("version", &self.version())
            .field("producer_id", &self.producer_id())
            .field("first_offset", &self.first_offset())
            .field("last_offset", &self.last_offset())
            .field("last_stable_offset", &self.last_stable_offset())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kafka's `testAbortedTxnSerde`, and the byte layout of section 1.9 of the reference.
    #[test]
    fn serde_and_layout() {
        let txn = AbortedTxn::new(983_493, 137, 299, 200);
        assert_eq!(txn.version(), CURRENT_VERSION);
        assert_eq!(txn.producer_id(), 983_493);
        assert_eq!(txn.first_offset(), 137);
        assert_eq!(txn.last_offset(), 299);
        assert_eq!(txn.last_stable_offset(), 200);
        let bytes = txn.to_bytes();
        assert_eq!(&bytes[..2], &[0, 0]);
        assert_eq!(&bytes[2..10], &983_493_i64.to_be_bytes());
        assert_eq!(&bytes[10..18], &137_i64.to_be_bytes());
        assert_eq!(&bytes[18..26], &299_i64.to_be_bytes());
        assert_eq!(&bytes[26..34], &200_i64.to_be_bytes());
        assert_eq!(AbortedTxn::read_from(&bytes), Some(txn));
        assert_eq!(AbortedTxn::read_from(&bytes[..33]), None);
        assert_eq!(
            txn.to_string(),
            "AbortedTxn(producerId=983493, firstOffset=137, lastOffset=299, lastStableOffset=200)"
        );
    }
}
