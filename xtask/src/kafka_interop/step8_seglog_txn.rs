//! Step 8: seglog writes idempotent and transactional data, markers and producer snapshots into a
//! partition the broker created; the broker takes the producer state over. `seglog produce`
//! writes, the broker stopped: an idempotent producer (two runs, its sequences continuing), and a
//! transactional one that commits, aborts and commits (each marker bumping its epoch, transaction
//! version 2). Then a broker started on the directory must report the producers as seglog left
//! them (Kafka's `Admin.describeProducers`), and Kafka's consumer must read exactly the committed
//! and idempotent records under read_committed and every record under read_uncommitted.

use std::fmt::Write as _;
use std::fs;
use std::process::Command;
use std::time::Duration;

use anyhow::{Context, Result, ensure};
use serde_json::Value;

use super::ctx::{Ctx, seglog_cmd};
use super::kraft::KafkaNode;
use super::records::json_lines;

const TOPIC: &str = "seglog_txn";
const IDEMPOTENT: &str = "7001";
const TRANSACTIONAL: &str = "7002";

/// One `seglog produce` run: its name (the values' prefix), its flags, how many records, and
/// whether a read_committed consumer sees them.
struct Run {
    name: &'static str,
    flags: &'static [&'static str],
    records: usize,
    committed: bool,
}

const RUNS: [Run; 5] = [
    Run {
        name: "idempotent-1",
        flags: &["--producer-id", IDEMPOTENT, "--producer-epoch", "0"],
        records: 500,
        committed: true,
    },
    Run {
        name: "commit-1",
        flags: &[
            "--producer-id",
            TRANSACTIONAL,
            "--producer-epoch",
            "0",
            "--transactional",
            "--commit",
        ],
        records: 300,
        committed: true,
    },
    Run {
        name: "abort-1",
        flags: &[
            "--producer-id",
            TRANSACTIONAL,
            "--producer-epoch",
            "1",
            "--transactional",
            "--abort",
        ],
        records: 200,
        committed: false,
    },
    Run {
        name: "commit-2",
        flags: &[
            "--producer-id",
            TRANSACTIONAL,
            "--producer-epoch",
            "2",
            "--transactional",
            "--commit",
        ],
        records: 300,
        committed: true,
    },
    Run {
        name: "idempotent-2",
        flags: &["--producer-id", IDEMPOTENT, "--producer-epoch", "0"],
        records: 200,
        committed: true,
    },
];

pub(super) fn step8(ctx: &Ctx, kafka: &KafkaNode) -> Result<()> {
    let broker = kafka.start(ctx)?;
    let cmd = ctx.oracle(&[
        "create-topic",
        &kafka.bootstrap,
        TOPIC,
        "1",
        "segment.bytes=1048576",
    ]);
    ctx.run_ok(cmd, "step8-create-topic", Duration::from_mins(2))?;
    broker.stop()?;

    let partition = kafka.log_dir.join(format!("{TOPIC}-0"));
    // The topic's segment.bytes lives in the broker's metadata; seglog reads a partition's
    // settings from seglog.properties, which Kafka ignores.
    fs::write(
        partition.join("seglog.properties"),
        "segment.bytes=1048576\n",
    )?;
    let (all, visible) = seglog_writes(ctx, &partition)?;
    let logs = super::segment_files::files_with(&partition, &["log"])?;
    let snapshots = super::segment_files::files_with(&partition, &["snapshot"])?;
    ensure!(logs.len() >= 3, "seglog wrote only {} segments", logs.len());
    ensure!(!snapshots.is_empty(), "seglog left no producer snapshot");
    ctx.run_ok(
        seglog_cmd(ctx, &["check"], &partition),
        "step8-seglog-check",
        Duration::from_mins(1),
    )?;

    let broker = kafka.start(ctx)?;
    let described = ctx.run_ok(
        ctx.oracle(&["describe-producers", &kafka.bootstrap, TOPIC, "0"]),
        "step8-kafka-describe-producers",
        Duration::from_mins(2),
    )?;
    let described = json_lines(&described, "describe-producers")?;
    let producer = |id: &str| -> Result<&Value> {
        described
            .iter()
            .find(|p| p["producer_id"].as_i64() == id.parse().ok())
            .with_context(|| format!("the broker knows no producer {id}: {described:?}"))
    };
    // The idempotent producer: epoch 0, sequences 0..=699 over its two runs.
    let idempotent = producer(IDEMPOTENT)?;
    ensure!(
        idempotent["epoch"] == 0
            && idempotent["last_sequence"] == 699
            && idempotent["txn_start"] == -1,
        "the broker's state of producer {IDEMPOTENT}: {idempotent}"
    );
    // The transactional one: three markers of transaction version 2 took its epoch to 3, and no
    // transaction is open.
    let transactional = producer(TRANSACTIONAL)?;
    ensure!(
        transactional["epoch"] == 3 && transactional["txn_start"] == -1,
        "the broker's state of producer {TRANSACTIONAL}: {transactional}"
    );
    for (level, want) in [("read_committed", &visible), ("read_uncommitted", &all)] {
        kafka_reads(ctx, kafka, level, want)?;
    }
    broker.errors_about(&format!("{TOPIC}-0"))?;
    let log = fs::read_to_string(broker.log()).unwrap_or_default();
    ensure!(
        !log.contains("CorruptSnapshotException"),
        "the broker found a corrupt producer snapshot"
    );
    broker.stop()?;
    eprintln!(
        "kafka-interop: seglog wrote {} records in {} segments with {} producer snapshots (an idempotent producer over two runs, a transactional one committing, aborting and committing); the broker's describeProducers: {}; Kafka's consumer read the {} committed and idempotent records under read_committed and all {} under read_uncommitted",
        all.len(),
        logs.len(),
        snapshots.len(),
        described
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        visible.len(),
        all.len()
    );
    Ok(())
}

