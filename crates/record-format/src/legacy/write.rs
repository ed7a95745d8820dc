//! Writing legacy messages, for tests and fixtures only.

use crate::header::LOG_OVERHEAD;

/// Builds one legacy message entry (test and fixture support; Kafka no longer writes these).
///
/// `timestamp` must be `Some` exactly when `magic` is 1.
#[doc(hidden)]
pub fn write_legacy_message(
    out: &mut Vec<u8>,
    offset: i64,
    magic: i8,
    attributes: u8,
    timestamp: Option<i64>,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) {
    let start = out.len();
    out.extend_from_slice(&offset.to_be_bytes());
    out.extend_from_slice(&[0; 8]); // size and crc, filled below
    out.extend_from_slice(&magic.to_be_bytes());
    out.push(attributes);
    if let Some(ts) = timestamp {
        out.extend_from_slice(&ts.to_be_bytes());
    }
    for field in [key, value] {
        match field {
            Some(b) => {
                out.extend_from_slice(&i32::try_from(b.len()).unwrap_or(i32::MAX).to_be_bytes());
                out.extend_from_slice(b);
            }
            None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        }
    }
    let size = i32::try_from(out.len() - start - LOG_OVERHEAD).unwrap_or(i32::MAX);
    let crc = crc32fast::hash(out.get(start + 16..).unwrap_or_default());
    if let Some(slot) = out.get_mut(start + 8..start + 16) {
        slot.get_mut(..4)
            .unwrap_or_default()
            .copy_from_slice(&size.to_be_bytes());
        slot.get_mut(4..)
            .unwrap_or_default()
            .copy_from_slice(&crc.to_be_bytes());
    }
}
