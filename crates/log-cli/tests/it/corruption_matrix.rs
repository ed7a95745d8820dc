//! The corruption matrix on real files (reliability issue, part 3): a partition written with every
//! codec is damaged one way at a time (bit flips in each region of a batch and in index entries,
//! truncation at every byte of the last batch, zero-filled tails, broken, short, empty and missing
//! indexes, every combination of `.deleted`, `.cleaned` and `.swap` leftovers, bad checkpoints, a
//! segment overlapping its predecessor). Then:
//! - `seglog check` must report the damage, naming the file and, where the damage is inside a
//!   file, the byte position;
//! - `seglog recover` must succeed, after which `check` passes and `consume` returns exactly the
//!   prefix of the written records that the damage left valid (all of them when only derived data,
//!   an index or a leftover, was hit);
//! - a plain library open (no forced recovery) must not panic, and whatever it reads must be a
//!   prefix of what was written;
//! - nothing outside the log directory changes (a sibling directory and a file next to it are
//!   compared before and after).
//!
//! The cases and their outcomes are listed in docs/reliability.md, section 3.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::OnceLock;

use seglog_log::RealFs;
use seglog_log::record::{BatchBuilder, BatchOptions, Compression, NewRecord, batches};
use seglog_log::{Isolation, LogConfig, LogDir, LogDirOptions, TopicPartition};

const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];
/// Batches in the template log; the codec cycles through `CODECS`, the last batch is uncompressed.
const BATCHES: usize = 26;
const RECORDS_PER_BATCH: usize = 4;
const PARTITION: &str = "t-0";

fn value(offset: usize) -> Vec<u8> {
    format!("value-{offset:05}-{}", "x".repeat(offset % 7)).into_bytes()
}

fn options(recover_all: bool) -> LogDirOptions {
    LogDirOptions::default()
        .with_recovery_threads(1)
        .with_recover_all(recover_all)
}

/// The template: a log directory with one partition of several segments, closed cleanly.
fn template() -> &'static Path {
    static TEMPLATE: OnceLock<tempfile::TempDir> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let dir = tempfile::tempdir().unwrap();
            let (log_dir, _) = LogDir::open(RealFs, dir.path(), options(false)).unwrap();
            let config = LogConfig::from_pairs([
                ("internal.segment.bytes", "1100"),
                ("index.interval.bytes", "1"),
            ])
            .unwrap();
            let log = log_dir
                .create_log(&TopicPartition::new("t", 0), Some(config))
                .unwrap();
            let mut builder = BatchBuilder::new();
            let mut offset = 0;
            for b in 0..BATCHES {
                let codec = if b + 1 == BATCHES {
                    Compression::None
                } else {
                    CODECS[b % CODECS.len()]
                };
                let values: Vec<Vec<u8>> =
                    (offset..offset + RECORDS_PER_BATCH).map(value).collect();
                let first = i64::try_from(offset).unwrap();
                let records = values.iter().zip(0..).map(|(v, i)| {
                    NewRecord::new(
                        i,
                        1_700_000_000_000 + first + i64::from(i),
                        None,
                        Some(&v[..]),
                    )
                });
                let mut batch = Vec::new();
                builder
                    .build(&BatchOptions::new(0, codec), records, &mut batch)
                    .unwrap();
                log.append_as_leader(&mut batch).unwrap();
                offset += RECORDS_PER_BATCH;
            }
            drop(log);
            log_dir.close().unwrap();
            dir
        })
        .path()
}

/// One batch of a `.log` file, as laid out on disk.
#[derive(Debug, Clone, Copy)]
struct BatchAt {
    position: u64,
    size: u64,
    base_offset: usize,
    codec: u8,
}

