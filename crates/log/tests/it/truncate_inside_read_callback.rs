//! A callback of `FetchDataInfo::for_each_record` that truncates, truncates fully or closes the
//! log it reads, or closes its log directory: each used to wait for the callback's own loan of the `.log`'s bytes, on the
//! callback's own thread, forever. Each is now refused before changing anything, with an error
//! naming the `.log`, and the log stays consistent and usable: the same records, and the same
//! truncation, append and close succeed once the callback returned.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::common;

use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;

use seglog_fs::RealFs;
use seglog_log::record::Record;
use seglog_log::{
    Error, Isolation, LoadOptions, LogDir, LogDirOptions, MockClock, PartitionLog, TopicPartition,
};
use seglog_segment::naming;

/// Five batches of three records (offsets 0..15), one segment each (based at 0, 3, .., 12).
fn log_in(dir: &Path) -> PartitionLog<RealFs> {
    let (log, _) = PartitionLog::open(
        RealFs,
        dir,
        common::small_config(150),
        LoadOptions::default(),
        Arc::new(MockClock::new(1_000)),
    )
    .unwrap();
    for b in 0..5 {
        log.append_as_leader(&mut common::producer_batch(&format!("b{b}"), 3, 1_000 + b))
            .unwrap();
    }
    log
}

/// Every record of the log, one fetch per segment.
fn all_records(log: &PartitionLog<RealFs>) -> Vec<Record> {
    let mut records = Vec::new();
    while records.len() < usize::try_from(log.log_end_offset()).unwrap() {
        let from = records.last().map_or(0, |r: &Record| r.offset + 1);
        let fetch = log.read(from, 1 << 20, Isolation::LogEnd, true).unwrap();
        fetch
            .for_each_record(&mut Vec::new(), |r| {
                records.push(r);
                ControlFlow::<()>::Continue(())
            })
            .unwrap();
    }
    records
}

/// Checks that `result` is the refusal of `op` naming the segment's `.log`.
fn refused<T: std::fmt::Debug>(result: Result<T, Error>, op: &str, log_file: &Path) {
    let err = result.unwrap_err();
    assert!(err.is_loan_held(), "{op}: {err:?}");
    let Error::Segment(seglog_segment::Error::LoanHeld { path, op: what }) = &err else {
        panic!("{op}: {err:?}");
    };
    assert_eq!((path.as_path(), *what), (log_file, op));
    let message = err.to_string();
    assert!(
        message.contains(&log_file.display().to_string()),
        "{message}"
    );
    assert!(message.starts_with(&format!("{op} of ")), "{message}");
}

#[test]
fn a_callback_that_truncates_or_closes_its_own_log_gets_an_error_and_the_log_stays_usable() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("orders-0");
    let log = log_in(&dir);
    // The segment read from is not the last: a truncation into it also removes those above.
    let log_file = naming::log_file(&dir, 3, "");
    let before = all_records(&log);
    assert_eq!((before.len(), log.segment_count()), (15, 5));

    let fetch = log.read(3, 1 << 20, Isolation::LogEnd, true).unwrap();
    let mut seen = Vec::new();
    let stopped = fetch
        .for_each_record(&mut Vec::new(), |r| {
            seen.push(r.offset);
            if r.offset < 4 {
                return ControlFlow::Continue(());
            }
            // Inside the loan of the batch holding offsets 3..=5: every operation that would
            // wait for it is refused, and leaves the log as it was.
            refused(log.truncate_to(3), "truncate", &log_file);
            refused(log.truncate_fully_and_start_at(3), "delete", &log_file);
            refused(log.close(), "close", &log_file);
            assert_eq!((log.log_end_offset(), log.segment_count()), (15, 5));
            assert_eq!(log.pending_deletes(), 0);
            // What waits for no loan still works from here.
            assert!(
                !log.truncate_to(15).unwrap(),
                "nothing at or past the log end"
            );
            ControlFlow::Break(r.offset)
        })
        .unwrap();
    assert_eq!(stopped, Some(4));
    assert_eq!(seen, [3, 4]);

    // Consistent: the same records; usable: the truncation refused above, an append at the
    // freed offsets, a read of both, and a close.
    assert_eq!((log.log_end_offset(), log.segment_count()), (15, 5));
    assert_eq!(all_records(&log), before);
    assert!(log.truncate_to(3).unwrap());
    assert_eq!((log.log_end_offset(), log.segment_count()), (3, 2));
    let appended = log
        .append_as_leader(&mut common::producer_batch("again", 3, 2_000))
        .unwrap();
    assert_eq!(appended.first_offset, 3);
    let after = all_records(&log);
    assert_eq!(after[..3], before[..3]);
    let offsets: Vec<i64> = after.iter().map(|r| r.offset).collect();
    assert_eq!(offsets, (0..6).collect::<Vec<_>>());
    assert_eq!(after[3].value.as_deref(), Some(&b"again-0"[..]));
    log.close().unwrap();
}

