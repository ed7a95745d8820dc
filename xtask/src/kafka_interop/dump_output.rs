//! Kafka's `DumpLogSegments --deep-iteration --print-data-log` output, parsed (step 1).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::records::b64_decode;

/// A record line of Kafka's deep dump.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct DumpedRecord {
    pub(super) offset: i64,
    pub(super) timestamp: i64,
    pub(super) key: Option<Vec<u8>>,
    pub(super) value: Option<Vec<u8>>,
    pub(super) header_keys: Vec<String>,
    pub(super) codec: String,
}

/// What one dump of many files said.
#[derive(Default)]
pub(super) struct Dump {
    /// Per partition directory name: the records, in file order.
    pub(super) records: BTreeMap<String, Vec<DumpedRecord>>,
    /// Per `.log` path: the (last offset, record count) of each batch.
    pub(super) batches: BTreeMap<String, Vec<(i64, i64)>>,
    /// Per `.timeindex` path: its (timestamp, offset) entries.
    pub(super) time_entries: BTreeMap<String, Vec<(i64, i64)>>,
    pub(super) problems: Vec<String>,
}

pub(super) fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let at = line.find(&format!("{name}: "))? + name.len() + 2;
    line[at..].split(' ').next()
}

fn num(line: &str, name: &str) -> Result<i64> {
    field(line, name)
        .and_then(|v| v.parse().ok())
        .with_context(|| format!("no number `{name}` in dump line: {line}"))
}

pub(super) fn partition_of(file: &str) -> String {
    Path::new(file)
        .parent()
        .and_then(Path::file_name)
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Parses a record line: `| offset: O CreateTime: T keySize: K valueSize: V sequence: S
/// headerKeys: [a,b] key: <K bytes> payload: <V bytes>` (key and payload only when not null).
/// The written keys and values are printable ASCII, so sizes in bytes are sizes in characters.
fn parse_record(line: &str, codec: &str) -> Result<DumpedRecord> {
    let key_size = num(line, "keySize")?;
    let value_size = num(line, "valueSize")?;
    let mut rest = line;
    let value = if value_size >= 0 {
        let n = usize::try_from(value_size)?;
        let cut = rest
            .len()
            .checked_sub(n)
            .context("payload shorter than valueSize")?;
        let v = rest.as_bytes().get(cut..).unwrap_or_default().to_vec();
        rest = rest[..cut]
            .strip_suffix(" payload: ")
            .or_else(|| rest[..cut].strip_suffix("| payload: "))
            .with_context(|| format!("no payload before {value_size} bytes: {line}"))?;
        Some(v)
    } else {
        None
    };
    let key = if key_size >= 0 {
        let n = usize::try_from(key_size)?;
        let cut = rest
            .len()
            .checked_sub(n)
            .context("key shorter than keySize")?;
        let k = rest.as_bytes().get(cut..).unwrap_or_default().to_vec();
        rest = rest[..cut]
            .strip_suffix(" key: ")
            .with_context(|| format!("no key before {key_size} bytes: {line}"))?;
        Some(k)
    } else {
        None
    };
    let headers = rest
        .rsplit_once("headerKeys: [")
        .and_then(|(_, h)| h.strip_suffix(']'))
        .with_context(|| format!("no headerKeys: {line}"))?;
    Ok(DumpedRecord {
        offset: num(line, "offset")?,
        timestamp: num(line, "CreateTime")?,
        key,
        value,
        header_keys: if headers.is_empty() {
            Vec::new()
        } else {
            headers.split(',').map(str::to_owned).collect()
        },
        codec: codec.to_owned(),
    })
}

pub(super) fn parse_dump(stdout: &str, stderr: &str) -> Result<Dump> {
    let mut dump = Dump::default();
    let mut file = String::new();
    let mut codec = String::new();
    for line in stdout.lines() {
        if let Some(f) = line.strip_prefix("Dumping ") {
            f.clone_into(&mut file);
        } else if line.starts_with("baseOffset: ") {
            if !line.ends_with("isvalid: true") {
                dump.problems.push(format!("{file}: invalid batch: {line}"));
            }
            field(line, "compresscodec")
                .unwrap_or_default()
                .clone_into(&mut codec);
            dump.batches
                .entry(file.clone())
                .or_default()
                .push((num(line, "lastOffset")?, num(line, "count")?));
        } else if line.starts_with("| offset: ") {
            let record = parse_record(line, &codec).with_context(|| file.clone())?;
            dump.records
                .entry(partition_of(&file))
                .or_default()
                .push(record);
        } else if line.starts_with("timestamp: ") && file.ends_with(".timeindex") {
            dump.time_entries
                .entry(file.clone())
                .or_default()
                .push((num(line, "timestamp")?, num(line, "offset")?));
        } else if line.starts_with("Found ") || line.contains("invalid bytes") {
            dump.problems.push(format!("{file}: {line}"));
        }
    }
    // stderr: sections of "<what> :<file>" or "<what> in <file>" followed by indented lines.
    let mut section: Option<(String, String)> = None;
    for line in stderr.lines().filter(|l| !l.trim().is_empty()) {
        if let Some(rest) = line
            .strip_prefix("  ")
            .or_else(|| line.strip_prefix("Indexed offset: ").map(|_| line))
        {
            let Some((kind, f)) = &section else {
                dump.problems.push(format!("stderr: {line}"));
                continue;
            };
            match kind.as_str() {
                "non-consecutive" => {
                    // Kafka lists each gap in offsets; a compacted log has them, a fresh one must
                    // not, except where a file starts (Kafka's dump starts each file at -1).
                    let (a, b) = rest
                        .trim()
                        .split_once(" is followed by ")
                        .context("non-consecutive line")?;
                    dump.problems.push(format!("gap {f} {a} {b}"));
                }
                "timestamp-mismatch" => {
                    dump.problems
                        .push(format!("tsmismatch {f} {}", rest.trim()));
                }
                _ => dump
                    .problems
                    .push(format!("{kind} in {f}: {}", rest.trim())),
            }
        } else if let Some(f) = line.strip_prefix("Non-consecutive offsets in ") {
            section = Some(("non-consecutive".to_owned(), f.to_owned()));
        } else if let Some(f) = line.strip_prefix("Found timestamp mismatch in :") {
            section = Some(("timestamp-mismatch".to_owned(), f.to_owned()));
        } else if let Some((what, f)) = line.split_once(" :") {
            section = Some((what.to_owned(), f.to_owned()));
            dump.problems.push(format!("{what} {f}"));
        } else {
            dump.problems.push(format!("stderr: {line}"));
        }
    }
    Ok(dump)
}

fn bytes_field(v: &Value) -> Result<Option<Vec<u8>>> {
    match v {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(b64_decode(s)?)),
        other => bail!("expected base64 or null, got {other}"),
    }
}