/// The segments of the template partition: base offset -> (file stem, batches).
fn layout(partition: &Path) -> BTreeMap<usize, (String, Vec<BatchAt>)> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(partition).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let Some(stem) = name.strip_suffix(".log") else {
            continue;
        };
        let bytes = std::fs::read(&path).unwrap();
        let mut batches = Vec::new();
        let mut position = 0;
        while position + 61 <= bytes.len() {
            let base = i64::from_be_bytes(bytes[position..position + 8].try_into().unwrap());
            let length = i32::from_be_bytes(bytes[position + 8..position + 12].try_into().unwrap());
            let size = 12 + usize::try_from(length).unwrap();
            batches.push(BatchAt {
                position: position as u64,
                size: size as u64,
                base_offset: usize::try_from(base).unwrap(),
                codec: bytes[position + 22] & 0x07,
            });
            position += size;
        }
        out.insert(stem.parse().unwrap(), (stem.to_owned(), batches));
    }
    out
}

/// A fresh copy of the template inside `root/logs`, with a sibling directory and a file next to
/// the log directory that must stay untouched.
struct Sandbox {
    _root: tempfile::TempDir,
    logs: PathBuf,
    partition: PathBuf,
    outside: Vec<PathBuf>,
}

impl Sandbox {
    fn new() -> Self {
        let root = tempfile::tempdir().unwrap();
        let logs = root.path().join("logs");
        copy_dir(template(), &logs);
        let sibling = root.path().join("sibling-0");
        std::fs::create_dir(&sibling).unwrap();
        std::fs::write(sibling.join("00000000000000000000.log"), b"not yours").unwrap();
        std::fs::write(root.path().join("next-to-logs.txt"), b"not yours either").unwrap();
        Self {
            partition: logs.join(PARTITION),
            logs,
            outside: vec![sibling, root.path().join("next-to-logs.txt")],
            _root: root,
        }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.partition.join(name)
    }

