//! Step 6: a KRaft broker fed by two transactional producers (commits and aborts interleaved) and
//! an idempotent one, across segment rolls. After a clean stop, `seglog check` passes, `seglog
//! consume` returns what Kafka's consumer returns at each isolation level, and `seglog dump` prints exactly what Kafka's
//! `DumpLogSegments` prints for every file of the partition and of the KRaft metadata log.

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use anyhow::{Result, bail, ensure};
use serde_json::Value;

use super::ctx::{Ctx, seglog_cmd};
use super::kraft::KafkaNode;
use super::records::{json_lines, same_records, seglog_consumed};
use super::segment_files::{copy_dir, files_with};

const TOPIC: &str = "transactional";
const ROUNDS: &str = "40";

/// What Kafka's consumer read at one isolation level.
type LevelRead = (&'static str, Vec<Value>);

/// The broker's part: the producers, then Kafka's consumer under each isolation level (each
/// checked against what the producers acknowledged), then a clean stop. Returns what was
/// produced, in offset order, and each level's read.
fn kafka_writes(ctx: &Ctx, kafka: &KafkaNode) -> Result<(Vec<Value>, Vec<LevelRead>)> {
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        TOPIC,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step6-create-topic", Duration::from_mins(2))?;
    let cmd = ctx.oracle(&["txn-produce", &kafka.bootstrap, TOPIC, ROUNDS, "18"]);
    let produced = ctx.run_ok(cmd, "step6-txn-produce", Duration::from_mins(4))?;
    let mut produced = json_lines(&produced, "produced")?;
    produced.sort_by_key(|v| v["offset"].as_i64());
    let visible: Vec<Value> = produced
        .iter()
        .filter(|v| v["txn"] != "aborted")
        .cloned()
        .collect();
    let mut kafka_reads = Vec::new();
    for (level, want) in [
        ("read_uncommitted", &produced),
        ("read_committed", &visible),
    ] {
        let cmd = ctx.oracle(&[
            "consume",
            &kafka.bootstrap,
            TOPIC,
            "0",
            &want.len().to_string(),
            "90000",
            level,
        ]);
        let name = format!("step6-kafka-consume-{level}");
        let got = json_lines(
            &ctx.run_ok(cmd, &name, Duration::from_secs(150))?,
            "Kafka's consumer",
        )?;
        same_records(
            &format!("Kafka's {level} consumer vs the producers"),
            want,
            &got,
        )?;
        kafka_reads.push((level, got));
    }
    broker.errors_about(&format!("{TOPIC}-0"))?;
    broker.stop()?;
    Ok((produced, kafka_reads))
}

pub(super) fn step6(ctx: &Ctx, kafka: &KafkaNode) -> Result<()> {
    let (produced, kafka_reads) = kafka_writes(ctx, kafka)?;
    let count = |txn: &str| produced.iter().filter(|v| v["txn"] == txn).count();
    let (committed, aborted, plain) = (count("committed"), count("aborted"), count("none"));
    ensure!(
        committed > 0 && aborted > 0 && plain > 0,
        "the producers made {committed} committed, {aborted} aborted and {plain} idempotent records"
    );

    // A copy, so that nothing seglog does can touch the broker's own directory.
    let partition = ctx.work.join("step6").join(format!("{TOPIC}-0"));
    copy_dir(&kafka.log_dir.join(format!("{TOPIC}-0")), &partition)?;
    let logs = files_with(&partition, &["log"])?;
    ensure!(
        logs.len() >= 3,
        "the broker rolled only {} segments",
        logs.len()
    );
    let out = ctx.run_ok(
        seglog_cmd(ctx, &["check"], &partition),
        "step6-seglog-check",
        Duration::from_mins(1),
    )?;
    eprintln!("kafka-interop: seglog check: {}", out.trim());

    let files = files_with(
        &partition,
        &["log", "index", "timeindex", "txnindex", "snapshot"],
    )?;
    let count_of = |ext: &str| {
        files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == ext))
            .count()
    };
    let (txnindexes, snapshots) = (count_of("txnindex"), count_of("snapshot"));
    ensure!(
        txnindexes > 0 && snapshots > 0,
        "the broker left {txnindexes} .txnindex and {snapshots} .snapshot files"
    );
    same_dump(ctx, "step6-dump-partition", &files)?;
    let metadata = files_with(
        &kafka.log_dir.join("__cluster_metadata-0"),
        &["log", "index", "timeindex"],
    )?;
    same_dump(ctx, "step6-dump-metadata", &metadata)?;
    for (level, kafka_read) in &kafka_reads {
        let consumed = ctx.run_ok(
            seglog_cmd(
                ctx,
                &[
                    "consume",
                    "--json",
                    "--json-bytes",
                    "base64",
                    "--isolation-level",
                    level,
                ],
                &partition,
            ),
            &format!("step6-seglog-consume-{level}"),
            Duration::from_mins(1),
        )?;
        same_records(
            &format!("seglog consume vs Kafka's {level} consumer"),
            kafka_read,
            &seglog_consumed(&consumed)?,
        )?;
    }

    eprintln!(
        "kafka-interop: {} segments, {committed} committed, {aborted} aborted and {plain} idempotent records: seglog consume (read_uncommitted and read_committed) and dump agree with Kafka ({} files, {txnindexes} of them .txnindex and {snapshots} .snapshot, and {} of the metadata log dumped)",
        logs.len(),
        files.len(),
        metadata.len()
    );
    Ok(())
}

/// Fails unless `seglog dump` and Kafka's `DumpLogSegments` print the same for `files`.
fn same_dump(ctx: &Ctx, name: &str, files: &[PathBuf]) -> Result<()> {
    let list = files
        .iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let args = ["--deep-iteration", "--print-data-log", "--files", &list];
    let mut ours = Command::new(&ctx.seglog);
    ours.arg("dump").args(args);
    let (_, ours) = ctx.run_to_files(ours, &format!("{name}-seglog"), Duration::from_mins(2))?;
    let mut theirs = vec!["dump"];
    theirs.extend(args);
    let (_, theirs) = ctx.run_to_files(
        ctx.oracle(&theirs),
        &format!("{name}-kafka"),
        Duration::from_mins(3),
    )?;
    for (i, (a, b)) in theirs.lines().zip(ours.lines()).enumerate() {
        if a != b {
            bail!(
                "{name}: line {} differs:\n  Kafka  {a}\n  seglog {b}",
                i + 1
            );
        }
    }
    ensure!(
        theirs.lines().count() == ours.lines().count(),
        "{name}: Kafka printed {} lines, seglog {}",
        theirs.lines().count(),
        ours.lines().count()
    );
    Ok(())
}
