//! Step 1: Kafka's `DumpLogSegments` reads every file seglog wrote, and prints exactly the records
//! written.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, bail, ensure};

use super::ctx::Ctx;
use super::dump_output::{
    Dump, DumpedRecord, expected_dump_record, field, parse_dump, partition_of,
};
use super::records::json_lines;
use super::segment_files::{base_offset, segment_files};
use super::{CODECS, INDEX_INTERVALS};

pub(super) fn step1(ctx: &Ctx, built: &Path, expected_path: &Path) -> Result<()> {
    let mut writer = Command::new(&ctx.writer);
    writer.arg("build").arg(built).arg(expected_path);
    ctx.run_ok(writer, "step1-seglog-build", Duration::from_mins(2))?;
    let expected = json_lines(&fs::read_to_string(expected_path)?, "expected records")?;
    let mut files = Vec::new();
    for (partition, _) in INDEX_INTERVALS {
        files.extend(segment_files(&built.join(partition))?);
    }
    let list = files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let cmd = ctx.oracle(&[
        "dump",
        "--deep-iteration",
        "--print-data-log",
        "--files",
        &list,
    ]);
    let stdout = ctx.run_ok(cmd, "step1-kafka-dump", Duration::from_mins(3))?;
    let stderr = fs::read_to_string(ctx.log_paths("step1-kafka-dump").1)?;
    let dump = parse_dump(&stdout, &stderr)?;

    // The records Kafka printed are exactly the ones written, partition by partition.
    let mut by_partition: BTreeMap<String, Vec<DumpedRecord>> = BTreeMap::new();
    for v in &expected {
        by_partition
            .entry(v["partition"].as_str().context("partition")?.to_owned())
            .or_default()
            .push(expected_dump_record(v)?);
    }
    let mut total = 0;
    for (partition, want) in &by_partition {
        let got = dump.records.get(partition).map_or(&[][..], Vec::as_slice);
        for (w, g) in want.iter().zip(got) {
            ensure!(
                w == g,
                "{partition}: Kafka printed\n  {g:?}\nwhere seglog wrote\n  {w:?}"
            );
        }
        ensure!(
            want.len() == got.len(),
            "{partition}: seglog wrote {} records, Kafka printed {}",
            want.len(),
            got.len()
        );
        total += got.len();
    }
    ensure!(
        dump.records.keys().all(|p| by_partition.contains_key(p)),
        "Kafka printed records of an unexpected partition"
    );
    let codecs: BTreeSet<&str> = dump
        .records
        .values()
        .flatten()
        .map(|r| r.codec.as_str())
        .collect();
    ensure!(
        CODECS.iter().all(|c| codecs.contains(c)),
        "not every codec was dumped: {codecs:?}"
    );

    // Kafka's complaints: none, except what its dump says about every compacted log.
    let offsets: BTreeMap<String, BTreeSet<i64>> = by_partition
        .iter()
        .map(|(p, rs)| (p.clone(), rs.iter().map(|r| r.offset).collect()))
        .collect();
    let tolerated = check_notes(&dump, &offsets)?;
    eprintln!(
        "kafka-interop: Kafka dumped {} files: {total} records, all as written; {tolerated} notes on the compacted log's gaps and emptied batches checked",
        files.len()
    );
    Ok(())
}

/// Fails on any complaint of Kafka's dump, except two it makes about any compacted log, each
/// checked: a gap in offsets where no written record lies, and a time index entry pointing at a
/// batch the cleaner emptied. Returns how many of those it checked.
fn check_notes(dump: &Dump, offsets: &BTreeMap<String, BTreeSet<i64>>) -> Result<usize> {
    let mut tolerated = 0;
    for problem in &dump.problems {
        if let Some(rest) = problem.strip_prefix("gap ") {
            // "<file> <a> <b>": no written record lies strictly between a and b.
            let mut parts = rest.rsplitn(3, ' ');
            let (b, a, file) = (parts.next(), parts.next(), parts.next());
            let (Some(b), Some(a), Some(file)) = (b, a, file) else {
                bail!("Kafka: {problem}");
            };
            let (a, b): (i64, i64) = (a.parse()?, b.parse()?);
            let written = offsets.get(&partition_of(file)).context(problem.clone())?;
            let start = if a == -1 { base_offset(file)? } else { a + 1 };
            ensure!(
                b >= start && written.range(start..b).next().is_none(),
                "Kafka found offsets {a} -> {b} in {file}, which skips written records"
            );
            tolerated += 1;
        } else if let Some(rest) = problem.strip_prefix("tsmismatch ") {
            // Kafka's dump takes a batch's max record timestamp, -1 for a batch the cleaner
            // emptied (kept for its last offset): allowed only when the time index entry points
            // at such a batch.
            let (file, detail) = rest.split_once(' ').context(problem.clone())?;
            let index_ts: i64 = field(detail, "Index timestamp")
                .map(|s| s.trim_end_matches(','))
                .and_then(|s| s.parse().ok())
                .context(problem.clone())?;
            ensure!(detail.ends_with("log timestamp: -1"), "Kafka: {problem}");
            let entry_file = Path::new(file).display().to_string();
            let entries = dump
                .time_entries
                .iter()
                .find(|(f, _)| {
                    Path::new(f).file_name() == Path::new(&entry_file).file_name()
                        && partition_of(f) == partition_of(&entry_file)
                })
                .map(|(_, e)| e)
                .context(problem.clone())?;
            let (_, offset) = entries
                .iter()
                .find(|(t, _)| *t == index_ts)
                .context(problem.clone())?;
            let log = Path::new(file).with_extension("log").display().to_string();
            let batches = dump
                .batches
                .iter()
                .find(|(f, _)| {
                    Path::new(f).file_name() == Path::new(&log).file_name()
                        && partition_of(f) == partition_of(&log)
                })
                .map(|(_, b)| b)
                .context(problem.clone())?;
            ensure!(
                batches
                    .iter()
                    .any(|(last, count)| last == offset && *count == 0),
                "Kafka: {problem} (offset {offset} is not an emptied batch)"
            );
            tolerated += 1;
        } else {
            bail!("Kafka reported: {problem}");
        }
    }
    Ok(tolerated)
}