    /// Everything outside the log directory: paths, sizes, contents and modification times.
    fn outside_state(&self) -> Vec<(PathBuf, Vec<u8>, std::time::SystemTime)> {
        let mut out = Vec::new();
        let mut stack = self.outside.clone();
        while let Some(path) = stack.pop() {
            let meta = std::fs::metadata(&path).unwrap();
            if meta.is_dir() {
                for e in std::fs::read_dir(&path).unwrap() {
                    stack.push(e.unwrap().path());
                }
                out.push((path, Vec::new(), meta.modified().unwrap()));
            } else {
                let bytes = std::fs::read(&path).unwrap();
                out.push((path, bytes, meta.modified().unwrap()));
            }
        }
        out.sort();
        out
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

fn seglog(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_seglog"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn assert_no_panic(what: &str, out: &Output) {
    let stderr = text(&out.stderr);
    assert!(
        !stderr.contains("panicked") && out.status.code().is_some(),
        "{what}: panic or signal: {} {stderr}",
        out.status
    );
}

/// What `check` must say about a case before recovery.
#[derive(Debug, Clone)]
enum Report {
    /// A problem in this file (name inside the partition, or `../name` in the log directory), at
    /// this byte position when given.
    At(String, Option<u64>),
    /// A problem in this file at some byte position (which one depends on what the damage did).
    AtSomeByte(String),
    /// A note about this file, a state Kafka accepts at start-up: `check` exits 0.
    Note(String),
    /// Nothing: the damage is invisible to `check` (documented with the case).
    Nothing,
}

/// One corruption case.
struct Case {
    name: String,
    report: Report,
    /// How many records (a prefix of the written ones) survive `recover`.
    keep: usize,
}

fn total() -> usize {
    BATCHES * RECORDS_PER_BATCH
}

/// Runs one case: `damage` is applied to a fresh sandbox, then check, recover, check, consume,
/// and (on a second copy) a plain open.
fn run_case(case: &Case, damage: &dyn Fn(&Sandbox)) {
    let name = &case.name;
    let sandbox = Sandbox::new();
    damage(&sandbox);
    let before = sandbox.outside_state();
    let plain = Sandbox::new();
    damage(&plain);

    // check: exit 1 and a line naming the file (and position), or exit 0 when invisible.
    let partition = sandbox.partition.to_str().unwrap();
    let out = seglog(&["check", partition]);
    assert_no_panic(name, &out);
    let stdout = text(&out.stdout);
    match &case.report {
        Report::At(file, _) | Report::AtSomeByte(file) => {
            assert_eq!(
                out.status.code(),
                Some(1),
                "{name}: check: {stdout}{}",
                text(&out.stderr)
            );
            let path = match file.strip_prefix("../") {
                Some(in_log_dir) => sandbox.logs.join(in_log_dir),
                None => sandbox.partition.join(file),
            };
            let path = path.to_str().unwrap();
            let line = stdout
                .lines()
                .find(|l| l.starts_with(&format!("{path}:")))
                .unwrap_or_else(|| panic!("{name}: check does not name {path}:\n{stdout}"));
            // Shown with --nocapture: the table in docs/reliability.md is made from these.
            eprintln!("CASE {name}: CHECK {}", line.replacen(path, "", 1));
            match &case.report {
                Report::At(_, Some(p)) => assert!(
                    line.contains(&format!("at byte {p}:")),
                    "{name}: check does not name byte {p}: {line}"
                ),
                Report::AtSomeByte(_) => assert!(
                    line.starts_with(&format!("{path}: at byte ")),
                    "{name}: check names no byte position: {line}"
                ),
                _ => {}
            }
        }
        Report::Note(file) => {
            assert_eq!(out.status.code(), Some(0), "{name}: check: {stdout}");
            let path = sandbox.partition.join(file);
            let path = path.to_str().unwrap();
            let line = stdout
                .lines()
                .find(|l| l.starts_with(&format!("{path}: note: ")))
                .unwrap_or_else(|| panic!("{name}: check has no note on {path}:\n{stdout}"));
            eprintln!("CASE {name}: CHECK {}", line.replacen(path, "", 1));
        }
        Report::Nothing => {
            assert_eq!(out.status.code(), Some(0), "{name}: check: {stdout}");
        }
    }

    // recover (a full pass: the damage came after a clean shutdown), then check passes and the
    // records are exactly the valid prefix.
    let out = seglog(&["recover", "--full", partition]);
    assert_no_panic(name, &out);
    assert!(
        out.status.success(),
        "{name}: recover: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    let out = seglog(&["check", partition]);
    assert!(
        out.status.success(),
        "{name}: check after recover: {}",
        text(&out.stdout)
    );
    let out = seglog(&["consume", partition, "--json", "--json-bytes", "base64"]);
    assert!(
        out.status.success(),
        "{name}: consume: {}",
        text(&out.stderr)
    );
    let got: Vec<(i64, Vec<u8>)> = text(&out.stdout)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let value = v["payload"].as_str().unwrap();
            (v["offset"].as_i64().unwrap(), base64_decode(value))
        })
        .collect();
    let want: Vec<(i64, Vec<u8>)> = (0..case.keep)
        .map(|o| (i64::try_from(o).unwrap(), value(o)))
        .collect();
    assert_eq!(got.len(), want.len(), "{name}: records after recover");
    assert!(
        got == want,
        "{name}: the records after recover are not the written prefix"
    );

    // A plain open (recovery only as the clean-shutdown marker and recovery point ask).
    plain_open(name, &plain);

    assert!(
        before == sandbox.outside_state(),
        "{name}: something outside the log directory changed"
    );
}

/// Opens without forcing recovery and reads from the log start: no panic, and every record read
/// is the written one at its offset.
fn plain_open(name: &str, sandbox: &Sandbox) {
    let before = sandbox.outside_state();
    let opened = LogDir::open(RealFs, &sandbox.logs, options(false));
    let Ok((dir, _)) = opened else {
        // A clean error is allowed; it must name a file.
        let e = opened.err().unwrap().to_string();
        assert!(
            e.contains('/'),
            "{name}: plain open failed without naming a file: {e}"
        );
        return;
    };
    if let Some(log) = dir.log(&TopicPartition::new("t", 0)) {
        let mut next = log.log_start_offset();
        let mut bytes = Vec::new();
        'read: while next < log.log_end_offset() {
            let Ok(fetch) = log.read(next, 1 << 16, Isolation::LogEnd, true) else {
                break;
            };
            if fetch.read_into(&mut bytes).is_err() || bytes.is_empty() {
                break;
            }
            let before_next = next;
            for batch in batches(&bytes) {
                // A reader validates (a Kafka consumer checks CRCs), then decodes.
                let decoded = batch
                    .and_then(|b| b.decode())
                    .and_then(|b| b.validate().map(|()| b));
                let Ok(records) = decoded.and_then(|b| b.to_records()) else {
                    break 'read;
                };
                let from = next;
                for r in records.iter().filter(|r| r.offset >= from) {
                    // A read at a damaged batch may skip to a later segment, as Kafka's
                    // LocalLog.read does; it must never return what was not written.
                    assert!(
                        r.offset >= next,
                        "{name}: plain open read offsets backwards"
                    );
                    let o = usize::try_from(r.offset).unwrap();
                    assert!(
                        o < total(),
                        "{name}: plain open read offset {o}, never written"
                    );
                    assert!(
                        r.value.as_deref() == Some(&value(o)[..]),
                        "{name}: plain open read a wrong value at {o}: {:?}",
                        r.value.as_deref().map(String::from_utf8_lossy)
                    );
                    next = r.offset + 1;
                }
            }
            if next == before_next {
                break;
            }
        }
        eprintln!("CASE {name}: PLAIN read up to offset {next}");
        drop(log);
    }
    dir.close().unwrap();
    assert!(
        before == sandbox.outside_state(),
        "{name}: plain open changed something outside"
    );
}

