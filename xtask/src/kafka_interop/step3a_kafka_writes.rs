//! Step 3a: a KRaft broker writes with one producer per codec; after a clean stop `seglog check`
//! passes on its log directory and `seglog consume` returns exactly the acknowledged records.

use std::fs;
use std::process::Command;
use std::time::Duration;

use anyhow::{Result, ensure};

use super::ctx::{Ctx, seglog_cmd};
use super::kraft::KafkaNode;
use super::records::{json_lines, lines_of, same_records, seglog_consumed};
use super::segment_files::segment_files;
use super::{CODECS, PRODUCED_PER_CODEC};

pub(super) fn step3a(ctx: &Ctx, kafka: &KafkaNode) -> Result<()> {
    let broker = kafka.start(ctx)?;
    let topic = "kafka_written";
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        topic,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step3a-create-topic", Duration::from_mins(2))?;
    let cmd = ctx.oracle(&[
        "produce",
        &kafka.bootstrap,
        topic,
        &CODECS.join(","),
        &PRODUCED_PER_CODEC.to_string(),
        "42",
    ]);
    let produced = ctx.run_ok(cmd, "step3a-produce", Duration::from_mins(3))?;
    let mut produced = json_lines(&produced, "produced")?;
    produced.sort_by_key(|v| v["offset"].as_i64());
    ensure!(
        produced.len() == CODECS.len() * PRODUCED_PER_CODEC,
        "the producers acknowledged {} records",
        produced.len()
    );
    broker.errors_about(&format!("{topic}-0"))?;
    broker.stop()?;
    ensure!(
        kafka.log_dir.join(".kafka_cleanshutdown").exists(),
        "the broker left no clean-shutdown marker"
    );
    fs::write(ctx.work.join("step3a-produced.jsonl"), lines_of(&produced))?;

    // seglog check on the broker's whole log directory (the metadata log included).
    let out = ctx.run_ok(
        seglog_cmd(ctx, &["check"], &kafka.log_dir),
        "step3a-seglog-check",
        Duration::from_mins(1),
    )?;
    eprintln!("kafka-interop: seglog check: {}", out.trim());
    // seglog consume returns exactly the acknowledged records.
    let partition = kafka.log_dir.join(format!("{topic}-0"));
    let consumed = ctx.run_ok(
        seglog_cmd(
            ctx,
            &["consume", "--json", "--json-bytes", "base64"],
            &partition,
        ),
        "step3a-seglog-consume",
        Duration::from_mins(1),
    )?;
    same_records(
        "seglog consume vs the producers' acknowledgements",
        &produced,
        &seglog_consumed(&consumed)?,
    )?;
    // Every codec made it to disk.
    let logs = segment_files(&partition)?
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(",");
    let dumped = ctx.run_ok(
        {
            let mut c = Command::new(&ctx.seglog);
            c.args(["dump", "--files", &logs]);
            c
        },
        "step3a-seglog-dump",
        Duration::from_mins(1),
    )?;
    for codec in CODECS {
        ensure!(
            dumped.contains(&format!("compresscodec: {codec} ")),
            "no {codec} batch in the broker's log"
        );
    }
    eprintln!(
        "kafka-interop: seglog read the broker's {} records exactly",
        produced.len()
    );
    Ok(())
}
