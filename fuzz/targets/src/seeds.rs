//! Seed inputs for each target, made from the `testdata/` fixtures (files written by
//! kafka-python, a Python index writer and Kafka 4.4.0, not by us) plus logs built here with
//! every codec and both legacy magics. cargo-fuzz starts from them (`cargo xtask fuzz` writes
//! them into the corpus directory), and the stable driver mutates them.

use std::path::{Path, PathBuf};

use seglog_record_format::{
    BatchOptions, Compression, Header, NewRecord, build_batch, compress, write_legacy_message,
};

use crate::{Target, cli_dump, index};

/// The repository's `testdata/` directory.
pub fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

/// The seeds of `target`. Never empty.
pub fn seeds(target: Target) -> Vec<Vec<u8>> {
    match target {
        Target::RecordFormat => record_format(),
        Target::Index => index_seeds(),
        Target::SegmentRecover => segment_logs(),
        Target::CliDump => cli_dump_seeds(),
    }
}

/// The files of `dir` (under `testdata/`) whose names end with `suffix`, sorted, with contents.
fn fixtures(dir: &str, suffix: &str) -> Vec<(String, Vec<u8>)> {
    let dir = testdata().join(dir);
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter_map(|p| {
                    let name = p.file_name()?.to_str()?.to_owned();
                    let bytes = std::fs::read(&p).ok()?;
                    name.ends_with(suffix).then_some((name, bytes))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// A log of `batches` v2 batches of three records each with `codec`, offsets from 0.
pub fn built_log(codec: Compression, batches: i64) -> Vec<u8> {
    let headers = [Header::new(b"h", b"v")];
    let mut out = Vec::new();
    for b in 0..batches {
        let key = format!("key-{b}");
        let value = format!("value {b} value value value");
        let records = [
            NewRecord::new(
                0,
                1_700_000_000_000 + b,
                Some(key.as_bytes()),
                Some(value.as_bytes()),
            )
            .with_headers(&headers),
            NewRecord::new(
                1,
                1_700_000_000_000 + b - 5,
                None,
                Some(b"second".as_slice()),
            ),
            NewRecord::new(2, 1_700_000_000_010 + b, Some(b"k".as_slice()), None),
        ];
        build_batch(&BatchOptions::new(b * 3, codec), records, &mut out)
            .expect("building a seed batch");
    }
    out
}

/// A legacy message set of magic `magic` with `codec` (wrapped when compressed), offsets 0..3.
pub fn legacy_log(magic: i8, codec: Compression) -> Vec<u8> {
    let mut out = Vec::new();
    if codec == Compression::None {
        for o in 0..3 {
            write_legacy_message(
                &mut out,
                o,
                magic,
                0,
                Some(1_700_000_000_000 + o),
                Some(b"k"),
                Some(b"v"),
            );
        }
        return out;
    }
    let mut inner = Vec::new();
    for o in 0..3 {
        write_legacy_message(
            &mut inner,
            o,
            magic,
            0,
            Some(1_700_000_000_000 + o),
            None,
            Some(b"value"),
        );
    }
    let mut z = Vec::new();
    compress(codec, &inner, &mut z).expect("compressing a seed");
    write_legacy_message(
        &mut out,
        2,
        magic,
        codec.id(),
        Some(1_700_000_000_002),
        None,
        Some(&z),
    );
    out
}

/// Logs that recover whole: built with every codec and both legacy magics, and the fixtures.
fn segment_logs() -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = Compression::ALL.iter().map(|&c| built_log(c, 4)).collect();
    for magic in [0, 1] {
        for codec in Compression::ALL
            .into_iter()
            .filter(|&c| c != Compression::Zstd)
        {
            out.push(legacy_log(magic, codec));
        }
    }
    out.extend(fixtures("segment", ".log").into_iter().map(|(_, b)| b));
    out.extend(fixtures("segment-torn", ".log").into_iter().map(|(_, b)| b));
    out.extend(
        fixtures("record-format", ".bin")
            .into_iter()
            .map(|(_, b)| b),
    );
    out
}

fn record_format() -> Vec<Vec<u8>> {
    let mut out = segment_logs();
    // A compressed payload behind a selector byte picking its codec with magic 2.
    let text = b"a payload that compresses, a payload that compresses, a payload".repeat(4);
    for (i, &codec) in Compression::ALL.iter().enumerate() {
        let mut z = Vec::new();
        compress(codec, &text, &mut z).expect("compressing a seed");
        let selector = u8::try_from(i + 10).expect("a small selector");
        let mut seed = vec![selector];
        seed.extend_from_slice(&z);
        out.push(seed);
    }
    out
}

fn index_seeds() -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for dir in ["index", "segment"] {
        for (name, bytes) in fixtures(dir, "index") {
            let time = name.ends_with(".timeindex");
            let base = name
                .split('.')
                .next()
                .and_then(|b| b.parse().ok())
                .unwrap_or(0);
            let seed = index::with_header(time, base, &bytes);
            // The same file opened each way, and with the writes.
            for flags in [0_u8, 2, 4, 8] {
                let mut s = seed.clone();
                if let Some(f) = s.first_mut() {
                    *f |= flags;
                }
                out.push(s);
            }
        }
    }
    out
}

fn cli_dump_seeds() -> Vec<Vec<u8>> {
    let segment = |ext: &str| {
        fixtures("segment", ext)
            .into_iter()
            .next()
            .map(|(_, b)| b)
            .unwrap_or_default()
    };
    let (log, index, time) = (segment(".log"), segment(".index"), segment(".timeindex"));
    let mut out = Vec::new();
    for flags in [0_u8, 0x01, 0x02, 0x05, 0x08, 0x10, 0x22, 0x41, 0x80] {
        out.push(cli_dump::with_header(flags, 3, &log, &index, &time));
    }
    for files in [1, 2] {
        out.push(cli_dump::with_header(0, files, &log, &index, &time));
    }
    for log in segment_logs().into_iter().take(16) {
        out.push(cli_dump::with_header(0x02, 0, &log, &[], &[]));
        out.push(cli_dump::with_header(0x06, 0, &log, &[], &[]));
    }
    out
}