fn base64_decode(s: &str) -> Vec<u8> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

fn segments() -> Vec<(usize, String, Vec<BatchAt>)> {
    layout(&template().join(PARTITION))
        .into_iter()
        .map(|(base, (stem, batches))| (base, stem, batches))
        .collect()
}

fn flip(path: &Path, byte: u64, bit: u8) {
    let mut bytes = std::fs::read(path).unwrap();
    bytes[usize::try_from(byte).unwrap()] ^= 1 << bit;
    std::fs::write(path, bytes).unwrap();
}

fn set_len(path: &Path, len: u64) {
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len)
        .unwrap();
}

/// The cases of one test: each runs to its end, and the test fails at the end listing every
/// failed case, so one run shows the whole picture.
#[derive(Default)]
struct Matrix {
    cases: usize,
    failures: Vec<String>,
}

impl Matrix {
    fn run(&mut self, case: Case, damage: impl Fn(&Sandbox) + std::panic::RefUnwindSafe) {
        self.cases += 1;
        // Nothing is shared between cases but the read-only template.
        let case = std::panic::AssertUnwindSafe(move || run_case(&case, &damage));
        if let Err(e) = std::panic::catch_unwind(case) {
            self.failures.push(
                e.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                    .unwrap_or_default(),
            );
        }
    }

    fn finish(self, family: &str) {
        eprintln!("{family}: {} cases", self.cases);
        assert!(
            self.failures.is_empty(),
            "{family}: {} of {} cases failed:\n{}",
            self.failures.len(),
            self.cases,
            self.failures.join("\n")
        );
    }
}

#[test]
fn bit_flips_in_every_region_of_a_batch_of_every_codec() {
    let segs = segments();
    // A batch of each codec in a segment that is neither the first nor the last.
    let middle = &segs[1..segs.len() - 1];
    // (region, byte inside the batch, bit); the payload bytes are relative to the batch's end.
    let regions: [(&str, i64, u8); 13] = [
        ("length low byte", 11, 0),
        ("length high byte", 8, 6),
        ("magic", 16, 0),
        ("magic", 16, 1),
        ("crc", 17, 7),
        ("crc", 20, 0),
        ("attributes codec", 22, 0),
        ("attributes timestamp type", 22, 3),
        ("attributes unused bit", 21, 0),
        ("payload first byte", 61, 2),
        ("payload middle byte", -20, 5),
        ("payload last byte", -1, 0),
        ("records count", 60, 1),
    ];
    let mut m = Matrix::default();
    for codec in 0..5_u8 {
        let (stem, batch) = middle
            .iter()
            .find_map(|(_, stem, batches)| {
                batches
                    .iter()
                    .find(|b| b.codec == codec)
                    .map(|b| (stem.clone(), *b))
            })
            .unwrap();
        for (region, at, bit) in regions {
            let byte = if at >= 0 {
                batch.position + at.unsigned_abs()
            } else {
                batch.position + batch.size - at.unsigned_abs()
            };
            let file = format!("{stem}.log");
            // Kafka reads any magic >= 2 as v2 (FileLogInputStream.nextBatch) and the CRC
            // does not cover the magic byte: 2 -> 3 changes nothing a reader sees.
            let invisible = region == "magic" && bit == 0;
            m.run(
                Case {
                    name: format!("flip codec {codec} {region} (byte {byte} bit {bit} of {file})"),
                    report: if invisible {
                        Report::Nothing
                    } else {
                        Report::At(file.clone(), Some(batch.position))
                    },
                    keep: if invisible {
                        total()
                    } else {
                        batch.base_offset
                    },
                },
                |s| flip(&s.file(&file), byte, bit),
            );
        }
    }
    m.finish("bit_flips_in_every_region_of_a_batch_of_every_codec");
}

