//! Step 13: a topic's `compression.type` on a leader append, judged by Kafka. The same producer
//! requests (`seglog-leader-append batches`) go through Kafka 4.4's `UnifiedLog.appendAsLeader`
//! offline (`Oracle leader-append`, `LogValidator` recompressing) and through seglog's
//! `PartitionLog::append_as_leader`, with the same topic config and clock; the stored `.log`
//! files must hold the same batches: byte for byte, or, where the codec's own output differs
//! between Kafka's Java libraries and seglog's Rust crates at the same level, the same header
//! fields (all but the CRC and length, which cover the compressed bytes) and the same records.

use std::fs;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, Result, ensure};

use super::ctx::Ctx;

/// (the topic's `compression.type`, the producer's codec).
const CASES: [(&str, &str); 10] = [
    ("zstd", "none"),
    ("zstd", "gzip"),
    ("gzip", "none"),
    ("lz4", "none"),
    ("snappy", "zstd"),
    ("uncompressed", "gzip"),
    ("uncompressed", "none"),
    ("producer", "gzip"),
    ("producer", "lz4"),
    ("producer", "zstd"),
];

pub(super) fn step13(ctx: &Ctx) -> Result<()> {
    let tool = ctx.writer.with_file_name("seglog-leader-append");
    let now = i64::try_from(SystemTime::now().duration_since(UNIX_EPOCH)?.as_millis())?;
    let now_text = now.to_string();
    let mut report = Vec::new();
    for (topic, producer) in CASES {
        let name = format!("step13-{topic}-from-{producer}");
        let case = ctx.work.join(&name);
        let _ = fs::remove_dir_all(&case);
        fs::create_dir_all(&case)?;
        let input = case.join("batches.bin");
        let config = case.join("topic.properties");
        fs::write(&config, format!("compression.type={topic}\n"))?;
        let mut cmd = std::process::Command::new(&tool);
        cmd.args(["batches", producer, &now_text]).arg(&input);
        ctx.run_ok(cmd, &format!("{name}-batches"), Duration::from_mins(1))?;
        let kafka_dir = case.join("kafka").join("interop13-0");
        let seglog_dir = case.join("seglog").join("interop13-0");
        fs::create_dir_all(kafka_dir.parent().context("kafka side")?)?;
        let (input_s, config_s, kafka_s) = (
            input.display().to_string(),
            config.display().to_string(),
            kafka_dir.display().to_string(),
        );
        let kafka_acks = ctx.run_ok(
            ctx.oracle(&[
                "leader-append",
                &input_s,
                &config_s,
                &kafka_s,
                "0",
                &now_text,
            ]),
            &format!("{name}-kafka"),
            Duration::from_mins(2),
        )?;
        let mut cmd = std::process::Command::new(&tool);
        cmd.arg("append")
            .arg(&input)
            .arg(&config)
            .arg(&seglog_dir)
            .arg(&now_text);
        let seglog_acks = ctx.run_ok(cmd, &format!("{name}-seglog"), Duration::from_mins(1))?;
        ensure!(
            kafka_acks == seglog_acks,
            "{name}: Kafka's appends answered\n{kafka_acks}seglog's\n{seglog_acks}"
        );
        let log = "00000000000000000000.log";
        let mut cmd = std::process::Command::new(&tool);
        cmd.arg("compare")
            .arg(kafka_dir.join(log))
            .arg(seglog_dir.join(log));
        let found = ctx.run_ok(cmd, &format!("{name}-compare"), Duration::from_mins(1))?;
        report.push(format!(
            "compression.type={topic}, producer {producer}: {}",
            found.trim()
        ));
    }
    for line in &report {
        eprintln!("kafka-interop: step 13: {line}");
    }
    Ok(())
}
