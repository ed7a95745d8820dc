//! Step 3b: a broker is SIGKILLed mid-produce; `seglog recover` and `seglog check` handle the
//! unclean directory, keeping every acknowledged record, and a broker restarted on it serves the
//! same records.

use std::fs;
use std::io::{BufRead, BufReader};
use std::thread::sleep;
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use serde_json::Value;

use super::ACKED_BEFORE_KILL;
use super::ctx::{Ctx, seglog_cmd};
use super::guard::Guard;
use super::kraft::{Broker, KafkaNode};
use super::records::{b64_decode, json_lines, same_records, seglog_consumed};

/// After the SIGKILL and `seglog recover`: every acknowledged record is there, as acknowledged, at
/// its offset; and what lies beyond is what the producer sent next, in order, nothing invented.
fn check_after_kill(acked: Vec<Value>, consumed: &[Value]) -> Result<Vec<Value>> {
    // Every acknowledged record is there, as acknowledged, at its offset.
    let mut acked = acked;
    acked.sort_by_key(|v| v["offset"].as_i64());
    ensure!(
        consumed.len() >= acked.len(),
        "seglog found {} records after recovery, {} were acknowledged",
        consumed.len(),
        acked.len()
    );
    same_records(
        "after SIGKILL and seglog recover, the acknowledged records",
        &acked,
        consumed.get(..acked.len()).unwrap_or_default(),
    )?;
    // What lies beyond is what the producer sent next, in order: nothing invented.
    for (i, v) in consumed.iter().enumerate() {
        ensure!(
            v["offset"].as_i64() == i64::try_from(i).ok(),
            "offset {} at position {i}",
            v["offset"]
        );
        if let Some(value) = v["value"].as_str() {
            let value = b64_decode(value)?;
            let prefix = format!("gzip-{i} ");
            ensure!(
                value.starts_with(prefix.as_bytes()),
                "record {i} after recovery is not the producer's record {i}"
            );
        }
    }
    Ok(acked)
}

pub(super) fn step3b(ctx: &Ctx, kafka: &KafkaNode, broker: Broker) -> Result<()> {
    let topic = "kafka_killed";
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        topic,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step3b-create-topic", Duration::from_mins(2))?;
    let (stdout, stderr) = ctx.log_paths("step3b-produce");
    let producer = Guard::spawn(
        ctx.oracle(&["produce", &kafka.bootstrap, topic, "gzip", "forever", "7"]),
        "step3b-produce",
        &stdout,
        &stderr,
        false,
    )?;
    let deadline = Instant::now() + Duration::from_mins(2);
    loop {
        let acked = fs::File::open(&stdout).map_or(0, |f| BufReader::new(f).lines().count());
        if acked >= ACKED_BEFORE_KILL {
            break;
        }
        ensure!(
            Instant::now() < deadline,
            "only {acked} records acknowledged before the deadline; see {}",
            stderr.display()
        );
        sleep(Duration::from_millis(20));
    }
    broker.kill();
    // The producer keeps retrying against a dead broker: stop it too.
    drop(producer);
    // The last line may be torn if the producer died while printing it.
    let text = fs::read_to_string(&stdout)?;
    let complete = text.rsplit_once('\n').map_or("", |(done, _)| done);
    let acked = json_lines(complete, "acknowledged")?;
    ensure!(
        acked.len() >= ACKED_BEFORE_KILL,
        "acknowledged {}",
        acked.len()
    );

    let partition = kafka.log_dir.join(format!("{topic}-0"));
    let (before, report) = ctx.run_to_files(
        seglog_cmd(ctx, &["check", "--json"], &kafka.log_dir),
        "step3b-seglog-check-before",
        Duration::from_mins(1),
    )?;
    ensure!(
        before.code() == Some(0) || before.code() == Some(1),
        "seglog check on the killed broker's directory failed ({before}): {report}"
    );
    let recovered = ctx.run_ok(
        seglog_cmd(ctx, &["recover"], &kafka.log_dir),
        "step3b-seglog-recover",
        Duration::from_mins(2),
    )?;
    let checked = ctx.run_ok(
        seglog_cmd(ctx, &["check"], &kafka.log_dir),
        "step3b-seglog-check-after",
        Duration::from_mins(1),
    )?;
    let consumed = ctx.run_ok(
        seglog_cmd(
            ctx,
            // Every acknowledged record, whatever high watermark the killed broker last
            // checkpointed (every 5 s): the restarted leader serves to its log end.
            &[
                "consume",
                "--json",
                "--json-bytes",
                "base64",
                "--to-log-end",
            ],
            &partition,
        ),
        "step3b-seglog-consume",
        Duration::from_mins(1),
    )?;
    let consumed = seglog_consumed(&consumed)?;
    let acked = check_after_kill(acked, &consumed)?;
    let unacked = consumed.len() - acked.len();
    eprintln!(
        "kafka-interop: SIGKILL after {} acknowledged records: check before recovery: {}; recover: {}; check after: {}; {} records recovered, {unacked} beyond the last acknowledgement, all the producer's own",
        acked.len(),
        report.lines().last().unwrap_or_default(),
        recovered
            .lines()
            .filter(|l| l.contains(topic))
            .collect::<Vec<_>>()
            .join("; "),
        checked.trim(),
        consumed.len()
    );
    kafka_serves_recovered(ctx, kafka, topic, &consumed)
}

/// Kafka takes back the directory seglog recovered, and serves exactly what seglog found there.
fn kafka_serves_recovered(
    ctx: &Ctx,
    kafka: &KafkaNode,
    topic: &str,
    consumed: &[Value],
) -> Result<()> {
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        topic,
        "0",
        &consumed.len().to_string(),
        "90000",
    ]);
    let served = ctx.run_ok(cmd, "step3b-kafka-consume", Duration::from_secs(150))?;
    same_records(
        "Kafka's consumer after seglog recover vs seglog consume",
        consumed,
        &json_lines(&served, "Kafka's consumer")?,
    )?;
    broker.errors_about(&format!("{topic}-0"))?;
    broker.stop()?;
    eprintln!(
        "kafka-interop: a broker restarted on the recovered directory served the same {} records",
        consumed.len()
    );
    Ok(())
}
