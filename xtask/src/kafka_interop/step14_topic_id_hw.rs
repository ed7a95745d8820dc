//! Step 14: topic ids and high watermarks, judged by a broker of its own.
//! - seglog reads the `partition.metadata` files and `replication-offset-checkpoint` the broker
//!   wrote: `seglog check` passes, and `seglog offsets --time -1` after a clean stop equals what
//!   `kafka-get-offsets.sh` answered from the running broker;
//! - seglog writes a `partition.metadata` (`seglog produce --topic-id`, the file removed first)
//!   byte for byte as the broker wrote it, and the restarted broker serves every record of the
//!   partition (Kafka's consumer) with no error about it;
//! - a crafted high watermark below the log end: `seglog consume` and `seglog offsets` stop at it,
//!   `--to-log-end` reads on (a broker of one replica raises it to its log end when it leads
//!   again, so its consumer reads everything: what a consumer saw before the stop is what
//!   seglog reads offline);
//! - a partition given another topic's id: `seglog check` reports the conflict with the
//!   topic's other partition, and the broker sets the partition aside as a stray replica
//!   (renamed `<partition>.<id>-stray`).

use std::fs;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail, ensure};

use super::ctx::Ctx;
use super::kraft::KafkaNode;
use super::records::json_lines;

const TOPIC: &str = "ids";
const OTHER: &str = "ids_other";
const PRODUCED: usize = 200;
const APPENDED: usize = 50;

pub(super) fn step14(ctx: &Ctx) -> Result<()> {
    let kafka = KafkaNode::format_named(ctx, "ids", "")?;
    let logs = kafka.log_dir.clone();
    let latest = broker_writes(ctx, &kafka)?;
    seglog_reads(ctx, &logs, &latest)?;
    let id = seglog_writes_metadata(ctx, &logs)?;
    let crafted = crafted_high_watermark(ctx, &logs)?;
    misplace_a_partition(ctx, &logs, &id)?;

    // The broker: the topic seglog wrote into is served whole, the misplaced partition is not
    // taken as its topic's.
    let all = PRODUCED + APPENDED;
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        TOPIC,
        "0",
        &all.to_string(),
        "90000",
    ]);
    let served = ctx.run_ok(cmd, "step14-kafka-consume", Duration::from_secs(150))?;
    let served = json_lines(&served, "Kafka's consumer")?;
    ensure!(
        served.len() == all,
        "Kafka's consumer read {} records",
        served.len()
    );
    broker.errors_about(&format!("{TOPIC}-0"))?;
    let verdict = misplaced_verdict(&logs, broker.log(), &format!("{OTHER}-1"))?;
    broker.stop()?;
    eprintln!(
        "kafka-interop: seglog read the broker's topic ids and high watermarks (offsets --time -1 = {}), wrote its partition.metadata byte for byte ({TOPIC}: {all} records served), stopped at a crafted high watermark ({crafted} of {all}); a partition given another topic's id: {verdict}",
        latest.trim(),
    );
    Ok(())
}

/// The broker creates the topics and takes `PRODUCED` records; what kafka-get-offsets.sh says
/// of them on the running broker, which then stops cleanly.
fn broker_writes(ctx: &Ctx, kafka: &KafkaNode) -> Result<String> {
    let broker = kafka.start(ctx)?;
    for (topic, partitions) in [(TOPIC, "1"), (OTHER, "2")] {
        ctx.run_ok(
            ctx.oracle(&["create-topic", &kafka.bootstrap, topic, partitions]),
            &format!("step14-create-{topic}"),
            Duration::from_mins(2),
        )?;
    }
    ctx.run_ok(
        ctx.oracle(&[
            "produce",
            &kafka.bootstrap,
            TOPIC,
            "none",
            &PRODUCED.to_string(),
            "14",
        ]),
        "step14-produce",
        Duration::from_mins(3),
    )?;
    let latest = ctx.run_ok(
        get_offsets(ctx, &kafka.bootstrap),
        "step14-get-offsets",
        Duration::from_mins(2),
    )?;
    ensure!(
        latest == format!("{TOPIC}:0:{PRODUCED}\n"),
        "kafka-get-offsets.sh answered {latest:?}"
    );
    broker.stop()?;
    Ok(latest)
}