#[test]
fn bit_flips_in_index_entries() {
    let segs = segments();
    let (_, stem, batches) = &segs[1];
    let mut m = Matrix::default();
    // (file, byte, bit, what check names): slot 1 of the offset index (relative offset, then
    // position) and of the time index (timestamp, then relative offset).
    for (suffix, byte, bit) in [
        ("index", 8 + 3, 0),
        ("index", 8 + 3, 4),
        ("index", 8 + 7, 1),
        ("index", 8 + 4, 7),
        ("timeindex", 12 + 7, 0),
        ("timeindex", 12 + 11, 2),
        ("timeindex", 12, 7),
    ] {
        let file = format!("{stem}.{suffix}");
        m.run(
            Case {
                name: format!("flip index entry byte {byte} bit {bit} of {file}"),
                report: Report::AtSomeByte(file.clone()),
                keep: total(),
            },
            |s| flip(&s.file(&file), byte, bit),
        );
    }
    assert!(batches.len() > 2);
    m.finish("bit_flips_in_index_entries");
}

#[test]
fn truncation_at_every_byte_of_the_last_batch() {
    let segs = segments();
    let (_, stem, batches) = segs.last().unwrap();
    let last = *batches.last().unwrap();
    // The first batch of a segment gets no index entry (Kafka's index interval rule), so the
    // last batch's entry is in slot len - 2.
    let slot = (batches.len() as u64 - 2) * 8;
    let file = format!("{stem}.log");
    let mut m = Matrix::default();
    for cut in 0..last.size {
        let len = last.position + cut;
        m.run(
            Case {
                name: format!("truncate {file} to {len} (byte {cut} of the last batch)"),
                // Cut at the batch's start, the file ends cleanly and the index entry for the
                // batch points past it.
                report: if cut == 0 {
                    Report::At(format!("{stem}.index"), Some(slot))
                } else {
                    Report::At(file.clone(), Some(last.position))
                },
                keep: last.base_offset,
            },
            |s| set_len(&s.file(&file), len),
        );
    }
    m.finish("truncation_at_every_byte_of_the_last_batch");
}

fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write as _;
    std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}

fn overwrite(path: &Path, at: u64, bytes: &[u8]) {
    let mut all = std::fs::read(path).unwrap();
    let at = usize::try_from(at).unwrap();
    all[at..at + bytes.len()].copy_from_slice(bytes);
    std::fs::write(path, all).unwrap();
}

