//! Step 4: seglog appends to the partition directory the broker created and writes the
//! checkpoints the broker reads; after a restart, Kafka's consumer reads every record.

use std::fs;
use std::process::Command;
use std::time::Duration;

use anyhow::{Result, ensure};

use super::APPENDED;
use super::ctx::Ctx;
use super::kraft::{Broker, KafkaNode};
use super::records::{json_lines, same_records};

pub(super) fn step4(ctx: &Ctx, kafka: &KafkaNode) -> Result<Broker> {
    let topic = "kafka_written";
    let partition = kafka.log_dir.join(format!("{topic}-0"));
    let expected_path = ctx.work.join("step4-appended.jsonl");
    let mut writer = Command::new(&ctx.writer);
    writer
        .arg("append")
        .arg(&partition)
        .arg(APPENDED.to_string())
        .arg(&expected_path)
        .arg("segment.bytes=1048576");
    ctx.run_ok(writer, "step4-seglog-append", Duration::from_mins(2))?;
    let produced = json_lines(
        &fs::read_to_string(ctx.work.join("step3a-produced.jsonl"))?,
        "produced",
    )?;
    let appended = json_lines(&fs::read_to_string(&expected_path)?, "appended")?;
    ensure!(
        appended.len() == APPENDED,
        "the writer appended {} records",
        appended.len()
    );
    let mut all = produced;
    all.extend(appended);

    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        topic,
        "0",
        &all.len().to_string(),
        "90000",
    ]);
    let consumed = ctx.run_ok(cmd, "step4-kafka-consume", Duration::from_secs(150))?;
    let consumed = json_lines(&consumed, "Kafka's consumer")?;
    same_records("Kafka's consumer vs what was written", &all, &consumed)?;
    ensure!(
        consumed.iter().all(|v| v["timestamp_type"] == "CreateTime"),
        "a record came back without CreateTime"
    );
    broker.errors_about(&format!("{topic}-0"))?;
    eprintln!(
        "kafka-interop: the broker served all {} records, {APPENDED} of them written by seglog",
        all.len()
    );
    // Step 3b kills a broker mid-produce; this one is reused for it.
    Ok(broker)
}
