//! Kafka's framing stop rules (`FileLogInputStream.nextBatch`): 17 or fewer bytes left is a clean
//! end, a partial trailing batch is a clean end, a size below 14 is corruption with its position,
//! and a zero-filled tail is therefore corruption.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "test code")]

use seglog_record_format::{
    BatchOptions, Compression, CorruptKind, Error, Field, NewRecord, Position, batches,
    batches_from, build_batch,
};

fn two_batches() -> (Vec<u8>, usize) {
    let mut out = Vec::new();
    let r = [
        NewRecord::new(0, 10, Some(b"a"), Some(b"1")),
        NewRecord::new(1, 11, None, Some(b"2")),
    ];
    build_batch(&BatchOptions::new(0, Compression::None), r, &mut out).unwrap();
    let first = out.len();
    build_batch(&BatchOptions::new(2, Compression::None), r, &mut out).unwrap();
    (out, first)
}

#[test]
fn positions_are_reported_for_each_batch() {
    let (buf, first) = two_batches();
    let got: Vec<_> = batches(&buf).map(|b| b.unwrap().position()).collect();
    assert_eq!(got, vec![0, first]);
    let from_second: Vec<_> = batches_from(&buf, first)
        .map(|b| b.unwrap().offset_field())
        .collect();
    assert_eq!(from_second, vec![2]);
}

#[test]
fn sixteen_or_seventeen_trailing_bytes_end_cleanly() {
    let (mut buf, _) = two_batches();
    let end = buf.len();
    for extra in [1usize, 16, 17] {
        buf.truncate(end);
        buf.extend(std::iter::repeat_n(0xAB, extra));
        let mut it = batches(&buf);
        assert_eq!(it.by_ref().map(Result::unwrap).count(), 2, "extra {extra}");
        assert_eq!(it.position(), end);
    }
}

#[test]
fn a_partial_trailing_batch_ends_cleanly() {
    let (buf, first) = two_batches();
    for cut in [first + 17, first + 18, first + 60, buf.len() - 1] {
        let mut it = batches(&buf[..cut]);
        let n = it.by_ref().map(Result::unwrap).count();
        assert_eq!(n, 1, "cut at {cut}");
        assert_eq!(it.position(), first);
    }
}

#[test]
fn size_thirteen_is_corruption_at_its_position() {
    let (mut buf, first) = two_batches();
    buf[first + 8..first + 12].copy_from_slice(&13i32.to_be_bytes());
    let mut it = batches(&buf);
    assert!(it.next().unwrap().is_ok());
    let err = it.next().unwrap().unwrap_err();
    assert_eq!(
        err,
        Error::Corrupt {
            position: Position::Buffer(first as u64),
            field: Field::Size,
            kind: CorruptKind::TooSmall {
                size: 13,
                minimum: 14
            },
        }
    );
    assert!(it.next().is_none(), "framing stops after corruption");
    // Size 14 frames (the legacy minimum), and is only rejected when decoded as v2.
    buf[first + 8..first + 12].copy_from_slice(&14i32.to_be_bytes());
    let second = batches(&buf).nth(1).unwrap().unwrap();
    assert_eq!(second.size_in_bytes(), 26);
    assert!(second.validate().is_err());
}

#[test]
fn a_zero_filled_tail_is_corruption() {
    let (mut buf, _) = two_batches();
    let end = buf.len();
    buf.resize(end + 4096, 0);
    let results: Vec<_> = batches(&buf).collect();
    assert_eq!(results.len(), 3);
    let err = results[2].clone().unwrap_err();
    assert_eq!(err.position(), Some(end as u64));
    assert_eq!(
        err.corrupt_kind(),
        Some(&CorruptKind::TooSmall {
            size: 0,
            minimum: 14
        })
    );
    // Callers add the file offset of the slice they parsed.
    assert_eq!(
        err.offset_by(1_000_000).position(),
        Some(1_000_000 + end as u64)
    );
}