/// seglog reads what the broker left: check passes, offsets --time -1 equals the broker's answer.
fn seglog_reads(ctx: &Ctx, logs: &Path, latest: &str) -> Result<()> {
    seglog_ok(ctx, &["check"], logs, "step14-check-broker")?;
    let ours = seglog_ok(
        ctx,
        &["offsets", "--topic", TOPIC, "--time", "-1"],
        logs,
        "step14-offsets",
    )?;
    ensure!(
        ours == latest,
        "seglog offsets --time -1 printed {ours:?}, kafka-get-offsets.sh {latest:?}"
    );
    let checkpoint = fs::read_to_string(logs.join("replication-offset-checkpoint"))?;
    ensure!(
        checkpoint
            .lines()
            .any(|l| l == format!("{TOPIC} 0 {PRODUCED}")),
        "the broker's replication-offset-checkpoint has no {TOPIC} 0 {PRODUCED}:\n{checkpoint}"
    );
    Ok(())
}

/// seglog writes the `partition.metadata` the broker wrote, byte for byte (the file removed,
/// then `produce --topic-id`); returns the topic's id.
fn seglog_writes_metadata(ctx: &Ctx, logs: &Path) -> Result<String> {
    let partition = logs.join(format!("{TOPIC}-0"));
    let metadata = partition.join("partition.metadata");
    let kafkas = fs::read(&metadata).context("the broker wrote no partition.metadata")?;
    let id = topic_id(&kafkas)?;
    fs::remove_file(&metadata)?;
    let lines = (0..APPENDED)
        .map(|i| format!("seglog-{i}"))
        .collect::<Vec<_>>()
        .join("\n")
        + "\n";
    let mut produce = Command::new(&ctx.seglog);
    produce
        .arg("produce")
        .arg(&partition)
        .args(["--topic-id", &id]);
    run_with_stdin(ctx, produce, lines.as_bytes(), "step14-seglog-produce")?;
    let ours = fs::read(&metadata)?;
    ensure!(
        ours == kafkas,
        "seglog wrote {:?}, the broker {:?}",
        String::from_utf8_lossy(&ours),
        String::from_utf8_lossy(&kafkas)
    );
    Ok(id)
}

/// A high watermark below the log end: seglog stops there, as a consumer would have; the
/// checkpoint is put back after. Returns the crafted high watermark.
fn crafted_high_watermark(ctx: &Ctx, logs: &Path) -> Result<usize> {
    let partition = logs.join(format!("{TOPIC}-0"));
    let hw_file = logs.join("replication-offset-checkpoint");
    let all = PRODUCED + APPENDED;
    let crafted = PRODUCED - 80;
    let text = fs::read_to_string(&hw_file)?;
    ensure!(
        text.lines().any(|l| l == format!("{TOPIC} 0 {all}")),
        "seglog produce left no {TOPIC} 0 {all} in replication-offset-checkpoint:\n{text}"
    );
    fs::write(
        &hw_file,
        text.replace(
            &format!("{TOPIC} 0 {all}\n"),
            &format!("{TOPIC} 0 {crafted}\n"),
        ),
    )?;
    let consumed = |extra: &[&str]| -> Result<usize> {
        let mut args = vec!["consume"];
        args.extend_from_slice(extra);
        Ok(seglog_ok(ctx, &args, &partition, "step14-consume")?
            .lines()
            .count())
    };
    ensure!(
        consumed(&[])? == crafted,
        "consume did not stop at the high watermark"
    );
    ensure!(consumed(&["--to-log-end"])? == all, "consume --to-log-end");
    let offsets = seglog_ok(
        ctx,
        &["offsets", "--latest"],
        &partition,
        "step14-offsets-hw",
    )?;
    ensure!(
        offsets == format!("{TOPIC}:0:{crafted}\n"),
        "offsets --latest printed {offsets:?}"
    );
    fs::write(&hw_file, text)?;
    Ok(crafted)
}