/// The runs of [`RUNS`], one `seglog produce` each, the broker stopped. Returns every value
/// written and those a read_committed consumer sees, in offset order.
fn seglog_writes(ctx: &Ctx, partition: &std::path::Path) -> Result<(Vec<String>, Vec<String>)> {
    let (mut all, mut visible) = (Vec::new(), Vec::new());
    for run in &RUNS {
        let mut input = String::new();
        let mut values = Vec::new();
        for i in 0..run.records {
            // About 2 KiB a record, so that the 1,500 records take several 1 MiB segments.
            let value = format!("{}-{i} {}", run.name, "x".repeat(2000 + i % 97));
            let _ = writeln!(input, "{value}");
            values.push(value);
        }
        let file = ctx.work.join(format!("step8-{}.txt", run.name));
        fs::write(&file, input)?;
        let mut cmd = Command::new("sh");
        cmd.arg("-c")
            .arg(r#"f="$1"; shift; exec "$@" < "$f""#)
            .arg("sh")
            .arg(&file)
            .arg(&ctx.seglog)
            .arg("produce")
            .arg(partition)
            .args(run.flags);
        ctx.run_ok(
            cmd,
            &format!("step8-seglog-produce-{}", run.name),
            Duration::from_mins(1),
        )?;
        if run.committed {
            visible.extend(values.iter().cloned());
        }
        all.extend(values);
    }
    Ok((all, visible))
}

/// Fails unless Kafka's consumer at `level` reads exactly `want`.
fn kafka_reads(ctx: &Ctx, kafka: &KafkaNode, level: &str, want: &[String]) -> Result<()> {
    let cmd = ctx.oracle(&[
        "consume",
        &kafka.bootstrap,
        TOPIC,
        "0",
        &want.len().to_string(),
        "90000",
        level,
    ]);
    let got = ctx.run_ok(
        cmd,
        &format!("step8-kafka-consume-{level}"),
        Duration::from_secs(150),
    )?;
    let got: Vec<String> = json_lines(&got, "Kafka's consumer")?
        .iter()
        .map(|v| {
            let b64 = v["value"].as_str().context("a value")?;
            Ok(String::from_utf8(super::records::b64_decode(b64)?)?)
        })
        .collect::<Result<_>>()?;
    ensure!(
        got == want,
        "Kafka's {level} consumer read {} records where seglog wrote {} visible at that level",
        got.len(),
        want.len()
    );
    Ok(())
}
