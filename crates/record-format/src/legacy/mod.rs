//! Legacy message sets, magic 0 and 1 (read-only), as `LegacyRecord` and
//! `AbstractLegacyRecordBatch` read them.
//!
//! ```text
//! offset i64 | size i32 | crc u32 | magic i8 | attributes i8 | [timestamp i64 (v1)] |
//! keyLength i32 (-1 null) | key | valueLength i32 (-1 null) | value
//! ```
//!
//! The CRC is CRC-32 (IEEE) over magic..end. A compressed entry is a wrapper whose value is a
//! compressed inner message set; the wrapper's offset is the last inner offset. Inner offsets are
//! relative in v1 (absolute = wrapper offset - last inner relative + inner) and absolute in v0.

mod batch;
mod message;
mod records;
mod write;

pub use batch::LegacyBatch;
pub use message::LegacyMessage;
use records::{Inner, InnerWalker};
pub use records::{LegacyRecordView, LegacyRecords};
pub use write::write_legacy_message;

/// Record overhead of a v0 message after the log overhead: crc, magic, attributes, key and value lengths.
pub const RECORD_OVERHEAD_V0: usize = 14;
/// Record overhead of a v1 message: v0 plus the timestamp.
pub const RECORD_OVERHEAD_V1: usize = 22;

fn len_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn arr8(b: Option<&[u8]>) -> [u8; 8] {
    b.and_then(|b| <[u8; 8]>::try_from(b).ok())
        .unwrap_or_default()
}

fn arr4(b: Option<&[u8]>) -> [u8; 4] {
    b.and_then(|b| <[u8; 4]>::try_from(b).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{Checksum, Error};
    use crate::record::Record;

    #[test]
    fn v0_and_v1_plain_messages() {
        let mut buf = Vec::new();
        write_legacy_message(&mut buf, 7, 0, 0, None, None, Some(b"v0"));
        let b = LegacyBatch::parse(&buf).unwrap();
        assert_eq!(b.size_in_bytes(), 12 + 14 + 2);
        b.validate().unwrap();
        let recs = b.to_records().unwrap();
        assert_eq!(
            recs,
            vec![Record {
                offset: 7,
                timestamp: -1,
                key: None,
                value: Some(b"v0".to_vec()),
                headers: vec![]
            }]
        );

        let mut buf = Vec::new();
        write_legacy_message(&mut buf, 9, 1, 0, Some(1234), Some(b"k"), None);
        let b = LegacyBatch::parse(&buf).unwrap();
        assert_eq!(b.size_in_bytes(), 12 + 22 + 1);
        assert_eq!(b.max_timestamp(), 1234);
        b.validate().unwrap();
        assert_eq!(b.to_records().unwrap()[0].timestamp, 1234);
    }

    #[test]
    fn crc_mismatch_is_reported_with_both_values() {
        let mut buf = Vec::new();
        write_legacy_message(&mut buf, 0, 1, 0, Some(1), None, Some(b"x"));
        let last = buf.len() - 1;
        buf[last] ^= 1;
        let b = LegacyBatch::parse(&buf).unwrap();
        let Err(Error::ChecksumMismatch {
            expected,
            actual,
            algorithm,
            ..
        }) = b.validate()
        else {
            panic!()
        };
        assert_eq!(algorithm, Checksum::Crc32);
        assert_ne!(expected, actual);
    }
}
