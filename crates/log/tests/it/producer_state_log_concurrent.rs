//! Kafka's `UnifiedLogTest.testReadCommittedWithConcurrentHighWatermarkUpdates`: a read_committed
//! read races the high watermark, which another thread keeps moving to the log end. Each
//! transaction is read while still open, so the last stable offset is at most its first offset
//! and the read from there must return nothing, whatever the high watermark does meanwhile.

#![allow(clippy::unwrap_used, reason = "tests")]

use std::sync::atomic::{AtomicBool, Ordering};

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{Isolation, LoadOptions, LogConfig, MockClock};

use crate::common;

const NOW: i64 = 1_700_000_000_000;
/// Kafka's test stops at 50; 1,000 gives 500 open-transaction reads against the racing thread,
/// a fixed bound either way.
const LAST_OFFSET: i64 = 1_000;
const PRODUCER_ID: i64 = 15;

/// One transactional record of producer 15 at `seq`.
fn txn_record(seq: i32) -> Vec<u8> {
    let mut options = BatchOptions::new(0, Compression::None);
    options.producer_id = PRODUCER_ID;
    options.producer_epoch = 0;
    options.base_sequence = seq;
    options.transactional = true;
    let value = seq.to_string();
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(
            &options,
            std::iter::once(NewRecord::new(0, NOW, None, Some(value.as_bytes()))),
            &mut out,
        )
        .unwrap();
    out
}

/// Sets its flag when dropped, so that the other thread stops even if this one panics.
struct SetOnDrop<'a>(&'a AtomicBool);

impl Drop for SetOnDrop<'_> {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
    }
}

#[test]
fn test_read_committed_with_concurrent_high_watermark_updates() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(NOW);
    let dir = common::partition_dir(root.path());
    let config = LogConfig::from_pairs([("internal.segment.bytes", "5242880")]).unwrap();
    let log = common::open(&dir, config, LoadOptions::default(), &clock).0;
    let done = AtomicBool::new(false);

    let (non_empty_reads, transactions) = std::thread::scope(|s| {
        // Thread 2 of Kafka's test: the high watermark follows the log end until the writer ends.
        s.spawn(|| {
            while !done.load(Ordering::Acquire) && log.log_end_offset() < LAST_OFFSET {
                log.set_high_watermark(log.log_end_offset());
            }
        });
        // Thread 1: single-record transactions, each read under read_committed from its own
        // offset before its ABORT.
        let writer = s.spawn(|| {
            let _stop = SetOnDrop(&done);
            let mut non_empty_reads = 0;
            let mut seq = 0;
            while log.log_end_offset() < LAST_OFFSET {
                let start = log.log_end_offset();
                log.append_as_leader(&mut txn_record(seq)).unwrap();
                seq += 1;
                let fetch = log
                    .read(start, u32::MAX, Isolation::TxnCommitted, false)
                    .unwrap();
                if fetch.region.length > 0 {
                    non_empty_reads += 1;
                }
                log.append_end_txn_marker(PRODUCER_ID, 0, 0, false, 0)
                    .unwrap();
            }
            (non_empty_reads, seq)
        });
        writer.join().unwrap()
    });
    assert_eq!(transactions, 500);
    assert_eq!(non_empty_reads, 0);
}
