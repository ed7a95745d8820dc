//! `scan_headers` reads every producer field of a v2 header as the batch view reads it: producer
//! state replays data batches from these headers alone, without their bodies.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::ops::ControlFlow;
use std::path::Path;

use seglog_record_format::{
    BatchOptions, Compression, NewRecord, RecordBatch, build_batch, write_empty_batch,
};
use seglog_segment::scan::{BatchHeader, ReadSource, Scan, scan_headers};

struct Bytes(Vec<u8>);

impl ReadSource for Bytes {
    fn read_some_at(&self, buf: &mut [u8], position: u64) -> std::io::Result<usize> {
        let from = usize::try_from(position).unwrap_or(usize::MAX);
        let src = self.0.get(from..).unwrap_or_default();
        let n = src.len().min(buf.len());
        buf[..n].copy_from_slice(&src[..n]);
        Ok(n)
    }
}

fn records(n: i32) -> Vec<NewRecord<'static>> {
    (0..n)
        .map(|i| NewRecord::new(i, 1_000 + i64::from(i), Some(b"k"), Some(b"value")))
        .collect()
}

#[test]
fn header_fields_match_the_batch_view_for_every_producer_shape() {
    let mut log = Vec::new();
    let plain = BatchOptions::new(0, Compression::None);
    build_batch(&plain, records(3), &mut log).unwrap();
    let idempotent = BatchOptions::new(3, Compression::None).with_producer(7, 3, 5);
    build_batch(&idempotent, records(4), &mut log).unwrap();
    // The last sequence wraps past i32::MAX to 0 (Kafka's `incrementSequence`).
    let wrapping = BatchOptions::new(7, Compression::Lz4).with_producer(7, 3, i32::MAX - 1);
    build_batch(&wrapping, records(4), &mut log).unwrap();
    let txn = BatchOptions::new(11, Compression::None)
        .with_producer(9, 1, 0)
        .with_transactional(true);
    build_batch(&txn, records(2), &mut log).unwrap();
    let marker = BatchOptions::new(13, Compression::None)
        .with_producer(9, 1, -1)
        .with_transactional(true)
        .with_control(true);
    build_batch(&marker, records(1), &mut log).unwrap();
    // A batch the cleaner emptied keeps the producer's last sequence through its delta.
    let emptied = BatchOptions::new(14, Compression::None).with_producer(7, 4, 100);
    write_empty_batch(&emptied, 9, 2_000, &mut log).unwrap();

    let mut seen = Vec::new();
    let end = log.len() as u64;
    let file = Bytes(log.clone());
    let scan = scan_headers(&file, Path::new("x.log"), 0, end, 4096, |h| {
        seen.push(h);
        Ok(ControlFlow::<()>::Continue(()))
    })
    .unwrap();
    assert!(matches!(scan, Scan::Ended(_)));
    assert_eq!(seen.len(), 6);
    for h in &seen {
        let at = usize::try_from(h.position).unwrap();
        let batch = RecordBatch::parse(&log[at..]).unwrap();
        let expected = BatchHeader {
            position: h.position,
            size: batch.size_in_bytes() as u64,
            magic: 2,
            partition_leader_epoch: batch.partition_leader_epoch(),
            offset_field: batch.base_offset(),
            last_offset: batch.last_offset(),
            max_timestamp: batch.max_timestamp(),
            producer_id: batch.producer_id(),
            producer_epoch: batch.producer_epoch(),
            base_sequence: batch.base_sequence(),
            is_control: batch.is_control(),
            is_transactional: batch.is_transactional(),
        };
        assert_eq!(*h, expected);
        assert_eq!(
            h.last_sequence(),
            batch.last_sequence(),
            "at {}",
            h.position
        );
    }
    let last_sequences: Vec<i32> = seen.iter().map(BatchHeader::last_sequence).collect();
    assert_eq!(last_sequences, [-1, 8, 1, 1, -1, 109]);
}