#[test]
fn a_lent_record_callback_that_truncates_its_own_log_gets_an_error_too() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("orders-0");
    let log = log_in(&dir);
    let log_file = naming::log_file(&dir, 3, "");
    let before = all_records(&log);
    let fetch = log.read(3, 1 << 20, Isolation::LogEnd, true).unwrap();
    let stopped = fetch
        .for_each_record_ref(&mut Vec::new(), |r| {
            refused(log.truncate_to(3), "truncate", &log_file);
            refused(log.close(), "close", &log_file);
            ControlFlow::Break(r.offset)
        })
        .unwrap();
    assert_eq!(stopped, Some(3));
    assert_eq!(all_records(&log), before);
    assert!(log.truncate_to(3).unwrap());
    log.close().unwrap();
}

#[test]
fn a_callback_reading_another_log_refuses_nothing_of_this_one() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a-0"), dir.path().join("b-0"));
    let (reading, other) = (log_in(&a), log_in(&b));
    let fetch = reading.read(0, 1 << 20, Isolation::LogEnd, true).unwrap();
    fetch
        .for_each_record(&mut Vec::new(), |_| {
            assert!(other.truncate_to(4).unwrap());
            other.close().unwrap();
            ControlFlow::Break(())
        })
        .unwrap();
    assert_eq!(other.log_end_offset(), 4);
    assert_eq!(all_records(&reading).len(), 15);
}

#[test]
fn a_callback_that_closes_its_log_directory_gets_an_error_and_the_directory_stays_open() {
    let root = tempfile::tempdir().unwrap();
    let clock = MockClock::new(1_000);
    let options = LogDirOptions::default().with_time(Arc::new(clock));
    let (dir, _) = LogDir::open(RealFs, root.path(), options).unwrap();
    // `LogDir::close` closes its logs in order: "audit" would go before the one read from.
    let first = dir
        .create_log(&TopicPartition::new("audit", 0), None)
        .unwrap();
    let log = dir
        .create_log(&TopicPartition::new("orders", 0), None)
        .unwrap();
    for l in [&first, &log] {
        l.append_as_leader(&mut common::producer_batch("b", 3, 1_000))
            .unwrap();
    }
    let fetch = log.read(0, 1 << 20, Isolation::LogEnd, true).unwrap();
    fetch
        .for_each_record(&mut Vec::new(), |_| {
            let log_file = naming::log_file(log.dir(), 0, "");
            refused(dir.close(), "close", &log_file);
            ControlFlow::Break(())
        })
        .unwrap();
    // Still open, every log of it: they take appends, and the close goes through now.
    for l in [&first, &log] {
        let appended = l
            .append_as_leader(&mut common::producer_batch("c", 3, 1_000))
            .unwrap();
        assert_eq!(appended.first_offset, 3);
        assert_eq!(all_records(l).len(), 6);
    }
    dir.close().unwrap();
}