#[test]
fn zero_filled_tails() {
    let segs = segments();
    let (_, stem, batches) = segs.last().unwrap();
    let last = *batches.last().unwrap();
    let file = format!("{stem}.log");
    let end = last.position + last.size;
    let mut m = Matrix::default();
    for zeros in [1_u64, 11, 12, 13, 61, 4096] {
        m.run(
            Case {
                name: format!("append {zeros} zero bytes to {file}"),
                report: Report::At(file.clone(), Some(end)),
                keep: total(),
            },
            |s| append(&s.file(&file), &vec![0; usize::try_from(zeros).unwrap()]),
        );
    }
    // The last byte of a record is its header count (0), so zeroing starts at 2 bytes.
    for zeros in [2_u64, 10, last.size] {
        m.run(
            Case {
                name: format!("zero the last {zeros} bytes of {file}"),
                report: Report::At(file.clone(), Some(last.position)),
                keep: last.base_offset,
            },
            |s| {
                overwrite(
                    &s.file(&file),
                    end - zeros,
                    &vec![0; usize::try_from(zeros).unwrap()],
                );
            },
        );
    }
    // A zero tail on a segment that is not the last: Kafka's recovery cuts it and deletes every
    // later segment (LogLoader.recoverLog), so their records go too.
    let (_, mid_stem, mid_batches) = &segs[1];
    let mid_last = mid_batches.last().unwrap();
    let mid_file = format!("{mid_stem}.log");
    let next_base = segs[2].0;
    m.run(
        Case {
            name: format!("append 100 zero bytes to {mid_file} (not the last segment)"),
            report: Report::At(mid_file.clone(), Some(mid_last.position + mid_last.size)),
            keep: next_base,
        },
        |s| append(&s.file(&mid_file), &[0; 100]),
    );
    m.finish("zero_filled_tails");
}

#[test]
fn broken_short_empty_and_missing_indexes() {
    let segs = segments();
    let mut m = Matrix::default();
    for (which, (_, stem, _)) in [("middle", &segs[1]), ("last", segs.last().unwrap())] {
        for (suffix, entry) in [("index", 8_u64), ("timeindex", 12)] {
            let file = format!("{stem}.{suffix}");
            let len = std::fs::metadata(template().join(PARTITION).join(&file))
                .unwrap()
                .len();
            let damages: [(&str, Report, Damage); 6] = [
                (
                    "garbage of the same length",
                    Report::At(file.clone(), None),
                    Box::new(move |p: &Path| std::fs::write(p, garbage(len)).unwrap()),
                ),
                (
                    "garbage of a length that is not a multiple of the entry size",
                    Report::At(file.clone(), None),
                    Box::new(move |p: &Path| std::fs::write(p, garbage(len + 3)).unwrap()),
                ),
                (
                    "shortened by half an entry",
                    Report::At(file.clone(), None),
                    Box::new(move |p: &Path| set_len(p, len - entry / 2)),
                ),
                (
                    "shortened to its first entry",
                    Report::Nothing,
                    Box::new(move |p: &Path| set_len(p, entry)),
                ),
                (
                    "emptied",
                    Report::Nothing,
                    Box::new(|p: &Path| set_len(p, 0)),
                ),
                (
                    "deleted",
                    // Kafka recreates a missing time index empty (LogSegment.sanityCheck), a
                    // sparser index that loses nothing; a missing offset index is rebuilt. Both
                    // are notes, on the segments that hold records.
                    Report::Note(file.clone()),
                    Box::new(|p: &Path| std::fs::remove_file(p).unwrap()),
                ),
            ];
            for (what, report, damage) in damages {
                m.run(
                    Case {
                        name: format!("{file} ({which} segment) {what}"),
                        report,
                        keep: total(),
                    },
                    |s| damage(&s.file(&file)),
                );
            }
        }
    }
    m.finish("broken_short_empty_and_missing_indexes");
}

/// One way to damage a file.
type Damage = Box<dyn Fn(&Path) + std::panic::RefUnwindSafe>;

/// Deterministic non-zero junk.
fn garbage(len: u64) -> Vec<u8> {
    let mut x = 0x2545_F491_4F6C_DD1D_u64;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x.to_be_bytes()[4]
        })
        .collect()
}

