//! A partition's `leader-epoch-checkpoint` through the CLI: `produce` into a broker's partition
//! stamps the epoch its checkpoint says leads; `check` reports a checkpoint inconsistent with
//! the log (entries past the log end, entries that do not increase, a malformed file, naming the
//! file and line); `recover` truncates it to the log end as Kafka's loader does; `dump` prints
//! it, in text and in JSON.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord, batches};
use seglog_log::{
    LEADER_EPOCH_CHECKPOINT, LoadOptions, LogConfig, MockClock, PartitionLog, RealFs,
};

use crate::run::{seglog, text};

const TS: i64 = 1_700_000_000_000;

/// `logs/t-0` with offsets 0..4 under epoch 2 and 4..8 under epoch 5, closed cleanly (so the
/// checkpoint reads `2 0`, `5 4`).
fn partition(root: &Path) -> PathBuf {
    let dir = root.join("logs").join("t-0");
    let (log, _) = PartitionLog::open(
        RealFs,
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(MockClock::new(TS)),
    )
    .unwrap();
    for (base, epoch) in [(0, 2), (4, 5)] {
        let mut options = BatchOptions::new(base, Compression::None);
        options.partition_leader_epoch = epoch;
        let records = (0..4).map(|i| NewRecord::new(i, TS, None, Some(b"value")));
        let mut out = Vec::new();
        BatchBuilder::new()
            .build(&options, records, &mut out)
            .unwrap();
        log.append_as_follower(&out).unwrap();
    }
    log.close().unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap(),
        "0\n2\n2 0\n5 4\n"
    );
    dir
}

#[test]
fn produce_stamps_the_checkpoints_latest_epoch() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition(root.path());
    let out = seglog(&["produce", "logs/t-0"], root.path(), b"a\nb\n");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let mut logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    let mut epochs: Vec<(i64, i32)> = Vec::new();
    for log in logs {
        let bytes = std::fs::read(log).unwrap();
        epochs.extend(
            batches(&bytes)
                .map(|b| b.unwrap().v2().unwrap())
                .map(|b| (b.base_offset(), b.partition_leader_epoch())),
        );
    }
    assert_eq!(epochs, [(0, 2), (4, 5), (8, 5)]);
    // Epoch 5 already started at 4: the checkpoint is unchanged.
    assert_eq!(
        std::fs::read_to_string(dir.join(LEADER_EPOCH_CHECKPOINT)).unwrap(),
        "0\n2\n2 0\n5 4\n"
    );
}

#[test]
fn check_reports_an_inconsistent_checkpoint_and_recover_truncates_it() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition(root.path());
    let cwd = root.path();
    let checkpoint = dir.join(LEADER_EPOCH_CHECKPOINT);
    assert_eq!(
        seglog(&["check", "logs/t-0"], cwd, b"").status.code(),
        Some(0)
    );

    // A tail lost from offset 8 where epoch 7 had begun, past the log end (8)...
    std::fs::write(&checkpoint, "0\n3\n2 0\n5 4\n7 9\n").unwrap();
    let out = seglog(&["check", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.lines().any(|l| l.contains(LEADER_EPOCH_CHECKPOINT)
            && l.contains("at byte 12")
            && l.contains("line 5")
            && l.contains("leader_epoch_past_log_end")),
        "{stdout}"
    );
    // ...repaired by recover as Kafka's loader repairs it.
    let out = seglog(&["recover", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains("leader-epoch-checkpoint: removed 7@9"),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&checkpoint).unwrap(),
        "0\n2\n2 0\n5 4\n"
    );
    assert_eq!(
        seglog(&["check", "logs/t-0"], cwd, b"").status.code(),
        Some(0)
    );

    // Epochs that do not increase.
    std::fs::write(&checkpoint, "0\n2\n5 0\n2 4\n").unwrap();
    let out = seglog(&["check", "--json", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("\"kind\":\"leader_epoch_not_increasing\"") && stdout.contains("line 4"),
        "{stdout}"
    );

    // A malformed file, named with its line.
    std::fs::write(&checkpoint, "0\n2\n2 0\nfive 4\n").unwrap();
    let out = seglog(&["check", "logs/t-0"], cwd, b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("bad_leader_epoch_checkpoint")
            && stdout.contains("line 4")
            && stdout.contains("Malformed line"),
        "{stdout}"
    );
}

#[test]
fn recover_re_adds_lost_entries_from_the_batches() {
    let root = tempfile::tempdir().unwrap();
    let dir = partition(root.path());
    let checkpoint = dir.join(LEADER_EPOCH_CHECKPOINT);
    std::fs::write(&checkpoint, "0\n0\n").unwrap();
    // No clean-shutdown marker in logs/: recovery scans from the recovery point (none: 0).
    let out = seglog(&["recover", "logs/t-0", "--json"], root.path(), b"");
    let stdout = text(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}{}", text(&out.stderr));
    assert!(
        stdout.contains(
            "\"leader_epochs_rebuilt\":[{\"epoch\":2,\"start_offset\":0},{\"epoch\":5,\"start_offset\":4}]"
        ),
        "{stdout}"
    );
    assert_eq!(
        std::fs::read_to_string(&checkpoint).unwrap(),
        "0\n2\n2 0\n5 4\n"
    );
}

#[test]
fn dump_prints_the_checkpoint() {
    let root = tempfile::tempdir().unwrap();
    partition(root.path());
    let file = format!("logs/t-0/{LEADER_EPOCH_CHECKPOINT}");
    let out = seglog(&["dump", "--files", &file], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "Dumping {file}\nleader epoch checkpoint version: 0 entries: 2\n\
             epoch: 2 startOffset: 0\nepoch: 5 startOffset: 4\n"
        )
    );
    let out = seglog(&["dump", "--json", "--files", &file], root.path(), b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let lines: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[1].contains("\"epoch\":5") && lines[1].contains("\"start_offset\":4"));
    // A malformed one fails naming the line.
    std::fs::write(root.path().join(&file), "0\n1\nx\n").unwrap();
    let out = seglog(&["dump", "--files", &file], root.path(), b"");
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("line 3"),
        "{}",
        text(&out.stderr)
    );
}
