//! `seglog dump` of producer `.snapshot` files prints what Kafka 4.4's `kafka-dump-log.sh` printed
//! for the same files, byte for byte on stdout and stderr (testdata/producer-state/dump.out and
//! dump.err; the files were written by Kafka's own ProducerStateManager, three of them damaged).

#![allow(clippy::unwrap_used, reason = "tests")]

use std::path::Path;

use crate::run::{seglog, text};

#[test]
fn dump_of_snapshots_equals_kafkas_output() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/producer-state");
    let files = [
        "00000000000000000012.snapshot",
        "00000000000000000019.snapshot",
        "00000000000000000028.snapshot",
        "00000000000000000029.snapshot",
        "corrupt/00000000000000000001.snapshot",
        "corrupt/00000000000000000002.snapshot",
        "corrupt/00000000000000000003.snapshot",
    ]
    .join(",");
    let out = seglog(&["dump", "--files", &files], &dir, b"");
    let expected_out = std::fs::read_to_string(dir.join("dump.out")).unwrap();
    let expected_err = std::fs::read_to_string(dir.join("dump.err")).unwrap();
    assert_eq!(text(&out.stdout), expected_out);
    assert_eq!(text(&out.stderr), expected_err);
    // Kafka exits 0 after a corrupt snapshot; seglog says that the data has problems.
    assert!(!out.status.success());

    let good = seglog(
        &["dump", "--files", "00000000000000000019.snapshot"],
        &dir,
        b"",
    );
    assert!(good.status.success(), "{}", text(&good.stderr));
    assert!(
        text(&good.stdout).starts_with("Dumping 00000000000000000019.snapshot\nproducerId: 2000 ")
    );
}