#[test]
fn every_combination_of_leftover_files() {
    let segs = segments();
    let (_, stem, _) = &segs[1];
    let mut m = Matrix::default();
    for mask in 1..8_u8 {
        for with_indexes in [false, true] {
            let suffixes: Vec<&str> = [".deleted", ".cleaned", ".swap"]
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, s)| *s)
                .collect();
            let kinds: &[&str] = if with_indexes {
                &["log", "index", "timeindex"]
            } else {
                &["log"]
            };
            // `.deleted` and `.cleaned` files are notes (Kafka deletes them at start-up); a
            // `.swap` is an interrupted swap, a problem recovery finishes.
            let report = if suffixes.contains(&".swap") {
                Report::At(format!("{stem}.log.swap"), None)
            } else {
                Report::Note(format!("{stem}.log{}", suffixes[0]))
            };
            m.run(
                Case {
                    name: format!(
                        "leftover {} of segment {stem} ({})",
                        suffixes.join(" + "),
                        kinds.join(", ")
                    ),
                    report,
                    keep: total(),
                },
                |s| {
                    for suffix in &suffixes {
                        for kind in kinds {
                            let live = s.file(&format!("{stem}.{kind}"));
                            let leftover = s.file(&format!("{stem}.{kind}{suffix}"));
                            if *suffix == ".swap" {
                                // A finished cleaning's output: the same records.
                                std::fs::copy(&live, &leftover).unwrap();
                            } else {
                                // An aborted cleaning or a deletion: its bytes do not matter.
                                std::fs::write(&leftover, garbage(100)).unwrap();
                            }
                        }
                    }
                },
            );
        }
    }
    m.finish("every_combination_of_leftover_files");
}

#[test]
fn bad_checkpoints() {
    let end = total();
    let mut m = Matrix::default();
    for (file, contents) in [
        ("recovery-point-offset-checkpoint", "garbage\n".to_owned()),
        ("recovery-point-offset-checkpoint", String::new()),
        (
            "recovery-point-offset-checkpoint",
            "7\n1\nt 0 5\n".to_owned(),
        ),
        (
            "recovery-point-offset-checkpoint",
            "0\n3\nt 0 5\n".to_owned(),
        ),
        (
            "recovery-point-offset-checkpoint",
            "0\n1\nt 0 five\n".to_owned(),
        ),
        (
            "recovery-point-offset-checkpoint",
            format!("0\n1\nt 0 {}\n", end + 1000),
        ),
        ("log-start-offset-checkpoint", "garbage\n".to_owned()),
        (
            "log-start-offset-checkpoint",
            format!("0\n1\nt 0 {}\n", end + 1000),
        ),
    ] {
        // Kafka deletes every segment when the log start offset checkpoint is above the log end
        // (LogLoader's deleteSegmentsIfLogStartGreaterThanLogEnd); `check` warns beforehand.
        let start_beyond_end = file.starts_with("log-start") && contents.starts_with("0\n");
        m.run(
            Case {
                name: format!("{file} holding {contents:?}"),
                // Kafka reads an empty checkpoint file as no entries.
                report: if contents.is_empty() {
                    Report::Nothing
                } else {
                    Report::At(format!("../{file}"), None)
                },
                keep: if start_beyond_end { 0 } else { total() },
            },
            |s| std::fs::write(s.logs.join(file), &contents).unwrap(),
        );
    }
    m.finish("bad_checkpoints");
}

#[test]
fn a_segment_overlapping_the_previous_one() {
    let segs = segments();
    let (last_base, last_stem, _) = segs.last().unwrap();
    let mut m = Matrix::default();
    // A copy of the last segment named one offset above its base: every batch in it is below the
    // name, and it overlaps its predecessor.
    let overlap = format!("{:020}.log", last_base + 1);
    m.run(
        Case {
            name: format!("{overlap}: a copy of {last_stem}.log named one offset higher"),
            report: Report::At(overlap.clone(), None),
            keep: total(),
        },
        |s| {
            std::fs::copy(s.file(&format!("{last_stem}.log")), s.file(&overlap)).unwrap();
        },
    );
    // The same inside the log: a copy of a middle segment named one offset higher sorts before
    // the next real segment; recovery deletes the copy alone and keeps every later segment.
    let (mid_base, mid_stem, _) = &segs[1];
    let stray = format!("{:020}.log", mid_base + 1);
    m.run(
        Case {
            name: format!("{stray}: a copy of {mid_stem}.log named one offset higher"),
            report: Report::At(stray.clone(), None),
            keep: total(),
        },
        |s| {
            std::fs::copy(s.file(&format!("{mid_stem}.log")), s.file(&stray)).unwrap();
        },
    );
    m.finish("a_segment_overlapping_the_previous_one");
}
