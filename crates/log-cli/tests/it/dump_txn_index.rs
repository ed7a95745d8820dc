//! `seglog dump` of a `.txnindex` Kafka cannot read: as Kafka, no entry is printed (it reads them
//! all first); instead of its stack trace, one stderr line names the file and the entry's byte
//! position, the other files are still dumped, and the exit status says problems were found.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use crate::run::{seglog, text};

#[test]
fn a_bad_version_is_reported_with_file_and_position() {
    let dir = tempfile::tempdir().unwrap();
    let good = [
        &0_i16.to_be_bytes()[..],
        &7_i64.to_be_bytes(),
        &1_i64.to_be_bytes(),
        &2_i64.to_be_bytes(),
        &1_i64.to_be_bytes(),
    ]
    .concat();
    let mut bad = good.clone();
    bad[1] = 3;
    std::fs::write(
        dir.path().join("00000000000000000000.txnindex"),
        [&good[..], &bad].concat(),
    )
    .unwrap();
    std::fs::write(dir.path().join("00000000000000000005.txnindex"), &good).unwrap();
    let out = seglog(
        &[
            "dump",
            "--files",
            "00000000000000000000.txnindex,00000000000000000005.txnindex",
        ],
        dir.path(),
        b"",
    );
    assert_eq!(
        text(&out.stdout),
        "Dumping 00000000000000000000.txnindex\nDumping 00000000000000000005.txnindex\n\
         version: 0 producerId: 7 firstOffset: 1 lastOffset: 2 lastStableOffset: 1\n"
    );
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("seglog: Unexpected aborted transaction version 3 in transaction index ")
            && stderr.contains(
                "00000000000000000000.txnindex, supported version range is 0 to 0 (the entry at byte 34)"
            ),
        "{stderr}"
    );
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}