/// Another topic's id (`id`) on one partition of a two-partition topic: `seglog check` reports
/// the two ids.
fn misplace_a_partition(ctx: &Ctx, logs: &Path, id: &str) -> Result<()> {
    let stray = logs.join(format!("{OTHER}-1"));
    let other_id = topic_id(&fs::read(
        logs.join(format!("{OTHER}-0/partition.metadata")),
    )?)?;
    ensure!(other_id != id, "two topics with one id");
    fs::remove_file(stray.join("partition.metadata"))?;
    let mut produce = Command::new(&ctx.seglog);
    produce.arg("produce").arg(&stray).args(["--topic-id", id]);
    run_with_stdin(
        ctx,
        produce,
        b"misplaced\n",
        "step14-seglog-produce-wrong-id",
    )?;
    let mut check = Command::new(&ctx.seglog);
    check.args(["check", "--json"]).arg(logs);
    let out = check.output()?;
    let report = String::from_utf8_lossy(&out.stdout);
    ensure!(
        out.status.code() == Some(1) && report.contains("topic_id_conflict"),
        "seglog check did not report the conflicting ids: {report}"
    );
    Ok(())
}

/// A partition holding another topic's id is a stray replica to the broker (KRaft's
/// `LogManager.findStrayReplicas`: its id is not in the metadata under its name): it renames the
/// directory `<partition>.<id>-stray` and leaves it (and creates the replica the metadata gives
/// it afresh). Anything else fails.
fn misplaced_verdict(logs: &Path, broker_log: &Path, partition: &str) -> Result<String> {
    let deadline = Instant::now() + Duration::from_mins(1);
    loop {
        let renamed = fs::read_dir(logs)?
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .find(|n| n.starts_with(&format!("{partition}.")) && n.ends_with("-stray"));
        if let Some(name) = renamed {
            // The broker then creates the replica the metadata assigns it afresh, empty.
            let again = if logs.join(partition).exists() {
                format!(" and created {partition} again")
            } else {
                String::new()
            };
            return Ok(format!(
                "the broker renamed it {name}, a stray replica{again}"
            ));
        }
        if Instant::now() > deadline {
            bail!(
                "the broker did not set {partition}, which holds another topic's id, aside as a stray replica; see {}",
                broker_log.display()
            );
        }
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// The id in a `partition.metadata`'s text.
fn topic_id(bytes: &[u8]) -> Result<String> {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .find_map(|l| l.strip_prefix("topic_id: "))
        .map(str::to_owned)
        .with_context(|| format!("no topic_id in {text:?}"))
}

fn get_offsets(ctx: &Ctx, bootstrap: &str) -> Command {
    ctx.oracle(&[
        "tool",
        "org.apache.kafka.tools.GetOffsetShell",
        "--bootstrap-server",
        bootstrap,
        "--topic",
        TOPIC,
        "--time",
        "-1",
    ])
}

fn seglog_ok(ctx: &Ctx, args: &[&str], path: &Path, name: &str) -> Result<String> {
    let mut cmd = Command::new(&ctx.seglog);
    cmd.args(args).arg(path);
    ctx.run_ok(cmd, name, Duration::from_mins(2))
}

fn run_with_stdin(ctx: &Ctx, mut cmd: Command, input: &[u8], name: &str) -> Result<()> {
    use std::io::Write as _;
    let (stdout, stderr) = ctx.log_paths(name);
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(fs::File::create(&stdout)?)
        .stderr(fs::File::create(&stderr)?)
        .spawn()?;
    child.stdin.take().context("stdin")?.write_all(input)?;
    let status = child.wait()?;
    ensure!(
        status.success(),
        "{name} exited with {status}: {}",
        fs::read_to_string(&stderr).unwrap_or_default()
    );
    Ok(())
}
