//! Recovery that reasons and never acking what cannot be read (issue 17, points 6 and 7), with
//! the real binary on real files: a partition of ten batches (offsets 0..=29) damaged in one
//! batch's header; `check` must name that batch, `consume` must report instead of returning
//! records at offsets the batch cannot hold, and `recover` must keep exactly the batches before
//! it, never raising the log end offset. And a 70 MB gzip line is refused, nothing acked.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;

use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord};
use seglog_log::{LoadOptions, LogConfig, PartitionLog, RealFs, SystemClock};

fn seglog(args: &[&str], stdin: &[u8]) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let _ = input.write_all(stdin);
    drop(input);
    let out = child.wait_with_output().unwrap();
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("panicked"),
        "{out:?}"
    );
    out
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A partition `t-0` in a log directory, ten batches of three records ("r0".."r29"), closed
/// uncleanly (no clean-shutdown marker, so a load recovers). Returns the partition directory, the
/// `.log` and each batch's position.
fn partition(root: &Path, codec: Compression) -> (PathBuf, PathBuf, Vec<usize>) {
    let dir = root.join("t-0");
    let (log, _) = PartitionLog::open(
        RealFs,
        &dir,
        LogConfig::default(),
        LoadOptions::default(),
        Arc::new(SystemClock),
    )
    .unwrap();
    let mut builder = BatchBuilder::new();
    let mut positions = Vec::new();
    let mut at = 0;
    for b in 0..10 {
        let values: Vec<Vec<u8>> = (b * 3..b * 3 + 3)
            .map(|i| format!("r{i}").into_bytes())
            .collect();
        let records = values
            .iter()
            .zip(0..)
            .map(|(v, i)| NewRecord::new(i, 1_700_000_000_000, None, Some(&v[..])));
        let mut batch = Vec::new();
        builder
            .build(&BatchOptions::new(0, codec), records, &mut batch)
            .unwrap();
        positions.push(at);
        at += batch.len();
        log.append_as_leader(&mut batch).unwrap();
    }
    log.flush().unwrap();
    drop(log);
    let file = dir.join("00000000000000000000.log");
    (dir, file, positions)
}

fn edit(path: &Path, f: impl FnOnce(&mut Vec<u8>)) {
    let mut bytes = std::fs::read(path).unwrap();
    f(&mut bytes);
    std::fs::write(path, &bytes).unwrap();
}

fn recrc(bytes: &mut [u8], at: usize) {
    let size = i32::from_be_bytes(bytes[at + 8..at + 12].try_into().unwrap());
    let end = at + 12 + usize::try_from(size).unwrap();
    let crc = seglog_log::record::RecordBatch::parse(&bytes[at..end])
        .unwrap()
        .compute_crc();
    bytes[at + 17..at + 21].copy_from_slice(&crc.to_be_bytes());
}

fn latest(dir: &Path) -> String {
    let out = seglog(&["offsets", dir.to_str().unwrap(), "--latest"], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    // topic:partition:offset, as kafka-get-offsets.sh prints it.
    text(&out.stdout)
        .trim()
        .rsplit(':')
        .next()
        .unwrap()
        .to_owned()
}

fn consumed(dir: &Path) -> (Option<i32>, Vec<String>, String) {
    let out = seglog(&["consume", dir.to_str().unwrap(), "--from-beginning"], b"");
    let lines = text(&out.stdout).lines().map(str::to_owned).collect();
    (out.status.code(), lines, text(&out.stderr))
}

fn expected(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("r{i}")).collect()
}

/// `check`, `consume` before recovery, `recover`, then `consume`, `offsets` and `check` after.
fn judge(dir: &Path, log: &Path, at: usize, kind: &str, base: i64) {
    let out = seglog(&["check", dir.to_str().unwrap()], b"");
    let report = text(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{report}");
    let named = format!("{}: at byte {at}: {kind}", log.display());
    assert!(report.contains(&named), "{named} not in:\n{report}");
    assert!(report.contains(&format!("base offset {base})")), "{report}");
    assert_eq!(
        report.lines().count(),
        2,
        "one problem and the summary: {report}"
    );

    let (code, lines, stderr) = consumed(dir);
    assert_eq!(code, Some(1), "consume reports the damage: {lines:?}");
    assert!(
        stderr.contains(&format!("{}", log.display())) && stderr.contains(&format!("byte {at}")),
        "{stderr}"
    );
    // Nothing at an offset the batch cannot hold: at most the records before it.
    assert!(
        lines.len() <= 15 && lines == expected(lines.len()),
        "{lines:?}"
    );

    let out = seglog(&["recover", dir.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        latest(dir),
        "15",
        "the log end offset is what the batches prove"
    );
    let (code, lines, stderr) = consumed(dir);
    assert_eq!((code, lines), (Some(0), expected(15)), "{stderr}");
    let out = seglog(&["check", dir.to_str().unwrap()], b"");
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stdout));
}

#[test]
fn a_raised_base_offset_is_named_and_cut_and_the_log_end_does_not_jump() {
    for codec in [Compression::None, Compression::Gzip] {
        let root = tempfile::tempdir().unwrap();
        let (dir, log, positions) = partition(root.path(), codec);
        let at = positions[5];
        edit(&log, |b| b[at + 4] ^= 0x40); // base offset 15 + 2^30, outside the CRC
        judge(&dir, &log, at, "damaged_base_offset", 15 + (1 << 30));
    }
}

#[test]
fn a_wrong_record_count_with_a_valid_crc_is_named_and_cut() {
    for codec in [Compression::None, Compression::Gzip] {
        for count in [0, 2] {
            let root = tempfile::tempdir().unwrap();
            let (dir, log, positions) = partition(root.path(), codec);
            let at = positions[5];
            edit(&log, |b| {
                b[at + 57..at + 61].copy_from_slice(&i32::to_be_bytes(count));
                recrc(b, at);
            });
            judge(&dir, &log, at, "undecodable_records", 15);
        }
    }
}

#[test]
fn a_gzip_line_no_reader_could_decompress_is_refused_and_nothing_is_acked() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("t-0");
    let d = dir.to_str().unwrap();
    let out = seglog(&["produce", d, "--create", "--print-acks"], b"first\n");
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let mut line = vec![b'x'; 70_000_000];
    line.push(b'\n');
    let out = seglog(
        &["produce", d, "--compression", "gzip", "--print-acks"],
        &line,
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(text(&out.stdout).is_empty(), "nothing acked: {out:?}");
    assert!(
        stderr.contains(d) && stderr.contains("700000") && stderr.contains("67108864"),
        "names the partition and both sizes: {stderr}"
    );
    assert_eq!(latest(&dir), "1", "nothing appended");
    // The same line uncompressed passes the topic's max.message.bytes no better.
    let out = seglog(&["produce", d, "--print-acks"], &line);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("max"), "{}", text(&out.stderr));
    assert_eq!(latest(&dir), "1");
}

#[test]
fn produce_help_states_the_shared_limit() {
    let out = seglog(&["produce", "--help"], b"");
    let help = text(&out.stdout);
    let limit = seglog_log::record::DEFAULT_MAX_DECOMPRESSED_BYTES.to_string();
    assert!(help.contains(&limit), "{help}");
    assert!(help.contains("max.message.bytes"), "{help}");
}