pub(super) fn expected_dump_record(v: &Value) -> Result<DumpedRecord> {
    let headers = v["headers"]
        .as_array()
        .context("headers")?
        .iter()
        .map(|h| h["key"].as_str().unwrap_or_default().to_owned())
        .collect();
    Ok(DumpedRecord {
        offset: v["offset"].as_i64().context("offset")?,
        timestamp: v["timestamp"].as_i64().context("timestamp")?,
        key: bytes_field(&v["key"])?,
        value: bytes_field(&v["value"])?,
        header_keys: headers,
        codec: v["codec"].as_str().context("codec")?.to_owned(),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn record_lines_are_cut_by_their_sizes() {
        // A value holding " payload: " and trailing spaces, a key, headers.
        let line = "| offset: 7 CreateTime: 1700 keySize: 5 valueSize: 14 sequence: -1 headerKeys: [h0,h1] key: k y z payload: a payload:  b ";
        let r = parse_record(line, "zstd").unwrap();
        assert_eq!(r.offset, 7);
        assert_eq!(r.timestamp, 1700);
        assert_eq!(r.key.as_deref(), Some(&b"k y z"[..]));
        assert_eq!(r.value.as_deref(), Some(&b"a payload:  b "[..]));
        assert_eq!(r.header_keys, ["h0", "h1"]);
        assert_eq!(r.codec, "zstd");
        let line =
            "| offset: 1 CreateTime: -1 keySize: -1 valueSize: -1 sequence: -1 headerKeys: []";
        let r = parse_record(line, "none").unwrap();
        assert_eq!((r.key, r.value, r.header_keys.len()), (None, None, 0));
        let line = "| offset: 1 CreateTime: 5 keySize: -1 valueSize: 2 sequence: -1 headerKeys: [] payload: ab";
        assert_eq!(
            parse_record(line, "none").unwrap().value.as_deref(),
            Some(&b"ab"[..])
        );
        // Sizes that do not fit the line are an error, not a guess.
        let line = "| offset: 1 CreateTime: 5 keySize: 3 valueSize: 2 sequence: -1 headerKeys: [] payload: ab";
        assert!(parse_record(line, "none").is_err());
    }

    #[test]
    fn every_kafka_complaint_is_collected() {
        let stdout = "Dumping /d/t-0/00000000000000000000.log\n\
            baseOffset: 0 lastOffset: 0 count: 1 position: 0 CreateTime: 1 size: 70 magic: 2 compresscodec: none crc: 1 isvalid: false\n\
            | offset: 0 CreateTime: 1 keySize: -1 valueSize: -1 sequence: -1 headerKeys: []\n\
            Found 3 invalid bytes at the end of 00000000000000000000.log\n";
        let stderr = "Mismatches in :/d/t-0/00000000000000000000.index\n  Index offset: 5, log offset: 6\n\
            Non-consecutive offsets in /d/t-0/00000000000000000000.log\n  3 is followed by 5\n\
            Found timestamp mismatch in :/d/t-0/00000000000000000000.timeindex\n  Index timestamp: 9, log timestamp: -1\n\
            something unexpected\n";
        let dump = parse_dump(stdout, stderr).unwrap();
        assert_eq!(dump.records["t-0"].len(), 1);
        assert_eq!(dump.batches["/d/t-0/00000000000000000000.log"], [(0, 1)]);
        let problems = dump.problems.join("\n");
        for expected in [
            "invalid batch",
            "Found 3 invalid bytes",
            "Mismatches in /d/t-0/00000000000000000000.index",
            "Index offset: 5, log offset: 6",
            "gap /d/t-0/00000000000000000000.log 3 5",
            "tsmismatch /d/t-0/00000000000000000000.timeindex Index timestamp: 9, log timestamp: -1",
            "stderr: something unexpected",
        ] {
            assert!(
                problems.contains(expected),
                "{expected} not in:\n{problems}"
            );
        }
    }
}
