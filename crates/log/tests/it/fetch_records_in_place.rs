//! `FetchDataInfo::for_each_record` and `for_each_record_ref`, which decode a fetch straight from
//! the segment's `.log` mapping: the same records as `records` over a copy, and, for a damaged
//! batch, the records before it and an error naming the `.log` and the byte position, the same
//! through the mapping (`RealFs`) as through `pread` (the same log on `SimFs`, which maps
//! nothing). The reused record of `for_each_record_ref` carries nothing over from the record
//! before it (a null key or value, no headers).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use seglog_fs::sim::SimFs;
use seglog_fs::{File, FileSystem, OpenMode, RealFs};
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, Header, NewRecord, Record};
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
    // The same records and error lent one by one.
    let mut reused = Vec::new();
    let reused_error = fetch
        .for_each_record_ref(&mut buf, |r| {
            reused.push(r.clone());
            ControlFlow::<()>::Continue(())
        })
        .err();
    assert_eq!(reused, lent);
    assert_eq!(
        reused_error.as_ref().map(ToString::to_string),
        lent_error.as_ref().map(ToString::to_string)
    );
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
    let mut seen = 0;
    let stopped = fetch.for_each_record_ref(&mut buf, |r| {
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

/// One batch of records whose keys, values and headers come and go from one record to the
/// next, uncompressed or compressed.
fn mixed_batch(base: i64, compression: Compression) -> Vec<u8> {
    let hs = [Header::new(b"h", b"1"), Header::new(b"h", b"2")];
    let records = [
        NewRecord::new(0, 10, Some(b"key-0"), Some(b"a long value")).with_headers(&hs),
        NewRecord::new(1, 11, None, Some(b"v")),
        NewRecord::new(2, 12, Some(b"k"), None),
        NewRecord::new(3, 13, None, None),
        NewRecord::new(4, 14, Some(b""), Some(b"")),
        NewRecord::new(5, 15, Some(b"key-5"), Some(b"value-5")).with_headers(&hs[..1]),
        NewRecord::new(6, 16, Some(b"key-6"), Some(b"value-6")),
    ];
    let mut out = Vec::new();
    BatchBuilder::new()
        .build(&BatchOptions::new(base, compression), records, &mut out)
        .unwrap();
    out
}

#[test]
fn for_each_record_ref_lends_each_record_with_nothing_left_of_the_one_before() {
    let dir = tempfile::tempdir().unwrap();
    let (log, _) = PartitionLog::open(
        RealFs,
        &dir.path().join("mixed-0"),
        common::small_config(1 << 20),
        LoadOptions::default(),
        Arc::new(MockClock::new(1_000)),
    )
    .unwrap();
    log.append_as_follower(&mixed_batch(0, Compression::None))
        .unwrap();
    log.append_as_follower(&mixed_batch(7, Compression::Gzip))
        .unwrap();
    log.append_as_follower(&mixed_batch(14, Compression::None))
        .unwrap();
    let fetch = log.read(0, 1 << 20, Isolation::LogEnd, true).unwrap();
    let mut buf = Vec::new();
    let mut owned = Vec::new();
    fetch
        .for_each_record(&mut buf, |r| {
            owned.push(r);
            ControlFlow::<()>::Continue(())
        })
        .unwrap();
    let mut lent = Vec::new();
    fetch
        .for_each_record_ref(&mut buf, |r| {
            lent.push(r.clone());
            ControlFlow::<()>::Continue(())
        })
        .unwrap();
    assert_eq!(owned.len(), 21);
    assert_eq!(lent, owned);
    // What the records hold, not only that both ways agree.
    assert_eq!(owned[1].key, None);
    assert_eq!(owned[2].value, None);
    assert!(owned[1].headers.is_empty());
    assert_eq!(owned[4].key.as_deref(), Some(&b""[..]));
    assert_eq!(owned[5].headers.len(), 1);
    assert_eq!(owned[14].value.as_deref(), Some(&b"a long value"[..]));
    log.close().unwrap();
}
