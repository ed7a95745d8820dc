//! Step 5: a broker starts with seglog's quarantine inside a partition directory. seglog appends
//! to a partition the broker created (several segments), a byte in the middle of its second
//! segment is flipped, and `seglog recover --full` cuts it there and sets the cut tail and the
//! later segments aside in `<partition>/seglog-quarantine/1/`. Then a broker started on the
//! directory must load the partition and serve every kept record to Kafka's consumer, log no
//! error about the partition or the quarantine, and leave the quarantine as it was after it stops.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::Value;

use super::ctx::{Ctx, seglog_cmd};
use super::kraft::KafkaNode;
use super::records::{json_lines, same_records, seglog_consumed};
use super::segment_files::segment_files;

const TOPIC: &str = "quarantined";
const RECORDS: usize = 16_000;
const QUARANTINE: &str = "seglog-quarantine";

/// Files by their path under a directory, with their bytes.
type Files = BTreeMap<PathBuf, Vec<u8>>;

/// Every file under `dir`, with its bytes.
fn files_under(dir: &Path) -> Result<Files> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d)? {
            let path = entry?.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                out.insert(path.strip_prefix(dir)?.to_path_buf(), fs::read(&path)?);
            }
        }
    }
    Ok(out)
}

/// A topic the broker creates, seglog's appends to it (the broker stopped), and the damage.
/// Returns what was appended and how many segments there were.
fn write_and_damage(ctx: &Ctx, kafka: &KafkaNode, partition: &Path) -> Result<(Vec<Value>, usize)> {
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        TOPIC,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step5-create-topic", Duration::from_mins(2))?;
    broker.stop()?;
    let expected_path = ctx.work.join("step5-appended.jsonl");
    let mut writer = Command::new(&ctx.writer);
    writer
        .arg("append")
        .arg(partition)
        .arg(RECORDS.to_string())
        .arg(&expected_path)
        .arg("segment.bytes=1048576");
    ctx.run_ok(writer, "step5-seglog-append", Duration::from_mins(2))?;
    let appended = json_lines(&fs::read_to_string(&expected_path)?, "appended")?;

    // The damage: one byte in the middle of the second of several segments.
    let logs: Vec<PathBuf> = segment_files(partition)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    ensure!(
        logs.len() >= 4,
        "{} segments in {}; the step needs at least 4",
        logs.len(),
        partition.display()
    );
    let damaged = logs.get(1).context("second segment")?;
    let mut bytes = fs::read(damaged)?;
    let middle = bytes.len() / 2;
    *bytes.get_mut(middle).context("middle byte")? ^= 0xff;
    fs::write(damaged, bytes)?;
    Ok((appended, logs.len()))
}

/// `seglog recover` sets the dropped data aside, `check` notes it, `consume` reads what was kept.
/// Returns the quarantine's files and the kept records.
fn recover(
    ctx: &Ctx,
    partition: &Path,
    segments: usize,
    appended: &[Value],
) -> Result<(Files, Vec<Value>)> {
    let report = ctx.run_ok(
        seglog_cmd(
            ctx,
            &["recover", "--full", "--config", "segment.bytes=1048576"],
            partition,
        ),
        "step5-seglog-recover",
        Duration::from_mins(2),
    )?;
    let quarantine = partition.join(QUARANTINE);
    let set_aside = files_under(&quarantine)
        .with_context(|| format!("no quarantine after recover: {report}"))?;
    let dropped_logs = set_aside
        .keys()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .count();
    ensure!(
        dropped_logs == segments - 2
            && set_aside
                .keys()
                .any(|p| p.to_string_lossy().contains(".log.cut-at-"))
            && set_aside.keys().any(|p| p.ends_with("done")),
        "the quarantine holds {:?} after: {report}",
        set_aside.keys().collect::<Vec<_>>()
    );
    let check = ctx.run_ok(
        seglog_cmd(ctx, &["check"], partition),
        "step5-seglog-check",
        Duration::from_mins(1),
    )?;
    ensure!(
        check.contains("note: quarantine:"),
        "check does not note the quarantine: {check}"
    );
    let kept = seglog_consumed(&ctx.run_ok(
        seglog_cmd(
            ctx,
            &["consume", "--json", "--json-bytes", "base64"],
            partition,
        ),
        "step5-seglog-consume",
        Duration::from_mins(1),
    )?)?;
    ensure!(
        !kept.is_empty() && kept.len() < appended.len(),
        "recover kept {} of {} records",
        kept.len(),
        appended.len()
    );
    same_records(
        "seglog consume after recover vs the records written before the damage",
        appended.get(..kept.len()).unwrap_or_default(),
        &kept,
    )?;
    Ok((set_aside, kept))
}

pub(super) fn step5(ctx: &Ctx, kafka: &KafkaNode) -> Result<()> {
    let partition = kafka.log_dir.join(format!("{TOPIC}-0"));
    let (appended, segments) = write_and_damage(ctx, kafka, &partition)?;
    let (set_aside, kept) = recover(ctx, &partition, segments, &appended)?;
    let quarantine = partition.join(QUARANTINE);
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        TOPIC,
        "0",
        &kept.len().to_string(),
        "90000",
    ]);
    let served = ctx.run_ok(cmd, "step5-kafka-consume", Duration::from_secs(150))?;
    same_records(
        "Kafka's consumer on the recovered partition vs seglog consume",
        &kept,
        &json_lines(&served, "Kafka's consumer")?,
    )?;
    broker.errors_about(&format!("{TOPIC}-0"))?;
    broker.warnings_about(QUARANTINE)?;
    broker.stop()?;
    ensure!(
        files_under(&quarantine)? == set_aside,
        "the broker changed the quarantine {}",
        quarantine.display()
    );
    eprintln!(
        "kafka-interop: a broker served the {} records seglog recover kept (of {}), beside a \
         quarantine of {} files ({} dropped segments with their indexes, a cut tail), and left \
         it as it was",
        kept.len(),
        appended.len(),
        set_aside.len(),
        segments - 2
    );
    Ok(())
}
