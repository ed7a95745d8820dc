//! `FetchDataInfo::for_each_record`, which decodes a fetch straight from the segment's `.log`
//! mapping: the same records as `records` over a copy, and, for a damaged batch, the records
//! before it and an error naming the `.log` and the byte position, the same through the mapping
//! (`RealFs`) as through `pread` (the same log on `SimFs`, which maps nothing).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use seglog_fs::sim::SimFs;
use seglog_fs::{File, FileSystem, OpenMode, RealFs};
use seglog_log::record::Record;
use seglog_log::{Error, Isolation, LoadOptions, MockClock, PartitionLog};
use seglog_segment::naming;

/// Five batches of three records; with `damaged`, one byte of the third batch's last value
/// flipped on disk (its CRC fails).
fn log_on<F: FileSystem>(fs: &F, dir: &Path, damaged: bool) -> PartitionLog<F> {
    let (log, _) = PartitionLog::open(
        fs.clone(),
        dir,
        common::small_config(1 << 20),
        LoadOptions::default(),
        Arc::new(MockClock::new(1_000)),
    )
    .unwrap();
    let mut end = 0;
    for b in 0..5 {
        let mut batch = common::producer_batch(&format!("b{b}"), 3, 1_000 + b);
        end += batch.len() as u64;
        log.append_as_leader(&mut batch).unwrap();
        if damaged && b == 2 {
            let file = fs
                .open(&naming::log_file(dir, 0, ""), OpenMode::Existing)
                .unwrap();
            let mut byte = [0_u8];
            file.read_exact_at(&mut byte, end - 1).unwrap();
            file.write_all_at(&[byte[0] ^ 1], end - 1).unwrap();
        }
    }
    log
}

/// The records a decode handed over, and the error that ended it.
type Decoded<E> = (Vec<Record>, Option<E>);

/// What `for_each_record` gives for a fetch of everything (its records, and the error that
/// ended it), and `records` over its copy.
fn both<F: FileSystem>(
    log: &PartitionLog<F>,
) -> (Decoded<Error>, Decoded<seglog_log::record::Error>, u64) {
    let fetch = log.read(0, 1 << 20, Isolation::LogEnd, true).unwrap();
    // A stale, longer buffer: it must not be taken for a copy of the fetch.
    let mut buf = vec![0xEE; 1 << 21];
    let mut lent = Vec::new();
    let lent_error = fetch
        .for_each_record(&mut buf, |r| {
            lent.push(r);
            ControlFlow::<()>::Continue(())
        })
        .err();
    // Stopping early hands over what the callback stopped with.
    let mut seen = 0;
    let stopped = fetch.for_each_record(&mut buf, |r| {
        seen += 1;
        if seen == 4 {
            ControlFlow::Break(r.offset)
        } else {
            ControlFlow::Continue(())
        }
    });
    assert_eq!(stopped.unwrap(), Some(3));
    let mut copied = Vec::new();
    let mut failed = None;
    for record in fetch.records(&mut buf).unwrap() {
        match record {
            Ok(r) => copied.push(r),
            Err(e) => failed = Some(e),
        }
    }
    ((lent, lent_error), (copied, failed), fetch.region.position)
}

#[test]
fn for_each_record_decodes_in_place_as_records_does_over_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimFs::new();
    for damaged in [false, true] {
        let sub = dir.path().join(format!("orders-{}", u8::from(damaged)));
        let mapped = log_on(&RealFs, &sub, damaged);
        let pread = log_on(&sim, &sub, damaged);
        let ((m_out, m_res), (copied, failed), position) = both(&mapped);
        let ((p_out, p_res), _, _) = both(&pread);
        assert_eq!(m_out, copied, "damaged {damaged}");
        assert_eq!(p_out, copied, "damaged {damaged}");
        assert_eq!(copied.len(), if damaged { 6 } else { 15 });
        match (m_res, p_res, failed) {
            (None, None, None) => assert!(!damaged),
            (Some(m), Some(p), Some(copy_error)) => {
                assert!(damaged);
                assert_eq!(m.to_string(), p.to_string());
                let Error::Segment(seglog_segment::Error::Corrupt {
                    path,
                    position: at,
                    source,
                }) = m
                else {
                    panic!("not a corrupt-segment error: {m}");
                };
                assert_eq!(path, naming::log_file(&sub, 0, ""));
                assert!(matches!(
                    source,
                    seglog_log::record::Error::ChecksumMismatch { .. }
                ));
                assert_eq!(source, copy_error.clone().offset_by(position));
                assert_eq!(at, position + copy_error.position().unwrap());
            }
            (m, p, c) => panic!("mapped {m:?}, pread {p:?}, copy {c:?}"),
        }
    }
}
