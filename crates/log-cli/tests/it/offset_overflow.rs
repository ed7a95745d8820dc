//! `seglog check` reports a segment whose offsets overflow its indexes (a legacy segment written
//! before KAFKA-6264) as a problem that recovering the segment repairs, and `seglog recover`
//! repairs it by splitting the segment, as Kafka's loader does, saying so; `check` then finds
//! nothing, and every record is still there. Before recovery `consume` reads every record.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::Path;

use crate::run::{seglog, text};

/// `logs/legacy-0`: 30 records in batches of 10, closed cleanly, then the base offsets of the
/// last two batches raised by 2^31 (the CRC does not cover them): offsets 0..=9, then
/// 2^31+10..=2^31+29, in one segment based at 0.
fn overflowed(root: &Path) -> std::path::PathBuf {
    let lines: String = (1..=30).map(|i: u32| i.to_string() + "\n").collect();
    let out = seglog(
        &[
            "produce",
            "logs/legacy-0",
            "--create",
            "--batch-records",
            "10",
        ],
        root,
        lines.as_bytes(),
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let log = root.join("logs/legacy-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let mut position = 0;
    let mut batch = 0;
    while position < bytes.len() {
        let size = i32::from_be_bytes(bytes[position + 8..position + 12].try_into().unwrap());
        if batch > 0 {
            let field = &mut bytes[position..position + 8];
            let base = i64::from_be_bytes(field.try_into().unwrap());
            field.copy_from_slice(&(base + (1 << 31)).to_be_bytes());
        }
        position += 12 + usize::try_from(size).unwrap();
        batch += 1;
    }
    assert_eq!(batch, 3);
    std::fs::write(&log, bytes).unwrap();
    root.join("logs/legacy-0")
}

#[test]
fn check_reports_the_overflow_and_recover_splits_the_segment() {
    let root = tempfile::tempdir().unwrap();
    let dir = overflowed(root.path());
    // Before recovery the readers serve the segment as Kafka serves it: every record.
    let out = seglog(&["consume", "--json", "logs/legacy-0"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let consumed = text(&out.stdout);
    assert_eq!(consumed.lines().count(), 30, "{consumed}");
    assert!(consumed.contains("2147483677"), "{consumed}");
    let out = seglog(&["check", "logs/legacy-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let found = text(&out.stdout);
    assert!(found.contains("offset_overflow"), "{found}");
    let out = seglog(&["recover", "logs/legacy-0"], root.path(), b"");
    let said = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{said}{}", text(&out.stderr));
    assert!(
        said.contains("split segment 0 ") && said.contains("2147483658"),
        "{said}"
    );
    assert!(!said.contains("cut "), "{said}");
    let out = seglog(&["check", "logs/legacy-0"], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
    let logs = std::fs::read_dir(&dir)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|e| e == "log")
        })
        .count();
    assert_eq!(logs, 2);
    let out = seglog(&["consume", "--json", "logs/legacy-0"], root.path(), b"");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).lines().count(), 30);
}
