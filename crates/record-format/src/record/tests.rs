//! Unit tests of `record.rs` that need its private items: the sequence wrap and the header
//! iterator built by hand.

use super::*;

#[test]
fn sequence_wraps_like_kafka() {
    assert_eq!(increment_sequence(5, 3), 8);
    assert_eq!(increment_sequence(i32::MAX, 1), 0);
    assert_eq!(increment_sequence(i32::MAX - 1, 3), 1);
}

#[test]
fn header_iter_reads_null_values_and_duplicates() {
    // 2 headers: "a" -> "x", "a" -> null
    let bytes = [0x02, b'a', 0x02, b'x', 0x02, b'a', 0x01];
    let it = HeaderIter {
        buf: &bytes,
        pos: 0,
        left: 2,
    };
    let hs: Vec<_> = it.collect();
    assert_eq!(
        hs,
        vec![
            Header::new(b"a", b"x"),
            Header {
                key: b"a",
                value: None
            }
        ]
    );
}
